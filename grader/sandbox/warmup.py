"""Pay once for what torch loads lazily on first use.

``torch._check`` and autograd with explicit gradients import
``torch.fx.experimental.symbolic_shapes`` and sympy (~0.3 s of CPU here).
The worker server pays for it after it forks (beside the judge's own
start), so no sandboxed child does. The judge avoids it on a grade: its
checks pull reference gradients back from a scalar and find the worst entry
without ``torch._check``; only a diagnosis replaying answers on the ``meta``
device imports it there, when one is needed.

``masked_fill`` (and every elementwise op torch runs through its Python
references) on the ``meta`` device used to import ``torch._dynamo`` (~0.8 s
of CPU, once per process) only to wrap the reference in ``torch._dynamo.disable``:
``skip_dynamo_until_imported`` makes that wrap wait until something imports
``torch._dynamo`` for real.
"""

from __future__ import annotations

import gc
import importlib
import sys
import types
from collections.abc import Callable
from typing import Any

import torch
import torch._compile


def _until_dynamo(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called directly while ``torch._dynamo`` is not imported, and through its
    ``torch._dynamo.disable`` wrap (made then, once, as torch would) from the moment it is."""
    def call(*args: Any, **kwargs: Any) -> Any:
        if "torch._dynamo" not in sys.modules:
            return fn(*args, **kwargs)
        import torch._dynamo

        disabled = torch._dynamo.disable(fn, True, wrapping=False)
        fn.__dynamo_disable = disabled  # type: ignore[attr-defined]  # torch's own cache slot, now the real wrap
        return disabled(*args, **kwargs)

    return call


def skip_dynamo_until_imported() -> int:
    """Let torch's ``_disable_dynamo``-wrapped functions run without importing ``torch._dynamo``.

    torch wraps its Python references (``torch._refs.where``, which ``masked_fill`` on
    ``meta`` runs, and ~280 more) in ``torch._compile._disable_dynamo``: on its first call each
    imports ``torch._dynamo`` to build ``torch._dynamo.disable(fn)`` and caches it on
    ``fn.__dynamo_disable``. While ``torch._dynamo`` is not imported, nothing can be compiling
    (``torch.compile`` imports it), so "disable dynamo" changes nothing: we fill that cache
    slot with ``_until_dynamo(fn)``, which calls ``fn`` directly and builds torch's real wrap
    the first time it runs with ``torch._dynamo`` loaded. Same results, same errors; only the
    import is skipped. Found by their code object, so a torch without that wrapper (another
    version) simply gets nothing filled. Returns how many were filled.
    """
    probe = torch._compile._disable_dynamo(lambda: None)
    code = getattr(probe, "__code__", None)
    if code is None or "fn" not in code.co_freevars:
        return 0
    cell = code.co_freevars.index("fn")
    filled = 0
    for obj in gc.get_objects():
        if type(obj) is not types.FunctionType or obj.__code__ is not code:  # never getattr: modules compute some
            continue
        fn = obj.__closure__[cell].cell_contents
        if getattr(fn, "__dynamo_disable", None) is None:
            fn.__dynamo_disable = _until_dynamo(fn)
            filled += 1
    return filled


def warm_up_judge() -> None:
    """The judge's share, done before the worker server forks: one thread (its tensors are tiny), no
    ``torch._dynamo``, autograd from a scalar (the judge's reference gradients are pulled back that way).
    Nothing here imports sympy: only the worker's children need it, and the server warms it after the
    fork, beside the judge's own start."""
    torch.set_num_threads(1)
    skip_dynamo_until_imported()
    # A generator of its own: the global one is what the checks seed to build reference modules, and a judge
    # warming up in its thread must not move it under another judge of the same process (tests hold two).
    a = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0), requires_grad=True)
    torch.autograd.grad((a @ a.transpose(-2, -1)).softmax(-1).sum(), a)
    freeze_what_is_loaded()


def freeze_what_is_loaded() -> None:
    """Move every object alive now (torch, pytest, the checks: ~170k) out of the collector's reach.

    They live as long as the process; left in the collector's generations, every full collection
    walks them all: hypothesis runs one (``gc.collect``, 0.13 s) the first time a property check
    draws, and a forked child's collections would touch, and so copy, the pages it shares with its
    parent. Python's documentation advises ``gc.freeze()`` before forking for the second reason.
    """
    gc.freeze()


def warm_up_worker() -> None:
    """Everything a student's code may touch first: the judge's share, the meta device, nn."""
    warm_up_judge()  # set_num_threads(1) first: forked children of a multi-threaded torch deadlock
    # torch._check and autograd with explicit gradients (a child's vector-Jacobian products) import
    # sympy through symbolic_shapes.
    importlib.import_module("torch.fx.experimental.symbolic_shapes")
    a = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0), requires_grad=True)
    out = (a @ a.transpose(-2, -1)).softmax(-1)
    torch.autograd.grad(out, a, torch.ones_like(out))
    # numpy.random: the child seeds it on every request (``rng``), and numpy loads it lazily, from a
    # path the locked-down child may not be allowed to read (a kit whose numpy comes from a .pth entry).
    for name in ("torch.nn.functional", "torch.testing", "torch.special", "math", "fractions", "numpy.random"):
        importlib.import_module(name)
    m = torch.empty(2, 3, 4, device="meta")
    (m @ m.mT).masked_fill(torch.ones(3, 3, dtype=torch.bool, device="meta"), 0.0)
    lin = torch.nn.Linear(4, 4)
    lin(torch.zeros(2, 4)).sum().backward()
    freeze_what_is_loaded()  # again: sympy and the rest came after the judge's share froze
