"""The final card: a graded card with the staff overrides and the late policy applied, in one stage.

Every view of a score (the card file, the student's report, the record and gradebook row, the progress
line, changes.csv, the summary, every export) is drawn from the card this stage returns, once. Nothing is
drawn from a card that is not final yet and then drawn again: the overrides first (a check's points),
then the late policy on the card's total (the raw score), in ``finish`` (pure). ``Stage`` runs it over a
course folder: ``grade-all`` on each card as a grader process sends it and on each unchanged student's
card, ``merge`` on the joined cards with the late policy each shard recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from grader import deadlines, scorecard
from grader.batch import apply_overrides
from grader.batch.layout import Layout
from grader.batch.overrides import AUDIT, REVIEW, OverrideEntry, Review, audit, review_csv, review_line
from grader.batch.reports import keep_report, redraw_reports, write_report
from grader.export.gradebook import Row, row_from_card
from grader.files import write_atomically
from grader.scorecard import Scorecard


@dataclass(frozen=True)
class LateInputs:
    """What the late policy needs besides the card: the policy, and the submission times and extensions
    grade-all was given (a per-student time wins over ``everyone``'s, which wins over the LMS's)."""

    policy: deadlines.Policy
    times: Mapping[str, Any] = field(default_factory=dict)
    everyone: Any = None
    extensions: Mapping[str, deadlines.Extension] = field(default_factory=dict)

    def section(self, student: str, lms_time: str, raw: float) -> dict[str, Any]:
        """The card's ``late`` section for ``student`` with raw score ``raw``."""
        when = self.times.get(student) or self.everyone or lms_time or None
        return deadlines.apply(self.policy, when, student, self.extensions, raw).to_dict(raw, self.policy)


@dataclass(frozen=True)
class Rules:
    """What turns a graded card into the final one: each student's override entries (file order), the check
    fingerprints they are pinned to (None: unknown, every entry goes to review), and the late policy.
    ``late`` None with ``recorded_late``: the section each card already carries, rescored on its new raw
    score (``merge``: the shards applied the policy; the percent depends on the time alone)."""

    overrides: Mapping[str, Sequence[OverrideEntry]] = field(default_factory=dict)
    check_fingerprints: Mapping[str, str] | None = None
    late: LateInputs | None = None
    recorded_late: bool = False


@dataclass(frozen=True)
class Final:
    """One student's final card, and what the stage did to get it (for the audit, review list, changes)."""

    card: Scorecard
    applied: tuple[OverrideEntry, ...] = ()
    reviews: tuple[Review, ...] = ()
    events: tuple[apply_overrides.AuditEvent, ...] = ()

    @property
    def stopped(self) -> tuple[str, ...]:
        """``override no longer applies: <cause> (<target>)`` for each override this card lost."""
        return tuple(e.why for e in self.events if e.event == apply_overrides.STOPPED)


def group(entries: Sequence[OverrideEntry]) -> dict[str, tuple[OverrideEntry, ...]]:
    """Override entries by student, in file order."""
    out: dict[str, list[OverrideEntry]] = {}
    for e in entries:
        out.setdefault(e.student, []).append(e)
    return {s: tuple(es) for s, es in out.items()}


def finish(card: Scorecard, student: str, submitted_at: str, rules: Rules,
           previous: Scorecard | None = None) -> Final:
    """``card`` (as graded, or as a previous run left it) made final: overrides, then the late policy.

    Pure and idempotent: the card is first returned to its graded scores, so a final card finished
    again is the same card. ``previous`` is the student's card before this run (for an unchanged student,
    ``card`` itself): an override it carried that no longer applies is reported in ``events``. A card
    the stage leaves untouched is returned as it is (the same object; ``Stage.fresh`` relies on it)."""
    entries = rules.overrides.get(student, ())
    if entries or any(c.override for c in card.checks):
        new, applied, reviews = apply_overrides.apply(card, entries, rules.check_fingerprints)
    else:
        new, applied, reviews = card, [], []
    events = apply_overrides.audit_events(student, card, new, applied, reviews, card if previous is None else previous)
    late = _late(new, student, submitted_at, rules)
    done = new if late is None and new.late is None else replace(new, late=late)  # untouched: ``card`` itself
    return Final(done, tuple(applied), tuple(reviews), tuple(events))


def _late(card: Scorecard, student: str, submitted_at: str, rules: Rules) -> dict[str, Any] | None:
    if rules.late is not None:
        return rules.late.section(student, submitted_at, card.score)
    if rules.recorded_late and card.late:
        return deadlines.rescore(card.late, card.score)
    return None  # no policy: a section left from an earlier policy would misstate the score


def final_row(row: Row, card: Scorecard) -> Row:
    """``row`` (its file, card path, LMS time and flag) with every score field from the final ``card``."""
    new = row_from_card(row.student, card, row.file, row.card)
    return replace(new, submitted_at=row.submitted_at, late=row.late)


class Stage:
    """The final-card stage over one course folder for one run: each card made final, written once, its
    report drawn once, the audit logged; ``close`` writes the review list. ``report``/``view``: the
    reports this run draws (``--report``, ``--view``); None draws again only the reports that exist."""

    def __init__(self, layout: Layout, rules: Rules, report: str | None = None, view: str = "student") -> None:
        self.layout, self.rules, self.report, self.view = layout, rules, report, view
        self.reviews: list[Review] = []
        self.stopped: dict[str, tuple[str, ...]] = {}  # student -> what stopped applying (changes.csv's reason)

    def fresh(self, row: Row, card: Scorecard, previous: Scorecard | None, text: str | None = None) -> Row:
        """A card a grader process just made (``previous``: the student's card before it, if any).

        ``text``: that card as the grader process wrote it (``scorecard.to_valid_json``: checked against
        the schema there, and read back into ``card`` here). When the stage left the card untouched (no
        override entry, no late policy: ``finish`` returns ``card`` itself), the file is that text: the
        bytes ``scorecard.write`` would write (a card's JSON read back and written again is the same
        text), without serialising 40 KB again. Only identity will do: applying entries rebuilds the
        scores, and an equal card can still be written differently (an int 5 that became 5.0).
        """
        done = self._finish(row, card, previous)
        if text is not None and done.card is card:
            write_atomically(self.layout.card(row.student), text)
        else:
            scorecard.write(done.card, self.layout.card(row.student))
        self._draw(row.student, done.card)
        return final_row(row, done.card)

    def kept(self, row: Row) -> Row:
        """An unchanged student's card: rewritten (and its reports drawn) only when the final card moved."""
        card = self.layout.read_card(row.student)
        if card is None:
            return row
        done = self._finish(row, card, card)
        if done.card != card:
            scorecard.write(done.card, self.layout.card(row.student))
            self._draw(row.student, done.card)
        else:
            keep_report(self.layout, row, self)
        return final_row(row, done.card)

    def close(self, say: Callable[[str], None] | None = None) -> None:
        """``overrides_review.csv`` (removed when nothing needs review), each entry said in one line."""
        path = self.layout.root / REVIEW
        if not self.reviews:
            path.unlink(missing_ok=True)
            return
        write_atomically(path, review_csv(self.reviews))
        for r in self.reviews:
            (say or (lambda _: None))(review_line(r))

    def _finish(self, row: Row, card: Scorecard, previous: Scorecard | None) -> Final:
        done = finish(card, row.student, row.submitted_at, self.rules, previous)
        self.reviews += done.reviews
        if done.stopped:
            self.stopped[row.student] = done.stopped
        for e in done.events:
            audit(self.layout.root / AUDIT, e.event, e.entry, e.old, e.new, **({"why": e.why} if e.why else {}))
        return done

    def _draw(self, student: str, card: Scorecard) -> None:
        """The report this run asks for, from the final card; any other report that exists, in its view."""
        if self.report is not None:
            write_report(self.layout, student, card, self.view, self.report)
        redraw_reports(self.layout, student, card, skip=self.report)
