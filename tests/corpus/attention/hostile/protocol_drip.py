# expect: below_full
# assignment: attention
# base: reference
# max_seconds: 15
# message: could not be loaded
# why: module-level code finds the worker's socket to the judge and drips a frame into it one byte every 0.4 s for 12 s; the judge's wall-clock limit must still end the load after call_wall_seconds instead of waiting for every byte

import os
import socket
import stat
import struct
import time

for _fd in range(3, 64):
    try:
        if not stat.S_ISSOCK(os.fstat(_fd).st_mode):
            continue
    except OSError:
        continue
    os.write(_fd, struct.pack(">Q", 4096))  # a frame header promising 4 KiB
    _start = time.monotonic()
    while time.monotonic() < _start + 12:
        os.write(_fd, b"\xff")  # never valid JSON, never the whole frame
        time.sleep(0.4)
    break
