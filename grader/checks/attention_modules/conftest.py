"""Sizes and reference weights for the module checks.

All distinct: B=2, T=6 (and 1, 4, 8 = context_length), d_model=12,
head_size=5, n_heads=3 (so d_head=4). Weights come from the reference
module's own seeded initialisation, are sent to the student's module, and
the judge compares outputs with the reference's in float64.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
import torch

from grader.checks import helpers as h
from grader.sandbox.proxy import StudentProxy

B, T, CTX, D_MODEL, HEAD, N_HEADS = 2, 6, 8, 12, 5, 3


@dataclass(frozen=True)
class ModuleSpec:
    """How to build one contract class, and the reference to judge it by."""

    cls: str
    args: tuple[Any, ...]
    reference: ModuleType

    def reference_module(self, seed: int = 7, dropout: float = 0.0) -> torch.nn.Module:
        torch.manual_seed(seed)
        module = getattr(self.reference, self.cls)(*self.args[:3], dropout)
        return module.double().eval()

    def params(self, seed: int = 7) -> dict[str, torch.Tensor]:
        m = self.reference_module(seed)
        return {k: v.detach().float() for k, v in m.named_parameters()}

    def probe(self, student: StudentProxy, *, dropout: float = 0.0, **options: Any) -> dict[str, Any]:
        return student.probe(self.cls, *self.args[:3], dropout, **options)

    def expected(self, x: torch.Tensor, seed: int = 7) -> torch.Tensor:
        with torch.no_grad():
            return self.reference_module(seed)(x.double())

    @property
    def out_size(self) -> int:
        return self.args[1] if self.cls == "SelfAttentionHead" else self.args[0]


@pytest.fixture(params=[pytest.param(c, marks=pytest.mark.exercise(c), id=c) for c in ("SelfAttentionHead", "MultiHeadAttention")])
def spec(request, reference) -> ModuleSpec:
    args = (D_MODEL, HEAD, CTX) if request.param == "SelfAttentionHead" else (D_MODEL, N_HEADS, CTX)
    return ModuleSpec(request.param, args, reference)


def x_of(t: int, seed: int = 0) -> torch.Tensor:
    return h.randn(B, t, D_MODEL, seed=seed)


def skip_if_nonfinite(outs: list[torch.Tensor], what: str, givens: list[str], prop: str) -> None:
    """Non-finite outputs are one finding, made by the output check: a property check that meets them
    says so and draws no conclusion about ``prop`` (``helpers.inconclusive_if_nonfinite``)."""
    h.inconclusive_if_nonfinite(prop, *[(out, what, given) for out, given in zip(outs, givens)])
