"""SelfAttentionHead's own parts: its three projections, and dropout on the weights."""

from __future__ import annotations

import pytest
import torch

from grader.checks import helpers as h
from grader.checks.attention_modules import dropout_sites as sites
from grader.checks.attention_modules.conftest import B, CTX, D_MODEL, HEAD, T, ModuleSpec, skip_if_nonfinite
from grader.words import count

pytestmark = pytest.mark.exercise("SelfAttentionHead")


def test_query_key_value_are_linears_without_bias(student):
    facts = student.probe("SelfAttentionHead", D_MODEL, HEAD, CTX, 0.0)
    linear = facts.get("linear") or {}
    for name in ("query", "key", "value"):
        assert name in linear, f"`SelfAttentionHead` has no nn.Linear named {name!r}"
        got = linear[name]
        assert (got["in"], got["out"]) == (D_MODEL, HEAD), (
            f"`{name}` maps {got['in']} -> {count(got['out'], 'feature')}; expected d_model -> head_size ({D_MODEL} -> {HEAD})"
        )
        assert not got["bias"], f"`{name}` has a bias; the contract uses nn.Linear(d_model, head_size, bias=False)"


def test_dropout_acts_on_the_weights(student, reference):
    """Identical tokens make uniform weights: dropping weights scales whole rows of v, never single channels."""
    spec = ModuleSpec("SelfAttentionHead", (D_MODEL, HEAD, CTX), reference)
    # Ask the reference now what the trace below asks only of a wrong submission: the student kit answers from
    # what the reference's own run of this check asked (``tape``), and that run never reaches the trace.
    spec.params()
    token = h.randn(1, 1, D_MODEL, seed=90)
    x = token.expand(B, T, D_MODEL).contiguous()
    facts = student.probe("SelfAttentionHead", D_MODEL, HEAD, CTX, 0.5, mode="train", inputs=[x])
    out = h.as_tensor((facts.get("outputs") or [None])[0], "`SelfAttentionHead` forward").double()
    eval_out, eval_again = (h.as_tensor(student.probe("SelfAttentionHead", D_MODEL, HEAD, CTX, 0.0, mode="eval",
                                                      inputs=[x], stream=s)["outputs"][0],
                                        "`SelfAttentionHead` forward").double() for s in (0, 1))
    skip_if_nonfinite([out, eval_out], "`SelfAttentionHead` output", ["identical tokens in training mode (dropout=0.5)",
                                                                      "identical tokens in eval mode (dropout=0.0)"],
                      "where dropout acts")  # before comparing: NaN != NaN is no sign of randomness
    if not torch.equal(eval_out, eval_again):
        pytest.skip("`SelfAttentionHead` in eval mode gives different outputs under two random states "
                    "(test_no_dropout_in_eval_mode reports it), so where its dropout acts cannot be read from the "
                    "output; not counted here")
    skip_if_nonfinite([out, eval_out], "`SelfAttentionHead` output", ["identical tokens in training mode (dropout=0.5)",
                                                                      "identical tokens in eval mode (dropout=0.0)"],
                      "where dropout acts")
    v0 = eval_out[0, 0]
    factors = out @ v0 / (v0 @ v0)
    residual = (out - factors[..., None] * v0).abs().max().item()
    on_weights = residual < 1e-4 * max(1.0, v0.abs().max().item())
    changed = not torch.allclose(factors, torch.ones_like(factors), atol=1e-6)
    if on_weights and changed:
        return
    seen = sites.trace(student, spec)
    wrong = seen.misplaced("SelfAttentionHead") if seen else None
    if wrong is not None and not seen.on_weights("SelfAttentionHead"):
        raise AssertionError(f"in training mode (dropout=0.5) {sites.site_sentence(wrong, 'SelfAttentionHead')}")
    assert on_weights, (
        "in training mode, dropout must act on the attention weights (before weights @ v): with identical tokens "
        "every value row is the same vector, so each output row should be a multiple of it, and yours are not"
    )
    assert changed, (
        "with identical tokens (every weight row uniform, every value row the same vector), dropout=0.5 in "
        "training mode left every output row as it is in eval mode: "
        + ("no dropout runs in forward. Apply an nn.Dropout(dropout) to the attention weights after the softmax."
           if seen is not None and not seen.sites else "no attention weight was dropped.")
    )
