"""The libc plumbing every layer shares: raw syscalls by name and prctl.

Hand-written over ctypes: the calls the layers need (landlock, mount_setattr,
capset) have no wrapper in the standard library.  Syscall numbers for calls
newer than libseccomp 2.5.4 are x86_64's; the landlock and mount_setattr
numbers are the same on every architecture.
"""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = (ctypes.c_int,) + (ctypes.c_ulong,) * 4
_libc.prctl.restype = ctypes.c_int
_libc.unshare.argtypes = (ctypes.c_int,)
_libc.mount.argtypes = (ctypes.c_char_p,) * 3 + (ctypes.c_ulong, ctypes.c_char_p)

_NR = {  # x86_64 and (for landlock / mount_setattr) every architecture
    "mount_setattr": 442,
    "landlock_create_ruleset": 444,
    "landlock_add_rule": 445,
    "landlock_restrict_self": 446,
    # newer than libseccomp 2.5.4's tables (x86_64 numbers, measured here)
    "setxattrat": 463,
    "removexattrat": 466,
    "open_tree_attr": 467,
}


def _oserror(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def _syscall(name: str, *args: object) -> int:
    """Raw syscall by name; ints are widened to long (variadic ABI)."""
    cargs = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    ret = _libc.syscall(ctypes.c_long(_NR[name]), *cargs)
    if ret < 0:
        raise _oserror(name)
    return ret


def _prctl(option: int, arg2: int = 0) -> int:
    ret = _libc.prctl(option, arg2, 0, 0, 0)
    if ret < 0:
        raise _oserror(f"prctl({option})")
    return ret
