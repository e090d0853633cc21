"""What a corpus mutant may fail without blame, and what it fails beyond that.

A check *blames* a property when it fails a submission that does not break that
property: a ``SelfAttentionHead`` scaled by ``C**-0.5`` fails
``test_no_dropout_in_eval_mode`` only because its outputs differ from the
reference's, and its card then tells the student to "use an nn.Dropout module".
This module draws the line between the failures a mutant earns and the ones it
suffers; ``bench/blame.py`` counts the latter over the whole corpus.

The keys
--------
A check on a card is named ``"<exercise>::<check id>"``, from ``card.checks[i].exercise``
and ``.id`` exactly as the card shows them: ``"softmax::test_rows_sum_to_one"``,
``"attention::test_low_precision_inputs_work[attention-float16]"``,
``"SelfAttentionHead::test_no_dropout_in_eval_mode[SelfAttentionHead]"``. A check *fails*
when its status is neither ``passed`` nor ``skipped`` (``failed``, ``error``, ``timeout``).

What a mutant may fail
----------------------
A mutant of exercise E (its ``# exercise:`` header) may fail, without blame:

(a) the **output checks** of E: the checks that compare E's outputs (or their
    gradients) with the correct values, so that *any* wrong value makes them fail.
    They are marked ``output: true`` in assignments.yaml, check by check (``is_output_check``
    reads the loaded config; the id without its ``[...]`` parameters names the check). Every
    other check is a **property check**: named for one property (causality, normalisation,
    scaling, the flags, stability, dropout, device, dtype, in-place, structure, the error
    raised, the source) and owed a failure only by a submission that breaks that property.
    The line drawn:

    - the shared checks of ``attention``: ``test_output_matches_reference``,
      ``test_low_precision_inputs_work`` (the same comparison in float16/bfloat16),
      ``test_gradients_match_reference``, ``test_accepts_non_contiguous_inputs`` are
      output checks; ``test_inputs_are_not_modified`` (in-place),
      ``test_stays_on_the_inputs_device`` and ``test_cuda_matches_cpu`` (device) are
      property checks.
    - an exercise's own check that compares the *whole* output with the correct values
      on an input of its choosing is an output check, whatever its name says (the mask
      *is* its values; the lesson's worked examples are exact values on small inputs;
      the extremes of an entropy are exact values).
    - a check that compares values only to judge one property (rows summing to one, the
      dim, stability, exact zeros, causality, the flags, the returned structure, a
      relation such as "entropy falls") is a property check.
    - both modules of ``attention-modules``: ``test_output_matches_reference_for_any_length``
      is the one output check. ``test_follows_module_dtype`` (dtype) and
      ``test_gradients_flow_to_the_input`` (differentiability) are property checks, named
      for their property like every other module check (structure, names, the tril
      buffer and its size, causality, device, dropout, the error raised).

(b) the output checks of every exercise that *calls* E, directly or not: the
    reference's call graph, ``tests.contract_clauses.builds_on`` (a ``softmax`` mutant
    may fail ``attention``'s and ``multi_head_attention``'s output checks, never
    ``bag_of_past``'s; a ``SelfAttentionHead`` mutant may fail ``MultiHeadAttention``'s).
    A property check of a caller is not included: a caller's causality check fails for
    a ``causal_mask`` mutant because the mask really is not causal, and the mutant says
    so in its own header, (c).

(c) whatever the mutant's header lists on ``# may_fail:`` lines: comma-separated
    fnmatch globs matched against the keys above (``softmax::test_rows_sum_to_one``,
    ``*::test_inputs_are_not_modified*``, ``attention::*``), or ``none``. A check of an exercise that
    calls the mutant's is named ``callers::<check glob>`` (``callers::test_weights_rows_sum_to_one``):
    the reference's call graph says which exercises that is, so a mutant never names its callers and a new
    exercise that calls it needs no edit here (``tests/test_blame.py`` holds the corpus to it). The list names
    the property checks the mutant *really* breaks: those a perfect grader, one whose
    every check fails only for its own property, would still fail. A check failed only
    because a bug elsewhere changed the values is *not* listed; that failure is blame.
    The corpus's lists follow three rules:

    - *the property is really broken* by the code the check runs, callees included:
      a ``causal_mask`` built with ``triu`` makes the student's ``attention`` non-causal,
      so ``attention::test_future_tokens_do_not_change_past_outputs`` is listed; a
      ``scale_scores`` dividing by ``d`` leaves the causal flag alone, so
      ``attention::test_causal_false_uses_no_mask`` (which fails today on the weights'
      values) is not.
    - *the code does not run there*: a check that calls a function which raises, or
      returns the wrong structure or shape, on the legal input the check needs may fail
      (a stub raising NotImplementedError must fail every check; a property cannot be
      granted to code that does not run). E.g. a float ``causal_mask`` makes
      ``attention`` raise at ``~mask``, so every check of ``attention`` that takes the
      causal path is listed, ``test_causal_false_*`` is not.
    - *NaN is a value*: a check whose property holds but which fails because the
      outputs are NaN (``NaN != NaN`` in a causality or parity comparison) is blame.

    A GPU-only check (``test_cuda_matches_cpu``) is listed where the rules above say a
    GPU would fail it, although it is skipped where no CUDA device exists.
    ``# MAY-FAIL:`` is read as a synonym (``tests.corpus_cases.read_header`` stops at it,
    so the corpus spells it ``may_fail``, which it keeps like any other key). Several
    such lines are united; a mutant with none may fail (a) and (b) only.

An alternative (a correct implementation) may fail nothing: every failing check
of its card is out of set.

``catch(case, card)`` is the mutant's own exercise losing points (a check of E
scoring below its maximum), the condition ``tests/test_corpus.py`` asserts; a
change that removes blame must keep it true for every mutant.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.scorecard import CheckResult, Scorecard
    from tests.corpus_cases import CorpusCase

PASSING = ("passed", "skipped")

_MAY_FAIL = re.compile(r"#\s*(?:may_fail|MAY-FAIL):\s*(.*)$")


def key(check: "CheckResult") -> str:
    """How a check is named here and in ``# may_fail:`` globs: ``<exercise>::<check id>``."""
    return f"{check.exercise}::{check.id}"


UNJUDGED = "could not be judged"  # a property check that met NaN/inf: no verdict on its property (helpers)


def failing(check: "CheckResult") -> bool:
    """A check that says its property could not be judged (NaN/inf in the outputs) fails with 0 points,
    so every card keeps the same total, but draws no conclusion about its property: like a skip, it is
    no blame; the output checks report the values ("NaN is a value", (c) above)."""
    return check.status not in PASSING and UNJUDGED not in check.message


def _may_fail_lines(case: "CorpusCase") -> list[str]:
    """The values of the ``# may_fail:`` (or ``# MAY-FAIL:``) lines in the case's leading comment block."""
    values = []
    for line in case.path.read_bytes().decode("utf-8", "replace").splitlines():
        if not line.startswith("#"):
            break
        m = _MAY_FAIL.match(line)
        if m:
            values.append(m.group(1))
    return values


def may_fail_globs(case: "CorpusCase") -> tuple[str, ...]:
    """The globs of every ``# may_fail:`` line, united; ``none`` contributes nothing."""
    return tuple(g.strip() for value in _may_fail_lines(case) for g in value.split(",")
                 if g.strip() and g.strip() != "none")


def expanded(globs: tuple[str, ...], calling: frozenset[str]) -> tuple[str, ...]:
    """``callers::PATTERN`` read as ``C::PATTERN`` for every exercise C whose reference calls the mutant's, directly
    or not: a property the mutant breaks, seen wherever its code runs. A new exercise that calls ``softmax`` is
    covered by ``softmax``'s mutants as it is, when its check of that property is named as the others are."""
    return tuple(f"{c}::{g.split('::', 1)[1]}" if g.startswith("callers::") else g
                 for g in globs for c in (sorted(calling) if g.startswith("callers::") else [""]))


def has_may_fail(case: "CorpusCase") -> bool:
    """Whether the case states its set at all (``none`` counts)."""
    return bool(_may_fail_lines(case))


@lru_cache(maxsize=None)
def callers(assignment: str, exercise: str) -> frozenset[str]:
    """The exercises whose reference calls ``exercise``, directly or not (``builds_on``)."""
    from grader.config import load_config
    from tests.contract_clauses import builds_on

    a = load_config().assignment(assignment)
    graph = builds_on(a.reference, {ex.name for ex in a.exercises})
    return frozenset(user for user, deps in graph.items() if exercise in deps)


@lru_cache(maxsize=None)
def output_checks(assignment: str) -> dict[str, frozenset[str]]:
    """(a): exercise -> the names of its checks marked ``output: true`` in assignments.yaml."""
    from grader.config import load_config

    return {ex.name: ex.output_checks for ex in load_config().assignment(assignment).exercises}


def is_output_check(assignment: str, check: "CheckResult") -> bool:
    return check.id.split("[", 1)[0] in output_checks(assignment).get(check.exercise, frozenset())


def allowed(case: "CorpusCase", card: "Scorecard") -> set[str]:
    """The keys of the card's checks this case may fail without blame: (a), (b) and (c) above.
    Nothing for an alternative."""
    if case.kind != "mutants":
        return set()
    exercise = case.header["exercise"]
    exercises = {exercise} | callers(case.assignment, exercise)
    globs = expanded(may_fail_globs(case), callers(case.assignment, exercise))
    return {key(c) for c in card.checks
            if (c.exercise in exercises and is_output_check(case.assignment, c))
            or any(fnmatchcase(key(c), g) for g in globs)}


def out_of_set(case: "CorpusCase", card: "Scorecard") -> list[str]:
    """The keys of the failing checks the case may not fail, in card order."""
    ok = allowed(case, card)
    return [key(c) for c in card.checks if failing(c) and key(c) not in ok]


def catch(case: "CorpusCase", card: "Scorecard") -> bool:
    """The mutant loses points in its own exercise."""
    return any(c.exercise == case.header.get("exercise") and c.score < c.max_score for c in card.checks)
