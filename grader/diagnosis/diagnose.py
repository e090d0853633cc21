"""Which known mistake do a card's failed checks show?

When a check fails, the judge replays the requests it recorded (``answers``) in its own process on the
reference and on the known mistakes that can change what the check's exercise computes: the hand-written
catalogue (``catalogue``) and the variants the mutation operators generate (``family``). A mistake is named
only when the reference does not give the student's answers, and the variant gives every one of them, in
every check of the exercise: the same values within the dtype's tolerance or its rounding (``noise``; NaN
where NaN, inf where inf), the same dtype, shape and device, the same exception where the student's code
raised, the same inputs written into, the same gradients reached (``gradients``, replayed after the rest).

Where no catalogued mistake fits, the answers are read for a relation to the reference's (``relations``);
then two edits (``pairs``); then one edit that fits wherever both codes run (``naming.WhereItRuns``); where
nothing fits at all, what the answers show of gradients and structure (``observed``). Catalogued mistakes
that both match are named together; generated variants that match alike are one mistake written several
ways. Nothing is guessed.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

import torch

from grader.diagnosis.answers import (Answer, Request, answer_text, call_text, replay, replayable, request_key, same,
                                      student_answer)
from grader.diagnosis.catalogue import Mistake, module_from_source
from grader.diagnosis.family import Variant, VariantFactory
from grader.diagnosis.family import variants as generate_variants
from grader.diagnosis import noise
from grader.diagnosis.callgraph import uses
from grader.diagnosis.gradients import is_gradient_request
from grader.diagnosis.held import held_first
from grader.diagnosis.naming import Known, WhereItRuns, is_pair, named_first
from grader.diagnosis.observed import Observed, observations
from grader.diagnosis.relation_search import find as find_relations
from grader.diagnosis.relations import Relation
from grader.diagnosis.truth import ReferenceReading, TrueNames

MAX_REMEMBERED_ANSWERS = 20_000  # a few KB each at most: the checks' tensors are small
MAX_READ_REQUESTS = 4_000  # a few cards' requests: what one card's diagnosis reads again


@dataclass(frozen=True)
class CheckEvidence:
    """One check of a card, as settling needs it: its exercise, status, matches and requests.

    ``diagnosable``: the check failed on the student's answers (an assertion, or an error raised by
    their code); one that could not be judged, or that the grader itself broke, names no mistake."""

    exercise: str
    status: str
    matches: tuple[Known, ...]
    requests: tuple[Request, ...]
    diagnosable: bool = True


Evidence = tuple[dict[str, Any], str, Answer]  # (request, its digest, the student's answer)


class Diagnoser:
    """The reference and the known mistakes of one assignment, loaded once for a judge's life: the
    catalogued ones and, with ``operators``, the variants the mutation operators generate from the
    reference (``grader.diagnosis.operators``), made the first time a card needs them."""

    def __init__(self, reference: Path, mistakes: Sequence[Mistake], *, operators: bool = False,
                 assignment: str = "") -> None:
        self._reference_path, self._reading = reference, None
        self._assignment = assignment or (mistakes[0].assignment if mistakes else "")
        self._mistakes, self._operators = tuple(mistakes), operators
        self._generated: tuple[Variant, ...] | None = None
        self._factory: VariantFactory | None = None
        self._modules: dict[str, ModuleType] = {}  # loaded when first needed: most gradings never diagnose
        self._uses: dict[str, frozenset[str]] | None = None
        # The checks' inputs are seeded, so every submission asks mostly the same questions: a variant's
        # answer is computed once per judge, not once per student (bounded: oldest answers go first).
        self._answers: OrderedDict[tuple[str, str], Answer] = OrderedDict()
        self._read: OrderedDict[tuple[int, int], tuple[dict, dict, Evidence]] = OrderedDict()  # ``_evidence``
        self._agrees: OrderedDict[int, tuple[Answer, bool]] = OrderedDict()  # ``_as_reference``

    def _as_reference(self, message: dict[str, Any], key: str, answer: Answer) -> bool:
        """Whether the student's ``answer`` is the reference's (words compared only where the contract asks for
        no exception: ``same``); asked of every answer several times a card, so worked out once per answer."""
        held = self._agrees.get(id(answer))
        if held is None or held[0] is not answer:
            ref = self._answer(None, message, key)
            held = self._agrees[id(answer)] = (answer, same(answer, ref, words=ref.raised is None))
            if len(self._agrees) > MAX_READ_REQUESTS:
                self._agrees.popitem(last=False)
        return held[1]

    def _evidence(self, requests: Sequence[Request]) -> list[Evidence]:
        """The replayable requests with their digests and the student's answers, each worked out once: a card's
        requests are read again and again (each exercise, each check, the examples), and their digests and the
        answers' comparable copies cost more than the reading. Held while in ``_read`` (a bounded window: the
        request and its reply themselves are kept, so their ``id`` cannot be reused by others while there)."""
        found = []
        for message, reply in requests:
            if not replayable(message):
                continue
            held = self._read.get((id(message), id(reply)))
            if held is None or held[0] is not message or held[1] is not reply:
                held = self._read[(id(message), id(reply))] = (
                    message, reply, (message, request_key(message), student_answer(message, reply)))
                if len(self._read) > MAX_READ_REQUESTS:
                    self._read.popitem(last=False)
            found.append(held[2])
        return found

    def _answer(self, mistake: Known | None, message: dict[str, Any], digest: str) -> Answer:
        if isinstance(mistake, WhereItRuns):
            mistake = mistake.mistake
        key = (mistake.id if mistake else "", digest)
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key]
        if isinstance(mistake, Relation):  # computed from the reference's answers, not from code of its own
            answer = mistake.answer(message, lambda m: self._answer(None, m, request_key(m)))
        else:
            answer = replay(self._module(mistake), message)
        self._answers[key] = answer
        if len(self._answers) > MAX_REMEMBERED_ANSWERS:
            self._answers.popitem(last=False)
        return answer

    def _module(self, mistake: Known | None) -> ModuleType:
        key = mistake.id if mistake else ""
        if key not in self._modules:
            if mistake is None:
                module = module_from_source(self._reference_path.read_text(encoding="utf-8"), "_diagnosis_reference")
            elif isinstance(mistake, Variant):
                if self._factory is None:
                    self._factory = VariantFactory(self._reference_path.read_text(encoding="utf-8"), "_variant")
                module = self._factory.build(mistake)
            else:
                module = mistake.variant(self._reference_path)
            self._modules[key] = module
        return self._modules[key]

    def true_names(self, student: str | None) -> TrueNames:
        """What a card may quote of ``student``'s code (``truth``); None: the source is not known, so no title
        that quotes code as the student's is said."""
        if self._reading is None:  # the reference's side, read once (``truth.ReferenceReading``)
            self._reading = ReferenceReading(self._reference_path.read_text(encoding="utf-8"))
        return TrueNames(self._reading, student)

    def family(self) -> tuple[Known, ...]:
        """Every known mistake: the catalogue's first (their words are written by hand), then the generated."""
        if self._generated is None:
            self._generated = () if not self._operators else tuple(generate_variants(
                self._reference_path.read_text(encoding="utf-8"), self._assignment))
        return self._mistakes + self._generated

    def candidates(self, exercise: str) -> list[Known]:
        """The mistakes that can change what ``exercise`` computes: its own and those of what it uses."""
        if self._uses is None:
            self._uses = uses(self._module(None))
        reach = self._uses.get(exercise, frozenset({exercise}))
        return [m for m in self.family() if m.exercise in reach]

    def matching(self, exercise: str, requests: Sequence[Request]) -> list[Known]:
        """The known mistakes whose variant gives every answer the student gave, when the reference does not."""
        candidates = self.candidates(exercise)
        evidence = self._evidence(requests) if candidates else []
        if not evidence or not candidates or self._reference_agrees(evidence):
            return []
        ordered = self._discriminating_first(evidence)  # once, not once per candidate
        return [m for m in candidates if self._gives(m, ordered)]

    def _reference_agrees(self, evidence: Sequence[Evidence]) -> bool:
        """The reference gives the same answers: they do not show a mistake."""
        return all(self._as_reference(message, key, answer)
                   for message, key, answer in evidence)

    def _discriminating_first(self, evidence: Sequence[Evidence]) -> list[Evidence]:
        """The answers unlike the reference's first: most variants differ from the student there, so the
        replay of each stops after one request. Gradient requests come after every plain one: a variant
        is replayed with autograd only when the plain requests could not rule it out (``gradients``)."""
        def order(item: Evidence) -> tuple[bool, bool]:
            message, key, answer = item
            return is_gradient_request(message), self._as_reference(message, key, answer)
        return sorted(evidence, key=order)

    def _gives(self, mistake: Known, evidence: Sequence[Evidence]) -> bool:
        """Whether the variant gives every answer; stops at the first it does not. Where the contract asks
        for an exception (the reference raises) and the student raised another type, only that type (and
        whether it is a device mismatch) is compared, even for a ``RuntimeError``: a student's own ``raise
        RuntimeError(...)`` in place of the ``ValueError`` asked for has words of its own."""
        for message, key, answer in held_first(evidence, lambda digest: (mistake.id, digest) in self._answers):
            variant = self._answer(mistake, message, key)
            reference = self._answer(None, message, key)
            if getattr(mistake, "where_differs", False) and (self._as_reference(message, key, answer)
                                                             or is_gradient_request(message)):
                continue  # a relation explains the values unlike the reference's (``relations``)
            if not self._alike(mistake, message, key, answer, variant, reference):
                return False
        return True

    def _alike(self, mistake: Known, message: dict[str, Any], key: str, answer: Answer, variant: Answer,
               reference: Answer) -> bool:
        """Whether the mistake's answer to one request is the student's (``_gives``): the same exception type
        where the contract asks for another, else ``same`` or the same up to rounding."""
        if answer.raised and reference.raised and answer.raised[0] != reference.raised[0]:
            return bool(variant.raised) and variant.raised[:2] == answer.raised[:2]
        return same(answer, variant, words=reference.raised is None) or self._rounding(mistake, message, key, answer, variant)

    def _rounding(self, mistake: Known, message: dict[str, Any], key: str, answer: Answer, variant: Answer) -> bool:
        """Whether ``answer`` is the variant's up to float rounding (``noise``): replayed in float64 only where
        the two are near, so a variant that gives another answer costs nothing more."""
        if not noise.near(answer, variant) or (wide := noise.promoted(message)) is None:
            return False
        return noise.within_rounding(answer, variant, self._answer(mistake, wide, key + ":float64"))

    def _gives_where_both_run(self, mistake: Known, evidence: Sequence[Evidence]) -> bool:
        """``_gives``, except where exactly one of the student's code and the mistake's raises while the contract
        asks for no exception (the reference does not raise): those requests are left out, and at least one
        answer unlike the reference's must be the mistake's value (``naming.WhereItRuns``)."""
        shown = False
        for message, key, answer in evidence:
            reference = self._answer(None, message, key)
            variant = self._answer(mistake, message, key)
            if reference.raised is None and (answer.raised or variant.raised):
                continue  # one or both raise where the contract asks for none: written another way there
            if not self._alike(mistake, message, key, answer, variant, reference):
                return False
            shown = shown or (answer.raised is None and not same(answer, reference))
        return shown

    def diagnose(self, checks: Sequence[CheckEvidence]) -> list[list[Known]]:
        """The known mistakes each failed check of one card shows, found over the whole family at bounded cost.

        Exercises are taken callees first. A mistake stays for an exercise only if its variant answers like
        the student on every request of that exercise's checks, passed or failed, unlike-the-reference
        answers first (most variants stop there). The pool is blame-ordered: the function named is the one
        whose own checks fail first in call order, never a caller.

        - A mistake of a failing callee (directly or not) that gives the caller's answers is named there, the
          ones that survived the callee's own checks first; the caller's own mistakes are then not named.
        - A caller's own mistakes are named only when no callee mistake gives its answers and every failing
          callee is *cleared*: a known mistake survives the callee's own checks, or every answer the callee
          gave is the reference's (it failed for something its values do not show, so it cannot explain a
          caller's). A caller with an uncleared callee names nothing; its card points at the callee that
          fails first (``blame``), and its own mistakes are not named on its callers either. So does one
          whose every wrong answer is an exception.
        - A mistake of a function that passed every check is not the student's: it is never in the pool.

        A failed check is then matched by its exercise's survivors unless the reference itself gives its
        answers. ``settle`` applies the card-wide rules to the result.
        """
        failing = {c.exercise for c in checks if c.status not in ("passed", "skipped")}
        evidence: dict[str, list[Evidence]] = {}
        for c in checks:
            if c.exercise in failing:
                evidence.setdefault(c.exercise, []).extend(self._evidence(c.requests))
        survivors: dict[str, tuple[Known, ...]] = {}
        blocked: set[str] = set()  # exercises with an uncleared failing callee: their own mistakes are named nowhere
        for exercise in self.call_order(failing):  # callees first: a caller's pool depends on theirs
            ordered = self._discriminating_first(evidence.get(exercise, []))
            callees = self.failing_callees(exercise, failing)
            pool = self.candidates(exercise)
            # A callee's relation describes that function's answers, not a caller's: it is never inherited, and
            # a callee whose only names are relations is not cleared (its caller's own variants would blame the
            # caller for the callee's mistake).
            # A callee's own mistakes are tried on the caller only where the callee recorded no answers to try them
            # on: one that did not give the callee's own answers is not the student's.
            inherited = [*dict.fromkeys(m for c in callees for m in survivors.get(c, ()) if not isinstance(m, Relation)),
                         *(m for m in pool if m.exercise in callees and m.exercise not in blocked and not is_pair(m)
                           and not evidence.get(m.exercise))]
            found = [m for m in dict.fromkeys(inherited) if ordered and self._gives(m, ordered)]
            cleared = all(any(not isinstance(m, Relation) for m in survivors.get(c, ()))
                          or self._values_right(evidence.get(c, [])) for c in callees)
            if not cleared:
                blocked.add(exercise)
            if found or not cleared or (callees and self._only_raised(ordered)):
                # A callee's mistake explains it; or a callee fails with no mistake named (the cause may be there:
                # ``blame``); or every answer unlike the reference's is an exception while a callee fails (it most
                # likely comes from there). Its own mistakes are not named.
                survivors[exercise] = tuple(found)
                continue
            own = [m for m in pool if m.exercise == exercise]
            mine = tuple(m for m in own if not is_pair(m) and ordered and self._gives(m, ordered))
            # A catalogued mistake is named before any relation: the answers are read only where none fits, and
            # only for a function whose callees all pass (a failing callee is the cause to look at first).
            if not callees and not any(isinstance(m, Mistake) for m in mine):
                mine += self._relations(exercise, ordered)
            # Two edits only where nothing else fits (pairs.py); then one edit that fits wherever both codes run.
            survivors[exercise] = mine or tuple(m for m in own if is_pair(m) and ordered and self._gives(m, ordered)) \
                or tuple(WhereItRuns(m) for m in own if not is_pair(m) and self._gives_where_both_run(m, ordered))
        unexplained = {e for e in failing if not survivors.get(e)}
        if unexplained:  # nothing known gives the answers: what the answers themselves show (``observed``)
            if self._uses is None:
                self._uses = uses(self._module(None))
            seen = observations(unexplained, evidence, lambda m, k: self._answer(None, m, k), self._module(None), self._uses)
            survivors.update({e: (o,) for e, o in seen.items()})
        matched = []
        for c in checks:
            own = self._evidence(c.requests) if c.status not in ("passed", "skipped") and c.diagnosable else []
            found = survivors.get(c.exercise, ()) if own and not self._reference_agrees(own) else ()
            matched.append(CheckEvidence(c.exercise, c.status, tuple(found), c.requests, c.diagnosable))
        return self.settle(matched, verified=True)

    def _relations(self, exercise: str, evidence: Sequence[Evidence]) -> tuple[Relation, ...]:
        """The relations between the student's answers and the reference's that explain every answer of
        ``exercise`` (``relation_search``): only the exercise's own, never a function it calls."""
        fn = getattr(self._module(None), exercise, None)
        # A relation speaks of values: gradient requests are left out (their cotangents follow the contract's
        # outputs, so a relation of the outputs says nothing of them).
        evidence = [e for e in evidence if not is_gradient_request(e[0])]
        differing = [e for e in evidence if not self._as_reference(*e)]
        if not callable(fn) or isinstance(fn, type) or not differing:
            return ()
        return tuple(find_relations(fn, exercise, self._assignment, evidence, differing,
                                    lambda m: self._answer(None, m, request_key(m)), self._gives))

    def call_order(self, names: set[str]) -> list[str]:
        """``names`` with every callee before its callers (a callee reaches fewer functions than its caller)."""
        if self._uses is None:
            self._uses = uses(self._module(None))
        position = {name: i for i, name in enumerate(self._uses)}
        return sorted(names, key=lambda n: (len(self._uses.get(n, ())), position.get(n, len(position)), n))

    def failing_callees(self, exercise: str, failing: set[str]) -> list[str]:
        """The exercises in ``failing`` that ``exercise`` calls, directly or not, callees first."""
        if self._uses is None:
            self._uses = uses(self._module(None))
        return self.call_order(set(self._uses.get(exercise, frozenset()) - {exercise}) & failing)

    def blame(self, exercise: str, failing: set[str]) -> str:
        """The function ``exercise``'s failure points at: the first, in call order, of the failing functions it
        calls that call no failing function themselves ('' when it calls none that fails)."""
        callees = self.failing_callees(exercise, failing)
        roots = [c for c in callees if not set(self.failing_callees(c, failing))]
        return roots[0] if roots else ""

    def _values_right(self, evidence: Sequence[Evidence]) -> bool:
        """Some answers recorded and every one the reference's: a check failed for what the answers do not show
        (a forbidden call, a message), so these answers cannot explain a caller's."""
        return bool(evidence) and self._reference_agrees(evidence)

    def _only_raised(self, evidence: Sequence[Evidence]) -> bool:
        """Whether every answer unlike the reference's is an exception."""
        unlike = [answer for message, key, answer in evidence
                  if not self._as_reference(message, key, answer)]
        return bool(unlike) and all(answer.raised for answer in unlike)

    def settle(self, checks: Sequence[CheckEvidence], *, verified: bool = False) -> list[list[Known]]:
        """Across one card, drop the matches the card itself rules out.

        - A mistake of another exercise whose checks all passed is not the student's: every
          catalogued mistake fails a check of its own exercise.
        - A mistake whose variant answers unlike the student anywhere in the checks of the same
          exercise, passed or failed, is not the student's either: a check stops at its first failed
          answer, so one check alone may hold too little to tell (an all-False mask for T = 1 is
          both "zeros" and "the diagonal masked"; T = 5 tells them apart).
        - Where several still match and one is the only match of a check of its own exercise, keep
          that one: it is shown there and alone explains this check too (a ``causal_mask`` that
          ignores its device fails ``attention`` as an ``attention`` that builds its mask on the CPU would).
        """
        failing = {c.exercise for c in checks if c.status not in ("passed", "skipped")}
        kept = [[m for m in c.matches if m.exercise == c.exercise or m.exercise in failing] for c in checks]
        if not verified:  # ``diagnose`` kept only mistakes that give every answer of their check's exercise
            involved = {c.exercise for found, c in zip(kept, checks) if found}
            evidence: dict[str, list[Evidence]] = {}
            for c in checks:
                if c.exercise in involved:
                    evidence.setdefault(c.exercise, []).extend(self._evidence(c.requests))
            kept = [[m for m in found if self._gives(m, evidence[c.exercise])] for found, c in zip(kept, checks)]
        named = [named_first(found) for found in kept]  # equivalent generated variants count as one
        shown = {n[0].id for n, c in zip(named, checks) if len(n) == 1 and n[0].exercise == c.exercise}
        return [[m for m in found if m.id in shown] or found if len(found) > 1 else found for found in kept]

    def smallest_difference(self, requests: Sequence[Request]) -> str:
        """The recorded request with the smallest inputs where the student's answer is not the reference's,
        in a sentence ('' when none differs): what a student can try by hand when no known mistake fits."""
        def size(message: dict[str, Any]) -> int:
            values = [*(message.get("args") or []), *(message.get("kwargs") or {}).values(), *(message.get("inputs") or [])]
            return sum(v.numel() for v in values if isinstance(v, torch.Tensor))
        for message, key, answer in sorted(self._evidence(requests), key=lambda e: (e[2].raised is not None, size(e[0]))):
            ref = self._answer(None, message, key)
            if not same(answer, ref, words=ref.raised is None):
                return f"{call_text(message)} gives {answer_text(answer, ref, as_mistake=False)}"
        return ""

    def example(self, mistake: Known, requests: Sequence[Request]) -> str:
        """One request where the student's answer is the variant's and not the reference's, in a sentence:
        the evidence a student can check by hand. '' when no such request was recorded (or the mistake was
        read from the answers: its sentence holds its evidence)."""
        if isinstance(mistake, Observed):
            return ""
        for message, key, answer in sorted(self._evidence(requests), key=lambda e: e[2].raised is not None):  # values first
            ref = self._answer(None, message, key)
            if same(answer, ref, words=ref.raised is None) or not same(answer, self._answer(mistake, message, key),
                                                                        words=ref.raised is None):
                continue
            sizes = mistake.evidence(message) if isinstance(mistake, Relation) else ""
            return f"For example, {call_text(message)}{sizes} gives {answer_text(answer, ref)}"
        return ""
