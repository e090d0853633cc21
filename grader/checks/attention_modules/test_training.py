"""Causality in training mode: the mask must hold while dropout is on, not only in eval mode.

A head that masks with a finite fill (``torch.finfo(dtype).min``) and applies dropout to the masked scores,
before the softmax, is causal in eval mode; in training mode a dropped fill becomes 0 and a future token
gets weight. Every other causality check runs in eval mode and cannot see it.
"""

from __future__ import annotations

import torch

from grader.checks import helpers as h
from grader.checks.attention_modules import dropout_sites as sites
from grader.checks.attention_modules.conftest import B, D_MODEL, T, skip_if_nonfinite, x_of

PAST = 3  # outputs 0..PAST-1 are compared; tokens PAST.. are changed


def test_causal_in_training_mode(student, spec, hidden_seed):
    """The same module in training mode (dropout=0.5), given x and x with tokens 3.. changed: outputs 0..2 agree.

    Each input is run by a module of its own, built and run from the check's one RNG state
    (``grader.sandbox.rng``): both draw the same dropout masks, even where forward draws something else
    first (a layer created in its first call), so the only difference left is the future tokens.
    Hidden: the inputs are this student's own (``grader.seeds``)."""
    x = x_of(T, seed=h.seed(130, hidden_seed))
    x2 = x.clone()
    x2[:, PAST:] = h.randn(B, T - PAST, D_MODEL, seed=h.seed(131, hidden_seed))
    outs = [o for xi in (x, x2) for o in spec.probe(student, dropout=0.5, params=spec.params(), mode="train",
                                                      inputs=[xi]).get("outputs") or []]
    what = f"`{spec.cls}` in training mode (dropout=0.5)"
    assert len(outs) == 2, f"{what}: forward did not return an output for every input"
    a, b = (h.as_tensor(o, f"`{spec.cls}` forward")[:, :PAST].double() for o in outs)
    finite = torch.isfinite(a) & torch.isfinite(b)
    changed = finite & ~torch.isclose(a, b, rtol=0.0, atol=1e-5)
    if changed.any():
        if _changes_in_eval_mode(student, spec, x, x2):
            raise AssertionError(
                f"changing tokens {PAST}.. changed `{spec.cls}`'s outputs 0..{PAST - 1} in training mode, as it does in "
                "eval mode: the module is not causal with dropout off either (test_future_tokens_do_not_change_past_outputs "
                "reports it), so dropout is not the cause")
        seen = sites.trace(student, spec)
        leak = next((s for s in seen.in_heads(spec.cls) if s.kind == "scores" and s.drops), None) if seen else None
        cause = sites.site_sentence(leak, spec.cls) if leak else (
            "the mask does not hold while dropout is on. Mask the scores with tril, take the softmax, and only then "
            "apply dropout to the weights.")
        raise AssertionError(
            f"{what}, with the same dropout drawn for both inputs, changed its outputs 0..{PAST - 1} when only tokens "
            f"{PAST}.. changed: it is not causal in training mode; {cause}")
    skip_if_nonfinite([a, b], f"`{spec.cls}` output in training mode",
                      [f"x {B}x{T}x{D_MODEL} (dropout=0.5)", f"x with tokens {PAST}.. changed"], "causality in training mode")


def _changes_in_eval_mode(student, spec, x: torch.Tensor, x2: torch.Tensor) -> bool:
    """Whether the future tokens change past outputs in eval mode too: then dropout is not the cause."""
    outs = [o for xi in (x, x2) for o in spec.probe(student, params=spec.params(), mode="eval",
                                                      inputs=[xi]).get("outputs") or []]
    if len(outs) != 2:
        return False
    a, b = (h.as_tensor(o, f"`{spec.cls}` forward")[:, :PAST].double() for o in outs)
    finite = torch.isfinite(a) & torch.isfinite(b)
    return bool((finite & ~torch.isclose(a, b, rtol=0.0, atol=1e-5)).any())
