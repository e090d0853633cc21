"""Adding an exercise: what is missing is named, file by file, and `grader new-exercise` fails closed.

``test_the_real_project_lacks_nothing`` is the one test that tells an instructor what a new exercise
still lacks (docs/adding-an-exercise.md): every missing piece of every exercise, with the file to fill.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from grader.authoring.completeness import missing
from grader.authoring.new_exercise import MARKER
from tests.conftest import ROOT

NAME, LIKE = "sliding_window_mask", "bag_of_past"
# What `grader new-exercise` needs of the repository, and what the completeness check reads.
WRITERS = ("grader/authoring/", "docs/adding-an-exercise.md")  # they name the marker, holding no placeholder
COPIED = ("assignments.yaml", "README.md", "pyproject.toml", "exercises", "solutions", "grader", "docs", "tests/corpus")


def test_the_real_project_lacks_nothing():
    lacking = missing(ROOT)
    assert not lacking, "exercises lack pieces (file: exercise: what):\n" + "\n".join(map(str, lacking))


def _copy(dest: Path) -> Path:
    """The tracked (and new, not ignored) files the command and the check need, copied into ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *COPIED],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(src.read_bytes())
    return dest


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy)}  # the copy's grader package, so its repository is the root
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=300)


def test_new_exercise_writes_placeholders_that_are_listed_and_fail_closed(tmp_path: Path):
    copy = _copy(tmp_path / "course")
    bad = _run(copy, "-m", "grader.cli", "new-exercise", "2nd", "--assignment", "attention", "--like", LIKE)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr

    made = _run(copy, "-m", "grader.cli", "new-exercise", NAME, "--assignment", "attention", "--like", LIKE)
    assert made.returncode == 0, made.stderr
    again = _run(copy, "-m", "grader.cli", "new-exercise", NAME, "--assignment", "attention", "--like", LIKE)
    assert again.returncode == 2 and "already" in again.stderr and again.stderr.count("\n") == 1

    # (a) the completeness check lists exactly the placeholders, by file and line, and the inputs and README rows.
    listed = _run(copy, "-c", "import json; from grader.authoring.completeness import missing; "
                              "print(json.dumps([[m.file, m.exercise, m.what] for m in missing()]))")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    placeholders = {(f.split(":")[0], int(f.split(":")[1])) for f, _, what in rows if what.startswith("fill the placeholder")}
    marked = {(p.relative_to(copy).as_posix(), i) for p in copy.rglob("*") if p.is_file() and p.suffix in (".py", ".yaml", ".md")
              and "__pycache__" not in p.parts and not p.relative_to(copy).as_posix().startswith(WRITERS)
              for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if MARKER in line}
    assert placeholders == marked
    files = {f for f, _, _ in rows}
    for wanted in ("exercises/attention.py", "solutions/attention.py", "assignments.yaml",
                   f"grader/checks/attention/test_{NAME}.py", "grader/checks/attention/conftest.py",
                   f"tests/corpus/attention/mutants/{NAME}_todo.py", f"grader/diagnosis/catalogue/attention/{NAME}_todo.yaml",
                   "grader/release/lesson/attention.yaml", "docs/CONTRACT.md", "docs/contract-clauses.yaml"):
        assert any(f.split(":")[0] == wanted for f in files), (wanted, rows)
    assert all(ex == NAME for f, ex, what in rows if not f.startswith("README.md")), rows
    assert any(f.startswith("README.md:") and f"no row for `{NAME}`" in what for f, _, what in rows)
    unlisted = [r for r in rows if not r[2].startswith("fill the placeholder") and not r[0].startswith("README.md")]
    placeholder_corpus = [r[0] for r in unlisted if "placeholder corpus must define every function" in r[2]]
    assert placeholder_corpus == ["tests/corpus/attention/placeholders/every_function_fills.py.in",
                                  "tests/corpus/attention/placeholders/identity.py"]
    assert [r for r in unlisted if r[0] not in placeholder_corpus] == [
        ["grader/checks/attention/conftest.py", NAME, f"inputs of {NAME} in build_cases (its shared checks run on them)"]]

    # (b) with a working reference (and the student's code the same), every check of the exercise still fails.
    reference = copy / "solutions/attention.py"
    text = reference.read_text()
    reference.write_text(text.replace(f'raise NotImplementedError("{MARKER}: write the reference solution of {NAME}")',
                                      "return v.cumsum(dim=-2)"))
    student = tmp_path / "attention.py"
    student.write_text(reference.read_text())
    graded = _run(copy, "-c", "import json, sys; from pathlib import Path; from grader import api\n"
                              f"with api.Grader('attention', select='{NAME}') as g: card = g.grade(Path(sys.argv[1]))\n"
                              f"print(json.dumps([[c.id, c.status, c.score, c.message] for c in card.checks "
                              f"if c.exercise == '{NAME}']))", str(student))
    assert graded.returncode == 0, graded.stderr[-2000:]
    checks = json.loads(graded.stdout.strip().splitlines()[-1])
    assert len(checks) >= 3 and all(status != "passed" and score == 0 for _, status, score, _ in checks), checks
    own = [c for c in checks if c[0] == f"test_{NAME}_todo_property"]
    assert own and "is not written yet" in own[0][3]
    shared = [c for c in checks if c[0].startswith("test_output_matches_reference")]
    assert shared and f"no inputs for `{NAME}`" in shared[0][3]
