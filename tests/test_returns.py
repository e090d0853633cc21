"""No student return value ever makes an internal error: a generated family of malformed returns.

For every exercise of both assignments (a module's ``forward`` included) the reference is wrapped so
that the exercise returns a *malformation* of its own answer: the tuple's elements swapped, a list, an
extra or a missing element, a NumPy array, a Python float, ``None``, another object, a tensor of the
wrong rank, shape or dtype. Every check then runs on it. Each must end as the student's failure in
that exercise, with a sentence naming what was returned; no check anywhere says "internal check
error"; an exercise that does not call the malformed one (in the reference) keeps full marks; and a
caller that raises on what the malformed one returned says so ("your `attention` calls your
`softmax`, which returned ..."), for the functions of ``attention`` and for the heads a
``MultiHeadAttention`` calls through nn.Module ("your `MultiHeadAttention` calls your
`SelfAttentionHead` (heads.0), whose forward returned ..."); a head whose return is the contract's is
never named.

Every (exercise, malformation) is graded, once each (142 grades, about a minute on one core of the
2-core machine): one malformed function per submission, so a failure is never blurred across
exercises.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import pytest

from grader import api
from grader.config import load_config
from grader.sandbox.client import WorkerServer
from grader.scorecard import Scorecard
from tests.corpus_cases import FILENAME, REFERENCE
from tests.wrapped import callers, grade_family, wrapper

# name -> what the wrapped function returns instead of its answer ``v`` (``first``: v, or v's first element)
MALFORMATIONS = {
    "swapped": "(v[1], v[0], *v[2:])",
    "list": "list(v) if isinstance(v, tuple) else [v]",
    "extra": "(*v, v[0]) if isinstance(v, tuple) else (v, v)",
    "missing": "v[:-1] if isinstance(v, tuple) else ()",
    "ndarray": "first.detach().cpu().double().numpy()",
    "float": "float(first.double().flatten()[0]) if first.numel() else 0.5",
    "none": "None",
    "object": "_Other()",
    "rank": "_first_replaced(v, first.unsqueeze(0))",
    "shape": "_first_replaced(v, first[..., :-1] if first.dim() else first.reshape(1, 1))",
    "dtype": "_first_replaced(v, first.to(_torch.int64 if not first.is_floating_point() else "
             "_torch.float16 if first.dtype != _torch.float16 else _torch.float32))",
}
TUPLE_ONLY = {"swapped"}

HELPER = '''

# ---- generated: {exercise} returns a malformed value ({malformation}) ----
import torch as _torch


class _Other:
    """Not a tensor."""


def _first_replaced(v, new):
    return (new, *v[1:]) if isinstance(v, tuple) else new


def _malformed(v):
    first = v[0] if isinstance(v, tuple) else v
    return {expression}
'''



@dataclass(frozen=True)
class Malformed:
    assignment: str
    exercise: str
    malformation: str

    @property
    def id(self) -> str:
        return f"{self.assignment}/{self.exercise}/{self.malformation}"

    def source(self) -> str:
        return (REFERENCE[self.assignment].read_text()
                + HELPER.format(exercise=self.exercise, malformation=self.malformation,
                                expression=MALFORMATIONS[self.malformation])
                + wrapper(self.exercise, "_malformed"))


def product() -> list[Malformed]:
    """Every (exercise, malformation) the family can hold: swapping only where the contract returns a tuple."""
    found = []
    for assignment in sorted(REFERENCE):
        for ex in load_config().assignment(assignment).exercises:
            for name in MALFORMATIONS:
                if name not in TUPLE_ONLY or len(ex.returns) > 1:
                    found.append(Malformed(assignment, ex.name, name))
    return found


FAMILY = product()


def whole_card_members() -> frozenset[Malformed]:
    """The members graded with every check of their assignment: one an exercise, every malformation among them
    (the rarest placed first, each on an exercise not yet chosen). The others are graded with the checks of their
    exercise and of the exercises that call it only (``api.Grader(exercises=...)``): what a malformed return does
    elsewhere is asked of these."""
    exercises = sorted({(m.assignment, m.exercise) for m in FAMILY})
    by_rarity = sorted(MALFORMATIONS, key=lambda name: (sum(m.malformation == name for m in FAMILY), name))
    chosen: dict[tuple[str, str], Malformed] = {}
    for i, name in enumerate(by_rarity * len(exercises)):
        free = [m for m in FAMILY if m.malformation == name and (m.assignment, m.exercise) not in chosen]
        if free:
            chosen[(free[i % len(free)].assignment, free[i % len(free)].exercise)] = free[i % len(free)]
        if len(chosen) == len(exercises):
            break
    return frozenset(chosen.values())


WHOLE_CARDS = whole_card_members()


@pytest.fixture(scope="module")
def cards(server: WorkerServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scorecard]:
    """Every member of the family graded once, through one warm grader per assignment and set of exercises."""
    return grade_family(server, tmp_path_factory.mktemp("returns"), FAMILY, lambda m: None if m in WHOLE_CARDS
                        else frozenset({m.exercise, *callers(m.assignment)[m.exercise]}))


def test_the_family_is_every_exercise_times_every_malformation():
    exercises = {(a, ex.name) for a in REFERENCE for ex in load_config().assignment(a).exercises}
    assert {(m.assignment, m.exercise) for m in FAMILY} == exercises
    assert {m.malformation for m in FAMILY} == set(MALFORMATIONS)
    assert Malformed("attention", "attention", "swapped") in FAMILY
    assert Malformed("attention", "multi_head_attention", "swapped") in FAMILY
    tuples = sum(len(ex.returns) > 1 for a in REFERENCE for ex in load_config().assignment(a).exercises)
    assert len(FAMILY) == len(exercises) * (len(MALFORMATIONS) - len(TUPLE_ONLY)) + tuples * len(TUPLE_ONLY)
    assert {m.malformation for m in WHOLE_CARDS} == set(MALFORMATIONS)
    assert {(m.assignment, m.exercise) for m in WHOLE_CARDS} == exercises and len(WHOLE_CARDS) == len(exercises)


def test_callers_read_from_the_reference():
    assert "multi_head_attention" in callers("attention")["attention"]
    assert "attention" in callers("attention")["softmax"] and "bag_of_past" not in callers("attention")["softmax"]
    assert callers("attention-modules")["SelfAttentionHead"] == {"MultiHeadAttention"}


@pytest.mark.parametrize("member", FAMILY, ids=lambda m: m.id)
def test_a_malformed_return_is_the_students_failure_in_its_own_exercise(cards, member):
    card = cards[member.id]
    assert not card.grader_error, card.grader_error
    internal = [(c.id, c.message[:200]) for c in card.checks if "internal check error" in c.message]
    assert not internal, internal
    own = [c for c in card.checks if c.exercise == member.exercise and c.status not in ("passed", "skipped")]
    assert own, f"{member.id}: no check of `{member.exercise}` failed"
    named = [c for c in own if member.exercise in c.message
             and any(word in c.message for word in ("returned", "shape", "expected a", "float16", "int64", "float32"))]
    assert named, f"{member.id}: no failed check names what `{member.exercise}` returned: {[c.message[:160] for c in own]}"
    calling = callers(member.assignment).get(member.exercise, set())
    judged = {c.exercise for c in card.checks if "did not run" not in c.message}
    if member in WHOLE_CARDS:
        assert judged == {ex.name for ex in load_config().assignment(member.assignment).exercises}
    else:
        assert judged == calling | {member.exercise}, f"{member.id}: judged {sorted(judged)}"
    others = sorted({c.exercise for c in card.checks if c.exercise in judged
                     and c.exercise not in calling | {member.exercise} and c.status not in ("passed", "skipped")})
    assert not others, f"{member.id}: exercises that do not call `{member.exercise}` lost points: {others}"
    if member.assignment == "attention":
        unnamed = [(c.exercise, c.id, c.message[:200]) for c in card.checks if c.exercise in calling
                   and " raised " in c.message and f"calls your `{member.exercise}`" not in c.message]
        assert not unnamed, f"{member.id}: a caller raised without naming what `{member.exercise}` returned: {unnamed[:2]}"
    if member.assignment == "attention-modules" and calling:  # the heads, called as head(x) through nn.Module
        raised = [c for c in card.checks if c.exercise in calling and _raised_in_its_own_lines(c.message, c.exercise)]
        unnamed = [(c.id, c.message[:200]) for c in raised if f"calls your `{member.exercise}` (heads." not in c.message
                   or "whose forward returned" not in c.message or f"fix `{member.exercise}` first" not in c.message]
        assert not unnamed, f"{member.id}: a caller raised without naming what `{member.exercise}` returned: {unnamed[:2]}"
    named_heads = [(c.id, c.message[:200]) for c in card.checks
                   if member.exercise != "SelfAttentionHead" and "calls your `SelfAttentionHead`" in c.message]
    assert not named_heads, f"{member.id}: a head that returned the contract's answer was named: {named_heads[:2]}"


def _lines_of(assignment: str, name: str) -> range:
    """The lines of the reference's top-level ``name`` (the generated sources keep them: the malformation is appended)."""
    node = next(n for n in ast.parse(REFERENCE[assignment].read_text()).body if getattr(n, "name", None) == name)
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)


def _raised_in_its_own_lines(message: str, cls: str) -> bool:
    """Whether a check's message says ``cls`` raised in its own code: at a line of the reference's ``cls`` (a correct
    caller raising on what it was given), or as a check that quotes the raise without a line
    (test_tril_is_built_at_context_length); not where a part raised in its own code, such as a head's ``.numpy()``
    on the meta device."""
    found = re.search(rf"`{cls}[^`]*` raised \w+ (?:\(line (\d+)\)|on inputs)", message)
    if found is None:
        return False
    return found.group(1) is None or int(found.group(1)) in _lines_of("attention-modules", cls)


def test_a_correct_caller_judged_with_the_contract_where_its_helper_returns_weights_first(grade):
    """The quoted case: `attention` returns (weights, out) and `multi_head_attention` unpacks it that way, so its
    own answers are right; the check that uses the student's `attention` as a yardstick uses the contract instead."""
    source = REFERENCE["attention"].read_text()
    source = source.replace("return mix_values(weights, v), weights", "return weights, mix_values(weights, v)")
    source = source.replace("out, weights = attention(q, k, v, causal=causal)", "weights, out = attention(q, k, v, causal=causal)")
    card = grade(source)
    mha = [c for c in card.checks if c.exercise == "multi_head_attention" and c.status not in ("passed", "skipped")]
    assert not mha, [(c.id, c.message[:200]) for c in mha]
    assert any(c.exercise == "attention" and c.status == "failed" for c in card.checks)
    assert not any("internal check error" in c.message for c in card.checks)


def test_a_generated_source_is_valid_python():
    for m in FAMILY:
        compile(m.source(), m.id, "exec")


CALLER = '''
def helper(x, scale=1):
    return [x * scale]


def failing(x):
    raise ValueError("no")


def middle(x):
    return helper(x)


def top(x, mode):
    if mode == "after a return":
        helper(x, scale=2)
    if mode == "after a raise":
        try:
            failing(x)
        except ValueError:
            pass
    if mode == "through":
        middle(x)
    [helper(i) for i in range(2)] if mode == "in a comprehension" else None
    raise RuntimeError("the caller's own line")
'''


@pytest.mark.parametrize("mode, named", [("after a return", {"helper"}), ("after a raise", set()),
                                         ("through", {"helper", "middle"}), ("in a comprehension", {"helper"})])
def test_callees_report_what_returned_inside_a_call_that_raised(mode, named):
    """What the child reports (``callees``): each of the submission's top-level functions that returned inside the
    call, never one that raised (a profile hook sees both as 'return'); one called in a comprehension is its
    function's callee."""
    import sys

    import torch

    from grader.sandbox import callees

    namespace: dict = {"__file__": "submission.py"}
    exec(compile(CALLER, "submission.py", "exec"), namespace)  # noqa: S102 - trusted test code
    before = sys.getprofile()
    tracker = callees.Callees(namespace["top"], "submission.py")
    with pytest.raises(RuntimeError), tracker:
        namespace["top"](torch.ones(2, 3), mode)
    assert sys.getprofile() is before
    found = tracker.facts(namespace, "top").get("callees", [])
    assert {c["name"] for c in found} == named
    for c in found:
        if mode != "in a comprehension":
            assert c["returned"].startswith("a list (a float32 tensor of shape (2, 3)")
            assert c["args"][0] == {"shape": [2, 3], "dtype": "float32"}
    if mode == "after a return":
        assert found[0]["kwargs"] == {} and found[0]["args"][1] == 2 and found[0]["by"] == "top"
    if mode == "through":
        assert [c["name"] for c in found] == ["helper", "middle"] and found[0]["by"] == "middle"
    if mode == "in a comprehension":
        assert found[0]["by"] == "top" and found[0]["args"] == [1, 1]  # the last call: helper(1), scale by default
    assert tracker.facts(namespace, None) == {}  # raised outside the submission's code: nothing to say


def test_a_callee_is_named_only_where_its_return_is_not_the_contracts():
    """``returned.not_the_contracts``: '' for the contract's kind, shapes and dtypes; else the contract's in words,
    with the dtype where only the dtype differs (a sentence that named only equal shapes would read as no fault)."""
    from grader.sandbox import returned

    def reported(kind, *outputs):
        return {"kind": kind, "outputs": [{"shape": list(s), "dtype": d} for s, d in outputs]}

    pair = [((2, 5, 6), "float32"), ((2, 5, 5), "float32")]
    assert returned.not_the_contracts(reported("tuple", *pair), pair, ("out", "weights")) == ""
    swapped = returned.not_the_contracts(reported("tuple", *pair[::-1]), pair, ("out", "weights"))
    assert swapped == "a tuple (out: a float32 tensor of shape (2, 5, 6), weights: a float32 tensor of shape (2, 5, 5))"
    assert returned.not_the_contracts(reported("list", *pair), pair, ("out", "weights")).startswith("a tuple (out:")
    one = [((2, 5, 5), "float16")]
    assert returned.not_the_contracts(reported("Tensor", *one), one, ("output",)) == ""
    assert returned.not_the_contracts(reported("Tensor", ((2, 5, 5), "float32")), one, ("output",)) == \
        "a float16 tensor of shape (2, 5, 5)"


# MultiHeadAttention's own last line replaced by one that raises, its heads left as the reference's
OWN_RAISES = {
    "matmul": "return self.dropout(self.proj(out @ torch.ones(3, 3)))",
    "generator": "return self.dropout(self.proj(torch.cat(h(x) for h in self.heads)))",
    "stack_dim": "return self.dropout(self.proj(torch.stack([out, out[:, :1]], dim=0)))",
    "own_error": "raise ValueError('not yet')",
}


@pytest.mark.parametrize("bug", sorted(OWN_RAISES))
def test_a_head_that_returned_the_contracts_answer_is_never_named(grade, bug):
    """MultiHeadAttention raises in its own line after its (correct) heads returned: the raise is its own, and
    no message points at SelfAttentionHead."""
    line = "return self.dropout(self.proj(out))  # (B, T, d_model)"
    source = REFERENCE["attention-modules"].read_text()
    assert source.count(line) == 1
    card = grade(source.replace(line, OWN_RAISES[bug]), "attention-modules")
    raised = [c for c in card.checks if c.exercise == "MultiHeadAttention" and " raised " in c.message]
    assert raised, f"{bug}: MultiHeadAttention did not raise: {[c.message[:120] for c in card.checks][:3]}"
    named = [(c.id, c.message[:200]) for c in card.checks if "calls your" in c.message]
    assert not named, named


PARTS = '''
import torch


class Part(torch.nn.Module):
    def __init__(self, malformed):
        super().__init__()
        self.malformed = malformed

    def forward(self, x):
        if self.malformed == "raise":
            raise ValueError("the part's own line")
        return [x] if self.malformed else x * 2


class Whole(torch.nn.Module):
    def __init__(self, malformed):
        super().__init__()
        self.parts = torch.nn.ModuleList([Part(False), Part(malformed)])
        self.linear = torch.nn.Linear(3, 3)

    def forward(self, x):
        outs = []
        for p in self.parts:
            try:
                outs.append(p(x))
            except ValueError:
                pass
        out = torch.cat(outs, dim=-1)  # raises on a list
        if self.parts[1].malformed:
            raise TypeError("the whole's own line, after a part raised")
        return out
'''


@pytest.mark.parametrize("malformed, named", [(False, set()), (True, {"parts.0", "parts.1"}), ("raise", {"parts.0"})])
def test_forwards_report_what_each_part_returned_inside_a_forward_that_raised(malformed, named):
    """What the child reports for a probe (``callees.Forwards``): each submodule of a class the submission defines
    whose forward returned (never one that raised, never torch's own Linear), with its path and input; nothing
    where the forward did not raise; the hooks gone after."""
    import torch

    from grader.sandbox import callees

    namespace: dict = {"__name__": "submission"}
    exec(compile(PARTS, "submission.py", "exec"), namespace)  # noqa: S102 - trusted test code
    whole = namespace["Whole"](malformed)
    parts = callees.Forwards(whole, namespace)
    x = torch.ones(2, 4, 3)
    try:
        with parts:
            whole(x)
        raised = None
    except TypeError:
        raised = "forward"
    assert (raised is not None) == bool(named)
    assert all(not m._forward_hooks for m in whole.modules())
    found = parts.facts(raised).get("callees", [])
    assert {c["path"] for c in found} == named
    for c in found:
        assert c["name"] == "Part" and c["by"] == "Whole" and c["forward"] is True
        assert c["args"] == [{"shape": [2, 4, 3], "dtype": "float32"}]
        assert c["returned"] == ("a list (a float32 tensor of shape (2, 4, 3))" if c["path"] == "parts.1"
                                 else "a float32 tensor of shape (2, 4, 3)")
    assert parts.facts(None) == {}


@pytest.mark.parametrize("dtype", [None, "float64", "float16"])
@pytest.mark.parametrize("path", ["heads.0", "heads.2", "blocks.9"])
def test_the_contract_of_a_part_is_the_reference_part_on_the_same_input(dtype, path):
    """``returned.contract_outputs(..., part=...)``: the reference's head inside the reference's MultiHeadAttention
    built with the probe's arguments, on the same input: (B, T, d_model // n_heads) in the module's dtype, whatever
    the student's path (a path the reference lacks falls back to the first head)."""
    from grader.sandbox import returned
    from grader.session.plugin import load_reference

    contract = returned.contract_outputs(load_reference(REFERENCE["attention-modules"]))
    for d_model, n_heads, t in ((12, 3, 6), (16, 4, 1), (8, 1, 8)):
        part = {"cls": "MultiHeadAttention", "args": [d_model, n_heads, 8, 0.1], "kwargs": {}, "dtype": dtype,
                "run": None, "path": path}
        x = {"shape": [2, t, d_model], "dtype": dtype or "float32"}
        assert contract("SelfAttentionHead", [x], {}, part=part) == [((2, t, d_model // n_heads), dtype or "float32")]
        assert contract("NoSuchPart", [x], {}, part=part) is None
        assert contract("SelfAttentionHead", [x], {}, part={**part, "cls": "NoSuchClass"}) is None


@pytest.mark.parametrize("assignment, exercise", [("attention", "softmax"), ("attention-modules", "SelfAttentionHead")])
def test_a_grader_judging_some_exercises_gives_the_others_nothing(server, tmp_path, assignment, exercise):
    path = tmp_path / FILENAME[assignment]
    path.write_text(REFERENCE[assignment].read_text(), encoding="utf-8")
    with api.Grader(assignment, server=server, exercises=frozenset({exercise})) as grader:
        card = grader.grade(path)
    own = [c for c in card.checks if c.exercise == exercise]
    rest = [c for c in card.checks if c.exercise != exercise]
    assert own and all(c.status in ("passed", "skipped") for c in own)
    assert rest and all(c.status == "error" and c.score == 0 and "did not run" in c.message for c in rest)
    assert card.score == sum(c.score for c in own) < card.max_score
