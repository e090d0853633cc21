"""``grader grade-all``: a whole class through warm grader processes, resumable, nothing lost.

The flow: ``intake`` finds who submitted what -> the plan (shard, roster,
what is unchanged since the last run) -> ``--jobs`` grader processes, each a
warm ``api.Grader`` (one worker server, one pytest session: the same
grading path as ``grader grade``) -> cards and records written by this
process, atomically, as results arrive, each made final first (``final``: the staff overrides and the
late policy, one stage) -> the gradebook, the summary, drawn once from the final rows.

This process never imports torch and never runs student code. Every input
ends as a card or an explicit row. A grader process that dies or stops answering
costs its submission an ``error`` row and is replaced; Ctrl-C or SIGTERM
stops the grader processes (they clean up their sandboxes) and leaves only whole
files, so the next run finishes the rest.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grader import files, seeds
from grader.batch import changes, cohort, fallbacks, final, intake, overrides, similarity
from grader.config import AssignmentConfig
from grader.export.gradebook import Row
from grader.batch.progress import Progress
from grader.coursedata.roster import RosterEntry
from grader.scorecard import Scorecard
from grader.batch.layout import Layout, record_key, fingerprint, read_record, write_record
from grader.batch.pool import BatchStopped, GraderPool
from grader.batch.outputs import write_outputs


@dataclass(frozen=True)
class BatchOptions:
    submissions: Path
    assignment_id: str
    out: Path
    config_path: Path
    jobs: int | None = None  # grader processes; None: ``default_jobs`` for the submissions still to grade
    roster: tuple[RosterEntry, ...] | None = None
    force: bool = False
    shard: tuple[int, int] | None = None
    strict: bool = False
    similarity_threshold: float = similarity.DEFAULT_THRESHOLD  # similarity.json lists pairs scoring this or more
    report: str | None = None  # "html": a feedback page per student, reports/<student>.html
    view: str = "student"  # what those pages show (grader.export.html.VIEWS)
    layout: str | None = None  # how SUBMISSIONS is laid out (grader.coursedata.lms.LAYOUTS); None: recognised
    say: Callable[[str], None] | None = None  # told, once SUBMISSIONS is read: the layout and what it lacked
    roster_line: str = ""  # said first then: which roster layout and id column (grader.coursedata.roster.Roster.line)
    dry_run: bool = False  # grade in a scratch copy of --out: only ``BatchResult.changes``, nothing written in --out
    # The late policy's inputs (grader.deadlines; the policy itself is the assignment's ``deadline``):
    # submission times from --submitted-at-csv (per student) and --submitted-at (everyone), which win over
    # the LMS's time, and the extensions (--extensions, else the config's ``extensions`` file).
    submitted_at: dict[str, Any] = field(default_factory=dict)
    submitted_at_all: Any = None
    extensions: dict[str, Any] = field(default_factory=dict)
    # The course secret (grader.seeds): --course-secret-file, else $GRADER_COURSE_SECRET, else the config's.
    course_secret_file: Path | None = None


@dataclass
class Counts:
    graded: int = 0
    unchanged: int = 0
    missing: int = 0
    errors: int = 0
    grader_errors: int = 0  # among errors: the grader itself failed
    not_done: int = 0  # left for the next run by an interruption

    def line(self) -> str:
        text = (f"graded {self.graded}, unchanged (skipped) {self.unchanged}, errors {self.errors}, "
                f"missing {self.missing}")
        return text + (f", not graded yet {self.not_done} (run again to finish)" if self.not_done else "")


@dataclass
class BatchResult:
    counts: Counts
    rows: list[Row] = field(default_factory=list)
    stopped: bool = False
    changes: list[changes.Change] = field(default_factory=list)  # whose score this run changed (changes.csv)
    compared: bool = False  # whether --out held an earlier grading of any of this run's students


MISSING = "nothing submitted"


SUBMISSIONS_PER_PROCESS = 2


def default_jobs(todo: int, cores: int) -> int:
    """How many grader processes pay for themselves: one per ``SUBMISSIONS_PER_PROCESS`` submissions
    still to grade, at most one per core. Every grader process is a fork of the batch's zygote, which
    imports torch once for all of them (``grader.batch.zygote``), so a second one costs ~0.6 s of CPU to
    start (the checks collected, its server warmed) against ~0.3 s a grading. Measured on an otherwise
    idle 2-core VM (``bench/jobs.py --sizes 2 4 8 --rounds 3``): 2 students take 3.64 s with one process
    and 3.71 s with two, 4: 3.87 s and 3.42 s, 8: 5.32 s and 4.52 s. Before the zygote (each process its own
    ``import torch``) 4 students took 3.55 s and 3.58 s, so the rule was one process per 4 submissions."""
    return max(1, min(cores, todo // SUBMISSIONS_PER_PROCESS))


def grade_all(options: BatchOptions, assignment: AssignmentConfig, progress: Progress | None = None) -> BatchResult:
    """Grade every submission under ``options.submissions``.

    Raises IntakeError (SUBMISSIONS unreadable) and BatchStopped (a grader process
    could not start: strict mode, exposed secrets or the sandbox refused).
    """
    secret = seeds.course_secret(options.course_secret_file, options.config_path)
    if options.dry_run:
        fallbacks.secret_dropped(options.out, True, secret)  # refused: it would compare the wrong grading
        return _dry_run(options, assignment, progress)
    decided = overrides.load(options.out / overrides.OVERRIDES)  # a bad file refuses now, not after grading
    progress = progress or Progress(bar=False)
    layout = Layout(options.out)
    stage = final.Stage(layout, rules(options, assignment, decided), options.report, options.view)
    fp = fingerprint(assignment, secret)
    counts = Counts()
    with tempfile.TemporaryDirectory(prefix="grader-unzip-") as unzip:
        # SUBMISSIONS first: a refused run (no such folder, not a zip) leaves no output folder behind.
        found = intake.scan(options.submissions, assignment.file, Path(unzip), options.roster, options.layout)
        _tell(options, found)
        entries = found.entries
        layout.prepare()
        layout.manifest.unlink(missing_ok=True)  # written again only when this run completes: merge's "finished"
        rows: dict[str, Row] = {}
        todo: list[tuple[intake.Handin, str]] = []
        plan = planned(entries, options)
        warned = fallbacks.said(entries, plan, options.roster, assignment, options, secret)

        def keep_sources() -> None:
            # The similarity report's token streams, read while the files exist (a zip's are gone when the
            # views are written), and while the grader processes start: this process waits for them then.
            cohort.keep_sources(options.out, {e.student: e.path for e in plan if e.path is not None}, assignment.stub)

        before = changes.snapshot([e.student for e in plan], lambda s: read_record(layout, s))  # before overwriting
        before = changes.with_cards(before, lambda s: True, layout.card)  # an override may rewrite any card
        for entry in plan:
            row, sha = _row_without_grading(entry, layout, fp, options.force)
            if row is None:
                todo.append((entry, sha))
                continue
            if row.status == "graded":
                row = stage.kept(row)  # its final card: an override or the late policy may have moved
                counts.unchanged += 1
                _keep_times(layout, row, record_key(sha, fp))
            else:
                write_record(layout, row, "")
            rows[entry.student] = row
        progress.start(len(todo), counts.unchanged)
        try:
            stopped = _run(todo, options, assignment, layout, fp, rows, counts, progress, keep_sources, stage)
        finally:
            progress.close()
    ordered = [rows[s] for s in sorted(rows)]
    counts.missing = sum(r.status == "missing" for r in ordered)
    counts.errors = sum(r.status == "error" for r in ordered)
    counts.not_done = sum(1 for e, _ in todo if e.student not in rows)
    stage.close(options.say)  # overrides_review.csv: the entries that no longer apply
    changed = _changes(before, ordered, {e.student: sha for e, sha in todo}, fp, layout, stage.stopped)
    if before:
        changes.write_csv(changed, layout.root / changes.FILE_NAME)  # the instructor page shows it
    else:  # a first grading compared nothing: no file, so the page cannot say "No score changed."
        (layout.root / changes.FILE_NAME).unlink(missing_ok=True)
    write_outputs(layout, assignment.id, [ex.name for ex in assignment.exercises], ordered, fp,
                  complete=not counts.not_done, similarity_threshold=options.similarity_threshold,
                  check_fingerprints=dict(stage.rules.check_fingerprints or {}), warnings=warned,
                  not_graded=found.not_graded)  # the whole download's, in every shard: merge keeps each once
    return BatchResult(counts, ordered, stopped, changed, bool(before))


def rules(options: BatchOptions, assignment: AssignmentConfig, entries: list[overrides.OverrideEntry]) -> final.Rules:
    """This run's final-card rules: the overrides file's entries, the checks' fingerprints they are pinned
    to, and the late policy with the times and extensions grade-all was given."""
    late = None
    if assignment.deadline is not None:
        late = final.LateInputs(assignment.deadline, options.submitted_at, options.submitted_at_all,
                                options.extensions)
    return final.Rules(final.group(entries), overrides.check_fingerprints(assignment), late)


def _changes(before: dict[str, changes.Standing], rows: list[Row], shas: dict[str, str], fp: str,
             layout: Layout, notes: dict[str, tuple[str, ...]]) -> list[changes.Change]:
    """Whose score this run changed: the previous records and cards against this run's final rows and cards
    (a student not re-graded keeps the key of their record: only an override or the late policy moved them)."""
    after = {}
    for row in rows:
        if row.student in before:
            key = record_key(shas[row.student], fp) if row.student in shas else before[row.student].key
            checks = changes.read_card_checks(layout.root / row.card) if row.card else None
            after[row.student] = changes.Standing(row, key, checks)
    return changes.compare(before, after, notes)


def _dry_run(options: BatchOptions, assignment: AssignmentConfig, progress: Progress | None) -> BatchResult:
    """``--dry-run``: grade in a scratch copy of --out's records and cards; --out is left byte for byte."""
    with tempfile.TemporaryDirectory(prefix="grader-dry-run-") as scratch:
        out = Path(scratch) / "out"
        out.mkdir()
        for folder in ("records", "cards"):
            if (options.out / folder).is_dir():
                shutil.copytree(options.out / folder, out / folder)
        if (options.out / overrides.OVERRIDES).is_file():  # the staff's overrides count in the scores shown
            shutil.copy2(options.out / overrides.OVERRIDES, out / overrides.OVERRIDES)
        return grade_all(replace(options, out=out, dry_run=False, report=None), assignment, progress)


def _row_without_grading(entry: intake.Handin, layout: Layout, fp: str, force: bool) -> tuple[Row | None, str]:
    """``(row, sha256)``: the row of a student who needs no grading now (missing, an input
    error, unchanged), or ``(None, sha256)`` for one to grade."""
    if entry.path is None:
        status = "missing" if entry.problem == MISSING else "error"
        return stamped(Row(entry.student, status, entry.file, message=entry.problem), entry), ""
    try:
        sha = files.sha256(entry.path)
    except OSError as exc:
        why = f"cannot read {entry.file}: {exc.strerror or exc}"
        return stamped(Row(entry.student, "error", entry.file, message=why), entry), ""
    old = read_record(layout, entry.student)
    if (not force and old is not None and old[0].status == "graded" and old[1] == record_key(sha, fp)
            and layout.card(entry.student).is_file()):
        return stamped(old[0], entry), sha
    return None, sha


def stamped(row: Row, entry: intake.Handin) -> Row:
    """``row`` with the LMS's submission time and late flag for ``entry`` (plain data, kept in the record;
    an unchanged file resubmitted later keeps its card and gets the new time)."""
    return replace(row, submitted_at=entry.submitted_at, late=entry.late)


def _keep_times(layout: Layout, row: Row, key: str) -> None:
    """An unchanged student's record, rewritten only when the LMS's time or late flag moved."""
    old = read_record(layout, row.student)
    if old is None or old[0] != row:
        write_record(layout, row, key)


def _tell(options: BatchOptions, found: intake.Intake) -> None:
    """The roster's and the download's one-line summaries, and what the download could not give."""
    if options.say is None:
        return
    for line in ([options.roster_line] if options.roster_line else []) + [found.line(), *found.notes]:
        options.say(line)
    for item in found.not_graded:  # each upload or zip member passed over, once: also summary.json's not_graded
        options.say(f"grader: {item.line()}")


def planned(entries: list[intake.Handin], options: BatchOptions) -> list[intake.Handin]:
    """This run's students: the shard's slice of the submissions, plus roster students with nothing."""
    plan = list(entries)
    if options.roster is not None:
        submitted = {e.student for e in entries}
        plan += [intake.Handin(r.student, None, "", MISSING) for r in options.roster if r.student not in submitted]
    if options.shard is not None:
        plan = [e for e in plan if intake.in_shard(e.student, options.shard)]
    return sorted(plan, key=lambda e: e.student)


def _run(todo: list[tuple[intake.Handin, str]], options: BatchOptions, assignment: AssignmentConfig,
         layout: Layout, fp: str, rows: dict[str, Row], counts: Counts, progress: Progress,
         meanwhile: Callable[[], None], stage: final.Stage) -> bool:
    """Grade ``todo`` on the pool; returns True when a signal stopped the batch early. ``meanwhile`` runs
    in a thread of its own while the grader processes start (seconds in which this process would only
    wait for the zygote to import torch) and is done before this returns."""
    if not todo:
        meanwhile()
        return False
    stop: list[int] = []
    entries = {e.student: (e, sha) for e, sha in todo}
    pending = list(reversed(todo))
    # A signal the batch was started with ignored (a job a shell started in the background) stays ignored.
    previous = {s: signal.signal(s, lambda signum, _: stop.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)
                if signal.getsignal(s) is not signal.SIG_IGN}
    pool = None
    beside = threading.Thread(target=meanwhile, name="grader-batch-meanwhile")
    beside.start()
    try:
        jobs = options.jobs or default_jobs(len(todo), len(os.sched_getaffinity(0)))
        pool = GraderPool(max(1, min(jobs, len(todo))), assignment, options.config_path, options.strict,
                         options.course_secret_file)
        while (pending or pool.busy()) and not stop:
            for slot in pool.idle():
                if pending:
                    entry, _ = pending.pop()
                    pool.send(slot, entry.student, entry.path)  # type: ignore[arg-type]
            for kind, payload in pool.events(wait=0.2):
                if kind == "fatal":
                    raise BatchStopped(payload[1], payload[0])
                if kind == "ready":
                    continue
                entry, sha = entries[payload[0]]
                row = result_row(kind, payload, entry, sha, layout, options, stage)  # final: what progress shows
                counts.grader_errors += kind == "lost" or (kind == "card" and payload[2])
                counts.graded += row.status == "graded"
                rows[row.student] = row
                write_record(layout, row, record_key(sha, fp) if row.status == "graded" else "")
                progress.advance(row)
    finally:
        if pool is not None:
            pool.close(graceful=not stop)
        beside.join()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return bool(stop)


def result_row(kind: str, payload: Any, entry: intake.Handin, sha: str, layout: Layout,
               options: BatchOptions | None = None, stage: final.Stage | None = None) -> Row:
    """Make what a grader process sent final (``stage``: the overrides and the late policy; without one the
    card as graded) and write it: the card first, so a record never points at a missing card, then the
    student's report (``--report``); the row is the final card's."""
    student = entry.student
    if kind == "card":
        _, text, _ = payload
        if stage is None:
            stage = final.Stage(layout, final.Rules(), options.report if options else None,
                                options.view if options else "student")
        previous = layout.read_card(student)  # before it is overwritten: the overrides it carried
        row = stamped(Row(student, "graded", entry.file, sha, card=f"cards/{student}.json"), entry)
        return stage.fresh(row, Scorecard.from_dict(json.loads(text)), previous, text)
    why = payload[1] if kind == "unreadable" else f"not graded: {payload[1]}"
    return stamped(Row(student, "error", entry.file, sha, message=why), entry)
