# expect: full
# assignment: attention
# base: reference
# output_has: DENIED
# output_lacks: WROTE
# absent_file: /tmp/grader-hostile-write-outside.txt
# why: the child has a writable home, temporary and cache folder, all inside its scratch; at import this file tries to write everywhere else (/tmp itself, the folder above the scratch, the real home, the course folder on PYTHONPATH, through a symlink, a rename and a hard link out of the scratch); every attempt must be denied, and the reference functions still earn full marks

import errno
import os

_HOME = os.path.expanduser("~")
_TARGETS = [
    "/tmp/grader-hostile-write-outside.txt",
    os.path.join(os.path.dirname(os.getcwd()), "grader-hostile-escaped.txt"),  # beside the scratch folder
    os.path.join(os.getcwd(), "..", "grader-hostile-dotdot.txt"),
    "/root/grader-hostile-escaped.txt",
    "/var/tmp/grader-hostile-escaped.txt",
    "/dev/shm/grader-hostile-escaped.txt",
    os.path.join(_HOME, "..", "..", "..", "grader-hostile-escaped.txt"),
] + [os.path.join(p, "grader-hostile-escaped.txt") for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def _attempt(what, action):
    try:
        action()
    except OSError as exc:
        print(f"DENIED {what}: {errno.errorcode.get(exc.errno, exc.errno)}", flush=True)
    else:
        print(f"WROTE {what}", flush=True)


def _write(path):
    with open(path, "w") as fh:
        fh.write("escaped the sandbox\n")


def _through_symlink():
    os.symlink("/tmp/grader-hostile-write-outside.txt", os.path.join(_HOME, "link"))
    _write(os.path.join(_HOME, "link"))


def _write_inside_then(move):
    inside = os.path.join(_HOME, "inside.txt")
    _write(inside)  # allowed: the private home is in the scratch
    move(inside, "/tmp/grader-hostile-write-outside.txt")


for _path in _TARGETS:
    _attempt(_path, lambda p=_path: _write(p))
_attempt("a symlink from home to /tmp", _through_symlink)
_attempt("a rename from home to /tmp", lambda: _write_inside_then(os.rename))
_attempt("a hard link from home to /tmp", lambda: _write_inside_then(os.link))
