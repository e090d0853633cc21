"""Issue 26: a term in miniature, end to end through the real command line, with what its closing note quotes.

Usage: .venv/bin/python bench/term.py [--keep]

Seven students (alice..gus) hand in the attention assignment as a Moodle "Download all submissions"
folder with its grading worksheet; the course config is a copy of assignments.yaml with a late policy
(Europe/Berlin, due the night before the clocks go forward), a course secret of 32 hex characters,
an extensions CSV, a submission-times CSV and three staff overrides. Every step is a `.venv/bin/grader`
subprocess in a fresh temporary folder, with TMPDIR a fresh empty folder of its own, listed after every
verb. The steps:

1. run 1: grade-all (the Moodle download, the worksheet as roster, the times and extensions);
2. three overrides (an exercise's total, two checks), then grade-all again: nothing re-graded, the
   overrides applied (the audit's `applied`, changes.csv's `staff override`);
3. gus resubmits a changed file and a check's points move in the config (re-grading the class);
   grade-all --dry-run shows what run 2 will change, then run 2 does it: gus's override stops applying;
4. grader export moodle into the worksheet, checked with tests/moodle_importer.py (Moodle's importer
   restated);
5. the refusals: a 5-byte and an empty GRADER_COURSE_SECRET, an empty folder, a misspelt flag;
6. per student, the final grade computed here by hand (the policy written out below, not
   grader.deadlines) against the gradebook's.

Nothing under the course is written; --keep leaves the temporary folder and prints where it is.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus_cases import CORPUS, CorpusCase, read_header  # noqa: E402

GRADER = ROOT / ".venv" / "bin" / "grader"
SECRET = "5f0c2a9e7d1b4c36a8e2f9d04b7c1e6a"  # 32 hex characters (16 bytes): each student's own hidden inputs
ASSIGNMENT = "attention"

# ------------------------------------------------------------------ the late policy, written out by hand
#
# Due 2026-03-28 23:59 in Europe/Berlin. Central European Time (+01:00) then; the clocks go forward at
# 02:00 on Sunday 2026-03-29 (to 03:00, +02:00). So the due time is 22:59:00 UTC. Grace 15 minutes: a
# submission up to 00:14:00 local (23:14:00 UTC) is on time, and carol's 00:14:01 is one second after it.
# Penalty: 2 % of the raw score per started hour late (counted from the due time, in real elapsed time),
# at most 30 %. Cutoff 2026-04-04 23:59 local, which is +02:00 by then: 21:59:00 UTC; after it, 0.
# bob's extension: one calendar day, on the course's wall clock: due 2026-03-29 23:59 +02:00 = 21:59:00
# UTC (23 real hours after the class's due time, not 24), his cutoff 2026-04-05 23:59 +02:00.

CONFIG_DEADLINE = {"due": "2026-03-28T23:59:00", "timezone": "Europe/Berlin", "grace_minutes": 15,
                   "penalty": {"per": "hour", "percent": 2, "cap_percent": 30}, "cutoff": "2026-04-04T23:59:00"}
UTC = timezone.utc
HAND = {
    "due": datetime(2026, 3, 28, 22, 59, 0, tzinfo=UTC),
    "grace": timedelta(minutes=15),
    "percent_per_hour": Decimal(2),
    "cap_percent": Decimal(30),
    "cutoff": datetime(2026, 4, 4, 21, 59, 0, tzinfo=UTC),
}
HAND_EXTENSIONS = {  # student -> (due, cutoff) in UTC, worked out above
    "bob": (datetime(2026, 3, 29, 21, 59, 0, tzinfo=UTC), datetime(2026, 4, 5, 21, 59, 0, tzinfo=UTC)),
}

# ------------------------------------------------------------------ the class

# student -> (Moodle full name, participant id, what they hand in: a corpus case or the reference)
STUDENTS = {
    "alice": ("Alice Archer", "1000001", "alternatives/attention_scores_einsum.py"),
    "bob": ("Bob Brandt", "1000002", "mutants/bag_of_past_divides_by_T.py"),
    "carol": ("Carol Chen", "1000003", "mutants/softmax_dim0.py"),
    "dave": ("Dave Dorn", "1000004", "placeholders/zeros.py"),
    "eve": ("Eve Ekberg", "1000005", "reference"),
    "frank": ("Frank Fischer", "1000006", "mutants/causal_mask_diagonal_masked.py"),
    "gus": ("Gus Gruber", "1000007", "mutants/attention_never_scales.py"),
}
GUS_RESUBMITS = "reference"  # run 2: gus hands in a fixed file

# Submission times as the course's wall clock shows them (read in Europe/Berlin: no offset), and in UTC by
# hand. frank is left out on purpose (no time known: graded as on time, and said).
TIMES_RUN1 = {
    "alice": ("2026-03-28T21:30:00", datetime(2026, 3, 28, 20, 30, 0, tzinfo=UTC)),  # on time
    # 2026-03-30 00:30 +02:00: 31 min after his extended due time (a 24-hour extension would end at 00:59)
    "bob": ("2026-03-30T00:30:00", datetime(2026, 3, 29, 22, 30, 0, tzinfo=UTC)),
    "carol": ("2026-03-29T00:14:01", datetime(2026, 3, 28, 23, 14, 1, tzinfo=UTC)),  # 1 s after the grace
    "dave": ("2026-03-28T12:00:00", datetime(2026, 3, 28, 11, 0, 0, tzinfo=UTC)),  # on time
    "eve": ("2026-04-04T23:59:30", datetime(2026, 4, 4, 21, 59, 30, tzinfo=UTC)),  # 30 s after the cutoff
    # 2026-03-30 12:00 +02:00: 35 h 1 min of real time late (36 on the wall clock): 36 started hours, capped
    "gus": ("2026-03-30T12:00:00", datetime(2026, 3, 30, 10, 0, 0, tzinfo=UTC)),
}
TIMES_RUN2 = {**TIMES_RUN1,
              "gus": ("2026-04-01T09:00:00", datetime(2026, 4, 1, 7, 0, 0, tzinfo=UTC))}  # his resubmission

EXTENSIONS_CSV = ("student,new_due,extra_days,extra_hours,reason\n"
                  "bob,,1,,medical certificate\n"
                  "zoe,,2,,nobody of that id: the warning\n")

# Run 2's config change: a check's points move within softmax (the assignment's total stays 137.5).
CONFIG_CHANGE = {("softmax", "test_rows_sum_to_one"): (2, 3), ("softmax", "test_minus_inf_gets_exactly_zero"): (2, 1)}

TERM_DIR: Path
TMP: Path
ENV: dict[str, str]


# ------------------------------------------------------------------ running and printing


def section(title: str) -> None:
    print(f"\n{'=' * 100}\n== {title}\n{'=' * 100}", flush=True)


def show_tmpdir(after: str) -> None:
    listing = subprocess.run(["ls", "-a", str(TMP)], capture_output=True, text=True).stdout.split()
    verdict = "ok" if listing == [".", ".."] else "LEFT OVER"
    print(f"   ls -a $TMPDIR after {after}: {' '.join(listing)}   [{verdict}]", flush=True)


def grader(*args: str | Path, env: dict[str, str] | None = None, stdout_lines: int = 40,
           label: str | None = None) -> subprocess.CompletedProcess[str]:
    """One `grader` verb as a subprocess in TERM_DIR; prints the command, exit code, stderr and stdout."""
    argv = [str(GRADER), *map(str, args)]
    shown = " ".join(["grader", *(str(a).replace(str(TERM_DIR) + "/", "") for a in args)])
    print(f"\n$ {label + ' ' if label else ''}{shown}", flush=True)
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=TERM_DIR, env=env or ENV, timeout=1200)
    print(f"   exit {proc.returncode}")
    for line in proc.stderr.splitlines():
        print(f"   stderr| {line}")
    out = proc.stdout.splitlines()
    for line in out[:stdout_lines]:
        print(f"   stdout| {line}")
    if len(out) > stdout_lines:
        print(f"   stdout| ... ({len(out) - stdout_lines} more lines)")
    show_tmpdir(args[0] if isinstance(args[0], str) else "the verb")
    return proc


def must(proc: subprocess.CompletedProcess[str], code: int = 0) -> None:
    if proc.returncode != code:
        raise SystemExit(f"term.py: stopped: expected exit {code}, got {proc.returncode}")


def cat(path: Path, title: str | None = None) -> None:
    print(f"\n--- {title or path.relative_to(TERM_DIR)} ---")
    if not path.exists():
        print("(no such file)")
        return
    sys.stdout.write(path.read_text(encoding="utf-8-sig"))


# ------------------------------------------------------------------ building the term


def source_of(what: str) -> str:
    if what == "reference":
        return (ROOT / "solutions/attention.py").read_text()
    path = CORPUS / ASSIGNMENT / what
    return CorpusCase(path, what.split("/")[0], read_header(path)).source()


def hand_in(download: Path, student: str, what: str) -> None:
    name, pid, _ = STUDENTS[student]
    folder = download / f"{name}_{pid}_assignsubmission_file_"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "attention.py").write_text(source_of(what), encoding="utf-8")


def worksheet(max_grade: str) -> str:
    """Moodle's grading worksheet (English), as mod/assign/gradingtable.php writes it; frank holds a TA's 50."""
    head = ("Identifier,Full name,ID number,Email address,Status,Grade,Maximum grade,Grade can be changed,"
            "Last modified (submission),Last modified (grade),Feedback comments")
    rows = [head]
    for student, (name, pid, _) in STUDENTS.items():
        graded = student == "frank"
        rows.append(",".join([
            f"Participant {pid}", name, student, f"{student}@uni.example",
            "Submitted for grading - Graded" if graded else "Submitted for grading",
            "50.00" if graded else "", max_grade, "Yes", '"Saturday, 28 March 2026, 9:30 PM"',
            '"Monday, 30 March 2026, 10:00 AM"' if graded else "-",
            "<p>Seen in the lab.</p>" if graded else ""]))
    return "\n".join(rows) + "\n"


def config(path: Path, change: bool) -> None:
    raw = yaml.safe_load((ROOT / "assignments.yaml").read_text())
    for a in raw["assignments"].values():
        for key in ("reference", "stub"):
            if isinstance(a.get(key), str) and not Path(a[key]).is_absolute():
                a[key] = str(ROOT / a[key])
    a = raw["assignments"][ASSIGNMENT]
    a["deadline"] = CONFIG_DEADLINE
    a["extensions"] = "extensions.csv"  # relative to the config
    if change:
        for (exercise, check), (old, new) in CONFIG_CHANGE.items():
            entry = a["exercises"][exercise]["checks"][check]
            if isinstance(entry, dict):
                assert entry["points"] == old, (exercise, check, entry)
                entry["points"] = new
            else:
                assert entry == old, (exercise, check, entry)
                a["exercises"][exercise]["checks"][check] = new
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))


def times_csv(path: Path, times: dict[str, tuple[str, datetime]]) -> None:
    path.write_text("student,submitted_at\n" + "".join(f"{s},{t}\n" for s, (t, _) in times.items()))


# ------------------------------------------------------------------ the hand computation


def hand_grade(student: str, raw: Decimal, when: datetime | None) -> tuple[Decimal, str]:
    """The final grade by the policy above, worked out here: (grade, how)."""
    due, cutoff = HAND_EXTENSIONS.get(student, (HAND["due"], HAND["cutoff"]))
    if when is None:
        return raw, "no time known: on time"
    if when > cutoff:
        return Decimal(0), f"{when:%Y-%m-%d %H:%M:%S}Z after the cutoff {cutoff:%Y-%m-%d %H:%M:%S}Z: 0"
    late = when - due
    if late <= timedelta(0):
        return raw, "on time"
    if late <= HAND["grace"]:
        return raw, f"{late} late, within the grace"
    hours = math.ceil(late.total_seconds() / 3600)  # a started hour counts
    percent = min(hours * HAND["percent_per_hour"], HAND["cap_percent"])
    points = (raw * percent / 100).quantize(Decimal("0.000001"), ROUND_HALF_EVEN)
    return raw - points, (f"{late} late = {hours} started h x 2% = {hours * 2}% -> {percent}%: "
                          f"{raw.normalize():f} - {points.normalize():f}")


def compare(out: Path, times: dict[str, tuple[str, datetime]]) -> None:
    section("expected (by hand) vs the gradebook, run 2")
    book = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    matched = 0
    print(f"{'student':8} {'raw (card)':>11} {'expected':>11} {'gradebook':>10}  ok  how")
    for student in STUDENTS:
        card = json.loads((out / "cards" / f"{student}.json").read_text())
        raw = sum((Decimal(repr(c["score"])) for c in card["checks"]), Decimal(0))  # the checks, overrides in
        assert abs(raw - Decimal(repr(card["score"]))) < Decimal("0.000001"), (student, raw, card["score"])
        when = times[student][1] if student in times else None
        expected, how = hand_grade(student, raw, when)
        got = Decimal(book[student]["score"])
        ok = abs(got - expected) < Decimal("0.0000005")
        matched += ok
        print(f"{student:8} {raw.normalize():>11f} {expected.normalize():>11f} {got:>10}  {'yes' if ok else 'NO '} {how}")
    print(f"\n{matched}/{len(STUDENTS)} match the hand-computed grade")


# ------------------------------------------------------------------ the term


def main() -> None:
    global TERM_DIR, TMP, ENV
    keep = "--keep" in sys.argv[1:]
    base = Path(tempfile.mkdtemp(prefix="term-"))
    TERM_DIR, TMP = base / "course", base / "tmp"
    TERM_DIR.mkdir()
    TMP.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_COURSE_SECRET", "TORCHINDUCTOR_CACHE_DIR")}
    ENV = {**env, "TMPDIR": str(TMP), "GRADER_COURSE_SECRET": SECRET}
    try:
        term()
    finally:
        if keep:
            print(f"\n(kept: {base})")
        else:
            shutil.rmtree(base, ignore_errors=True)


def term() -> None:
    download, out = TERM_DIR / "moodle-download", TERM_DIR / "graded"
    for student, (_, _, what) in STUDENTS.items():
        hand_in(download, student, what)
    (download / "Carol Chen_1000003_assignsubmission_onlinetext_").mkdir()  # Moodle's other plugins: ignored
    (download / "Carol Chen_1000003_assignsubmission_onlinetext_" / "onlinetext.html").write_text("<p>see file</p>")
    (TERM_DIR / "worksheet.csv").write_text(worksheet("137.50"))
    (TERM_DIR / "extensions.csv").write_text(EXTENSIONS_CSV)
    config(TERM_DIR / "assignments.yaml", change=False)
    times_csv(TERM_DIR / "times.csv", TIMES_RUN1)

    section("the term: files")
    print(f"folder: a fresh temporary folder; TMPDIR: a fresh empty folder of its own; "
          f"GRADER_COURSE_SECRET: {len(SECRET)} hex characters")
    for student, (name, pid, what) in STUDENTS.items():
        print(f"  {student:6} {name}_{pid}_assignsubmission_file_/attention.py  <- {what}")
    print("policy (assignments.yaml, attention):", json.dumps(CONFIG_DEADLINE))
    cat(TERM_DIR / "extensions.csv")
    cat(TERM_DIR / "times.csv", "times.csv (run 1; frank left out)")
    cat(TERM_DIR / "worksheet.csv", "worksheet.csv (Moodle's Download grading worksheet)")

    grade_all = ["grade-all", "moodle-download", "--assignment", ASSIGNMENT, "--out", "graded",
                 "--config", "assignments.yaml", "--roster", "worksheet.csv", "--submitted-at-csv", "times.csv",
                 "--progress", "lines"]

    section("run 1: grade-all")
    must(grader(*grade_all))
    cat(out / "gradebook.csv")

    section("overrides, then grade-all again (same files: nothing re-graded, the overrides applied)")
    frank_check = failed_check(out, "frank", "causal_mask")
    gus_check = failed_check(out, "gus", "attention")
    must(grader("override", "dave", "--exercise", "attention_scores", "--points", "5",
                "--reason", "worked it out on paper in the exam; half the credit", "--by", "Prof. Ng",
                "--course", "graded"))
    must(grader("override", "frank", "--check", frank_check["id"], "--exercise", "causal_mask",
                "--points", f"{frank_check['max_score']:g}",
                "--reason", "tril(diagonal=-1) was the handout's typo; full credit", "--by", "TA Kim",
                "--course", "graded"))
    must(grader("override", "gus", "--check", gus_check["id"], "--exercise", "attention",
                "--points", f"{gus_check['max_score'] / 2:g}",
                "--reason", "explained the scaling in office hours", "--by", "TA Kim", "--course", "graded"))
    must(grader(*grade_all, label="(run 1b)"))
    cat(out / "changes.csv", "changes.csv after run 1b")

    section("gus resubmits a changed file; softmax's points move in the config; a dry run first")
    hand_in(download, "gus", GUS_RESUBMITS)
    times_csv(TERM_DIR / "times.csv", TIMES_RUN2)
    config(TERM_DIR / "assignments.yaml", change=True)
    print("config change:", ", ".join(f"{e}::{c} {o} -> {n}" for (e, c), (o, n) in CONFIG_CHANGE.items()))
    print("times.csv: gus now", TIMES_RUN2["gus"][0])
    before = snapshot(out)
    must(grader(*grade_all, "--dry-run", stdout_lines=60))
    print(f"   --out byte for byte as before the dry run: {snapshot(out) == before}")

    section("run 2: grade-all")
    must(grader(*grade_all))
    cat(out / "gradebook.csv", "gradebook.csv after run 2")
    cat(out / "changes.csv", "changes.csv after run 2")
    cat(out / "overrides.jsonl")
    cat(out / "overrides_audit.jsonl", "overrides_audit.jsonl (the audit log)")
    cat(out / "overrides_review.csv")
    print("\n--- summary.json warnings ---")
    for w in json.loads((out / "summary.json").read_text()).get("warnings", []):
        print(w)

    section("each student's late line (gradebook.csv late_rule)")
    for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text())):
        print(f"{row['student']:6} raw {row.get('raw_score', ''):>8} -{row.get('penalty', '') or '0':>8} "
              f"= {row['score']:>8}  {row.get('late_rule', '')}")

    section("grader export moodle, and Moodle's importer (tests/moodle_importer.py)")
    must(grader("export", "moodle", "graded", "--worksheet", "worksheet.csv", "--out", "upload.csv"))
    cat(TERM_DIR / "upload.csv")
    importer = load_importer()
    data = (TERM_DIR / "worksheet.csv").read_bytes()
    moodle = importer.Moodle(137.5, importer.held_as_downloaded(data))
    result = importer.upload((TERM_DIR / "upload.csv").read_bytes(), moodle)
    book = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    print("\nimporter: grades Moodle would now hold:", result.grades)
    print("importer: skipped:", result.skipped or "none")
    pids = {pid: s for s, (_, pid, _) in STUDENTS.items()}
    agree = all(abs(result.grades.get(pid, -1) - float(book[s]["score"])) < 1e-9 for pid, s in pids.items())
    print(f"importer: {len(result.grades)}/{len(STUDENTS)} grades taken; equal to gradebook.csv's scores: {agree}; "
          f"feedback written for {len(result.feedback)}")

    section("refusals (each: one line and its exit code)")
    (TERM_DIR / "empty").mkdir()
    grader(*grade_all[:5], "refused-1", env={**ENV, "GRADER_COURSE_SECRET": "12345"},
           label="GRADER_COURSE_SECRET=12345")
    grader(*grade_all[:5], "refused-2", env={**ENV, "GRADER_COURSE_SECRET": ""}, label="GRADER_COURSE_SECRET=''")
    grader("grade-all", "empty", "--assignment", ASSIGNMENT, "--out", "refused-3")
    grader("grade-all", "moodle-download", "--assigment", ASSIGNMENT, "--out", "refused-4")
    print(f"\nnothing written by the refusals: {not any((TERM_DIR / f'refused-{i}').exists() for i in range(1, 5))}")

    compare(out, TIMES_RUN2)


def failed_check(out: Path, student: str, exercise: str) -> dict:
    card = json.loads((out / "cards" / f"{student}.json").read_text())
    failed = [c for c in card["checks"] if c["exercise"] == exercise and c["score"] < c["max_score"]]
    if not failed:
        raise SystemExit(f"term.py: {student} failed no check of {exercise}")
    return max(failed, key=lambda c: c["max_score"])


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def load_importer():  # noqa: ANN201
    spec = importlib.util.spec_from_file_location("moodle_importer", ROOT / "tests" / "moodle_importer.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    main()
