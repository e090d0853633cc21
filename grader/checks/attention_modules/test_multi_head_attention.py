"""MultiHeadAttention's own parts: a ModuleList of heads, the projection and the dropout after it,
the divisibility rule.
"""

from __future__ import annotations

import pytest
import torch

from grader.checks import helpers as h
from grader.checks.attention_modules.conftest import B, CTX, D_MODEL, N_HEADS, T, ModuleSpec, skip_if_nonfinite, x_of
from grader.sandbox.errors import StudentError
from grader.words import count

pytestmark = pytest.mark.exercise("MultiHeadAttention")
MIN_JUDGED = 24  # fewer finite entries than this say too little about a rate of 0.5 to fail a student on


def test_heads_are_a_modulelist_of_self_attention_heads(student):
    facts = student.probe("MultiHeadAttention", D_MODEL, N_HEADS, CTX, 0.0)
    children = facts.get("children") or {}
    plain = (facts.get("plain_containers") or {}).get("heads")
    assert not plain, (
        f"`heads` is a plain Python {plain}: its heads (their weights and tril buffers) are hidden from .parameters(), "
        ".to(), .eval() and state_dict. Wrap them in nn.ModuleList: self.heads = nn.ModuleList(SelfAttentionHead(...) "
        "for _ in range(n_heads))"
    )
    assert children.get("heads") == "ModuleList", (
        f"`heads` is {children.get('heads', 'missing')}; it must be an nn.ModuleList (a Python list hides the heads' "
        "weights from .parameters(), .to() and state_dict)"
    )
    heads = [n for n in children if n.count(".") == 1 and n.startswith("heads.")]
    assert len(heads) == N_HEADS, f"`heads` holds {count(len(heads), 'module')}; expected n_heads = {N_HEADS}"
    for n in heads:
        assert children[n] == "SelfAttentionHead", f"{n} is a {children[n]}; expected a SelfAttentionHead"
        q = (facts.get("linear") or {}).get(f"{n}.query", {})
        assert q.get("out") == D_MODEL // N_HEADS, (
            f"{n} has head_size {q.get('out')}; each head must have d_model // n_heads = {D_MODEL // N_HEADS} channels"
        )


def test_proj_is_a_linear_d_model_to_d_model(student):
    facts = student.probe("MultiHeadAttention", D_MODEL, N_HEADS, CTX, 0.0)
    proj = (facts.get("linear") or {}).get("proj")
    if not proj:
        try:
            ran = student.probe("MultiHeadAttention", D_MODEL, N_HEADS, CTX, 0.0, inputs=[x_of(T)])
        except StudentError:
            ran = {}
        new = [n for n in ran.get("new_parameters") or [] if n.startswith("proj.")]
        assert not new, (
            "`proj` is created in forward, so `MultiHeadAttention` has no proj when it is built: load_state_dict, "
            "the optimizer and .to() never see its weights. Create it in __init__, as an nn.Linear from d_model to d_model"
        )
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


def test_dropout_after_the_projection_in_training_mode(student, reference):
    """Dropout after ``proj`` sets whole output entries to exactly 0; nothing else can.

    Dropout inside the heads only zeroes attention weights, and ``proj`` has a bias
    (the reference's, loaded here), so without a dropout on proj's output no entry of
    the output is exactly 0 (proj(h) = h @ W.T + b is 0 only by a coincidence of
    measure zero). With p = 0.5 about half of the 144 entries must be 0.
    """
    x = x_of(T, seed=85)
    params = ModuleSpec("MultiHeadAttention", (D_MODEL, N_HEADS, CTX), reference).params()
    facts = student.probe("MultiHeadAttention", D_MODEL, N_HEADS, CTX, 0.5, params=params, mode="train", inputs=[x])
    out = h.as_tensor((facts.get("outputs") or [None])[0], "`MultiHeadAttention` forward")
    h.expect_shape(out, (B, T, D_MODEL), f"`MultiHeadAttention` output for x {B}x{T}x{D_MODEL}")
    # Counted on the finite entries only: a NaN entry is neither dropped nor kept, and counting it as kept
    # would blame the dropout for what the NaN did.
    finite = h.finite_entries(out)
    judged, zeros = int(finite.sum()), int((out[finite] == 0).sum())
    if judged >= MIN_JUDGED:
        finite_ones = "finite " if judged < out.numel() else ""
        others = f" (the other {out.numel() - judged} are NaN/inf and not counted)" if finite_ones else ""
        assert zeros >= judged // 10, (
            f"`MultiHeadAttention` in training mode with dropout=0.5 sets {zeros} of its {judged} {finite_ones}output "
            f"entries to 0{others}; dropout after the projection should zero about half of them. The contract applies "
            "dropout to proj's output too (pass proj's result through an nn.Dropout), not only to the heads' weights."
        )
    skip_if_nonfinite([out], "`MultiHeadAttention` output", ["x in training mode (dropout=0.5)"],
                      "the dropout after the projection")


def _moved_beyond_output_dropout(train: torch.Tensor, plain: torch.Tensor) -> float:
    """How far ``train`` is from one multiple of ``plain`` on the entries it kept, relative to its largest entry.

    Dropout on proj's output zeroes some entries and scales the others by one factor, 1 / (1 - p);
    if nothing inside the heads changed, every kept entry is that factor times the plain output.
    Attention weights dropped inside the heads move the kept entries apart. 0 when nothing moved.
    """
    kept = train != 0
    t, p = train[kept].double(), plain[kept].double()
    if not t.numel() or not float(p @ p):
        return 0.0
    factor = (t @ p) / (p @ p)
    return ((t - factor * p).abs().max() / t.abs().max()).item()


def test_dropout_reaches_the_heads(student, reference):
    """The heads are built with the module's own dropout: in training mode with dropout=0.5 the heads drop
    attention weights, which moves the output in a way the dropout after ``proj`` cannot (that one only
    zeroes entries and scales the rest by one factor). The student is compared with itself under one random
    state: the same weights in training mode with dropout=0.0. Where the student's own SelfAttentionHead
    gives the same output at dropout=0.5 and 0.0, whether the rate is passed on cannot be seen, and the
    check is inconclusive (the head's checks report it)."""
    x = x_of(T, seed=87)
    params = ModuleSpec("MultiHeadAttention", (D_MODEL, N_HEADS, CTX), reference).params()
    what = "`MultiHeadAttention`"
    facts = student.probe("MultiHeadAttention", D_MODEL, N_HEADS, CTX, 0.5, params=params, mode="train", inputs=[x])
    train = h.as_tensor((facts.get("outputs") or [None])[0], f"{what} forward")
    plain = h.as_tensor((student.probe("MultiHeadAttention", D_MODEL, N_HEADS, CTX, 0.0, params=params, mode="train",
                                       inputs=[x]).get("outputs") or [None])[0], f"{what} forward")
    h.expect_shape(train, (B, T, D_MODEL), f"{what} output for x {B}x{T}x{D_MODEL}")
    h.expect_shape(plain, (B, T, D_MODEL), f"{what} output for x {B}x{T}x{D_MODEL}")
    skip_if_nonfinite([train, plain], f"{what} output", ["x in training mode (dropout=0.5)",
                                                         "x in training mode (dropout=0.0)"], "the heads' dropout")
    moved = _moved_beyond_output_dropout(train, plain)
    if moved > 1e-4:
        return
    d_head = D_MODEL // N_HEADS
    head = [h.as_tensor((student.probe("SelfAttentionHead", D_MODEL, d_head, CTX, rate, mode="train", inputs=[x])
                         .get("outputs") or [None])[0], "`SelfAttentionHead` forward") for rate in (0.5, 0.0)]
    if head[0].shape == head[1].shape and torch.allclose(head[0].double(), head[1].double(), atol=1e-6):
        pytest.skip(f"your SelfAttentionHead({D_MODEL}, {d_head}, {CTX}, dropout) in training mode gives the same "
                    "output with dropout=0.5 as with dropout=0.0 (its own dropout checks report that), so whether "
                    "`MultiHeadAttention` passes its dropout on to the heads cannot be seen; not counted here")
    rates = {n: p for n, p in (facts.get("dropout") or {}).items() if n.startswith("heads.")}
    seen = f" (its heads hold {', '.join(f'{n} with p={p:g}' for n, p in sorted(rates.items())[:2])})" if rates else ""
    raise AssertionError(
        f"`MultiHeadAttention(d_model, n_heads, context_length, dropout=0.5)` in training mode drops no attention "
        f"weights in its heads{seen}: apart from the dropout after proj, its output is its output at dropout=0.0 (the "
        f"kept entries are one multiple of it, to within {moved:.2g}). The contract builds every head with the "
        "module's dropout: SelfAttentionHead(d_model, d_model // n_heads, context_length, dropout), passing dropout on."
    )
