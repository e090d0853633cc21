"""No check is ever passed by NaN or inf: variants generated from the reference, not a list kept by hand.

For every exercise whose reference returns floating tensors, the reference is wrapped so that the
exercise's outputs carry a *poison* in one *pattern*: NaN in one row, inf in one entry, NaN everywhere.
Beside each poisoned variant stands its *finite twin*: the same pattern filled with an ordinary wrong
number (7.5). A check that fails on the twin reads those entries; it must then not pass on the poisoned
variant either: NaN and inf are never better evidence than a wrong finite value. It must say "failed"
(the values are wrong) or "could not be judged" (the property cannot be read from NaN), never "passed".

The callers of a poisoned exercise call the poisoned version (the wrapper replaces the name in the
module, as a student's own function would be), so their checks are held to the same rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
import torch

from grader import api
from grader.config import load_config
from grader.sandbox.client import WorkerServer
from grader.scorecard import Scorecard
from tests.corpus_cases import FILENAME, REFERENCE
from tests.wrapped import callers, grade_family, module_wrapper, wrapper

PATTERNS = ("row", "entry", "all", "past")
# The three (a NaN row, one inf entry, all NaN), and NaN in every row but the last: what a +inf mask
# fill gives (every row with a masked future position is 0/0 after the softmax; the last row has none).
POISONS = {"row": "nan", "entry": "inf", "all": "nan", "past": "nan"}
TWIN = "7.5"  # the finite wrong value of the twin
NOT_CREDITED = "passed, but not credited"

POISON_HELPER = '''

# ---- generated: {exercise} returns {fill} in pattern {pattern} ----
import torch as _poison_torch


def _poisoned(value, pattern={pattern!r}, fill=float({fill!r})):
    if isinstance(value, (tuple, list)):
        return type(value)(_poisoned(v) for v in value)
    if not isinstance(value, _poison_torch.Tensor) or not value.is_floating_point() or value.numel() == 0:
        return value
    mask = _poison_torch.zeros(value.shape, dtype=_poison_torch.bool, device=value.device)
    if pattern == "all" or value.dim() == 0:
        mask[...] = True
    elif pattern == "row" and value.dim() == 1:
        mask[0] = True
    elif pattern == "row":
        mask[..., 0, :] = True
    elif pattern == "past":
        if value.dim() >= 2:
            mask[..., :-1, :] = True
        else:
            mask[:-1] = True
    else:
        mask.view(-1)[value.numel() // 2] = True
    return value.masked_fill(mask, fill)
'''



@dataclass(frozen=True)
class Variant:
    assignment: str
    exercise: str
    pattern: str
    fill: str

    @property
    def id(self) -> str:
        return f"{self.assignment}/{self.exercise}/{self.pattern}-{self.fill}"

    def source(self) -> str:
        return (REFERENCE[self.assignment].read_text() + POISON_HELPER.format(**vars(self))
                + wrapper(self.exercise, "_poisoned"))


def _floating_exercises(assignment: str) -> list[str]:
    """The exercises whose reference returns a floating tensor (``causal_mask`` returns bools: nothing to poison)."""
    config = load_config().assignment(assignment)
    if assignment == "attention":
        from grader.checks.attention.conftest import build_cases
        from grader.session.plugin import load_reference

        reference, cases = load_reference(REFERENCE[assignment]), build_cases()
        floating = []
        for ex in config.exercises:
            case = cases[ex.name][0]
            out = getattr(reference, ex.name)(*case.args, **case.kwargs)
            outs = out if isinstance(out, tuple) else (out,)
            if any(isinstance(o, torch.Tensor) and o.is_floating_point() for o in outs):
                floating.append(ex.name)
        return floating
    return [ex.name for ex in config.exercises]


def _one_row_exercises(assignment: str) -> set[str]:
    """The exercises whose every floating output has one row on every input of ``build_cases`` (a one-token
    decoding step's (..., 1, d_v), say): "every row but the last" poisons nothing there, so its twin would test
    nothing. The module assignment has no ``build_cases``: its checks build (B, T, C) inputs of their own."""
    if assignment != "attention":
        return set()
    from grader.checks.attention.conftest import build_cases
    from grader.session.plugin import load_reference

    reference, cases = load_reference(REFERENCE[assignment]), build_cases()
    one_row = set()
    for exercise, exercise_cases in cases.items():
        outs = []
        for case in exercise_cases:
            out = getattr(reference, exercise)(*case.args, **case.kwargs)
            outs += [o for o in (out if isinstance(out, tuple) else (out,))
                     if isinstance(o, torch.Tensor) and o.is_floating_point()]
        if outs and all(o.dim() >= 2 and o.shape[-2] == 1 for o in outs):
            one_row.add(exercise)
    return one_row


def variants() -> Iterator[tuple[Variant, Variant]]:
    """(poisoned, twin) for every floating exercise of both assignments and every pattern ("past" only where an
    output has rows before its last)."""
    for assignment in sorted(REFERENCE):
        one_row = _one_row_exercises(assignment)
        for exercise in _floating_exercises(assignment):
            for pattern in PATTERNS:
                if pattern == "past" and exercise in one_row:
                    continue
                yield (Variant(assignment, exercise, pattern, POISONS[pattern]), Variant(assignment, exercise, pattern, TWIN))


PAIRS = list(variants())


def whole_card_patterns() -> dict[tuple[str, str], str]:
    """For each exercise, the one pattern whose pair is graded with every check of the assignment (the patterns
    taken in turn); the other pairs are graded with the checks of the exercise and of its callers only, the only
    checks that call what the poison changed (``api.Grader(exercises=...)``)."""
    exercises = sorted({(p.assignment, p.exercise) for p, _ in PAIRS})
    own = {key: [p.pattern for p, _ in PAIRS if (p.assignment, p.exercise) == key] for key in exercises}
    return {key: own[key][i % len(own[key])] for i, key in enumerate(exercises)}


WHOLE_CARDS = whole_card_patterns()


def judged(variant: Variant) -> frozenset[str] | None:
    """The exercises whose checks grade ``variant``: None for every one."""
    if WHOLE_CARDS[(variant.assignment, variant.exercise)] == variant.pattern:
        return None
    return frozenset({variant.exercise, *callers(variant.assignment)[variant.exercise]})


@pytest.fixture(scope="module")
def cards(server: WorkerServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scorecard]:
    """Every variant graded once, through one warm grader per assignment and set of judged exercises."""
    return grade_family(server, tmp_path_factory.mktemp("nonfinite"), [v for pair in PAIRS for v in pair], judged)


def passed(status: str, message: str) -> bool:
    """A recorded pass, credited or not (a pass held back by the gate is still a pass drawn from NaN)."""
    return status == "passed" or message.startswith(NOT_CREDITED)


def test_every_floating_exercise_has_variants():
    exercises = {(p.assignment, p.exercise) for p, _ in PAIRS}
    assert ("attention", "softmax") in exercises and ("attention-modules", "MultiHeadAttention") in exercises
    assert ("attention", "causal_mask") not in exercises  # bools hold no NaN
    one_row = {(a, e) for a in REFERENCE for e in _one_row_exercises(a)}
    assert ("attention", "attention") not in one_row and ("attention", "softmax") not in one_row
    assert len(PAIRS) == len(PATTERNS) * len(exercises) - len(one_row & exercises)
    assert set(WHOLE_CARDS) == exercises and set(WHOLE_CARDS.values()) == set(PATTERNS)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p[0].id)
def test_no_check_passes_on_nan_or_inf_where_a_wrong_number_fails_it(cards, pair):
    poisoned, twin = (cards[v.id] for v in pair)
    assert not poisoned.grader_error and not twin.grader_error, (poisoned.grader_error, twin.grader_error)
    twin_failed = {(c.exercise, c.id) for c in twin.checks if not passed(c.status, c.message)
                   and c.status != "skipped"}
    assert twin_failed, f"the finite twin {pair[1].id} fails no check: the variant tests nothing"
    drawn_from_nan = [(c.exercise, c.id, c.message[:200]) for c in poisoned.checks
                      if (c.exercise, c.id) in twin_failed and passed(c.status, c.message)]
    assert not drawn_from_nan, f"passed on {pair[0].fill} where {TWIN} fails: {drawn_from_nan[:3]}"


# A message that names the non-finite values: the finding's own words ("contains NaN", "inf"), or a check's.
NAMES_NONFINITE = re.compile(r"\b(nan|inf|-inf|infinite|non-finite)\b", re.IGNORECASE)


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p[0].id)
def test_nan_never_makes_another_property_speak(cards, pair):
    """A poisoned variant is the reference with NaN/inf put into one exercise's output, nothing else: every
    check it fails fails because of the NaN/inf, so its message must say so. A message that blames another
    property without naming them (a count of zeros, a fraction, a spread computed with the NaN entries in it)
    is false: the student would be sent after a bug they do not have."""
    poisoned = cards[pair[0].id]
    ran = judged(pair[0])
    silent = [(c.exercise, c.id, c.message[:300]) for c in poisoned.checks
              if c.status in ("failed", "error", "timeout") and not NAMES_NONFINITE.search(c.message)
              and not _placeholder_gate(c.id, c.message) and (ran is None or c.exercise in ran)]
    assert not silent, f"{pair[0].id}: failed without naming the NaN/inf: {silent[:3]}"


def _placeholder_gate(check_id: str, message: str) -> bool:
    """The placeholder gate and the passes it holds back: how the gate reads a NaN output is issue 38's item 2
    (its own family), not this rule's."""
    return "not_a_placeholder" in check_id or message.startswith(NOT_CREDITED)


def test_a_check_that_meets_nan_says_failed_or_could_not_be_judged(cards):
    """Every check of the poisoned exercise that did not pass says why in words: a finding on the values, or
    "could not be judged" with the non-finite finding, never a bare traceback."""
    for pair in PAIRS:
        card = cards[pair[0].id]
        for c in card.checks:
            if c.exercise == pair[0].exercise and c.status in ("failed", "error") and not c.message:
                raise AssertionError(f"{pair[0].id}: {c.id} failed without a message")


def test_the_reference_itself_passes_every_check(server: WorkerServer, tmp_path: Path):
    """The wrapper changes nothing but the poison: with the poison never applied, the card is full."""
    for assignment in sorted(REFERENCE):
        source = REFERENCE[assignment].read_text() + POISON_HELPER.format(exercise="-", fill="nan", pattern="row")
        path = tmp_path / assignment / FILENAME[assignment]
        path.parent.mkdir()
        path.write_text(source, encoding="utf-8")
        card = api.grade(path, assignment, server=server)
        assert card.score == card.max_score, [(c.id, c.message[:100]) for c in card.checks if c.status != "passed"]


MASKING_WORDS = ("inf fill of the wrong sign",)


@pytest.mark.parametrize("exercise", sorted({p.exercise for p, _ in PAIRS}))
def test_a_cause_is_named_only_where_the_function_can_have_it(exercise):
    """The finding's causes are the exercise's own: no mask fill or softmax overflow for an entropy or a
    reshape, and the entropy names the float16 underflow of its clamp."""
    from grader.checks.nonfinite import CAUSES, nonfinite_finding

    got = torch.tensor([[float("nan"), 1.0], [2.0, 3.0]])
    finding = nonfinite_finding(got, f"`{exercise}` output", "some input", expected=torch.tensor([[-0.0, 1.0], [2.0, 3.0]]))
    assert finding and "where the expected value is 0." in finding  # -0 reads as 0
    own = [c.text for c in CAUSES if exercise in c.exercises]
    for cause in CAUSES:
        assert (cause.text in finding) == (cause.text in own), (exercise, cause.text)
    masks = exercise in {"apply_mask", "attention", "multi_head_attention", "SelfAttentionHead", "MultiHeadAttention"}
    assert any(w in finding for w in MASKING_WORDS) == masks, finding
    if exercise == "attention_entropy":
        assert "float16" in finding and "clamp_min(1e-12)" in finding


ENTROPY_EPS = {"1e-12": True, "1e-30": True, "1e-8": True, "1e-6": False, "torch.finfo(p.dtype).tiny": False,
               "1e-4": False}


@pytest.mark.parametrize("eps", sorted(ENTROPY_EPS))
@pytest.mark.parametrize("form", ["p.clamp_min({eps})", "p.clamp(min={eps})", "p + {eps}"])
def test_the_entropy_names_its_float16_underflow_only_where_its_constant_underflows(eps, form):
    """A cause that quotes code is listed only where the student's code holds it: the clamp's constant must
    be one float16 rounds to 0 (below 2.98e-8) for the underflow to be named."""
    import ast

    from grader.checks.nonfinite import causes_for, prune_causes

    source = f"import torch\n\n\ndef attention_entropy(p):\n    return -(p * torch.log({form.format(eps=eps)})).sum(-1)\n"
    message = f"`attention_entropy` output contains NaN at index (0,). {causes_for('attention_entropy')}"
    pruned = prune_causes(message, ast.parse(source), "attention_entropy")
    assert ("float16" in pruned) == ENTROPY_EPS[eps], pruned
    # "clamp the weights before the log" only to a file that does not clamp already
    assert ("log(0) = -inf" in pruned) == ("clamp" not in form), pruned


FILLS = {'float("-inf")': False, "float('inf')": True, "-float('inf')": True, "torch.finfo(s.dtype).min": False,
         "math.inf": True, "-1e9": False, 'float("+inf")': True}


@pytest.mark.parametrize("fill", sorted(FILLS))
@pytest.mark.parametrize("exercise", ["attention", "multi_head_attention"])
def test_the_wrong_sign_fill_is_named_only_where_the_code_reaching_it_fills_with_inf(fill, exercise):
    """The callers' causes read the code they reach: attention's mask fill lives in apply_mask."""
    import ast

    from grader.checks.nonfinite import causes_for, prune_causes

    source = (f"import math\nimport torch\n\n\ndef apply_mask(s, m):\n    return s.masked_fill(~m, {fill})\n\n\n"
              "def softmax(s, dim=-1):\n    return torch.exp(s) / torch.exp(s).sum(dim, keepdim=True)\n\n\n"
              "def attention(q, k, v):\n    return softmax(apply_mask(q @ k.transpose(-2, -1), None)) @ v\n\n\n"
              "def multi_head_attention(x):\n    return attention(x, x, x)\n")
    message = f"`{exercise}` out contains NaN at index (0,). {causes_for(exercise)}"
    pruned = prune_causes(message, ast.parse(source), exercise)
    assert ("wrong sign" in pruned) == FILLS[fill], pruned
    assert "exp() without subtracting the max" in pruned  # softmax calls exp: reached from both


def test_a_cause_sentence_left_empty_is_dropped():
    import ast

    from grader.checks.nonfinite import causes_for, prune_causes

    message = f"`SelfAttentionHead` output contains NaN. {causes_for('SelfAttentionHead')} Fix the mask."
    tree = ast.parse("class SelfAttentionHead:\n    def forward(self, x):\n        return x.softmax(-1)\n")
    pruned = prune_causes(message, tree, "SelfAttentionHead")
    assert "exp()" not in pruned and "wrong sign" not in pruned and pruned.endswith("Fix the mask.")
    assert "every score masked" in pruned  # quotes no code: stays


@pytest.mark.parametrize("pattern", ["row", "entry", "past"])
def test_a_count_on_finite_entries_still_fails_a_real_bug_beside_nan(grade, pattern):
    """NaN does not hide a bug either: with no dropout after proj, the finite entries hold no zero, and the
    check says so on them, naming how many entries it could not count."""
    from tests.corpus_cases import corpus

    case = next(c for c in corpus("mutants") if c.id == "attention-modules/mutants/mha_no_output_dropout")
    poison = Variant("attention-modules", "MultiHeadAttention", pattern, POISONS[pattern])
    source = case.source() + POISON_HELPER.format(**vars(poison)) + module_wrapper(poison.exercise, "_poisoned")
    card = grade(source, "attention-modules")
    check = next(c for c in card.checks if c.id == "test_dropout_after_the_projection_in_training_mode")
    assert check.status == "failed" and "could not be judged" not in check.message, check.message
    assert re.search(r"sets 0 of its \d+ finite output entries to 0 \(the other \d+ are NaN/inf", check.message), \
        check.message
