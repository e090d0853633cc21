"""Layer ``seccomp``: a system-call filter, the last layer on.

Blocks new processes and programs, the kernel's large attack surfaces
(io_uring, bpf, perf...), reaching into other processes, leaving the process
group or the namespaces and mounts of the earlier layers, non-unix sockets,
IPC objects that outlive the child, and system-wide knobs a uid-0 child must
not touch; ``SECCOMP_DENY`` lists them grouped by why.  Last, because it
forbids unshare, mount, setrlimit and capset, which the earlier layers use.

The syscall numbers for calls newer than libseccomp 2.5.4 are x86_64's, so on
other architectures the layer reports itself unavailable rather than deny the
wrong calls.
"""

from __future__ import annotations

import errno
import os
import socket
import sys

from grader.sandbox.layers.mounts import CLONE_NEWNS
from grader.sandbox.layers.network import CLONE_NEWNET
from grader.sandbox.layers.policy import ChildPolicy, LayerUnavailable
from grader.sandbox.layers.syscalls import _NR

# pyseccomp loads libseccomp when imported: on macOS it raises RuntimeError (no libseccomp), on Windows
# TypeError (ctypes.CDLL(None)); either way, as when it is not installed, the layer says why it is off.
PYSECCOMP_MISSING = ""
try:
    import pyseccomp
except (ImportError, OSError, RuntimeError, TypeError) as exc:
    pyseccomp = None  # type: ignore[assignment]
    PYSECCOMP_MISSING = f"{type(exc).__name__}: {exc}"

CLONE_THREAD = 0x00010000
CLONE_NAMESPACE_FLAGS = (0x80, CLONE_NEWNS, 0x02000000, 0x04000000, 0x08000000,
                         0x10000000, 0x20000000, CLONE_NEWNET)
TIOCSTI, TIOCLINUX = 0x5412, 0x541C

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
    if not sys.platform.startswith("linux"):
        raise LayerUnavailable(f"not available on {sys.platform} (a Linux kernel feature)")
    if pyseccomp is None:
        raise LayerUnavailable(f"pyseccomp cannot be loaded ({PYSECCOMP_MISSING})")
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
