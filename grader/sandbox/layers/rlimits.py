"""Layer ``rlimits``: resource limits on the child.

Blocks exhausting the grading host: memory (address space), CPU time (SIGXCPU
at the soft limit, SIGKILL one second later), file size, open files, core
dumps and, as a backstop, the number of tasks.  Goes on before ``seccomp``,
which forbids setting limits afterwards; ``capabilities`` then takes away
CAP_SYS_RESOURCE, so a uid-0 child cannot raise its hard limits again.
"""

from __future__ import annotations

import resource

from grader.sandbox.layers.policy import ChildPolicy

# RLIMIT_NPROC counts every task (threads included) of the real uid and is
# ignored for uid 0 in the initial user namespace, so it is only a backstop for
# a non-root server; seccomp is what stops process creation.
NPROC_LIMIT = 1024


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
