"""``grader grade-all``: a whole class through warm judges, resumable, nothing lost.

The flow: ``intake`` finds who submitted what -> the plan (shard, roster,
what is unchanged since the last run) -> ``--jobs`` judge processes, each a
warm ``api.Grader`` (one worker server, one pytest session: the same
grading path as ``grader grade``) -> cards and records written by this
process, atomically, as results arrive -> the gradebook, the summary.

This process never imports torch and never runs student code. Every input
ends as a card or an explicit row. A judge that dies or stops answering
costs its submission an ``error`` row and is replaced; Ctrl-C or SIGTERM
stops the judges (they clean up their sandboxes) and leaves only whole
files, so the next run finishes the rest.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import queue
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from grader import changes, cohort, deadlines, files, intake, overrides, seeds, similarity, summary
from grader.config import CHECKS_ROOT, AssignmentConfig
from grader.export import gradebook_csv
from grader.gradebook import Row, row_from_card, zero_reason
from grader.progress import Progress
from grader.roster import RosterEntry
from grader.scorecard import Scorecard
from grader.version import __version__

JOB_GRACE_SECONDS = 60.0  # beyond a submission's own limits, before its judge counts as hung
STOP_GRACE_SECONDS = 5.0  # a stopping judge gets this long to clean up its sandbox


class BatchStopped(Exception):
    """A judge could not start (strict mode refused, the sandbox failed...): nothing more can be graded."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class BatchOptions:
    submissions: Path
    assignment_id: str
    out: Path
    config_path: Path
    jobs: int = 1
    roster: tuple[RosterEntry, ...] | None = None
    force: bool = False
    shard: tuple[int, int] | None = None
    strict: bool = False
    similarity_threshold: float = similarity.DEFAULT_THRESHOLD  # similarity.json lists pairs scoring this or more
    report: str | None = None  # "html": a feedback page per student, reports/<student>.html
    view: str = "student"  # what those pages show (grader.export.html.VIEWS)
    layout: str | None = None  # how SUBMISSIONS is laid out (grader.lms.LAYOUTS); None: recognised
    say: Callable[[str], None] | None = None  # told, once SUBMISSIONS is read: the layout and what it lacked
    roster_line: str = ""  # said first then: which roster layout and id column (grader.roster.Roster.line)
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


# ------------------------------------------------------------------ the plan


def fingerprint(assignment: AssignmentConfig, secret: bytes | None = None) -> str:
    """What decides a card besides the submission: config, checks, reference, versions, course secret.

    A re-run skips a student only when this and the file's sha256 are both
    unchanged, so fixing a check (or a point value) re-grades everyone, and
    so does a new course secret (every student's hidden inputs change).
    """
    def plain(value: Any) -> Any:
        if isinstance(value, Path):
            return hashlib.sha256(value.read_bytes()).hexdigest() if value.is_file() else str(value)
        if isinstance(value, frozenset):
            return sorted(value)
        raise TypeError(type(value))

    # The late policy is applied to the rows on every run (grader.deadlines), never part of a card's key.
    decided = {k: v for k, v in asdict(assignment).items() if k not in ("deadline", "extensions")}
    config = json.dumps(decided, default=plain, sort_keys=True)
    checks = hashlib.sha256()
    for path in sorted(p for p in CHECKS_ROOT.rglob("*") if p.suffix in (".py", ".ini")):
        checks.update(f"{path.relative_to(CHECKS_ROOT)}\0".encode() + path.read_bytes())
    parts = [__version__, metadata.version("torch"), config, checks.hexdigest(), seeds.secret_id(secret)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Layout:
    """Where a batch's files go under ``--out``."""

    root: Path

    @property
    def cards(self) -> Path:
        return self.root / "cards"

    @property
    def records(self) -> Path:
        return self.root / "records"

    @property
    def manifest(self) -> Path:
        return self.root / "batch.json"

    def card(self, student: str) -> Path:
        return self.cards / f"{student}.json"

    def record(self, student: str) -> Path:
        return self.records / f"{student}.json"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    def report(self, student: str) -> Path:
        return self.reports / f"{student}.html"

    def pytest_report(self, student: str) -> Path:
        return self.reports / f"{student}.report.json"

    def prepare(self) -> None:
        for folder in (self.root, self.cards, self.records):
            folder.mkdir(parents=True, exist_ok=True)
            files.remove_leftovers(folder)
        if self.reports.is_dir():  # made by the first --report html run only
            files.remove_leftovers(self.reports)


def write_record(layout: Layout, row: Row, key: str) -> None:
    files.write_atomically(layout.record(row.student), json.dumps({"row": row.to_dict(), "key": key}, indent=1) + "\n")


def read_record(layout: Layout, student: str) -> tuple[Row, str] | None:
    try:
        data = json.loads(layout.record(student).read_text(encoding="utf-8"))
        return Row.from_dict(data["row"]), str(data["key"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _key(sha256: str, fp: str) -> str:
    return f"{sha256}:{fp}"




# ------------------------------------------------------------------ judges


def judge_process(inbox: Any, results: Any, cpu: int | None, scratch: str, assignment_id: str, config_path: str,
                  strict: bool, secret_file: str | None) -> None:
    """A judge process's life; ends with ``os._exit``, skipping the teardown of torch (~0.5 s).

    By then the judge's sandbox and server are closed and what it sent is flushed to the batch.
    """
    code = 0
    try:
        _judge(inbox, results, cpu, scratch, assignment_id, config_path, strict, secret_file)
    except SystemExit as exc:  # SIGTERM, after the finally blocks cleaned up
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a judge's own crash: say why on stderr, the batch records the row
        traceback.print_exc()
        code = 1
    results.close()
    results.join_thread()
    sys.stderr.flush()
    os._exit(code)


def _judge(inbox: Any, results: Any, cpu: int | None, scratch: str, assignment_id: str, config_path: str,
           strict: bool, secret_file: str | None) -> None:
    """One judge: a warm ``api.Grader`` grading the paths it is sent, one at a time.

    Runs in its own process (never the one that writes files). SIGINT is the
    batch's to decide on; SIGTERM ends the current grading through its
    ``finally`` blocks, so the sandboxed child is killed and scratch removed.
    Every message carries this process's pid, so the pool knows whose it is.

    With ``cpu``, the judge, its worker server and every sandboxed child stay
    on that core: a check is a ping-pong of ~180 small requests between judge
    and child, and on one core each hand-over is a plain context switch rather
    than a cross-core wake-up (measured: 0.22-0.25 -> 0.19-0.21 s a grade). It also
    keeps a spinning submission off the other judges' cores.
    """
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    tempfile.tempdir = scratch  # sandbox scratch folders go under the batch's own, removed at its end
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    me = os.getpid()
    from grader.sandbox.launcher import WorkerServer

    server = WorkerServer()  # first: its import of torch overlaps ours
    from grader import api, scorecard
    from grader.config import ConfigError
    from grader.submission import UnreadableSubmission

    try:
        grader = api.Grader(assignment_id, config_path=Path(config_path), server=server, strict=strict,
                            course_secret_file=Path(secret_file) if secret_file else None)
    except (ConfigError, api.SecretsExposed, seeds.SecretError) as exc:
        results.put((me, "fatal", (2, str(exc))))
        server.close()
        return
    try:
        results.put((me, "ready", None))
        while (task := inbox.get()) is not None:
            student, path = task
            try:
                card = grader.grade(Path(path), student)  # their own hidden inputs (grader.seeds)
                results.put((me, "card", (student, scorecard.to_valid_json(card), bool(card.grader_error))))
            except UnreadableSubmission as exc:
                results.put((me, "unreadable", (student, str(exc))))
            except api.StrictModeRefused as exc:
                results.put((me, "fatal", (2, str(exc))))
                return
    finally:
        grader.close(wait=False)
        server.close()


@dataclass
class _Judge:
    process: Any
    inbox: Any
    tasks: list[tuple[str, str]] = field(default_factory=list)  # sent, in order; the first is being graded
    since: float = 0.0  # when the first task started (or the judge became free for it)
    ready: bool = False


class JudgePool:
    """``jobs`` judge processes; each holds one submission and the next one queued.

    The queued one means a judge never waits for this process to write the
    last card before it starts the next submission.
    """

    DEPTH = 2

    def __init__(self, jobs: int, assignment: AssignmentConfig, config_path: Path, strict: bool,
                 secret_file: Path | None = None) -> None:
        self._ctx = multiprocessing.get_context("spawn")  # a clean interpreter: no inherited state or threads
        self._results = self._ctx.Queue()
        self._args = (assignment.id, str(config_path), strict, str(secret_file) if secret_file else None)
        # Where the judges' sandbox scratch folders go: removed by ``close`` even after a judge was killed.
        self._scratch = tempfile.mkdtemp(prefix="grader-batch-")
        limits = assignment.limits
        self._deadline = (limits.submission_wall_seconds + limits.load_cpu_seconds + limits.call_wall_seconds
                          + JOB_GRACE_SECONDS)
        cores = sorted(os.sched_getaffinity(0))
        # One judge per core, pinned; more judges than cores share them all.
        self._cpus: list[int | None] = [cores[i] for i in range(jobs)] if jobs <= len(cores) else [None] * jobs
        self._judges = [self._start(i) for i in range(jobs)]

    def _start(self, slot: int) -> _Judge:
        inbox = self._ctx.SimpleQueue()
        process = self._ctx.Process(target=judge_process,
                                    args=(inbox, self._results, self._cpus[slot], self._scratch, *self._args),
                                    daemon=True)
        # Born with SIGINT/SIGTERM blocked: a Ctrl-C while it boots must not kill it with a traceback.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return _Judge(process, inbox)

    def idle(self) -> list[_Judge]:
        """Judges with room for another task."""
        return [j for j in self._judges if len(j.tasks) < self.DEPTH and j.process.is_alive()]

    def busy(self) -> bool:
        return any(j.tasks for j in self._judges)

    def send(self, judge: _Judge, student: str, path: Path) -> None:
        if not judge.tasks:
            judge.since = time.monotonic()
        judge.tasks.append((student, str(path)))
        judge.inbox.put(judge.tasks[-1])

    def events(self, wait: float) -> Iterator[tuple[str, Any]]:
        """Results as ``(kind, payload)``; a judge that died or hung yields ``("lost", (student, why))``."""
        try:
            sender, kind, payload = self._results.get(timeout=wait)
        except queue.Empty:
            pass
        else:
            judge = next((j for j in self._judges if j.process.pid == sender), None)
            if judge is not None:
                judge.ready = True
                if kind in ("card", "unreadable") and judge.tasks:
                    judge.tasks.pop(0)
                    judge.since = time.monotonic()
            yield kind, payload
        now = time.monotonic()
        for i, judge in enumerate(self._judges):
            hung = bool(judge.tasks) and now - judge.since > self._deadline
            if judge.process.is_alive() and not hung:
                continue
            if judge.tasks:
                why = (f"the grader stopped answering after {self._deadline:g} s" if hung
                       else f"the grader's judge process died (exit {judge.process.exitcode})")
                yield "lost", (judge.tasks[0][0], why)
                self._stop(judge)
                self._judges[i] = self._start(i)
                for student, path in judge.tasks[1:]:  # queued behind the lost one: not started, resend
                    self.send(self._judges[i], student, Path(path))
                continue
            if not judge.ready:
                self._results_drain_fatal()
                yield "fatal", (3, f"a judge process could not start (exit {judge.process.exitcode})")
            self._stop(judge)
            self._judges[i] = self._start(i)

    def _results_drain_fatal(self) -> None:
        """A judge that died at start may have said why: raise that instead of a bare exit code."""
        try:
            while True:
                _, kind, payload = self._results.get(timeout=0.5)
                if kind == "fatal":
                    raise BatchStopped(payload[1], payload[0])
        except queue.Empty:
            return

    def _stop(self, judge: _Judge) -> None:
        if judge.process.is_alive():
            judge.process.terminate()  # SIGTERM: it kills its sandboxed child and removes its scratch
            judge.process.join(STOP_GRACE_SECONDS)
        if judge.process.is_alive():
            judge.process.kill()  # its worker server sees the socket close and kills its own children
            judge.process.join()

    def close(self, graceful: bool) -> None:
        """Graceful: finish and exit; otherwise SIGTERM now (then SIGKILL after a grace period)."""
        for judge in self._judges:
            if graceful and judge.process.is_alive():
                judge.inbox.put(None)
        deadline = time.monotonic() + (30.0 if graceful else 0.0)
        for judge in self._judges:
            judge.process.join(max(0.0, deadline - time.monotonic()))
            self._stop(judge)
        self._results.close()
        self._results.join_thread()
        shutil.rmtree(self._scratch, ignore_errors=True)  # a killed judge could not remove its own


# ------------------------------------------------------------------ the batch

MISSING = "nothing submitted"


def grade_all(options: BatchOptions, assignment: AssignmentConfig, progress: Progress | None = None) -> BatchResult:
    """Grade every submission under ``options.submissions``.

    Raises IntakeError (SUBMISSIONS unreadable) and BatchStopped (a judge
    could not start: strict mode, exposed secrets or the sandbox refused).
    """
    if options.dry_run:
        return _dry_run(options, assignment, progress)
    overrides.load(options.out / overrides.OVERRIDES)  # a bad overrides file refuses now, not after grading
    progress = progress or Progress(bar=False)
    layout = Layout(options.out)
    fp = fingerprint(assignment, seeds.course_secret(options.course_secret_file, options.config_path))
    counts = Counts()
    with tempfile.TemporaryDirectory(prefix="grader-unzip-") as unzip:
        # SUBMISSIONS first: a refused run (no such folder, not a zip) leaves no output folder behind.
        found = intake.scan(options.submissions, assignment.file, Path(unzip), options.roster, options.layout)
        _tell(options, found)
        entries = found.entries
        layout.prepare()
        layout.manifest.unlink(missing_ok=True)  # written again only when this run completes: merge's "finished"
        rows: dict[str, Row] = {}
        todo: list[tuple[intake.Entry, str]] = []
        planned = _planned(entries, options)
        # The similarity report's token streams, read now: a zip's files are gone when the views are written.
        cohort.keep_sources(options.out, {e.student: e.path for e in planned if e.path is not None}, assignment.stub)
        before = changes.snapshot([e.student for e in planned], lambda s: read_record(layout, s))  # before overwriting
        for entry in planned:
            row, sha = _row_without_grading(entry, layout, fp, options.force)
            if row is None:
                todo.append((entry, sha))
                continue
            row = apply_late(row, assignment, options, layout)
            rows[entry.student] = row
            if row.status == "graded":
                counts.unchanged += 1
                _keep_report(layout, row, options)
                _keep_times(layout, row, _key(sha, fp))
            else:
                write_record(layout, row, "")
        before = changes.with_cards(before, lambda s: True, layout.card)  # an override may rewrite any card
        progress.start(len(todo), counts.unchanged)
        try:
            stopped = _run(todo, options, assignment, layout, fp, rows, counts, progress)
        finally:
            progress.close()
    ordered = [rows[s] for s in sorted(rows)]
    counts.missing = sum(r.status == "missing" for r in ordered)
    counts.errors = sum(r.status == "error" for r in ordered)
    counts.not_done = sum(1 for e, _ in todo if e.student not in rows)
    changed: list[changes.Change] = []

    def record_changes(final: list[Row]) -> None:  # the rows with overrides and late policy, before any view
        changed[:] = _changes(before, final, {e.student: sha for e, sha in todo}, fp, layout)
        changes.write_csv(changed, layout.root / changes.FILE_NAME)  # the instructor page shows it

    write_outputs(layout, assignment.id, [ex.name for ex in assignment.exercises], ordered, fp,
                  complete=not counts.not_done, similarity_threshold=options.similarity_threshold,
                  check_fingerprints=overrides.check_fingerprints(assignment), say=options.say,
                  late=lambda row: apply_late(row, assignment, options, layout), finished=record_changes)
    return BatchResult(counts, ordered, stopped, changed, bool(before))


def _changes(before: dict[str, changes.Graded], rows: list[Row], shas: dict[str, str], fp: str,
             layout: Layout) -> list[changes.Change]:
    """Whose score this run changed: the previous records and cards against this run's final rows and cards
    (a student not re-graded keeps the key of their record: only an override or the late policy moved them)."""
    after = {}
    for row in rows:
        if row.student in before:
            key = _key(shas[row.student], fp) if row.student in shas else before[row.student].key
            checks = changes.read_card_checks(layout.root / row.card) if row.card else None
            after[row.student] = changes.Graded(row, key, checks)
    return changes.compare(before, after)


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


def _row_without_grading(entry: intake.Entry, layout: Layout, fp: str, force: bool) -> tuple[Row | None, str]:
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
    if (not force and old is not None and old[0].status == "graded" and old[1] == _key(sha, fp)
            and layout.card(entry.student).is_file()):
        return stamped(old[0], entry), sha
    return None, sha


def stamped(row: Row, entry: intake.Entry) -> Row:
    """``row`` with the LMS's submission time and late flag for ``entry`` (plain data, kept in the record;
    an unchanged file resubmitted later keeps its card and gets the new time)."""
    return replace(row, submitted_at=entry.submitted_at, late=entry.late)


def apply_late(row: Row, assignment: AssignmentConfig, options: BatchOptions, layout: Layout) -> Row:
    """A graded row under the assignment's late policy (``grader.deadlines``), on every run.

    The raw score is the card's (checks and staff overrides), so applying it again changes nothing:
    ``score`` becomes the final score and ``raw_score`` the card's; the card gets (or updates) its
    ``late`` section, and the student's report is drawn again when it changed."""
    policy = assignment.deadline
    if policy is None or row.status != "graded":
        return row
    card = _read_card(layout, row.student)
    raw = card.score if card is not None else row.raw_score if row.raw_score is not None else row.score or 0.0
    when = options.submitted_at.get(row.student) or options.submitted_at_all or row.submitted_at or None
    result = deadlines.apply(policy, when, row.student, options.extensions, raw)
    return _with_late(row, card, raw, result.to_dict(raw, policy), layout, options)


def reapply_recorded_late(row: Row, layout: Layout) -> Row:
    """``merge``: the late policy each shard applied, again on the card's raw score (which an override
    may have changed). The penalty's percent depends on the time only, so it carries over as recorded."""
    card = _read_card(layout, row.student) if row.status == "graded" else None
    if card is None or not card.late:
        return row
    return _with_late(row, card, card.score, deadlines.rescore(card.late, card.score), layout, None)


def _with_late(row: Row, card: Scorecard | None, raw: float, section: dict[str, Any], layout: Layout,
               options: BatchOptions | None) -> Row:
    """``row`` with the late ``section``'s numbers; the card (and its reports) rewritten when it changed."""
    final = float(section["final_score"])
    if final == 0 and raw != 0:
        message = str(section["rule"])  # the policy made the zero: say so, as every zero is explained
    else:
        message = zero_reason(card) if card is not None and raw == 0 else row.message if card is None else ""
    new = replace(row, score=final, raw_score=raw, penalty=float(section["penalty_points"]),
                  lateness=section["lateness_hours"], late_rule=str(section["rule"]), message=message)
    if card is not None and card.late != section:
        from grader import scorecard

        card = replace(card, late=section)
        files.write_atomically(layout.card(row.student), scorecard.to_valid_json(card))
        if options is not None and options.report is not None:
            _write_report(layout, row.student, card, options.view, options.report)
        else:
            _redraw_reports(layout, row.student, card)
    return new


def _read_card(layout: Layout, student: str) -> Scorecard | None:
    try:
        return Scorecard.from_dict(json.loads(layout.card(student).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _reapply_late(layout: Layout, rows: list[Row], late: Callable[[Row], Row]) -> None:
    """The late policy again after the staff overrides changed cards (``rows`` in place, and their records)."""
    for i, row in enumerate(rows):
        new = late(row)
        if new != row:
            rows[i] = new
            old = read_record(layout, row.student)
            write_record(layout, new, old[1] if old else "")


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


def _planned(entries: list[intake.Entry], options: BatchOptions) -> list[intake.Entry]:
    """This run's students: the shard's slice of the submissions, plus roster students with nothing."""
    plan = list(entries)
    if options.roster is not None:
        submitted = {e.student for e in entries}
        plan += [intake.Entry(r.student, None, "", MISSING) for r in options.roster if r.student not in submitted]
    if options.shard is not None:
        plan = [e for e in plan if intake.in_shard(e.student, options.shard)]
    return sorted(plan, key=lambda e: e.student)


def _run(todo: list[tuple[intake.Entry, str]], options: BatchOptions, assignment: AssignmentConfig,
         layout: Layout, fp: str, rows: dict[str, Row], counts: Counts, progress: Progress) -> bool:
    """Grade ``todo`` on the pool; returns True when a signal stopped the batch early."""
    if not todo:
        return False
    stop: list[int] = []
    entries = {e.student: (e, sha) for e, sha in todo}
    pending = list(reversed(todo))
    previous = {s: signal.signal(s, lambda signum, _: stop.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    pool = None
    try:
        pool = JudgePool(max(1, min(options.jobs, len(todo))), assignment, options.config_path, options.strict,
                         options.course_secret_file)
        while (pending or pool.busy()) and not stop:
            for judge in pool.idle():
                if pending:
                    entry, _ = pending.pop()
                    pool.send(judge, entry.student, entry.path)  # type: ignore[arg-type]
            for kind, payload in pool.events(wait=0.2):
                if kind == "fatal":
                    raise BatchStopped(payload[1], payload[0])
                if kind == "ready":
                    continue
                entry, sha = entries[payload[0]]
                row = apply_late(_result_row(kind, payload, entry, sha, layout, options), assignment, options, layout)
                counts.grader_errors += kind == "lost" or (kind == "card" and payload[2])
                counts.graded += row.status == "graded"
                rows[row.student] = row
                write_record(layout, row, _key(sha, fp) if row.status == "graded" else "")
                progress.advance(row)
    finally:
        if pool is not None:
            pool.close(graceful=not stop)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return bool(stop)


def _result_row(kind: str, payload: Any, entry: intake.Entry, sha: str, layout: Layout,
                options: BatchOptions | None = None) -> Row:
    """Write what a judge sent (the card first, so a record never points at a missing card; then the
    student's page, with ``--report html``) and make its row."""
    student = entry.student
    if kind == "card":
        _, text, _ = payload
        files.write_atomically(layout.card(student), text)
        card = Scorecard.from_dict(json.loads(text))
        if options is not None and options.report is not None:
            _write_report(layout, student, card, options.view, options.report)
        return stamped(row_from_card(student, card, entry.file, f"cards/{student}.json"), entry)
    why = payload[1] if kind == "unreadable" else f"not graded: {payload[1]}"
    return stamped(Row(student, "error", entry.file, sha, message=why), entry)


def _write_report(layout: Layout, student: str, card: Scorecard, view: str, fmt: str = "html") -> None:
    """The student's feedback page (``grader.export.html``) or pytest-json-report file
    (``grader.export.pytest_json``, ``reports/<student>.report.json``), written whenever their card is."""
    layout.reports.mkdir(parents=True, exist_ok=True)
    if fmt == "pytest-json":
        from grader.export import pytest_json

        pytest_json.write(card, layout.pytest_report(student), view=view)
        return
    from grader.export import html  # only for --report html: Jinja and the template load on first use

    html.write(card, layout.report(student), view=view)


def _keep_report(layout: Layout, row: Row, options: BatchOptions) -> None:
    """An unchanged student keeps their page; one with no page yet, or a page drawn for another
    ``--view`` (an instructor page must never stay where student pages are expected), gets one
    from the card already there. A card that cannot be read leaves the page as it is. A pytest-json
    report is always written again from the card (milliseconds), so its view is always the one asked."""
    if options.report is None:
        return
    if options.report == "html":
        from grader.export import html

        if html.page_view(layout.report(row.student)) == options.view:
            return
    try:
        card = Scorecard.from_dict(json.loads(layout.card(row.student).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return
    _write_report(layout, row.student, card, options.view, options.report)


def write_outputs(layout: Layout, assignment_id: str, exercises: Sequence[str], rows: list[Row], fp: str,
                  complete: bool = True, similarity_threshold: float = similarity.DEFAULT_THRESHOLD,
                  check_fingerprints: dict[str, str] | None = None, say: Callable[[str], None] | None = None,
                  late: Callable[[Row], Row] | None = None,
                  finished: Callable[[list[Row]], None] | None = None) -> None:
    """The views of the rows: gradebook.csv, summary.json, the cohort views (plots, similarity.json,
    reports/_index.html: ``grader.cohort``, never a failure), and batch.json once every student is done.

    First the staff overrides (``grader.overrides``) are applied to the finished cards: the cards,
    their records and pages, and ``rows`` (in place) then carry them, before anything reads a score.
    ``batch.json`` says which assignment, checks and grader made the cards, and each check's
    fingerprint (what an override is pinned to); ``merge`` refuses a folder without one (a shard that did not finish).
    """
    _apply_overrides(layout, rows, check_fingerprints, say)
    _reapply_late(layout, rows, late or (lambda row: reapply_recorded_late(row, layout)))
    if finished is not None:  # grade_all: changes.csv, from the final rows, before the page that shows it
        finished(rows)
    gradebook_csv.write(rows, exercises, layout.root / "gradebook.csv")
    cards = {r.student: layout.root / r.card for r in rows if r.status == "graded"}
    summarised = summary.summarise(assignment_id, rows, cards)
    files.write_atomically(layout.root / "summary.json", json.dumps(summarised, indent=2) + "\n")
    if not complete:
        cohort.clear(layout.root)  # an interrupted run stops fast; the run that finishes draws them
        return
    cohort.write(layout.root, summarised, rows, similarity_threshold)
    files.write_atomically(layout.manifest, json.dumps(
        {"assignment": assignment_id, "exercises": list(exercises), "fingerprint": fp, "grader": __version__,
         "check_fingerprints": check_fingerprints}, indent=2) + "\n")


def _apply_overrides(layout: Layout, rows: list[Row], check_fingerprints: dict[str, str] | None,
                     say: Callable[[str], None] | None) -> None:
    """``overrides.jsonl`` onto the graded cards (raw cards: before any late penalty on the rows); a changed
    card's row (in ``rows``), record and HTML page follow it. Entries that no longer match are listed for review."""
    graded = {r.student: layout.root / r.card for r in rows if r.status == "graded" and r.card}
    rewritten, _ = overrides.apply_to_folder(layout.root, graded, check_fingerprints, say)
    for i, row in enumerate(rows):
        card = rewritten.get(row.student)
        if card is None:
            continue
        new = row_from_card(row.student, card, row.file, row.card)
        rows[i] = replace(row, score=new.score, exercises=new.exercises, message=new.message)
        old = read_record(layout, row.student)
        write_record(layout, rows[i], old[1] if old else "")
        _redraw_reports(layout, row.student, card)


def _redraw_reports(layout: Layout, student: str, card: Scorecard) -> None:
    """The student's existing HTML page and pytest-json report drawn again from ``card``, each in the
    view it was drawn with: an override or a late penalty shows on every report that exists."""
    page = layout.report(student)
    if page.is_file():
        from grader.export import html

        html.write(card, page, view=html.page_view(page) or "student")
    report = layout.pytest_report(student)
    if report.is_file():
        from grader.export import pytest_json

        pytest_json.write(card, report, view=pytest_json.report_view(report) or "student")


# ------------------------------------------------------------------ merge


class MergeError(Exception):
    """Shard outputs that cannot be joined (one line; the CLI's exit 2)."""


def merge(dirs: Sequence[Path], out: Path, similarity_threshold: float = similarity.DEFAULT_THRESHOLD) -> list[Row]:
    """Join ``grade-all --shard`` outputs into one folder: cards, records, gradebook, summary, cohort views.

    Every shard must come from the same assignment, checks and grader (its
    ``batch.json``). A student found in two shards is kept once when both
    rows agree and becomes an error row when they do not.
    """
    manifests = []
    for d in dirs:
        try:
            manifests.append(json.loads(Layout(d).manifest.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise MergeError(f"{d}: not a finished grade-all output folder (batch.json: "
                             f"{getattr(exc, 'strerror', None) or exc}); run grade-all there again to finish it") from None
    if any(out.resolve() == d.resolve() for d in dirs):
        raise MergeError(f"--out {out} is one of the folders to merge; give a new folder")
    first = manifests[0]
    for d, m in zip(dirs, manifests):
        if (m.get("assignment"), m.get("fingerprint")) != (first.get("assignment"), first.get("fingerprint")):
            raise MergeError(f"{d} was graded with a different assignment, config, checks or grader than {dirs[0]}; "
                             "re-grade it, then merge")
    layout = Layout(out)
    layout.prepare()
    rows: dict[str, tuple[Row, str, Path]] = {}
    for d in dirs:
        for record in sorted((d / "records").glob("*.json")):
            found = read_record(Layout(d), record.stem)
            if found is None:
                raise MergeError(f"{record}: unreadable record; re-run grade-all on that shard")
            row, key = found
            if row.student in rows and (rows[row.student][0], rows[row.student][1]) != (row, key):
                other = rows[row.student][2]
                rows[row.student] = (Row(row.student, "error", row.file, row.sha256,
                                         message=f"graded differently in {other} and {d}; grade it again"), "", d)
                continue
            rows[row.student] = (row, key, d)
    for row, key, d in rows.values():
        if row.card:
            files.write_atomically(layout.root / row.card, (d / row.card).read_text(encoding="utf-8"))
            shard = Layout(d)  # a shard graded with --report: its page or pytest-json report comes along
            for theirs, ours in ((shard.report(row.student), layout.report(row.student)),
                                 (shard.pytest_report(row.student), layout.pytest_report(row.student))):
                if theirs.is_file():
                    layout.reports.mkdir(exist_ok=True)
                    files.write_atomically(ours, theirs.read_text(encoding="utf-8"))
        write_record(layout, row, key)
    ordered = [rows[s][0] for s in sorted(rows)]
    cohort.merge_sources(out, dirs)  # the similarity report compares students across shards
    _merge_overrides(out, dirs)
    write_outputs(layout, first["assignment"], first["exercises"], ordered, first["fingerprint"],
                  check_fingerprints=first.get("check_fingerprints"),
                  similarity_threshold=similarity_threshold)
    return ordered


def _merge_overrides(out: Path, dirs: Sequence[Path]) -> None:
    """The overrides (and their audit) in ``out`` and in every shard, each line once, oldest first: the
    merged folder applies all of them. A bad line refuses the merge (MergeError, naming file and line)."""
    for name in (overrides.OVERRIDES, overrides.AUDIT):
        lines: dict[str, None] = {}
        for folder in (out, *dirs):
            try:
                if name == overrides.OVERRIDES:
                    overrides.load(folder / name)
                text = (folder / name).read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            except overrides.OverridesError as exc:
                raise MergeError(str(exc)) from None
            lines.update((line, None) for line in text.splitlines() if line.strip())
        if lines:
            ordered = sorted(lines, key=_when)
            files.write_atomically(out / name, "\n".join(ordered) + "\n")


def _when(line: str) -> str:
    """An audit line's time (when it was logged), else an entry's (when it was decided)."""
    data = json.loads(line)
    return str(data.get("logged_at") or data.get("at") or "")
