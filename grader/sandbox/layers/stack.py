"""All the layers, applied in ``LAYER_ORDER``: each independent, so one that
is unavailable on a machine leaves the others in place."""

from __future__ import annotations

import os
from typing import Callable

from grader.sandbox.layers.landlock import _apply_landlock
from grader.sandbox.layers.mounts import _apply_mountns_scratch
from grader.sandbox.layers.network import _apply_netns
from grader.sandbox.layers.policy import LAYER_ORDER, ChildPolicy, LayerUnavailable
from grader.sandbox.layers.privileges import _apply_capabilities, _apply_no_new_privs
from grader.sandbox.layers.rlimits import _apply_rlimits
from grader.sandbox.layers.seccomp import _apply_seccomp

# each raises OSError or LayerUnavailable when it cannot apply
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
