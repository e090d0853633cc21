# expect: zero
# assignment: attention
# base: reference
# message: could not be loaded.*loading your file.*still running
# max_seconds: 15
# why: module-level code spins forever (capped at 60 s); loading must time out once (not once per check: max_seconds) and every check fail, no points at all

import time as _time

_start = _time.monotonic()
for _ in range(10**12):  # a stray "while True" left at the bottom of the file
    if _time.monotonic() > _start + 60:
        break
