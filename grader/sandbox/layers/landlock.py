"""Layer ``landlock``: a filesystem allow-list, and with a recent kernel no TCP
and no reaching outside the sandbox.

Blocks reading anything but the interpreter's own trees, the system libraries
and ``policy.readable_paths`` (above all the course repository, whose
solutions sit next to the venv, /proc and /tmp), and writing anywhere but the
scratch folder.  With the matching ABI it also blocks TCP bind/connect (ABI 4)
and abstract unix sockets or signals outside the sandbox (ABI 6); landlock
always forbids ptrace of (and so reading /proc/PID/mem of) processes outside
the domain.  Goes on after the mounts its rules open (the scratch tmpfs) and
after ``no_new_privs``, which landlock_restrict_self needs without
CAP_SYS_ADMIN.
"""

from __future__ import annotations

import ctypes
import functools
import os
import site
import sys
import sysconfig

from grader.sandbox.layers.policy import ChildPolicy, LayerUnavailable
from grader.sandbox.layers.syscalls import _syscall, libc_function

# Always readable system locations: the dynamic loader and shared libraries,
# and the CPU description that torch's cpuinfo reads on the first op after the
# fork (without it every child prints "Error in cpuinfo" to stderr; measured).
SYSTEM_READABLE: tuple[str, ...] = ("/usr", "/lib", "/lib64", "/etc/ld.so.cache",
                                    "/proc/cpuinfo", "/sys/devices/system/cpu")
# Device files a numeric program may legitimately open.  /dev/null is also
# writable: redirecting output to os.devnull is common and harmless.
DEVICE_READABLE: tuple[str, ...] = ("/dev/urandom", "/dev/zero")
DEVICE_WRITABLE: tuple[str, ...] = ("/dev/null",)

# landlock access rights (include/uapi/linux/landlock.h)
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
LL_REMOVE_DIR, LL_REMOVE_FILE, LL_MAKE_DIR, LL_MAKE_REG = 1 << 4, 1 << 5, 1 << 7, 1 << 8
LL_REFER, LL_TRUNCATE, LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
LL_FILE_RIGHTS = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV
LL_NET_BIND_TCP, LL_NET_CONNECT_TCP = 1, 2
LL_SCOPE_ABSTRACT_UNIX_SOCKET, LL_SCOPE_SIGNAL = 1, 2
LL_RULE_PATH_BENEATH = 1
LL_CREATE_RULESET_VERSION = 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """Landlock ABI version of the running kernel, 0 if unsupported."""
    try:
        return _syscall("landlock_create_ruleset", None, 0, LL_CREATE_RULESET_VERSION)
    except (OSError, LayerUnavailable):  # no such call, or no Linux libc to make it with
        return 0


@functools.cache
def python_readable_paths() -> tuple[str, ...]:
    """The interpreter's own trees: prefixes, stdlib and site-packages.

    Only these, never their parents: the venv may sit inside the course
    repository (``/work/main/.venv``), whose solutions must stay unreadable.
    Computed once when this module is imported (in the server, before any
    fork): sysconfig imports a module lazily, which may fail in the child.
    """
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *site.getsitepackages()}
    scheme = sysconfig.get_paths()
    paths.update(scheme[key] for key in ("stdlib", "platstdlib", "purelib", "platlib"))
    return tuple(sorted(p for p in paths if os.path.exists(p)))


python_readable_paths()


def _syscall_available() -> None:
    """LayerUnavailable, saying why, where there is no Linux ``syscall()`` (macOS, Windows): the
    reason on the card is then the system's, not "kernel has no landlock"."""
    if not sys.platform.startswith("linux"):
        raise LayerUnavailable(f"not available on {sys.platform} (a Linux kernel feature)")
    libc_function("syscall")


def _apply_landlock(policy: ChildPolicy) -> None:
    """Filesystem allow-list: read-only interpreter, system libraries and
    ``policy.readable_paths``; read-write only ``scratch_dir``; nothing else
    (no course repository, no /proc, no /tmp).  Also, with the matching ABI:
    no TCP bind/connect (ABI 4), no abstract unix sockets or signals outside
    the sandbox (ABI 6).  Landlock always forbids ptrace of (and so reading
    /proc/PID/mem of) processes outside the domain.  Hand-written over ctypes
    because the ``landlock`` PyPI package (1.0.0.dev5) knows only file rights.
    """
    _syscall_available()
    abi = landlock_abi()
    if abi < 1:
        raise LayerUnavailable("kernel has no landlock (or it is disabled at boot)")
    handled = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        handled |= LL_REFER
    if abi >= 3:
        handled |= LL_TRUNCATE
    if abi >= 5:
        handled |= LL_IOCTL_DEV
    attr = _RulesetAttr(handled_access_fs=handled)
    if abi >= 4:
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP
    if abi >= 6:
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL
    read = LL_READ_FILE | LL_READ_DIR
    rw = (read | LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_DIR
          | LL_MAKE_REG | LL_TRUNCATE | LL_REFER)
    rules = [(p, read) for p in (*python_readable_paths(), *SYSTEM_READABLE,
                                 *DEVICE_READABLE, *policy.readable_paths)]
    rules += [(p, LL_READ_FILE | LL_WRITE_FILE | LL_TRUNCATE) for p in DEVICE_WRITABLE]
    if policy.scratch_dir is not None:
        rules.append((policy.scratch_dir, rw))

    ruleset = _syscall("landlock_create_ruleset", ctypes.byref(attr), ctypes.sizeof(attr), 0)
    try:
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except (FileNotFoundError, PermissionError):
                continue  # e.g. no /lib64, or a 0700 parent: unreachable anyway
            try:
                if not os.path.isdir(path):
                    access &= LL_FILE_RIGHTS  # directory rights on a file: EINVAL
                rule = _PathBeneathAttr(access & handled, fd)
                _syscall("landlock_add_rule", ruleset, LL_RULE_PATH_BENEATH,
                         ctypes.byref(rule), 0)
            finally:
                os.close(fd)
        _syscall("landlock_restrict_self", ruleset, 0)
    finally:
        os.close(ruleset)
