"""Not a layer but the step before them: the child closes every descriptor it
inherited from the server (its sockets and files)
except the ones it needs, so student code cannot reach them."""

from __future__ import annotations

import os
from typing import Iterable

try:
    import resource
except ImportError:  # Windows: the kit never calls this there (no fork server), but imports it
    resource = None  # type: ignore[assignment]


def close_inherited_fds(keep: Iterable[int]) -> None:
    """Close every file descriptor except ``keep`` (pass 0, 1, 2 explicitly to
    keep the standard streams).  Uses close_range through os.closerange, so it
    is fast; fds above the RLIMIT_NOFILE hard limit (only possible if the limit
    was lowered after they were opened) are not looked for.  Empty ranges are
    skipped: CPython 3.11's os.closerange(n, n) closes *every* fd from n up
    (close_range(n, n - 1) wraps around; measured)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1] if resource is not None else -1
    top = 1 << 20 if resource is None or hard == resource.RLIM_INFINITY else hard
    low = 0
    for fd in sorted({fd for fd in keep if fd >= 0}) + [max(top, low)]:
        if fd > low:
            os.closerange(low, fd)
        low = max(low, fd + 1)
