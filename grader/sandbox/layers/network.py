"""Layer ``netns``: a new, empty network namespace.

Blocks every network route out of the child: the namespace has no interfaces,
not even a working loopback, and its own abstract unix-socket namespace, so
student code can neither reach the internet nor a service on the grading
host.  Needs CAP_SYS_ADMIN, so it goes on first, before ``capabilities``
takes that away.
"""

from __future__ import annotations

from grader.sandbox.layers.policy import ChildPolicy
from grader.sandbox.layers.syscalls import _oserror, libc_function

CLONE_NEWNET = 0x40000000


def _apply_netns(policy: ChildPolicy) -> None:
    """New, empty network namespace: no interfaces, not even a working
    loopback, and its own abstract unix-socket namespace.  Needs CAP_SYS_ADMIN."""
    if libc_function("unshare")(CLONE_NEWNET) < 0:
        raise _oserror("unshare(CLONE_NEWNET)")
