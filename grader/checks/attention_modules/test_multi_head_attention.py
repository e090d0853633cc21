"""MultiHeadAttention's own parts: a ModuleList of heads, the projection, the divisibility rule.

PYTEST_DONT_REWRITE: messages are written for students; pytest's assertion
rewriting (active when the project's own tests grade in-process) would append its own.
"""

from __future__ import annotations

import pytest

from grader.checks.attention_modules.conftest import CTX, D_MODEL, N_HEADS
from grader.sandbox.errors import StudentError

pytestmark = pytest.mark.exercise("MultiHeadAttention")


def test_heads_are_a_modulelist_of_self_attention_heads(student):
    facts = student.probe("MultiHeadAttention", D_MODEL, N_HEADS, CTX, 0.0)
    children = facts.get("children") or {}
    assert children.get("heads") == "ModuleList", (
        f"`heads` is {children.get('heads', 'missing')}; it must be an nn.ModuleList (a Python list hides the heads' "
        "weights from .parameters(), .to() and state_dict)"
    )
    heads = [n for n in children if n.count(".") == 1 and n.startswith("heads.")]
    assert len(heads) == N_HEADS, f"`heads` holds {len(heads)} modules; expected n_heads = {N_HEADS}"
    for n in heads:
        assert children[n] == "SelfAttentionHead", f"{n} is a {children[n]}; expected a SelfAttentionHead"
        q = (facts.get("linear") or {}).get(f"{n}.query", {})
        assert q.get("out") == D_MODEL // N_HEADS, (
            f"{n} has head_size {q.get('out')}; each head must have d_model // n_heads = {D_MODEL // N_HEADS} channels"
        )


def test_proj_is_a_linear_d_model_to_d_model(student):
    facts = student.probe("MultiHeadAttention", D_MODEL, N_HEADS, CTX, 0.0)
    proj = (facts.get("linear") or {}).get("proj")
    assert proj, "`MultiHeadAttention` has no nn.Linear named `proj`"
    assert (proj["in"], proj["out"], proj["bias"]) == (D_MODEL, D_MODEL, True), (
        f"`proj` is Linear({proj['in']}, {proj['out']}, bias={proj['bias']}); expected nn.Linear(d_model, d_model)"
    )


def test_rejects_d_model_not_divisible_by_n_heads(student):
    try:
        student.probe("MultiHeadAttention", 10, 3, CTX, 0.0)
    except StudentError as err:
        assert err.exc_type == "ValueError" and err.builtin, (
            f"`MultiHeadAttention(10, 3, ...)` raised {err.exc_type}; the contract asks for ValueError"
        )
        return
    raise AssertionError("`MultiHeadAttention(10, 3, ...)` was built; d_model % n_heads != 0 must raise ValueError")
