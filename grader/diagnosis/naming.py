"""How a card names what it found: which of several matching mistakes speaks, and the sentence a student reads.

``diagnose`` finds the mistakes (catalogued, read from the answers, generated) whose answers are the
student's; this module decides what is said of them: the hand-written catalogue first, then a generated
variant whose quoted code is the student's own, then a relation between answers, then a variant said as
behaviour (``truth``), and the sentence with its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from grader.diagnosis.catalogue import Mistake
from grader.diagnosis.family import Variant
from grader.diagnosis.observed import Observed
from grader.diagnosis.pairs import TWO_EDITS
from grader.diagnosis.relations import Relation
from grader.diagnosis.relations import sentence as relation_sentence
from grader.diagnosis.truth import TrueNames, fragments, said_titles
from grader.scorecard import Diagnosis, MistakeName



@dataclass(frozen=True)
class WhereItRuns:
    """A known mistake that gives every answer of the student's wherever both codes run: the two differ only
    where exactly one of them raises and the contract asks for no exception (``view`` where the student wrote
    ``reshape``, so only a non-contiguous input tells them apart; an einsum that needs square weights). Said as
    such ("wherever both run"): true of the answers, and the raise is the student's to read in its check."""

    mistake: Any  # the Known it wraps: its answers are the mistake's own

    def __getattr__(self, name: str) -> Any:  # id, exercise, title, explanation, operator, effect, definition
        return getattr(self.mistake, name)


Known = Mistake | Variant | Relation | Observed | WhereItRuns  # catalogued, generated, read from the answers, or partly


def is_pair(mistake: Known) -> bool:
    """A generated variant with two edits (``pairs.two_edits``)."""
    return isinstance(mistake, Variant) and mistake.operator == TWO_EDITS

# Which generated variant speaks for a class of equivalent ones: the simplest kinds of edit first.
OPERATOR_ORDER = ("mask", "scale", "untransposed", "dim", "transpose", "ignored", "keepdim", "reduction", "returned", "dropped", "operand", "swap", "pair", "stage",
                  "order",
                  "twice", "flag", "reversed", "shape", "function", "inplace", "inplace_arith", "cast", "einsum",
                  "size_at_call", "size", "constant", "roles", "moved", "storage", "reversed_list", "linear", "shift",
                  "grad",
                  "two")


def diagnosis(found: Sequence[Known], example: str = "", names: TrueNames | None = None) -> tuple[Diagnosis, str] | None:
    """The scorecard's diagnosis and the sentence a student reads after the check's own message.

    Catalogued mistakes that match alike are named together. Generated variants that match alike are
    one mistake written several ways (``dim=-1`` and ``dim=2`` on 3-d inputs): one speaks for them,
    the simplest kind of edit first. ``example``: a request that shows it (``Diagnoser.example``).
    ``names``: the student's code, so that a title quoting code they do not have is said as behaviour
    (``truth``); None says every title as written."""
    named = named_first(found, names)
    if not named:
        return None
    first, *others = named
    titles = said_titles(named, names)
    shown = f" {example}" if example else ""
    if isinstance(first, WhereItRuns):
        said = titles[first.id]
        fix = f" {first.explanation}" if said == first.title or (names is not None and fragments(first.explanation)
                                                                and names.present(first.explanation, first.exercise)) else ""
        another = "" if said == first.title else " (your code does it another way)"
        return Diagnosis(first.id, said), (f"Likely mistake: wherever both run, your results match {said}{another}; "
                                           f"on some inputs one of the two raises an error the other does not raise, or another one.{fix}{shown}")
    if isinstance(first, Observed):  # read from the answers: its sentence holds its own evidence
        return Diagnosis(first.id, first.title), f"Likely mistake: {first.explanation}"
    if isinstance(first, Relation):
        return (Diagnosis(first.id, first.title, tuple(MistakeName(m.id, m.title) for m in others)),
                relation_sentence(named, example))
    if not others:
        if titles[first.id] == first.title:
            return Diagnosis(first.id, first.title), f"Likely mistake: your results match {first.title}. {first.explanation}{shown}"
        # The fix was written for the code the title quoted: kept only where it quotes code the student has.
        fix = f" {first.explanation}" if names is not None and fragments(first.explanation) \
            and names.present(first.explanation, first.exercise) else ""
        return Diagnosis(first.id, titles[first.id]), (f"Likely mistake: your results match {titles[first.id]} "
                                                       f"(your code does it another way).{fix}{shown}")
    listed = "; or ".join(titles[m.id] for m in named)
    text = (f"Likely mistake: your results match each of {len(named)} known mistakes equally well, "
            f"so it is one of them: {listed}.{shown}")
    return Diagnosis(first.id, titles[first.id], tuple(MistakeName(m.id, titles[m.id]) for m in others)), text


def named_first(found: Sequence[Known], names: TrueNames | None = None) -> list[Known]:
    """What a card names for ``found``: the catalogued mistakes (their words are written by hand); else a generated
    variant whose title is true of the student's code (``names``: the code it quotes is there, the most precise
    thing to say); else the relations read from the answers (behaviour, true whatever the code); else a
    generated variant, said as behaviour where its quoted code is not the student's (``diagnosis``); else what
    the answers show of gradients and structure (``observed``)."""
    partly = [m for m in found if isinstance(m, WhereItRuns)]
    if partly and len(partly) == len(found):  # only where nothing gives every answer: the same order, unwrapped
        inner = named_first([m.mistake for m in partly], names)
        return [m for m in partly if m.mistake in inner]
    found = [m for m in found if not isinstance(m, WhereItRuns)]
    catalogued = [m for m in found if isinstance(m, Mistake)]
    relations = [m for m in found if isinstance(m, Relation)]  # ``relation_search.find`` kept only the few equivalent
    generated = sorted((m for m in found if isinstance(m, Variant)), key=lambda v: OPERATOR_ORDER.index(v.operator)
                       if v.operator in OPERATOR_ORDER else len(OPERATOR_ORDER))
    if catalogued:
        return catalogued
    if names is not None and relations:
        quoted = next((v for v in generated if names.holds(v)), None)
        if quoted is not None:
            return [quoted]
    return relations or generated[:1] or [m for m in found if isinstance(m, Observed)][:1]


def representative(found: Sequence[Known], names: TrueNames | None = None) -> Known | None:
    """The mistake a card names first for ``found`` (``diagnosis``), or None."""
    named = named_first(found, names)
    return named[0] if named else None


