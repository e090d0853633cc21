"""Layer ``mountns_scratch``: a private, read-only mount tree and a size-capped
scratch folder.

Blocks what landlock does not cover: chmod, chown, xattrs and utime on any
file (the whole tree is remounted read-only and nosuid), and filling the disk
with many small files (the scratch folder becomes a small tmpfs with a total
size and inode cap, on top of RLIMIT_FSIZE per file).  Mount changes stay in
the child.  Needs CAP_SYS_ADMIN, so it goes on before ``capabilities``, and
before ``landlock``, whose rules open the scratch tmpfs mounted here.
"""

from __future__ import annotations

import ctypes
import os

from grader.sandbox.layers.policy import ChildPolicy
from grader.sandbox.layers.syscalls import _oserror, _syscall, libc_function

CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = 0x1, 0x2
AT_FDCWD, AT_RECURSIVE = -100, 0x8000


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
    if libc_function("unshare")(CLONE_NEWNS) < 0:
        raise _oserror("unshare(CLONE_NEWNS)")
    if libc_function("mount")(None, b"/", None, MS_REC | MS_PRIVATE, None) < 0:
        raise _oserror("mount(/, MS_REC|MS_PRIVATE)")
    # struct mount_attr {u64 attr_set, attr_clr, propagation, userns_fd}
    attr = (ctypes.c_uint64 * 4)(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, 0, 0)
    _syscall("mount_setattr", AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr),
             ctypes.sizeof(attr))
    if policy.scratch_dir is not None:
        inodes = max(64, policy.scratch_mib * 64)
        opts = f"size={policy.scratch_mib}m,nr_inodes={inodes},mode=0700"
        if libc_function("mount")(b"tmpfs", os.fsencode(policy.scratch_dir), b"tmpfs",
                       MS_NOSUID | MS_NODEV | MS_NOEXEC, opts.encode()) < 0:
            raise _oserror(f"mount tmpfs on {policy.scratch_dir}")
        # A working directory inside the scratch folder still points at the
        # disk folder underneath the new mount: move it onto the tmpfs.
        scratch = os.path.realpath(policy.scratch_dir)
        cwd = os.path.realpath(os.getcwd())
        if cwd == scratch or cwd.startswith(scratch + os.sep):
            os.chdir(scratch)
