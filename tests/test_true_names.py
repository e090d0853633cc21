"""Only true names (issue 39, item 4).

1. A title that quotes code is said only when the student's code contains it (``grader.diagnosis.truth``),
   checked on the student's syntax tree; otherwise the card speaks of behaviour (the mistake's ``effect``).
2. The function named is the one whose own checks fail first in call order, never a caller
   (``Diagnoser.diagnose``, ``Diagnoser.blame``).

Both are proved on generated families: every variant the operators make of both references, and every
callee of the attention reference with one variant per operator kind.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

import pytest
import torch

from grader.diagnosis.catalogue import load_catalogue, module_from_source
from grader.diagnosis.diagnose import CheckEvidence, Diagnoser
from grader.diagnosis.naming import diagnosis
from grader.diagnosis.family import Variant, VariantFactory, variants
from grader.diagnosis.truth import TrueNames, behaviour_title, count, fragments, module_names, parse_fragment
from grader.scoring import UNNAMED_ID
from tests.corpus_cases import REFERENCE

SOURCES = {name: path.read_text(encoding="utf-8") for name, path in REFERENCE.items()}


@cache
def family(assignment: str) -> tuple[Variant, ...]:
    return tuple(variants(SOURCES[assignment], assignment))


def kinds(assignment: str) -> list[str]:
    return sorted({v.operator for v in family(assignment)})


def with_definition(reference: str, definition: str) -> str:
    """A student's file: the reference with one definition written again after it (the later one is used)."""
    return f"{reference}\n\n{definition}\n"


class _RenameLocals(ast.NodeTransformer):
    """Every name a function assigns (not its parameters, which the contract fixes) spelt another way."""

    def __init__(self, keep: frozenset[str], params: frozenset[str]) -> None:
        self.keep, self.params = keep, params

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.keep or node.id in self.params:
            return node
        return ast.Name(f"my_{node.id}", node.ctx)


def renamed(definition: str, keep: frozenset[str]) -> str:
    tree = ast.parse(definition)
    params = frozenset(a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
                       for a in n.args + n.kwonlyargs + n.posonlyargs)
    return ast.unparse(_RenameLocals(keep, params | {"self"}).visit(tree))


# ------------------------------------------------------------------ effects


@pytest.mark.parametrize("assignment", sorted(SOURCES))
def test_every_variant_has_an_effect_that_quotes_no_code(assignment):
    for v in family(assignment):
        assert v.effect and "`" not in v.effect, (v.operator, v.title)
        assert behaviour_title(v) == f"`{v.exercise}` with {v.effect}"
        assert fragments(behaviour_title(v))[0].id == v.exercise  # the student's own function, nothing else


@pytest.mark.parametrize("assignment", sorted(SOURCES))
def test_a_catalogued_title_that_quotes_code_has_an_effect(assignment):
    for m in load_catalogue(assignment):
        assert "`" not in m.effect, m.id
        if "`" in m.title:
            assert m.effect, f"{m.id}: its title quotes code, so it needs an effect"


# ------------------------------------------------------------------ quote kept / quote dropped, per operator kind


def _kind_cases() -> list[tuple[str, str]]:
    return [(a, k) for a in sorted(SOURCES) for k in kinds(a)]


@pytest.mark.parametrize("assignment, kind", _kind_cases(), ids=lambda p: p)
def test_the_quote_is_kept_exactly_when_the_students_code_holds_it(assignment, kind):
    """For every variant of this kind: the student who wrote the variant's code (under other local names too, where
    the title does not quote a local by its bare name) keeps the quote; a student whose code lacks what the title adds (the reference's own code, or a file that does not
    parse) is told the behaviour instead, and the sentence quotes nothing the mistake added."""
    reference = SOURCES[assignment]
    keep = module_names(ast.parse(reference))
    lesson = TrueNames(reference, reference)
    unreadable = TrueNames(reference, "def broken(:\n")
    checked = 0
    for v in (v for v in family(assignment) if v.operator == kind):
        assert TrueNames(reference, with_definition(reference, v.definition)).holds(v), v.title
        spelt = renamed(v.definition, keep)
        if not any(isinstance(f, ast.Name) and f"my_{f.id}" in spelt for f in fragments(v.title)):
            # other local names, same structure; a local quoted by its bare name is a literal claim (`e`)
            assert TrueNames(reference, with_definition(reference, spelt)).holds(v), v.title
        assert not unreadable.holds(v), v.title  # fail closed: every title names the exercise, at least
        added = [(f, n) for f, n in lesson.claims(v) if count(f, [ast.parse(reference)], keep) < n]
        if not added:
            continue
        checked += 1
        assert not lesson.holds(v), v.title
        named, text = diagnosis([v], names=lesson)
        assert named.title == behaviour_title(v) and v.effect in text and "(your code does it another way)" in text
        assert lesson.present(text, v.exercise), text  # every fragment it still quotes is in the student's code
        assert v.explanation not in text or fragments(v.explanation), text  # a fix quoting nothing: for the quote
    if kind in ("inplace", "twice", "function", "returned", "swap"):
        assert checked, f"no {kind} variant adds code its title quotes"


def _entropy_index_fill(weights):  # written into its input, no clamp_min_ anywhere
    weights[weights == 0] = 1.0
    return -(weights * torch.log(weights)).sum(dim=-1)


def _attention_inline_d(q, k, v, causal=True, scale=True):  # divides by d inline: no scale_scores call at all
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / q.shape[-1]
    if causal:
        T = q.shape[-2]
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def _entropy_bits(weights):  # bits by a change of base, no log2 call
    p = weights.clamp(min=torch.finfo(weights.dtype).tiny)
    return -(weights * torch.log(p) / math.log(2)).sum(dim=-1)


def _scale_abs(scores, head_size):  # the scale's square root left out, written with a power
    return scores * head_size ** -1.0


def _mask_above_diagonal(T, device=None):  # the diagonal moved by 1, written with torch.tril
    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device), 1)


def _mix_swapped(weights, v):  # operands swapped, written with matmul()
    return torch.matmul(v, weights)


def _merge_out_of_order(x):  # sizes in another order, with permute and contiguous
    B, H, T, d = x.shape
    return x.permute(0, 2, 1, 3).contiguous().reshape(B, T, d, H).flatten(2)


def _softmax_mean(scores, dim=-1):  # the mean subtracted, written as a sum over the count
    m = scores.sum(dim=dim, keepdim=True) / scores.shape[dim]
    e = torch.exp(scores - m)
    return e / e.sum(dim=dim, keepdim=True)


g = torch.Generator().manual_seed(7)
_W = torch.softmax(torch.randn(2, 5, 5, generator=g).masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), -math.inf), -1)
_QKV = tuple(torch.randn(2, 5, 4, generator=g) for _ in range(3))
_S = torch.randn(2, 5, 5, generator=g)
_MASK = torch.ones(5, 5, dtype=torch.bool).tril()

ANOTHER_WAY = [  # (kind, the exercise, its title must match, the student's function, its inputs)
    ("inplace", "attention_entropy", r"clamp_min_", _entropy_index_fill, (_W,)),
    ("twice", "attention", r"scale_scores.*applied twice", _attention_inline_d, _QKV),
    ("function", "attention_entropy", r"`log2`", _entropy_bits, (_W,)),
    ("scale", "scale_scores", r"multiplied by", None, ()),  # no variant needed: see the reference's
    ("mask", "causal_mask", r"diagonal moved by 1", _mask_above_diagonal, (5,)),
    ("transpose", "mix_values", r"operands swapped", _mix_swapped, (_W, torch.randn(2, 5, 5, generator=g))),
    ("reduction", "softmax", r"`\.mean\(\.\.\.\)` where the lesson takes `\.amax", _softmax_mean, (_S,)),
]


def _variant_with(kind: str, exercise: str, pattern: str, student: Callable | None, args: tuple) -> Variant:
    """The variant of this kind whose title matches and whose outputs are the student's function's."""
    found = [v for v in family("attention") if v.operator == kind and v.exercise == exercise and re.search(pattern, v.title)]
    assert found, (kind, exercise, pattern)
    if student is None:
        return found[0]
    factory = VariantFactory(SOURCES["attention"], "_true_names")
    theirs = student(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    for v in found:
        ours = getattr(factory.build(v), exercise)(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        if _same(ours, theirs):
            return v
    raise AssertionError(f"no {kind} variant of {exercise} gives what the student's code gives")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a.shape == b.shape and torch.allclose(a, b, equal_nan=True, atol=1e-6)


@pytest.mark.parametrize("kind, exercise, pattern, student, args", [c for c in ANOTHER_WAY if c[3] is not None],
                         ids=[c[0] for c in ANOTHER_WAY if c[3] is not None])
def test_the_same_effect_written_another_way_drops_the_quote(kind, exercise, pattern, student, args):
    """The student's function gives the variant's outputs (the same mistake), written without the code the title
    quotes: the title is said as behaviour. The variant's own code keeps it."""
    import inspect
    import textwrap

    v = _variant_with(kind, exercise, pattern, student, args)
    written = textwrap.dedent(inspect.getsource(student)).replace(f"def {student.__name__}(", f"def {exercise}(", 1)
    reference = SOURCES["attention"]
    theirs = TrueNames(reference, with_definition(reference, "import math\n" + written))
    assert not theirs.holds(v), v.title
    named, text = diagnosis([v], names=theirs)
    assert named.title == behaviour_title(v) and "(your code does it another way)" in text, text
    assert TrueNames(reference, with_definition(reference, v.definition)).holds(v)


def test_no_source_to_check_names_every_quoting_title_as_behaviour():
    """A card whose source is unknown quotes no code as the student's (fail closed)."""
    lesson = TrueNames(SOURCES["attention"], None)
    for v in family("attention"):
        assert not lesson.holds(v), v.title


@pytest.mark.parametrize("text, said", [("`.view`", "view"), ("`.mean(...)`", "mean"), ("`scale_scores(...)`", "scale_scores"),
                                        ("`if causal:`", None), ("`for ... in x`", None), ("plain words", None),
                                        ("`e.sum(dim=-1)`", "e.sum(dim=-1)"), ("`x = f(x)`", "x = f(x)")])
def test_only_spans_that_parse_are_fragments_and_a_bare_method_is_its_name(text, said):
    found = fragments(text)
    assert [ast.unparse(f) for f in found] == ([said] if said else [])


# ------------------------------------------------------------------ blame: the callee that fails first


CALLEES = ("scale_scores", "softmax", "apply_mask", "causal_mask", "split_heads", "merge_heads", "attention_scores",
           "mix_values")


def _inputs() -> dict[str, list[tuple[tuple, dict]]]:
    """What the checks ask of each exercise, small and seeded: every callee and every caller."""
    r = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=r) for _ in range(3))
    x = torch.randn(2, 5, 12, generator=r)
    w = [torch.randn(12, 12, generator=r) / 3 for _ in range(4)]
    scores = torch.randn(2, 3, 5, 5, generator=r)
    weights = torch.softmax(scores, -1)
    return {
        "attention_scores": [((q, k), {}), ((q[0, 0], k[0, 0, :3]), {})],
        "scale_scores": [((scores, 16), {}), ((scores[0], 5), {})],
        "causal_mask": [((5,), {}), ((3,), {})],
        "apply_mask": [((scores, torch.ones(5, 5, dtype=torch.bool).tril()), {})],
        "softmax": [((scores,), {}), ((scores, 0), {}), ((scores[0, 0] * 50,), {})],
        "mix_values": [((weights, v), {}), ((weights[0, 0], v[0, 0, :, :3]), {})],
        "attention": [((q, k, v), {}), ((q, k, v), {"causal": False}), ((q[0], k[0], v[0]), {"scale": False})],
        "split_heads": [((x, 3), {}), ((x, 2), {})],
        "merge_heads": [((q,), {})],
        "multi_head_attention": [((x, *w, 3), {}), ((x, *w, 2), {"causal": False})],
    }


def _reply(module: ModuleType, fn: str, args: tuple, kwargs: dict) -> dict:
    try:
        value = getattr(module, fn)(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
        return {"ok": True, "value": value}
    except Exception as exc:  # noqa: BLE001 - the student's exception is their answer
        return {"ok": False, "kind": "exception", "type": type(exc).__name__, "message": str(exc)}


def _card(student: ModuleType, reference: ModuleType) -> list[CheckEvidence]:
    """One check per exercise, failed where any of the student's answers is not the reference's."""
    checks = []
    for fn, calls in _inputs().items():
        requests = tuple(({"op": "call", "fn": fn, "args": list(args), "kwargs": kwargs, "seed": 0, "vjp": None,
                           "return_args": False}, _reply(student, fn, args, kwargs)) for args, kwargs in calls)
        differs = any(not _same_reply(reply, _reply(reference, fn, m["args"], m["kwargs"])) for m, reply in requests)
        checks.append(CheckEvidence(fn, "failed" if differs else "passed", (), requests))
    return checks


def _same_reply(a: dict, b: dict) -> bool:
    if a["ok"] != b["ok"]:
        return False
    if not a["ok"]:
        return a["type"] == b["type"]
    x, y = a["value"], b["value"]
    flat = (lambda t: list(t) if isinstance(t, tuple) else [t])
    return len(flat(x)) == len(flat(y)) and all(
        p.shape == q.shape and p.dtype == q.dtype and torch.allclose(p.float(), q.float(), equal_nan=True, atol=1e-5)
        for p, q in zip(flat(x), flat(y)))


@cache
def _diagnoser() -> Diagnoser:
    return Diagnoser(REFERENCE["attention"], load_catalogue("attention"), operators=True, assignment="attention")


def _callee_cases() -> list[Variant]:
    """One variant per operator kind of each callee whose own checks it fails (where they pass, the rule does not
    apply): the student's file has that one slip, in the callee."""
    factory = VariantFactory(SOURCES["attention"], "_cases")
    reference = module_from_source(SOURCES["attention"], "_cases_reference")
    chosen: dict[tuple[str, str], Variant] = {}
    for v in family("attention"):
        if v.exercise in CALLEES and (v.exercise, v.operator) not in chosen:
            own = next(c for c in _card(factory.build(v), reference) if c.exercise == v.exercise)
            if own.status == "failed":
                chosen[(v.exercise, v.operator)] = v
    return list(chosen.values())


@pytest.mark.parametrize("slip", _callee_cases(), ids=lambda v: f"{v.exercise}-{v.operator}")
def test_a_callees_mistake_is_never_named_as_a_callers_own(slip):
    """The student's file has one slip in a callee. Where the callee fails its own checks, no caller names a
    mistake of its own: the callee's mistake is named (there and where it explains the caller), or the
    caller points at the callee that fails first."""
    diagnoser = _diagnoser()
    reference = diagnoser._module(None)
    student = VariantFactory(SOURCES["attention"], "_blame").build(slip)
    checks = _card(student, reference)
    failing = {c.exercise for c in checks if c.status == "failed"}
    assert slip.exercise in failing
    settled = diagnoser.diagnose(checks)
    named_callee = [m for c, found in zip(checks, settled) if c.exercise == slip.exercise for m in found]
    for c, found in zip(checks, settled):
        if c.exercise == slip.exercise or c.status != "failed":
            continue
        if slip.exercise in diagnoser.failing_callees(c.exercise, failing):
            own = [m.id for m in found if m.exercise == c.exercise]
            assert not own, f"{c.exercise} names its own {own} for a slip in {slip.exercise}"
            if not named_callee and not found:
                assert diagnoser.blame(c.exercise, failing) in failing - {c.exercise}


def _perturbed(value: Any, how: str) -> Any:
    """A slip no operator makes: a float result scaled or shifted, or one position of a mask flipped."""
    if value.dtype == torch.bool:
        flipped = value.clone()
        flipped[..., -1, 0] = ~flipped[..., -1, 0]
        return flipped
    return value * 1.25 if how == "scaled" else value + 0.1


def _slipped(callee: str, how: str) -> ModuleType:
    """The reference with ``callee``'s result perturbed: its callers call the slipped one (module globals)."""
    module = module_from_source(SOURCES["attention"], f"_slipped_{callee}")
    if how.startswith("size"):
        module.__dict__[callee] = lambda scores, head_size: scores / math.sqrt(
            scores.shape[-1] if how == "size-1" else scores.shape[-2] if how == "size-2" else scores.dim())
        return module
    original = module.__dict__[callee]
    module.__dict__[callee] = lambda *a, **k: _perturbed(original(*a, **k), how)
    return module


UNKNOWN = [(c, how) for c in CALLEES for how in ("scaled", "shifted")] + [
    ("scale_scores", how) for how in ("size-1", "size-2", "size-rank")]  # sqrt(S), sqrt(T), sqrt(rank): a size


@pytest.mark.parametrize("callee, how", UNKNOWN, ids=lambda p: p)
def test_a_callee_no_known_mistake_fits_is_blamed_and_its_callers_name_nothing_of_their_own(callee, how):
    """A slip in a callee that no known mistake makes (generated: each callee's result scaled, shifted or, for a
    mask, one position flipped; ``scale_scores`` dividing by the square root of a size of its input): the callee
    is not cleared, so no caller names a mistake of its own, and each failing caller points at it."""
    diagnoser = _diagnoser()
    checks = _card(_slipped(callee, how), diagnoser._module(None))
    failing = {c.exercise for c in checks if c.status == "failed"}
    assert callee in failing
    settled = diagnoser.diagnose(checks)
    callee_named = [m for c, found in zip(checks, settled) if c.exercise == callee for m in found]
    assert all(m.exercise == callee for m in callee_named)
    callers = [c for c in checks if c.status == "failed" and callee in diagnoser.failing_callees(c.exercise, failing)]
    assert callers or how != "scaled", "a scaled result reaches no caller"
    for c, found in zip(checks, settled):
        if c not in callers:
            continue
        assert not [m for m in found if m.exercise == c.exercise], f"{c.exercise} names its own mistake"
        assert all(m.exercise in diagnoser.failing_callees(c.exercise, failing) for m in found)
        if not found:
            assert diagnoser.blame(c.exercise, failing) == callee


def test_blame_points_at_the_first_failing_callee_in_call_order():
    """Generated: for every set of failing functions, the blamed one is a failing callee that calls no failing
    function itself; nothing is blamed for a function that calls none that fails."""
    import itertools

    diagnoser = _diagnoser()
    for size in (1, 2):
        for failing in itertools.combinations([*CALLEES, "attention", "multi_head_attention"], size):
            failing_set = set(failing) | {"multi_head_attention"}
            blamed = diagnoser.blame("multi_head_attention", failing_set)
            callees = set(diagnoser.failing_callees("multi_head_attention", failing_set))
            if not callees:
                assert blamed == ""
                continue
            assert blamed in callees and not diagnoser.failing_callees(blamed, failing_set)
            order = diagnoser.call_order(callees)
            assert all(order.index(c) > order.index(blamed) or diagnoser.failing_callees(c, failing_set)
                       for c in callees if c != blamed)


# ------------------------------------------------------------------ end to end, through the api


BASE = SOURCES["attention"]


def _said(card) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for d in card.diagnoses:
        found.setdefault(d.exercise, []).append((d.id, d.text))
    return found


def test_an_index_fill_into_the_input_is_said_as_behaviour(grade):
    card = grade(with_definition(BASE, "def attention_entropy(weights):\n    weights[weights == 0] = 1.0\n"
                                       "    return -(weights * torch.log(weights)).sum(dim=-1)\n"))
    (text,) = [t for _, t in _said(card)["attention_entropy"]]
    assert "clamp_min_" not in text and "written into its input" in text and "your code does it another way" in text


def test_the_in_place_call_itself_keeps_its_quote(grade):
    card = grade(with_definition(BASE, "def attention_entropy(weights):\n"
                                       "    log_p = torch.log(weights.clamp_min_(torch.finfo(weights.dtype).tiny))\n"
                                       "    return -(weights * log_p).sum(dim=-1)\n"))
    (text,) = [t for _, t in _said(card)["attention_entropy"]]
    assert "`clamp_min_` (in place)" in text


def test_an_inline_division_by_d_is_not_said_to_call_scale_scores_twice(grade):
    card = grade(with_definition(BASE, "def attention(q, k, v, causal=True, scale=True):\n"
                                       "    scores = attention_scores(q, k)\n"
                                       "    if scale:\n        scores = scores / q.shape[-1]\n"
                                       "    if causal:\n"
                                       "        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))\n"
                                       "    weights = softmax(scores, dim=-1)\n"
                                       "    return mix_values(weights, v), weights\n"))
    texts = [t for _, t in _said(card)["attention"]]
    assert texts and not any("scale_scores" in t for t in texts), texts
    # said as behaviour: a step applied twice, or the relation read from the answers (q or k × 1/√d first)
    assert any("scaled twice" in t or "applied twice" in t or "divided by d" in t or "× 1/√d" in t for t in texts), texts


def test_a_scale_by_the_number_of_keys_in_scale_scores_is_blamed_on_scale_scores(grade):
    card = grade(with_definition(BASE, "def scale_scores(scores, head_size):\n"
                                       "    return scores / math.sqrt(scores.shape[-1])\n"))
    said = _said(card)
    assert "scale_scores" in said, said
    for caller in ("attention", "multi_head_attention"):
        # a caller names scale_scores's own mistake where one fits (a generated variant of scale_scores), or points
        # at scale_scores; never a mistake of its own
        for i, text in said.get(caller, []):
            if i == UNNAMED_ID:
                assert re.search(r"calls `scale_scores`.*fails its own checks: fix it first", text), text
            else:
                assert "-scale_scores-" in i and "`scale_scores`" in text, (i, text)


@pytest.mark.parametrize("kind", kinds("attention"))
def test_a_variant_without_an_effect_falls_back_to_a_generic_sentence(kind):
    """A variant made by an operator that gives no effect (a new module's, say) quotes nothing of the student's
    code but the exercise's name when its quote is dropped."""
    from dataclasses import replace

    reference = SOURCES["attention"]
    lesson = TrueNames(reference, None)
    for v in (replace(v, effect="") for v in family("attention") if v.operator == kind):
        named, text = diagnosis([v], names=lesson)
        assert named.title == f"a known variant of the reference's `{v.exercise}`", named.title
        assert [ast.unparse(f) for f in fragments(text)] == [v.exercise], text


@pytest.mark.parametrize(("drop", "proj"), [("dropout", "proj"), ("drop", "out_proj"), ("attn_drop", "c_proj"),
                                            ("resid_dropout", "o")])
@pytest.mark.parametrize("nn_prefix", ["nn.", "torch.nn."])
def test_two_layers_in_the_other_order_are_said_by_their_kinds(drop, proj, nn_prefix):
    """The effect names the layers by what they are (from the class's own `self.NAME = nn.KIND(...)`), never by the
    attribute names a student may not share."""
    source = (f"import torch\nimport torch.nn as nn\n\n\nclass Block(nn.Module):\n"
              f"    def __init__(self, d):\n        super().__init__()\n"
              f"        self.{proj} = {nn_prefix}Linear(d, d)\n        self.{drop} = {nn_prefix}Dropout(0.1)\n\n"
              f"    def forward(self, x):\n        return self.{drop}(self.{proj}(x))\n")
    effects = [v.effect for v in variants(source, "a") if v.operator == "stage"]
    assert effects == ["the linear projection and the dropout applied in the other order"], effects  # whatever the names


@pytest.mark.parametrize(("owner", "words"), [("q", "the queries"), ("k", "the keys"), ("x", "the input"), ("zz", "an input")])
@pytest.mark.parametrize("axis", [-1, -2])
def test_a_size_from_another_axis_says_which_axes(owner, words, axis):
    source = f"def f({owner}, other):\n    n = {owner}.shape[{axis}]\n    return {owner} * n\n"
    effects = {v.effect for v in variants(source, "a") if v.operator == "shape" and "axis" in v.effect}
    assert effects == {f"a size of {words} read along axis {new} where the lesson reads its axis {axis}"
                       for new in (-1, -2, 0) if new != axis}, effects


def _matmul_error(a: tuple[int, int], b: tuple[int, int]) -> str:
    try:
        torch.zeros(a) @ torch.zeros(b)
    except RuntimeError as exc:
        return str(exc)
    raise AssertionError(f"{a} @ {b} raised nothing")


SHAPE_PAIRS = [((m, k), (j, n)) for m in (3, 15) for k in (4, 8) for j in (5, 12) for n in (2, 12) if k != j]


@pytest.mark.parametrize("pair", SHAPE_PAIRS, ids=str)
def test_an_error_on_other_sizes_is_another_answer(pair):
    """Two codes that both fail to multiply, on the same inputs, fail on the same sizes only if they multiply the
    same things: "(15x8 and 12x12)" is not "(5x12 and 8x12)", so raising alone never makes a mistake the student's."""
    from grader.diagnosis.answers import _raised, same

    mine = _raised("RuntimeError", _matmul_error(*pair))
    for other in SHAPE_PAIRS:
        theirs = _raised("RuntimeError", _matmul_error(*other))
        assert same(mine, theirs) == (_matmul_error(*pair) == _matmul_error(*other)), (pair, other)
        assert same(mine, theirs, words=False)  # where the contract asks for an exception, its type is enough


@pytest.mark.parametrize("first, second", [
    ("'Tensor' object at 0x7f3a2c1b9e50 is not callable", "'Tensor' object at 0x55d0c0ffee00 is not callable"),
    ("invalid syntax (<student>, line 7)", "invalid syntax (<student>, line 1234)"),
    ("<function f at 0x7f00> got (line 3)", "<function f at 0xABCDEF> got (line 41)"),
])
def test_what_differs_between_two_runs_of_the_same_code_is_not_read(first, second):
    from grader.diagnosis.answers import _raised, same

    assert same(_raised("TypeError", first), _raised("TypeError", second))
    assert not same(_raised("TypeError", first), _raised("ValueError", second))
