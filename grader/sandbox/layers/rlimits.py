"""Layer ``rlimits``: resource limits on the child.

Blocks exhausting the grading host: memory (address space), CPU time (SIGXCPU
at the soft limit, SIGKILL one second later), file size, open files, core
dumps and, as a backstop, the number of tasks.  Goes on before ``seccomp``,
which forbids setting limits afterwards; ``capabilities`` then takes away
CAP_SYS_RESOURCE, so a uid-0 child cannot raise its hard limits again.
"""

from __future__ import annotations

import sys

from grader.sandbox.layers.policy import ChildPolicy, LayerUnavailable

try:
    import resource
except ImportError:  # Windows: the layer reports itself unavailable; the judge watches from outside (usage.py)
    resource = None  # type: ignore[assignment]

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
    CPU: SIGXCPU at the soft limit, SIGKILL one second later.

    Every limit the system lets us set is set, even when another is refused (macOS may refuse
    RLIMIT_AS); then the layer reports itself unavailable, naming what is not limited, because a
    card that said ``active`` would promise a memory limit that is not there."""
    if resource is None:
        raise LayerUnavailable(f"not available on {sys.platform} (no resource module): no limit inside the "
                               "worker; the judge enforces each call's wall-clock, CPU and memory limits from outside")
    mib = 1 << 20
    wanted = {"AS": (policy.memory_mib * mib,) * 2, "CPU": (policy.cpu_seconds, policy.cpu_seconds + 1),
              "FSIZE": (policy.file_size_mib * mib,) * 2, "NOFILE": (policy.open_files,) * 2,
              "CORE": (0, 0), "NPROC": (NPROC_LIMIT,) * 2}
    refused = []
    for name, (soft, hard) in wanted.items():
        try:
            _lower_rlimit(getattr(resource, f"RLIMIT_{name}"), soft, hard)
        except (AttributeError, ValueError, OSError) as exc:
            refused.append(f"RLIMIT_{name} ({exc or type(exc).__name__})")
    if sys.platform == "darwin":  # XNU's RLIMIT_AS is RLIMIT_RSS, which it accepts and never enforces
        refused.append("RLIMIT_AS (macOS accepts it but does not enforce it: no memory limit)")
    if refused:
        raise LayerUnavailable(f"not set on {sys.platform}: {', '.join(refused)}; the other limits are set")
