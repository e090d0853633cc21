# expect: full
# assignment: attention
# base: reference
# output_capped: yes
# why: module-level code prints 300 MB (stdout and stderr); the card keeps at most 64 KiB of it with a note, the judge's memory stays flat, and correct functions still earn full marks

import sys

_line = ("flood " * 170 + "\n") * 1024  # about 1 MiB
for _i in range(300):
    print(_line, end="")
    if _i % 50 == 0:
        print(_line[:4096], end="", file=sys.stderr)
sys.stdout.flush()
