"""Run Python as it would run on a system that lacks Linux's features: a bootstrap for the kit's tests.

``python tests/platform_sim.py PLATFORM WRAPPER ARGS...`` takes away, *before* anything of the grader is
imported, what PLATFORM lacks, then runs ARGS as ``python ARGS`` would (``-m module ...``, ``-c code`` or a
script). ``WRAPPER`` is an executable that runs this bootstrap with the same PLATFORM (``write_wrapper``):
it becomes ``sys.executable``, so every interpreter the grader starts (its worker) lacks the same features.

The platforms (one dict entry each, so a test can name what it takes away):

* ``macos``: libc without ``prctl``, ``unshare``, ``mount`` or ``clearenv`` (macOS's libc has none of them),
  no ``pidfd_open``/``pidfd_send_signal``, no libseccomp (``find_library`` finds none, so importing
  pyseccomp raises RuntimeError as it does on a Mac): so no namespaces, landlock,
  seccomp or capabilities.
* ``windows``: everything ``macos`` lacks, and no ``os.fork`` (nor setsid, killpg, setpgid, sysconf,
  set_blocking, the wait-status macros, ``O_NOFOLLOW``/``O_NONBLOCK``/``O_CLOEXEC``/``O_DIRECTORY``, the
  signals Windows has not: SIGHUP, SIGUSR1, SIGCHLD, SIGPIPE...; ``register_at_fork`` stays: the Linux build of torch calls it where the Windows
  build takes another branch), no ``socket.AF_UNIX`` (nor send_fds), no ``select.poll``, no ``SIGKILL``, no
  ``resource``, ``fcntl`` or ``termios`` modules, and ``ctypes.CDLL(None)`` fails. (``pwd`` and ``os.getuid`` stay: libraries
  such as platformdirs pick their Unix code by ``sys.platform``, which stays Linux's here.)
* ``colab``: Linux whose kernel refuses unprivileged namespaces (``unshare`` fails with EPERM) and has no
  landlock: the fork server stays, the namespace layers do not.

``macos`` and ``windows`` have no ``/proc`` either, for the grader's own code: ``open``, ``os.listdir``,
``os.stat`` and ``os.path.isdir``/``exists`` of a path under it, called from a ``grader`` module, fail as
for a missing file. Libraries keep it: psutil, say, reads /proc on Linux where on a Mac it asks the kernel
another way, and that other way is what the grader gets there. ``sys.platform`` stays Linux's: the grader must not need to be told the system's
name to cope, only find out what is missing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import runpy
import select
import signal
import socket
import stat
import sys
from pathlib import Path
from typing import Any

MACOS_LIBC_MISSING = ("prctl", "unshare", "mount", "clearenv")
MISSING: dict[str, dict[str, tuple[str, ...]]] = {
    "macos": {
        "libc": MACOS_LIBC_MISSING,
        "os": ("pidfd_open",),
        "signal": ("pidfd_send_signal",),
        "libraries": ("seccomp",),
        "no_landlock": ("yes",),  # macOS's syscall() exists, but its numbers are not Linux's
    },
    "windows": {
        "libc": ("*",),
        "os": ("fork", "forkpty", "setsid", "setpgid", "getpgid", "killpg", "pidfd_open",
               "sysconf", "WIFSIGNALED", "WIFEXITED", "WEXITSTATUS", "WTERMSIG", "set_blocking", "get_blocking",
               "O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_DIRECTORY", "O_PATH", "O_NOCTTY"),
        "signal": ("SIGKILL", "SIGXCPU", "SIGXFSZ", "SIGSYS", "SIGALRM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2",
                   "SIGCHLD", "SIGPIPE", "SIGCONT", "SIGSTOP", "SIGTSTP", "pidfd_send_signal", "pthread_sigmask"),
        "socket": ("AF_UNIX", "SOCK_SEQPACKET", "send_fds", "recv_fds"),
        "select": ("poll", "epoll"),
        "modules": ("resource", "fcntl", "termios"),
        "libraries": ("c", "m", "seccomp"),  # find_library("c") is None with the UCRT: pyseccomp fails too
    },
    "colab": {"libc": (), "refused": ("unshare",), "no_landlock": ("yes",)},
}
NO_PROC = {"macos", "windows"}


def _under_proc(path: object) -> bool:
    try:
        text = os.fsdecode(path) if not isinstance(path, int) else ""
    except TypeError:
        return False
    return text == "/proc" or text.startswith("/proc/")


def _hide_proc() -> None:
    """Paths under /proc fail as missing ones do, for the Python-level calls that read them."""
    import builtins
    import io

    def guarded(real: Any, missing: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if args and _under_proc(args[0]) and caller.startswith("grader"):
                return missing(args[0])
            return real(*args, **kwargs)
        return call

    def not_found(path: object) -> Any:
        raise FileNotFoundError(2, "No such file or directory (no /proc here)", os.fsdecode(path))

    builtins.open = io.open = guarded(builtins.open, not_found)  # type: ignore[assignment]
    for name in ("listdir", "stat", "open", "scandir"):
        setattr(os, name, guarded(getattr(os, name), not_found))
    for name in ("isdir", "exists", "isfile"):
        setattr(os.path, name, guarded(getattr(os.path, name), lambda path: False))


LANDLOCK_CREATE_RULESET = 444


class _Libc:
    """A libc as ``platform`` has it: the real one less what is missing (or with ``unshare`` refused)."""

    def __init__(self, real: ctypes.CDLL, missing: tuple[str, ...], refused: tuple[str, ...],
                 no_landlock: bool) -> None:
        self._real, self._missing, self._refused, self._no_landlock = real, missing, refused, no_landlock

    def __getattr__(self, name: str) -> object:
        if name in self._missing:
            raise AttributeError(f"function '{name}' not found")
        if name in self._refused:
            def refused(*_: object) -> int:
                ctypes.set_errno(errno.EPERM)
                return -1
            return refused
        if name == "syscall" and self._no_landlock:
            real = self._real.syscall

            def syscall(number: object, *args: object) -> int:
                if getattr(number, "value", number) == LANDLOCK_CREATE_RULESET:
                    ctypes.set_errno(errno.ENOSYS)
                    return -1
                return real(number, *args)
            return syscall
        return getattr(self._real, name)


def hide(platform: str) -> None:
    """Take away what ``platform`` lacks, in this process, before the grader is imported."""
    import psutil  # noqa: F401 - loaded first: its Linux part needs what Windows lacks, its Windows part does not

    missing = MISSING[platform]
    if platform in NO_PROC:
        _hide_proc()
    for module, names in (("os", os), ("signal", signal), ("socket", socket), ("select", select)):
        for name in missing.get(module, ()):
            if hasattr(names, name):
                delattr(names, name)
    for name in missing.get("modules", ()):
        sys.modules[name] = None  # type: ignore[assignment]  # `import name` now raises ImportError
    real_find = ctypes.util.find_library
    not_found = missing.get("libraries", ())
    ctypes.util.find_library = lambda name: None if name in not_found else real_find(name)
    real_cdll = ctypes.CDLL
    libc_missing = missing.get("libc", ())
    refused = missing.get("refused", ())
    no_landlock = bool(missing.get("no_landlock"))

    class CDLL(real_cdll):  # type: ignore[misc, valid-type]
        def __new__(cls, name: object, *args: object, **kwargs: object) -> object:
            if name is None and libc_missing == ("*",):
                raise TypeError("LoadLibrary() argument 1 must be str, not None")
            real = real_cdll(name, *args, **kwargs)
            if name is None:
                return _Libc(real, libc_missing, refused, no_landlock)
            return real

    ctypes.CDLL = CDLL  # type: ignore[misc]


def write_wrapper(folder: Path, platform: str) -> Path:
    """An executable that runs Python under ``platform`` (this bootstrap first): the worker's interpreter."""
    wrapper = folder / f"python-{platform}"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" {platform} '
                       f'"{wrapper}" "$@"\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return wrapper


def main(argv: list[str]) -> None:
    platform, wrapper, rest = argv[1], argv[2], argv[3:]
    hide(platform)
    sys.executable = wrapper
    if rest[:1] == ["-m"]:
        sys.argv = [rest[1], *rest[2:]]
        runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
    elif rest[:1] == ["-c"]:
        sys.argv = ["-c", *rest[2:]]
        exec(compile(rest[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 - a test bootstrap
    else:
        sys.argv = rest
        runpy.run_path(rest[0], run_name="__main__")


if __name__ == "__main__":
    sys.path.pop(0)  # this folder (tests/) is no package root for what runs next
    main(sys.argv)
