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

One module per layer, its docstring saying what it blocks and why it sits
where it does in the order: network (netns), mounts (mountns_scratch),
rlimits, privileges (no_new_privs, capabilities), landlock, seccomp.  policy
holds ``ChildPolicy`` and ``LAYER_ORDER``, syscalls the shared ctypes
plumbing, stack :func:`apply_layers`, fds :func:`close_inherited_fds`, probe
:func:`probe_layers`.

Every layer is Linux's.  Elsewhere (the student kit's ``grader check`` on macOS
or Windows) the package still imports, libc functions being bound on first use
(``syscalls.libc_function``), and each layer reports itself unavailable with
the reason; ``rlimits`` applies wherever there is a ``resource`` module.  The seccomp layer carries x86_64 syscall
numbers for calls newer than libseccomp 2.5.4 and reports itself unavailable
on other architectures rather than deny the wrong calls.
"""

from __future__ import annotations

from grader.sandbox.layers.fds import close_inherited_fds
from grader.sandbox.layers.landlock import (
    DEVICE_READABLE,
    DEVICE_WRITABLE,
    SYSTEM_READABLE,
    landlock_abi,
    python_readable_paths,
)
from grader.sandbox.layers.policy import LAYER_ORDER, ChildPolicy, LayerUnavailable
from grader.sandbox.layers.privileges import capabilities_now
from grader.sandbox.layers.probe import probe_layers
from grader.sandbox.layers.rlimits import NPROC_LIMIT
from grader.sandbox.layers.seccomp import SECCOMP_DENY
from grader.sandbox.layers.stack import apply_layers

__all__ = [
    "DEVICE_READABLE", "DEVICE_WRITABLE", "LAYER_ORDER", "NPROC_LIMIT", "SECCOMP_DENY",
    "SYSTEM_READABLE", "ChildPolicy", "LayerUnavailable", "apply_layers", "capabilities_now",
    "close_inherited_fds", "landlock_abi", "probe_layers", "python_readable_paths",
]
