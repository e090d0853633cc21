"""The whole student round trip: release -> install the kit into a fresh virtual environment ->
work in the generated notebook -> `grader check` there, `grader grade` by the course.

The fresh environment gets the kit with `pip install --no-deps` and takes the third-party
packages (torch, pytest...) from this project's environment through a .pth file: installing
torch again would only time pip. The course's own `grader` package is not visible in it
(checked), so the kit must stand on its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest

from grader import api
from grader.config import load_config
from grader.release.notebooks import fill_exercises

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kit_python(release, tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("student") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "course-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # From a copy: pip builds in the source folder (build/, *.egg-info), and the shared release is read only.
    source = shutil.copytree(release, venv.parent / "kit-source")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    str(source)], check=True, capture_output=True, cwd=venv.parent)
    where = subprocess.run([str(python), "-c", "import grader; print(grader.__file__)"],
                           check=True, capture_output=True, text=True, cwd=venv.parent).stdout.strip()
    assert where.startswith(purelib), f"the fresh environment imports another grader: {where}"
    return python


def kit_check(python: Path, notebook: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    return subprocess.run([str(python.parent / "grader"), "check", notebook.name], capture_output=True, text=True,
                          cwd=notebook.parent, env=env, timeout=300)


def notebook(release: Path, stem: str, folder: Path, solution: str | None = None, extra: list[str] = (),
             broken: str | None = None) -> Path:
    text = (release / f"{stem}.ipynb").read_text()
    if solution:
        text = fill_exercises(text, (ROOT / "solutions" / f"{stem}.py").read_text())
    nb = nbformat.reads(text, as_version=4)
    for cell in nb.cells:
        if broken and cell.get("metadata", {}).get("exercise") == broken:
            cell.source = cell.source.replace(":\n", "\n", 1)  # a syntax error: the def line loses its colon
    nb.cells += [nbformat.v4.new_code_cell(code) for code in extra]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.ipynb"
    path.write_text(nbformat.writes(nb))
    return path


@pytest.mark.parametrize("assignment, stem", [("attention", "attention"), ("attention-modules", "attention_modules")])
def test_a_finished_notebook_passes_the_self_check_and_gets_full_marks(release, kit_python, server, tmp_path,
                                                                     assignment, stem):
    path = notebook(release, stem, tmp_path, solution=stem)
    run = kit_check(kit_python, path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "✓" in run.stdout and "✗" not in run.stdout
    assert "more checks run only when your work is graded" in run.stdout
    card = api.grade(path, assignment, server=server)
    assert card.grader_error is None
    assert card.score == card.max_score > 0, [(c.id, c.message) for c in card.checks if c.status != "passed"][:3]
    assert card.notebook is not None and card.notebook.dropped  # the demo and break-it cells were not run


def test_the_untouched_notebook_scores_zero_with_every_check_not_attempted(release, kit_python, server, tmp_path):
    path = notebook(release, "attention", tmp_path)
    run = kit_check(kit_python, path)
    assert run.returncode == 1, run.stderr[-2000:]
    exercises = len(load_config().assignment("attention").exercises)
    assert run.stdout.count("not attempted yet") == exercises and "Traceback" not in run.stdout + run.stderr
    card = api.grade(path, "attention", server=server)
    assert card.grader_error is None and card.score == 0 and card.max_score > 0
    ran = [c for c in card.checks if c.status != "skipped"]
    assert ran and all(c.status == "failed" and c.message == "not attempted" for c in ran)


def test_an_endless_loop_an_input_cell_and_a_broken_cell_cost_only_the_broken_exercise(release, kit_python, server,
                                                                                      tmp_path):
    path = notebook(release, "attention", tmp_path, solution="attention", broken="bag_of_past",
                    extra=["while True:\n    pass", "name = input('your name? ')\nprint(name)"])
    card = api.grade(path, "attention", server=server)
    assert card.grader_error is None
    by_exercise: dict[str, list] = {}
    for c in card.checks:
        by_exercise.setdefault(c.exercise, []).append(c)
    for exercise, checks in by_exercise.items():
        lost = [c.id for c in checks if c.status not in ("passed", "skipped")]
        if exercise == "bag_of_past":
            assert lost and all(c.score == 0 for c in checks)
        else:
            assert not lost, f"{exercise} lost {lost}"
    assert any("syntax" in n.reason.lower() for n in card.notebook.failed)
    assert card.duration_s < 60
    run = kit_check(kit_python, path)
    assert run.returncode == 1
    assert "✗ bag_of_past" in run.stdout and "✓ attention_scores" in run.stdout


def test_the_kit_cannot_grade_or_release_and_says_so_in_one_line(release, kit_python, tmp_path):
    path = notebook(release, "attention", tmp_path, solution="attention")
    grader = str(kit_python.parent / "grader")
    graded = subprocess.run([grader, "grade", path.name, "--assignment", "attention", "--out", "card.json"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert graded.returncode == 2 and "student kit" in graded.stderr and "Traceback" not in graded.stderr
    released = subprocess.run([grader, "release", "--out", "again"], capture_output=True, text=True, cwd=tmp_path)
    assert released.returncode == 2 and "course staff" in released.stderr
