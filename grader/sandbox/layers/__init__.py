"""Isolation layers for the sandboxed child that runs student code.

The worker server forks a child per submission; right after the fork, before
any student code is loaded, the child calls :func:`apply_layers`.  Each layer
is independent, so a protection that is unavailable on a machine (no root, old
kernel, missing library) leaves the others in place, and the returned status
says exactly what is active.  :func:`probe_layers` forks a throwaway child and
checks that every layer really bites, for the start-up record.

Order matters and is fixed by ``LAYER_ORDER``:

1. ``netns``, ``mountns_scratch``: creating namespaces and mounts needs
   CAP_SYS_ADMIN, which the later layers take away.
2. ``rlimits``: before seccomp, which forbids setting limits afterwards.
3. ``no_new_privs``: before landlock, because landlock_restrict_self needs it
   when the process lacks CAP_SYS_ADMIN (it is harmless to set it early).
4. ``landlock``: the rule set opens the allowed paths, so it must come after
   the mounts it refers to (the scratch tmpfs).
5. ``capabilities``: a uid-0 child would otherwise keep CAP_SYS_RESOURCE
   (raise its own hard rlimits), CAP_SYS_NICE, CAP_CHOWN, ...
6. ``seccomp`` last: it forbids unshare, mount, setrlimit and capset.

Everything here is Linux-only.  The seccomp layer carries x86_64 syscall
numbers for calls newer than libseccomp 2.5.4 and reports itself unavailable
on other architectures rather than deny the wrong calls.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import os
import resource
import select
import signal
import site
import socket
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable

try:
    import pyseccomp
except ImportError:  # the seccomp layer then reports itself unavailable
    pyseccomp = None  # type: ignore[assignment]

LAYER_ORDER: tuple[str, ...] = (
    "netns",
    "mountns_scratch",
    "rlimits",
    "no_new_privs",
    "landlock",
    "capabilities",
    "seccomp",
)

# Always readable system locations: the dynamic loader and shared libraries,
# and the CPU description that torch's cpuinfo reads on the first op after the
# fork (without it every child prints "Error in cpuinfo" to stderr; measured).
SYSTEM_READABLE: tuple[str, ...] = ("/usr", "/lib", "/lib64", "/etc/ld.so.cache",
                                    "/proc/cpuinfo", "/sys/devices/system/cpu")
# Device files a numeric program may legitimately open.  /dev/null is also
# writable: redirecting output to os.devnull is common and harmless.
DEVICE_READABLE: tuple[str, ...] = ("/dev/urandom", "/dev/zero")
DEVICE_WRITABLE: tuple[str, ...] = ("/dev/null",)

# RLIMIT_NPROC counts every task (threads included) of the real uid and is
# ignored for uid 0 in the initial user namespace, so it is only a backstop for
# a non-root server; seccomp is what stops process creation.
NPROC_LIMIT = 1024


@dataclass(frozen=True)
class ChildPolicy:
    """What one sandboxed child may do.  Sizes are in MiB."""

    memory_mib: int = 3072  # RLIMIT_AS; torch plus small ops needs ~640 MiB
    cpu_seconds: int = 120  # RLIMIT_CPU for the child's whole life
    file_size_mib: int = 16  # RLIMIT_FSIZE: largest file the child can write
    open_files: int = 64  # RLIMIT_NOFILE
    scratch_dir: str | None = None  # the only writable folder (must exist)
    scratch_mib: int = 16  # size cap of the scratch tmpfs (mountns_scratch)
    readable_paths: tuple[str, ...] = ()  # extra read-only paths
    disabled: frozenset[str] = frozenset()  # layer names to skip

    def __post_init__(self) -> None:
        unknown = set(self.disabled) - set(LAYER_ORDER)
        if unknown:  # a typo here would silently leave a protection on/off
            raise ValueError(f"unknown layer names in disabled: {sorted(unknown)}")


class LayerUnavailable(Exception):
    """A layer cannot be applied on this machine; the message says why."""


# --------------------------------------------------------------------------
# libc plumbing

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

PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS = 38, 39
PR_CAPBSET_READ, PR_CAPBSET_DROP = 23, 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAP_SETPCAP = 8
CLONE_THREAD = 0x00010000
CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
CLONE_NAMESPACE_FLAGS = (0x80, CLONE_NEWNS, 0x02000000, 0x04000000, 0x08000000,
                         0x10000000, 0x20000000, CLONE_NEWNET)
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = 0x1, 0x2
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
TIOCSTI, TIOCLINUX = 0x5412, 0x541C


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


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_CAP_VERSION_3 = 0x20080522


def capabilities_now() -> tuple[int, int, int]:
    """(effective, permitted, inheritable) capability masks of this thread."""
    data = (_CapData * 2)()
    if _libc.capget(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) < 0:
        raise _oserror("capget")
    def join(attr: str) -> int:
        return getattr(data[0], attr) | getattr(data[1], attr) << 32
    return join("effective"), join("permitted"), join("inheritable")


# --------------------------------------------------------------------------
# the layers; each raises OSError or LayerUnavailable when it cannot apply


def _apply_netns(policy: ChildPolicy) -> None:
    """New, empty network namespace: no interfaces, not even a working
    loopback, and its own abstract unix-socket namespace.  Needs CAP_SYS_ADMIN."""
    if _libc.unshare(CLONE_NEWNET) < 0:
        raise _oserror("unshare(CLONE_NEWNET)")


def _apply_mountns_scratch(policy: ChildPolicy) -> None:
    """Private mount namespace: the whole tree becomes read-only and nosuid
    (landlock does not cover chmod/chown/xattr/utime, a read-only mount does),
    and the scratch folder becomes a small tmpfs, so many small files hit a
    total cap as well as RLIMIT_FSIZE.  Mount changes stay in the child.

    Without CAP_SYS_ADMIN this is unavailable (the server could still use an
    unprivileged user namespace, not done here); the scratch folder is then
    capped only per file (RLIMIT_FSIZE), not in total or in number of files,
    so the server should put it on a size-limited filesystem and empty it.
    """
    if _libc.unshare(CLONE_NEWNS) < 0:
        raise _oserror("unshare(CLONE_NEWNS)")
    if _libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) < 0:
        raise _oserror("mount(/, MS_REC|MS_PRIVATE)")
    # struct mount_attr {u64 attr_set, attr_clr, propagation, userns_fd}
    attr = (ctypes.c_uint64 * 4)(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, 0, 0)
    _syscall("mount_setattr", AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr),
             ctypes.sizeof(attr))
    if policy.scratch_dir is not None:
        inodes = max(64, policy.scratch_mib * 64)
        opts = f"size={policy.scratch_mib}m,nr_inodes={inodes},mode=0700"
        if _libc.mount(b"tmpfs", os.fsencode(policy.scratch_dir), b"tmpfs",
                       MS_NOSUID | MS_NODEV | MS_NOEXEC, opts.encode()) < 0:
            raise _oserror(f"mount tmpfs on {policy.scratch_dir}")
        # A working directory inside the scratch folder still points at the
        # disk folder underneath the new mount: move it onto the tmpfs.
        scratch = os.path.realpath(policy.scratch_dir)
        cwd = os.path.realpath(os.getcwd())
        if cwd == scratch or cwd.startswith(scratch + os.sep):
            os.chdir(scratch)


def _lower_rlimit(res: int, soft: int, hard: int) -> None:
    """Lower a limit, never trying to raise a hard limit we may not raise."""
    _, cur_hard = resource.getrlimit(res)
    if cur_hard != resource.RLIM_INFINITY:
        hard = min(hard, cur_hard)
    resource.setrlimit(res, (min(soft, hard), hard))


def _apply_rlimits(policy: ChildPolicy) -> None:
    """Memory (address space), CPU, file size, open files, no core dumps.
    CPU: SIGXCPU at the soft limit, SIGKILL one second later."""
    mib = 1 << 20
    _lower_rlimit(resource.RLIMIT_AS, policy.memory_mib * mib, policy.memory_mib * mib)
    _lower_rlimit(resource.RLIMIT_CPU, policy.cpu_seconds, policy.cpu_seconds + 1)
    _lower_rlimit(resource.RLIMIT_FSIZE, policy.file_size_mib * mib, policy.file_size_mib * mib)
    _lower_rlimit(resource.RLIMIT_NOFILE, policy.open_files, policy.open_files)
    _lower_rlimit(resource.RLIMIT_CORE, 0, 0)
    _lower_rlimit(resource.RLIMIT_NPROC, NPROC_LIMIT, NPROC_LIMIT)


def _apply_no_new_privs(policy: ChildPolicy) -> None:
    """execve can never grant privileges again (setuid bits, file caps)."""
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


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
    except OSError:
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


def _apply_landlock(policy: ChildPolicy) -> None:
    """Filesystem allow-list: read-only interpreter, system libraries and
    ``policy.readable_paths``; read-write only ``scratch_dir``; nothing else
    (no course repository, no /proc, no /tmp).  Also, with the matching ABI:
    no TCP bind/connect (ABI 4), no abstract unix sockets or signals outside
    the sandbox (ABI 6).  Landlock always forbids ptrace of (and so reading
    /proc/PID/mem of) processes outside the domain.  Hand-written over ctypes
    because the ``landlock`` PyPI package (1.0.0.dev5) knows only file rights.
    """
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


def _apply_capabilities(policy: ChildPolicy) -> None:
    """Drop every capability (bounding, ambient, effective, permitted,
    inheritable).  Matters when the server runs as root: uid 0 with
    capabilities could raise its own hard rlimits, renice, chown, load
    modules, reboot...  Seccomp denies most of these too (defence in depth).
    Without CAP_SETPCAP the bounding set cannot shrink; it only matters for
    execve, which seccomp denies."""
    if capabilities_now()[0] >> CAP_SETPCAP & 1:
        cap = 0
        while _libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0:  # EINVAL past the last cap
            _prctl(PR_CAPBSET_DROP, cap)
            cap += 1
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) < 0:
        raise _oserror("capset")


# Denied outright with EPERM.  Grouped by why.
SECCOMP_DENY: tuple[str, ...] = (
    # new processes and programs (threads go through clone, filtered below)
    "fork", "vfork", "execve", "execveat",
    # large kernel attack surface, never needed by numeric Python
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf",
    "perf_event_open", "userfaultfd", "personality", "keyctl", "add_key", "request_key",
    # reaching into other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp",
    "pidfd_open", "pidfd_getfd", "pidfd_send_signal",
    # leaving the process group (the server kills the child by group) or the
    # namespaces and mounts set up by the earlier layers
    "setsid", "setpgid", "unshare", "setns", "mount", "umount2", "pivot_root",
    "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
    "open_tree_attr", "mount_setattr",
    # connecting to pathname unix sockets (landlock does not cover it); the
    # judge socket is already connected when the layers go on
    "connect",
    # System V IPC and POSIX message queues live outside the filesystem and
    # outlive the child (memory beyond RLIMIT_AS, other processes' objects)
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl", "mq_open", "mq_unlink",
    "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    # limits, priorities and file metadata (landlock does not cover chmod,
    # chown, xattrs); these would outlive the child
    "setrlimit", "setpriority", "sched_setscheduler", "sched_setparam",
    "sched_setattr", "ioprio_set", "migrate_pages", "move_pages",
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "setxattr", "lsetxattr", "fsetxattr", "setxattrat",
    "removexattr", "lremovexattr", "fremovexattr", "removexattrat",
    # system-wide knobs a uid-0 child must not touch
    "reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "swapon", "swapoff", "acct", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "iopl", "ioperm",
    "syslog", "quotactl", "quotactl_fd", "name_to_handle_at", "open_by_handle_at",
    "fanotify_init", "uselib",
)


def _apply_seccomp(policy: ChildPolicy) -> None:
    """Default-allow filter that denies (EPERM) what a child never needs.

    * clone without CLONE_THREAD (fork) or with namespace flags; clone3 gets
      ENOSYS, so glibc's pthread_create falls back to clone, where the flags
      can be inspected (clone3 passes them in memory, out of seccomp's reach).
    * socket/socketpair other than AF_UNIX, and AF_UNIX datagram sockets
      (sendmsg with an address reaches any pathname socket such as /dev/log).
    * signals (kill, tkill, tgkill, rt_*sigqueueinfo) to any pid but its own.
      kill(0) and kill(-pgid) are denied too: libseccomp rejects two
      comparisons of one argument in a rule (EINVAL, measured), so one
      allowed value is all a default-allow rule can express, and the child
      may share a process group with the server.
    * prlimit64 that sets a limit; TIOCSTI/TIOCLINUX ioctls.
    * 32-bit and x32 system calls kill the process (ACT_BADARCH).
    libseccomp sets no_new_privs itself when it loads the filter.
    """
    if pyseccomp is None:
        raise LayerUnavailable("pyseccomp is not installed")
    if os.uname().machine != "x86_64":
        raise LayerUnavailable("syscall numbers in _NR are x86_64's")
    sc = pyseccomp
    eperm, Arg = sc.ERRNO(errno.EPERM), sc.Arg
    flt = sc.SyscallFilter(sc.ALLOW)
    flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    flt.set_attr(sc.Attr.CTL_TSYNC, 1)

    def nr(name: str) -> int:
        number = sc.resolve_syscall(sc.Arch.NATIVE, name)
        return _NR[name] if number < 0 else number

    for name in SECCOMP_DENY:
        flt.add_rule(eperm, nr(name))
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    flt.add_rule(eperm, "clone", Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    for flag in CLONE_NAMESPACE_FLAGS:
        flt.add_rule(eperm, "clone", Arg(0, sc.MASKED_EQ, flag, flag))
    for name in ("socket", "socketpair"):
        flt.add_rule(eperm, name, Arg(0, sc.NE, socket.AF_UNIX))
        for sock_type in (socket.SOCK_DGRAM, socket.SOCK_RAW):  # RAW is DGRAM for AF_UNIX
            flt.add_rule(eperm, name, Arg(1, sc.MASKED_EQ, 0xF, sock_type))
    me = os.getpid()
    for name in ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        flt.add_rule(eperm, name, Arg(0, sc.NE, me))
    flt.add_rule(eperm, "prlimit64", Arg(2, sc.NE, 0))
    for request in (TIOCSTI, TIOCLINUX):
        flt.add_rule(eperm, "ioctl", Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    flt.load()


_APPLY: dict[str, Callable[[ChildPolicy], None]] = {
    "netns": _apply_netns,
    "mountns_scratch": _apply_mountns_scratch,
    "rlimits": _apply_rlimits,
    "no_new_privs": _apply_no_new_privs,
    "landlock": _apply_landlock,
    "capabilities": _apply_capabilities,
    "seccomp": _apply_seccomp,
}


def apply_layers(policy: ChildPolicy) -> dict[str, str]:
    """Apply every layer not disabled, in ``LAYER_ORDER``.

    Returns ``{layer: 'active' | 'unavailable: <reason>' | 'disabled'}``; the
    caller decides whether to go on without a layer (fail closed: the judge
    should refuse to grade if a required layer is missing).  Never raises for
    an unavailable layer.  Raises RuntimeError if the process has more than
    one thread: landlock and the namespaces only cover the calling thread, so
    call this in the child right after fork, before anything starts threads.
    """
    try:
        threads = len(os.listdir("/proc/self/task"))
    except FileNotFoundError:  # no /proc mounted: cannot tell
        threads = 1
    if threads > 1:
        raise RuntimeError(f"apply_layers needs a single-threaded process, found {threads} threads")
    status: dict[str, str] = {}
    for name in LAYER_ORDER:
        if name in policy.disabled:
            status[name] = "disabled"
            continue
        try:
            _APPLY[name](policy)
        except (OSError, LayerUnavailable) as exc:
            status[name] = f"unavailable: {exc}"
        else:
            status[name] = "active"
    return status


def close_inherited_fds(keep: Iterable[int]) -> None:
    """Close every file descriptor except ``keep`` (pass 0, 1, 2 explicitly to
    keep the standard streams).  Uses close_range through os.closerange, so it
    is fast; fds above the RLIMIT_NOFILE hard limit (only possible if the limit
    was lowered after they were opened) are not looked for.  Empty ranges are
    skipped: CPython 3.11's os.closerange(n, n) closes *every* fd from n up
    (close_range(n, n - 1) wraps around; measured)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    top = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    low = 0
    for fd in sorted({fd for fd in keep if fd >= 0}) + [max(top, low)]:
        if fd > low:
            os.closerange(low, fd)
        low = max(low, fd + 1)


# --------------------------------------------------------------------------
# probing: does each layer really bite on this machine?


def _expect_denied(action: Callable[[], object], what: str) -> str | None:
    try:
        action()
    except PermissionError:
        return None
    return f"{what} was allowed"


def _try_fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def _thread_runs() -> bool:
    done = threading.Event()
    worker = threading.Thread(target=done.set)
    worker.start()
    worker.join(5)
    return done.is_set()


def _verify_layer(name: str, policy: ChildPolicy, facts: dict) -> str | None:
    """None if the layer bites, else what went wrong."""
    if name == "rlimits":
        want = {"AS": policy.memory_mib << 20, "CPU": policy.cpu_seconds,
                "FSIZE": policy.file_size_mib << 20, "NOFILE": policy.open_files, "CORE": 0}
        soft = {res: resource.getrlimit(getattr(resource, f"RLIMIT_{res}"))[0] for res in want}
        high = [res for res, value in want.items()
                if soft[res] == resource.RLIM_INFINITY or soft[res] > value]
        return f"soft limits too high: {high}" if high else None
    if name == "no_new_privs":
        return None if _prctl(PR_GET_NO_NEW_PRIVS) == 1 else "no_new_privs is not set"
    if name == "landlock":
        return _expect_denied(lambda: open(facts["outside_file"], "rb").close(),
                              "reading a file outside the allow-list")
    if name == "capabilities":
        return None if capabilities_now() == (0, 0, 0) else f"capabilities left: {capabilities_now()}"
    if name == "seccomp":
        if not _thread_runs():
            return "threads do not work"
        return (_expect_denied(_try_fork, "fork")
                or _expect_denied(lambda: socket.socket(socket.AF_INET).close(), "socket(AF_INET)"))
    if name == "netns":
        same = os.stat("/proc/self/ns/net").st_ino == facts["netns"]
        return "still in the parent's network namespace" if same else None
    if name == "mountns_scratch":
        if os.stat("/proc/self/ns/mnt").st_ino == facts["mntns"]:
            return "still in the parent's mount namespace"
        if not os.statvfs("/").f_flag & os.ST_RDONLY:
            return "/ is writable"
        if policy.scratch_dir is not None:
            vfs = os.statvfs(policy.scratch_dir)
            if vfs.f_blocks * vfs.f_frsize > policy.scratch_mib << 20:
                return "scratch folder is not size-capped"
        return None
    raise ValueError(name)


def _probe_child(policy: ChildPolicy, facts: dict) -> dict[str, str]:
    status = apply_layers(policy)
    for name, state in status.items():
        if state == "active":
            try:
                problem = _verify_layer(name, policy, facts)
            except OSError as exc:
                problem = f"check failed: {exc}"
            if problem:
                status[name] = f"failed: {problem}"
    return status


def probe_layers(policy: ChildPolicy | None = None, timeout: float = 10.0) -> dict[str, str]:
    """Fork a throwaway child, apply the layers there and check that each one
    really works (fork and AF_INET sockets fail, a file outside the allow-list
    is unreadable, ...).  Returns ``{layer: 'active' | 'disabled' |
    'unavailable: ...' | 'failed: ...'}``; used at start-up to record which
    protections this machine gives.  Call it from a single-threaded process
    or one that has called torch.set_num_threads(1) (see ARCHITECTURE)."""
    with tempfile.TemporaryDirectory(prefix="probe-layers-") as tmp:
        if policy is None:
            scratch = os.path.join(tmp, "scratch")
            os.mkdir(scratch)
            policy = ChildPolicy(scratch_dir=scratch)
        outside = os.path.join(tmp, "outside.txt")
        with open(outside, "w") as handle:
            handle.write("not for the child\n")
        facts = {"outside_file": outside,
                 "netns": os.stat("/proc/self/ns/net").st_ino,
                 "mntns": os.stat("/proc/self/ns/mnt").st_ino}
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never return into the caller's code
            code = 1
            try:
                os.close(read_end)
                os.write(write_end, json.dumps(_probe_child(policy, facts)).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        payload = _read_until_eof(read_end, time.monotonic() + timeout)
        os.close(read_end)
        exit_status = _reap(pid, time.monotonic() + 2.0)
    if not payload:
        return {name: f"failed: probe child gave no report ({exit_status})" for name in LAYER_ORDER}
    return json.loads(payload)


def _read_until_eof(fd: int, deadline: float) -> bytes:
    chunks = []
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
    return b""  # timed out: treat a partial report as none


def _reap(pid: int, deadline: float) -> str:
    """Wait for the child until the deadline, then SIGKILL it."""
    while time.monotonic() < deadline:
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            return f"wait status {wait_status}"
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "killed after timeout"
