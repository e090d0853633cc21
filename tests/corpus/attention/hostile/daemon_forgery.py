# expect: full
# assignment: attention
# base: reference
# card_stable: yes
# output_has: DAEMON-REFUSED
# output_lacks: DAEMON-STARTED
# why: module-level code double-forks with setsid to leave a daemon that keeps overwriting the test's scorecard (hostile-forgery-target*.json under /tmp) for 5 s after grading; fork and setsid must fail, no process may survive, the card on disk must stay byte-identical, and the correct functions still earn full marks

import glob
import os
import time

_FORGED = '{"assignment": "attention", "score": 999, "max_score": 999, "forged": true}'


def _daemon():
    try:
        print("DAEMON-STARTED", flush=True)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            for path in glob.glob("/tmp/**/hostile-forgery-target*.json", recursive=True)[:50]:
                try:
                    with open(path, "w") as fh:
                        fh.write(_FORGED)
                except OSError:
                    pass
            time.sleep(0.1)
    finally:
        os._exit(0)


try:
    _pid = os.fork()
except OSError as _exc:
    print(f"DAEMON-REFUSED fork: {_exc}", flush=True)
else:
    if _pid == 0:
        try:
            os.setsid()
        except OSError as _exc:
            print(f"DAEMON-REFUSED setsid: {_exc}", flush=True)
        try:
            if os.fork() == 0:
                _daemon()
        finally:
            os._exit(0)
    print("DAEMON-STARTED (first fork succeeded)", flush=True)
try:
    os.setsid()
    print("DAEMON-STARTED (setsid succeeded in the worker)", flush=True)
except OSError as _exc:
    print(f"DAEMON-REFUSED setsid: {_exc}", flush=True)
