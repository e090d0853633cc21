# expect: full
# assignment: attention
# base: reference
# card_stable: yes
# output_lacks: FORGED
# why: module-level code registers atexit/weakref finalizers (and tries right away) to overwrite the test's scorecard (hostile-forgery-target*.json, anywhere under /tmp) with a forged full score; the worker never runs them and can write nowhere but scratch, so the card written after grading stays byte-identical

import atexit
import glob
import json
import os
import weakref

_FORGED = json.dumps({"assignment": "attention", "score": 999, "max_score": 999, "checks": [], "forged": True})


def _forge():
    # Only the test's own card is aimed at, so a regression cannot damage anything else on the machine.
    patterns = ["/tmp/**/hostile-forgery-target*.json",
                "hostile-forgery-target.json", "../hostile-forgery-target.json"]
    for pattern in patterns:
        targets = glob.glob(pattern, recursive=True) or ([pattern] if "*" not in pattern else [])
        for path in targets[:50]:
            try:
                with open(path, "w") as fh:
                    fh.write(_FORGED)
                if not os.path.realpath(path).startswith(os.getcwd()):
                    print(f"FORGED {path}", flush=True)
            except OSError:
                pass


class _OnDelete:
    def __del__(self):
        _forge()


_keep = _OnDelete()
atexit.register(_forge)
weakref.finalize(_keep, _forge)
_forge()  # and once now, with whatever paths exist at load time
