"""Layers ``no_new_privs`` and ``capabilities``: the child can never gain or
keep privileges.

``no_new_privs`` blocks regaining privileges through execve (setuid bits, file
capabilities); it goes on before ``landlock``, whose landlock_restrict_self
needs it when the process lacks CAP_SYS_ADMIN.  ``capabilities`` blocks what a
uid-0 child could otherwise still do: raise its own hard rlimits
(CAP_SYS_RESOURCE), renice (CAP_SYS_NICE), chown, load modules, reboot...; it
goes on after the namespace layers, which need CAP_SYS_ADMIN, and before
``seccomp``, which forbids capset.
"""

from __future__ import annotations

import ctypes

from grader.sandbox.layers.policy import ChildPolicy
from grader.sandbox.layers.syscalls import _oserror, _prctl, libc_function

PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS = 38, 39
PR_CAPBSET_READ, PR_CAPBSET_DROP = 23, 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAP_SETPCAP = 8


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_CAP_VERSION_3 = 0x20080522


def capabilities_now() -> tuple[int, int, int]:
    """(effective, permitted, inheritable) capability masks of this thread."""
    data = (_CapData * 2)()
    if libc_function("capget")(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) < 0:
        raise _oserror("capget")
    def join(attr: str) -> int:
        return getattr(data[0], attr) | getattr(data[1], attr) << 32
    return join("effective"), join("permitted"), join("inheritable")


def _apply_no_new_privs(policy: ChildPolicy) -> None:
    """execve can never grant privileges again (setuid bits, file caps)."""
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def _apply_capabilities(policy: ChildPolicy) -> None:
    """Drop every capability (bounding, ambient, effective, permitted,
    inheritable).  Matters when the server runs as root: uid 0 with
    capabilities could raise its own hard rlimits, renice, chown, load
    modules, reboot...  Seccomp denies most of these too (defence in depth).
    Without CAP_SETPCAP the bounding set cannot shrink; it only matters for
    execve, which seccomp denies."""
    if capabilities_now()[0] >> CAP_SETPCAP & 1:
        cap = 0
        while libc_function("prctl")(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0:  # EINVAL past the last cap
            _prctl(PR_CAPBSET_DROP, cap)
            cap += 1
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    data = (_CapData * 2)()
    if libc_function("capset")(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) < 0:
        raise _oserror("capset")
