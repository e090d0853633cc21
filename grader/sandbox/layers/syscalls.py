"""The libc plumbing every layer shares: raw syscalls by name and prctl.

Hand-written over ctypes: the calls the layers need (landlock, mount_setattr,
capset) have no wrapper in the standard library.  Syscall numbers for calls
newer than libseccomp 2.5.4 are x86_64's; the landlock and mount_setattr
numbers are the same on every architecture.

Every libc function is bound on first use, never when this module is
imported: macOS's libc has no ``prctl``, ``unshare`` or ``mount``, and on
Windows ``ctypes.CDLL(None)`` fails outright, yet the student kit imports the
layers there too (``grader check`` on a laptop).  A function this libc lacks
raises ``LayerUnavailable`` naming it, so only the layers that need it are
reported missing, with that reason, on the card.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from typing import Any

from grader.sandbox.layers.policy import LayerUnavailable

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

# (argtypes, restype) of the functions whose defaults (int arguments, int result) would be wrong
_SIGNATURES: dict[str, tuple[tuple[Any, ...] | None, Any]] = {
    "syscall": (None, ctypes.c_long),
    "prctl": ((ctypes.c_int,) + (ctypes.c_ulong,) * 4, ctypes.c_int),
    "unshare": ((ctypes.c_int,), ctypes.c_int),
    "mount": ((ctypes.c_char_p,) * 3 + (ctypes.c_ulong, ctypes.c_char_p), ctypes.c_int),
}


@functools.cache
def _process_libc() -> ctypes.CDLL:
    """The C library this process runs on; LayerUnavailable where there is none to load by ``None``."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except (OSError, TypeError) as exc:  # Windows: CDLL(None) is a TypeError
        raise LayerUnavailable(f"no C library to call on {sys.platform}: {exc}") from None


@functools.cache
def libc_function(name: str) -> Any:
    """libc's ``name``, bound (with its signature) on first use; LayerUnavailable where libc lacks it."""
    try:
        function = getattr(_process_libc(), name)
    except AttributeError:
        where = "" if sys.platform.startswith("linux") else f" (not available on {sys.platform})"
        raise LayerUnavailable(f"the C library has no {name}(){where}") from None
    if name in _SIGNATURES:
        argtypes, restype = _SIGNATURES[name]
        if argtypes is not None:
            function.argtypes = argtypes
        function.restype = restype
    return function


def _oserror(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def _syscall(name: str, *args: object) -> int:
    """Raw syscall by name; ints are widened to long (variadic ABI).  Linux's numbers only: another
    system's ``syscall()`` (macOS has one) would run a different call under the same number."""
    if not sys.platform.startswith("linux"):
        raise LayerUnavailable(f"not available on {sys.platform} (Linux system calls)")
    cargs = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    ret = libc_function("syscall")(ctypes.c_long(_NR[name]), *cargs)
    if ret < 0:
        raise _oserror(name)
    return ret


def _prctl(option: int, arg2: int = 0) -> int:
    ret = libc_function("prctl")(option, arg2, 0, 0, 0)
    if ret < 0:
        raise _oserror(f"prctl({option})")
    return ret
