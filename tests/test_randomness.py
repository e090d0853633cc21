"""Randomness named as it is (issue 38, items 3 and 4): a generated family of dropout and seeding bugs.

Each member is the reference with one randomness bug, drawn from a family (where dropout sits, which rate,
which seed, which fill, nn.Dropout or F.dropout). Its card must carry the sentence of its own class in the
checks that fail for it, in both modules where the bug reaches both, and never advise what the file already
does ("Apply an nn.Dropout" to a file that applies one). The trace the sentences rest on
(``grader/sandbox/trace.py``) is checked in-process, without the sandbox, on the same family.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from grader.checks.attention_modules import dropout_sites
from grader.sandbox import child

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions/attention_modules.py").read_text()

HEAD = '''

class SelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.head_size = head_size
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout({rate})

    def forward(self, x):
        {seed}B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), {values}
        wei = q @ k.transpose(-2, -1) * self.head_size**-0.5
        wei = {scores}
        wei = {weights}
        return {output}
'''
SLOTS = {"rate": "dropout", "seed": "", "values": "self.value(x)",
         "scores": 'wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
         "weights": "self.dropout(torch.softmax(wei, dim=-1))", "output": "wei @ v"}
SOFTMAX = "torch.softmax(wei, dim=-1)"
FUNCTIONAL = "nn.functional.dropout({}, self.dropout.p, self.training)"
NOT_ADDED = ("Apply an nn.Dropout", "never applied", "changed nothing")  # the family always applies a dropout
PLACE_NOT_RATE = ("Use the `dropout` argument as the rate", "Build every head with the module's own rate")
HEAD_CHECKS = ("SelfAttentionHead", "MultiHeadAttention")


@dataclass(frozen=True)
class Member:
    name: str
    source: str
    kind: str | None  # the site the trace must show for the head's misplaced dropout; None: on the weights
    said: dict[str, tuple[str, str]]  # exercise -> (check id prefix, the sentence's pattern)
    forbidden: tuple[str, ...]


def head(**slots: str) -> str:
    return REFERENCE + HEAD.format(**{**SLOTS, **slots})


def family() -> list[Member]:
    members = []
    for seed in (0, 1337):
        said = rf"sets the random seed itself \(torch\.manual_seed\({seed}\)\)"
        members.append(Member(f"head_seed_{seed}", head(seed=f"torch.manual_seed({seed}); "), None,
                              {ex: ("test_dropout_active_in_training_mode", said) for ex in HEAD_CHECKS},
                              NOT_ADDED + ("no dropout runs",)))
        mha = REFERENCE.replace("out = torch.cat(", f"torch.manual_seed({seed}); out = torch.cat(")
        members.append(Member(f"mha_seed_{seed}", mha, None,
                              {"MultiHeadAttention": ("test_dropout_active_in_training_mode", said)},
                              NOT_ADDED + ("no dropout runs",)))
    for fill, functional in itertools.product(("torch.finfo(wei.dtype).min", "-1e9"), (False, True)):
        masked = f"wei.masked_fill(self.tril[:T, :T] == 0, {fill})"
        scores = FUNCTIONAL.format(masked) if functional else f"self.dropout({masked})"
        said = "dropout is applied before the softmax, to the masked scores"
        members.append(Member(f"before_softmax_{fill[:5]}_{'F' if functional else 'module'}",
                              head(scores=scores, weights=SOFTMAX), "scores",
                              {"SelfAttentionHead": ("test_causal_in_training_mode", said),
                               "MultiHeadAttention": ("test_causal_in_training_mode", said)},
                              NOT_ADDED + PLACE_NOT_RATE))
    for functional in (False, True):  # the -inf fill: a dropped entry is NaN, not 0; before the mask: plain scores
        masked = 'wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))'
        scores = FUNCTIONAL.format(masked) if functional else f"self.dropout({masked})"
        said = r"to the masked scores.*? A dropped -inf entry becomes NaN"
        members.append(Member(f"before_softmax_inf_{'F' if functional else 'module'}",
                              head(scores=scores, weights=SOFTMAX), "scores",
                              {ex: ("test_dropout_drops_at_the_asked_rate", said) for ex in HEAD_CHECKS},
                              NOT_ADDED + PLACE_NOT_RATE + ("becomes 0",)))
        raw = FUNCTIONAL.format("wei") if functional else "self.dropout(wei)"
        members.append(Member(f"before_mask_{'F' if functional else 'module'}",
                              head(scores=f'{raw}.masked_fill(self.tril[:T, :T] == 0, float("-inf"))', weights=SOFTMAX),
                              "scores", {ex: ("test_dropout_drops_at_the_asked_rate",
                                              r"before the softmax, to the scores.*? A dropped score becomes 0")
                                         for ex in HEAD_CHECKS},
                              NOT_ADDED + PLACE_NOT_RATE))
    for site, functional in itertools.product(("values", "output"), (False, True)):
        wrap = (lambda t: FUNCTIONAL.format(t)) if functional else (lambda t: f"self.dropout({t})")
        slots = {"values": wrap("self.value(x)")} if site == "values" else {"output": wrap("wei @ v")}
        said = "dropout is applied to the values" if site == "values" else "dropout is applied to the head's output"
        members.append(Member(f"on_{site}_{'F' if functional else 'module'}", head(weights=SOFTMAX, **slots), site,
                              {"SelfAttentionHead": ("test_dropout_acts_on_the_weights", said)},
                              NOT_ADDED + PLACE_NOT_RATE))
    for rate, functional in itertools.product((0.1, 0.3), (False, True)):
        slots = ({"weights": f"nn.functional.dropout({SOFTMAX}, {rate}, self.training)"} if functional
                 else {"rate": str(rate)})
        said = rf"applies dropout with p={rate:g} \(in [^)]*\): that rate is written in the code"
        members.append(Member(f"constant_rate_{rate}_{'F' if functional else 'module'}", head(**slots), None,
                              {ex: ("test_no_dropout_at_rate_zero_in_training_mode", said) for ex in HEAD_CHECKS},
                              NOT_ADDED + ("Build every head with the module's own rate",)))
    return members


FAMILY = family()


def _trace(source: str, cls: str, dropout: float = 0.5) -> dropout_sites.DropoutTrace:
    namespace: dict = {"__file__": "attention_modules.py"}
    exec(compile(source, "attention_modules.py", "exec"), namespace)  # noqa: S102 - the family's own code
    args = [12, 5, 8, dropout] if cls == "SelfAttentionHead" else [12, 3, 8, dropout]
    reply = child.probe(namespace, {"cls": cls, "args": args, "mode": "train", "inputs": [torch.randn(2, 6, 12)],
                                    "trace": True, "seed": 3})
    assert reply["ok"], reply
    return dropout_sites.read_trace(reply["facts"], cls)


def test_the_family_covers_every_class_and_both_modules():
    classes = {m.name.rsplit("_", 1)[0].split("_0")[0] for m in FAMILY}
    assert len(FAMILY) >= 16 and len(classes) >= 5
    assert {ex for m in FAMILY for ex in m.said} == set(HEAD_CHECKS)


def test_the_trace_names_where_the_reference_drops_and_who_seeds():
    for cls in HEAD_CHECKS:
        seen = _trace(REFERENCE, cls)
        assert seen.on_weights(cls) and seen.misplaced(cls) is None and seen.reseeded is None
        assert all(s.p == 0.5 and s.training for s in seen.sites)
    mha = _trace(REFERENCE, "MultiHeadAttention")
    assert [s.kind for s in mha.sites] == ["weights"] * 3 + ["after_proj"]  # three heads, then after proj


@pytest.mark.parametrize("member", FAMILY, ids=lambda m: m.name)
def test_the_trace_of_each_member_shows_its_bug(member: Member):
    for cls in (ex for ex in HEAD_CHECKS if ex in member.said or member.kind):
        seen = _trace(member.source, cls)
        if member.kind:
            wrong = seen.misplaced(cls)
            assert wrong is not None and wrong.kind == member.kind and not seen.on_weights(cls), seen
        if "seed" in member.name:
            assert seen.reseeded and seen.reseeded["seed"] == int(member.name.rsplit("_", 1)[1]), seen
        if "constant" in member.name:
            rate = float(member.name.split("_")[2])
            assert {s.p for s in seen.in_heads(cls)} == {rate}, seen


def test_a_dropout_on_the_weights_with_a_finite_fill_is_on_the_weights():
    """A finite fill before the softmax is the freedom of the correct file: only dropout's place matters."""
    source = head(scores='wei.masked_fill(self.tril[:T, :T] == 0, torch.finfo(wei.dtype).min)')
    for cls in HEAD_CHECKS:
        seen = _trace(source, cls)
        assert seen.on_weights(cls) and seen.misplaced(cls) is None


@pytest.mark.parametrize("member", FAMILY, ids=lambda m: m.name)
def test_each_member_is_told_its_own_sentence_and_no_advice_it_already_follows(grade, member: Member):
    card = grade(member.source, "attention-modules")
    assert card.grader_error is None
    failed = [c for c in card.checks if c.score < c.max_score]
    for exercise, (check, pattern) in member.said.items():
        own = [c for c in failed if c.exercise == exercise and c.id.startswith(check)]
        assert own, f"{member.name}: {exercise}'s {check} did not fail ({[(c.exercise, c.id) for c in failed]})"
        assert any(re.search(pattern, c.message) for c in own), [c.message for c in own]
    for c in failed:
        said = [phrase for phrase in member.forbidden if phrase in c.message]
        assert not said, f"{member.name}: {c.exercise} {c.id} says {said}: {c.message}"


def test_the_reference_is_causal_in_training_mode_and_earns_every_point(grade):
    card = grade(REFERENCE, "attention-modules")
    rows = [c for c in card.checks if c.id.startswith("test_causal_in_training_mode")]
    assert {c.exercise for c in rows} == set(HEAD_CHECKS)
    assert all(c.status == "passed" and c.visibility == "hidden" for c in rows), rows
    assert card.score == card.max_score


def test_the_fused_attentions_dropout_counts_as_on_the_weights():
    """F.scaled_dot_product_attention(..., dropout_p=p) drops its own weights: a student who uses it is never told
    that no dropout runs, nor to add one."""
    fused = REFERENCE + HEAD.format(**{**SLOTS, "output": "wei @ v"}).replace(
        "        wei = q @ k.transpose(-2, -1) * self.head_size**-0.5\n", "").replace(
        f"        wei = {SLOTS['scores']}\n        wei = {SLOTS['weights']}\n        return wei @ v",
        "        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=self.tril[:T, :T] != 0, "
        "dropout_p=self.dropout.p if self.training else 0.0)")
    assert "scaled_dot_product_attention" in fused
    for cls in HEAD_CHECKS:
        seen = _trace(fused, cls)
        assert seen.on_weights(cls) and seen.misplaced(cls) is None, seen
        assert {s.p for s in seen.in_heads(cls)} == {0.5}


@pytest.mark.parametrize("weights", [SOFTMAX, f"nn.functional.dropout({SOFTMAX}, self.dropout.p, training=False)"],
                         ids=["not_applied", "training_false"])
def test_a_head_that_never_drops_is_named_as_the_cause_not_multi_head_attention(grade, weights: str):
    """MultiHeadAttention passes dropout on, its head never drops: MultiHeadAttention is not told to pass it on."""
    card = grade(head(weights=weights), "attention-modules")
    rate = [c for c in card.checks if c.exercise == "MultiHeadAttention" and "asked_rate" in c.id]
    assert rate and rate[0].score == 0, rate
    assert "your SelfAttentionHead, built alone with dropout=0.25, drops nothing" in rate[0].message
    assert "Build every head with the module's own rate" not in rate[0].message
    active = [c for c in card.checks if c.exercise == "SelfAttentionHead" and "active_in_training" in c.id][0]
    assert active.score == 0 and "Apply an nn.Dropout" in active.message if weights == SOFTMAX else (
        "training=False" in active.message and "Apply an nn.Dropout" not in active.message), active.message
