"""Pay once for what torch loads lazily on first use.

``torch._check`` and autograd with explicit gradients import
``torch.fx.experimental.symbolic_shapes`` and sympy (~0.5 s here);
``masked_fill`` on the ``meta`` device imports ``torch._dynamo`` (~1 s). The
worker server pays for all of it before forking, so no sandboxed child does;
the judge pays for what its checks use, in its own thread while the server
starts, so the first submission does not.
"""

from __future__ import annotations

import importlib

import torch


def warm_up_judge() -> None:
    """The judge's share: one thread (its tensors are tiny), torch._check and autograd."""
    torch.set_num_threads(1)
    importlib.import_module("torch.fx.experimental.symbolic_shapes")
    # A generator of its own: the global one is what the checks seed to build reference modules, and a judge
    # warming up in its thread must not move it under another judge of the same process (tests hold two).
    a = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0), requires_grad=True)
    out = (a @ a.transpose(-2, -1)).softmax(-1)
    torch.autograd.grad(out, a, torch.ones_like(out))


def warm_up_worker() -> None:
    """Everything a student's code may touch first: the judge's share, the meta device, nn."""
    warm_up_judge()  # set_num_threads(1) first: forked children of a multi-threaded torch deadlock
    for name in ("torch.nn.functional", "torch.testing", "torch.special", "math", "fractions"):
        importlib.import_module(name)
    m = torch.empty(2, 3, 4, device="meta")
    (m @ m.mT).masked_fill(torch.ones(3, 3, dtype=torch.bool, device="meta"), 0.0)
    lin = torch.nn.Linear(4, 4)
    lin(torch.zeros(2, 4)).sum().backward()
