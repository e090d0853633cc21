"""`grader check`: the student's self-check. Visible checks only, a table a student can act on,
the hidden checks counted, exit 0 only when every visible check passes, `--watch` on save."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader import cli, selfcheck
from grader.config import load_config
from grader.scorecard import CheckResult

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions" / "attention.py").read_text()


def run_check(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", "check", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_a_bug_fails_its_visible_checks_and_exits_1_with_the_hidden_count(tmp_path):
    (tmp_path / "attention.py").write_text(REFERENCE.replace("dim: int = -1", "dim: int = 0", 1))
    run = run_check("attention.py", "--out", "card.json", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert "✗ softmax:" in run.stdout and "✓ attention_scores:" in run.stdout
    assert "more checks run only when your work is graded" in run.stdout
    card = json.loads((tmp_path / "card.json").read_text())
    assert all(c["visibility"] == "visible" for c in card["checks"])
    config = load_config(ROOT / "assignments.yaml").assignment("attention")
    assert {c["id"].split("[")[0] for c in card["checks"]} == {
        c.name for ex in config.exercises for c in ex.checks if c.visibility == "visible"}


def test_bad_input_gives_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "homework.py").write_text(REFERENCE)
    assert cli.main(["check", str(tmp_path / "missing.py")]) == 2
    assert cli.main(["check", str(tmp_path / "homework.py")]) == 2  # which assignment? the name does not say
    assert cli.main(["check", str(tmp_path / "homework.py"), "--assignment", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("grader: ") for line in err), err
    assert "no such file" in err[0] and "--assignment" in err[1] and "unknown assignment" in err[2]


def test_the_assignment_comes_from_the_file_name():
    config = load_config(ROOT / "assignments.yaml")
    assert selfcheck.assignment_for(Path("x/attention.ipynb"), config, None).id == "attention"
    assert selfcheck.assignment_for(Path("attention_modules.py"), config, None).id == "attention-modules"
    assert selfcheck.assignment_for(Path("mine.py"), config, "attention").id == "attention"
    with pytest.raises(selfcheck.UnknownAssignment, match="attention_modules.py"):
        selfcheck.assignment_for(Path("mine.py"), config, None)


def test_the_table_names_checks_plainly_and_never_says_all_passed_while_checks_are_hidden():
    from grader.scorecard import Scorecard, SubmissionInfo

    checks = (CheckResult("test_low_precision_inputs_work[softmax-float16]", "softmax", "passed", 1, 1, "", "visible"),
              CheckResult("test_cuda_matches_cpu[softmax]", "softmax", "skipped", 0, 0, "no CUDA", "visible"),
              CheckResult("test_stays_on_the_inputs_device[softmax]", "softmax", "skipped", 0, 1,
                          "inconclusive on the meta device (...); not counted", "visible"),
              CheckResult("test_output_matches_reference[bag_of_past]", "bag_of_past", "failed", 0, 2,
                          "not attempted", "visible"))
    card = Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 1, 3, checks)
    text = selfcheck.render(card, hidden=25)
    assert "✓ low precision inputs work (float16)" in text
    assert "✓ softmax: 1/1 checks passed (1 not run here: no GPU; 1 inconclusive here)" in text
    assert "✗ bag_of_past: not attempted yet" in text
    assert "Visible checks: 1 of 2 passed, 1 failed" in text
    assert "25 more checks run only when your work is graded" in text
    assert selfcheck.exit_code(card) == 1
    passing = Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 1, 1, checks[:3])
    assert selfcheck.exit_code(passing) == 0
    assert "does not guarantee full marks" in selfcheck.render(passing, hidden=25)


@pytest.mark.parametrize("saves_during_first_run", [1, 2, 3])
def test_watch_checks_a_save_made_while_the_first_run_was_going(tmp_path, saves_during_first_run):
    """The stamp is taken before a run: a save while it runs (a spawned worker takes seconds to start)
    is checked again, however many saves came, and the last verdict is returned at Ctrl-C."""
    path = tmp_path / "attention.py"
    path.write_text("v0")
    verdicts = iter([1, 0, 0])
    runs: list[str] = []

    def run_once() -> int:
        runs.append(path.read_text())
        if len(runs) == 1:
            for i in range(saves_during_first_run):
                path.write_text(f"v{i + 1}" + "!" * (i + 1))
        return next(verdicts)

    ticks = iter(range(10))

    def sleep(_: float) -> None:
        if next(ticks) >= 5:
            raise KeyboardInterrupt

    assert selfcheck.watch(path, run_once, sleep=sleep) == 0
    assert runs == ["v0", path.read_text()]


@pytest.mark.slow
def test_watch_checks_again_when_the_file_is_saved(tmp_path):
    path = tmp_path / "attention.py"
    path.write_text(REFERENCE.replace("dim: int = -1", "dim: int = 0", 1))
    proc = subprocess.Popen([sys.executable, "-m", "grader.cli", "check", "--watch", path.name], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = _read_until(proc, "Visible checks:")
        assert "failed" in first
        time.sleep(0.05)
        path.write_text(REFERENCE)
        second = _read_until(proc, "Visible checks:")
        assert "changed: checking again" in second and "failed" not in second.split("Visible checks:")[1]
        time.sleep(1.0)  # let the run that printed the table return: Ctrl-C mid-run keeps the previous verdict
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        assert code == 0, proc.stdout.read()[-3000:] + proc.stderr.read()[-2000:]  # the last run's verdict
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)


def _read_until(proc: subprocess.Popen, marker: str, timeout: float = 120) -> str:
    lines, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError("grader check --watch stopped: " + proc.stderr.read()[-2000:])
        lines.append(line)
        if line.startswith(marker):
            return "".join(lines)
    raise AssertionError(f"no {marker!r} within {timeout} s")


def _student_notebook(path: Path) -> Path:
    """The reference as a notebook with 12 demo cells (4 statements each) and one cell with a syntax error."""
    import nbformat

    demo = "q = torch.randn(2, 5, 8)\nout, w = attention(q, q, q)\nprint(out.shape)\nassert w.shape == (2, 5, 5)"
    cells = [nbformat.v4.new_code_cell(REFERENCE)] + [nbformat.v4.new_code_cell(demo) for _ in range(12)]
    cells.append(nbformat.v4.new_code_cell("def broken(:\n    pass"))
    path.write_text(nbformat.writes(nbformat.v4.new_notebook(cells=cells)), encoding="utf-8")
    return path


def test_a_notebooks_demo_statements_are_one_line_unless_verbose(tmp_path: Path) -> None:
    nb = _student_notebook(tmp_path / "attention.ipynb")
    quiet = run_check(str(nb), cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert ("  48 demo statements in 12 cells are not run when grading; `grader check -v` lists them."
            in quiet.stdout.splitlines())
    assert "print(out.shape)" not in quiet.stdout
    assert "cell 14, line 1: syntax error" in quiet.stdout  # a cell that failed is always listed
    section = quiet.stdout.split("\nNotebook: ", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(section) <= 4 and "demo code" not in quiet.stdout  # the header, the failed cell (wrapped), one line
    verbose = run_check(str(nb), "-v", cwd=tmp_path)
    assert verbose.returncode == 0, verbose.stderr
    assert verbose.stdout.count("print(out.shape)") == 12 and "grader check -v" not in verbose.stdout
    assert "  - cell 2, line 1: `q = torch.randn(2, 5, 8)` - demo code: `q` is used by none of" in verbose.stdout


def test_a_dropped_statement_a_function_needs_is_always_listed() -> None:
    from grader.scorecard import CellNote, NotebookReport

    needed = CellNote(3, 1, "scale = float(input())", "asks for input (`input()`), which nobody types when "
                      "grading; your function `f` uses `scale`, so it fails when called")
    demo = CellNote(4, 1, "print(1)", "demo code: a call of `print`, not run when grading")
    lines = selfcheck.notebook_lines(NotebookReport(4, 4, (needed, demo)), 200)
    assert lines[1] == ("  ✗ cell 3, line 1: `scale = float(input())` - asks for input (`input()`), which nobody "
                        "types when grading; your function `f` uses `scale`, so it fails when called")
    assert lines[2] == "  1 demo statement in 1 cell is not run when grading; `grader check -v` lists them."



def test_a_file_that_cannot_load_says_why_once_at_the_top(grade):
    """Every check a load failure stopped refers to "the problem above": the table must say that problem,
    once, before anything else, and not list a hundred checks that all say the same thing."""
    card = grade("import torch\nraise RuntimeError('the data file is missing')\n")
    assert card.problem and "the data file is missing" in card.problem
    table = selfcheck.render(card, hidden=0)
    assert table.count("the data file is missing") == 1, table
    assert table.index("the data file is missing") < table.index("Visible checks"), table
    assert "see the problem above" not in table and "checks could not run because of it" in table, table
