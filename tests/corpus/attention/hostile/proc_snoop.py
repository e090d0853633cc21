# expect: full
# assignment: attention
# base: reference
# output_has: DENIED
# output_lacks: LEAKED
# why: module-level code reads the server's /proc/<ppid>/mem, /proc/1/environ and other processes' /proc entries; every read must fail, and the correct functions still earn full marks

import os

_ppid = os.getppid()
for _path in (f"/proc/{_ppid}/mem", f"/proc/{_ppid}/environ", f"/proc/{_ppid}/cmdline", f"/proc/{_ppid}/maps",
              "/proc/1/environ", "/proc/1/cmdline", "/proc/self/environ", f"/proc/{_ppid}/fd"):
    try:
        if _path.endswith("/fd"):
            print(f"LEAKED {_path}: {os.listdir(_path)[:5]}", flush=True)
            continue
        with open(_path, "rb") as _fh:
            if _path.endswith("/mem"):
                with open(f"/proc/{_ppid}/maps") as _maps:
                    _lo = int(_maps.readline().split("-")[0], 16)
                _fh.seek(_lo)
            _data = _fh.read(64)
        print(f"LEAKED {_path}: {_data[:32]!r}", flush=True)
    except OSError as _exc:
        print(f"DENIED {_path}: {type(_exc).__name__}", flush=True)
try:
    _pids = [p for p in os.listdir("/proc") if p.isdigit()]
    print(f"LEAKED /proc listing: {len(_pids)} processes", flush=True)
except OSError as _exc:
    print(f"DENIED /proc listing: {type(_exc).__name__}", flush=True)
