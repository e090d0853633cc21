"""Issue 24: the same class graded by our ``grader grade-all`` and by nbgrader's ``autograde``, side by side.

Why: course staff who know nbgrader ask what a class costs here against there. Both sides grade the
same 20 students of the attention assignment (half of them correct alternatives from
``tests/corpus/attention/alternatives``, half single-bug mutants from ``.../mutants``, spread over the
exercises): ours as one ``.py`` file per student in a class folder, nbgrader's as one notebook per
student (one code cell per top-level statement, the way ``tests/test_notebook_differential.py`` splits
a submission) under ``submitted/<student>/<assignment>/``.

Usage:
    .venv/bin/python bench/nbgrader_compare.py [--repeat 2] [--venv PATH] [--students 20]

nbgrader is no dependency of this project: without ``--venv`` the script makes a throwaway virtualenv
in its temp folder and installs nbgrader, ipykernel, numpy and the project's own torch version into it
(torch from the local wheel, so it takes a minute or two); ``--venv PATH`` reuses (or first creates)
one at PATH, which is kept. Everything else lives in a temp folder removed at the end.

What is timed, and only that: each grading command's wall time from its start to its exit, the two
commands run alternately ``--repeat`` times, medians reported, beside a bare ``python -c "import
torch"`` measured in the same rounds.
  - ours: ``python -m grader.cli grade-all CLASS --assignment attention --out OUT --jobs J`` (J: what
    the default picks for this class on this machine): one CLI process, its grader processes (one
    ``import torch`` each), the sandboxed worker server, one forked, locked-down child per submission,
    and every hidden check of the assignment (property checks, diagnosis of failures included), then
    the cards, the gradebook and the summaries written.
  - nbgrader: ``nbgrader autograde attention --force`` in a course folder made beforehand (untimed:
    the source notebook with nbgrader cell metadata, ``nbgrader generate_assignment``, the submissions
    copied in): per notebook, sanitising (outputs cleared, test cells restored from the gradebook),
    a fresh Jupyter kernel started (its own ``import torch``), every cell run, the grades saved to its
    sqlite gradebook and the graded notebook written. Its tests are six autograder cells of a few
    asserts each (shapes, rows of the weights summing to one, the causal zeros, agreement with torch),
    far fewer than our checks, and nothing is sandboxed: student code runs as the grader's user.
After the last round the scores each way are read back (nbgrader's through ``nbgrader export``,
untimed) and the count of full marks printed, so a side that silently graded nothing shows.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.jobs import grade_all  # noqa: E402
from bench.latency import wall  # noqa: E402
from grader.batch.run import default_jobs  # noqa: E402
from tests.corpus_cases import CorpusCase, corpus  # noqa: E402
from tests.test_notebook_differential import split_cells  # noqa: E402

ASSIGNMENT = "attention"
NBGRADER = "nbgrader==0.9.6"
TORCH_LABEL = 'python -c "import torch"'
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

# The autograder test cells of the source notebook: (grade_id, points, source). Each asserts what our
# checks look at for the same functions, on fixed small inputs.
TESTS = [
    ("test_scores", 1, """\
torch.manual_seed(0)
q, k = torch.randn(2, 5, 4), torch.randn(2, 6, 4)
assert attention_scores(q, k).shape == (2, 5, 6)
assert torch.allclose(attention_scores(q, k), q @ k.transpose(-2, -1), atol=1e-5)
assert torch.allclose(scale_scores(torch.ones(3), 16), torch.full((3,), 0.25))"""),
    ("test_mask_and_softmax", 2, """\
m = causal_mask(4)
assert m.dtype == torch.bool and torch.equal(m, torch.ones(4, 4, dtype=torch.bool).tril())
s = apply_mask(torch.zeros(4, 4), m)
assert s[0, 1] == float("-inf") and s[1, 0] == 0
x = torch.randn(3, 5)
assert torch.allclose(softmax(x).sum(-1), torch.ones(3))
assert torch.allclose(softmax(x), torch.softmax(x, -1), atol=1e-6)
assert torch.equal(softmax(s)[0], torch.tensor([1.0, 0.0, 0.0, 0.0]))"""),
    ("test_attention", 3, """\
torch.manual_seed(1)
q, k, v = torch.randn(3, 2, 5, 8).unbind(0)
out, w = attention(q, k, v)
assert out.shape == (2, 5, 8) and w.shape == (2, 5, 5)
assert torch.allclose(w.sum(-1), torch.ones(2, 5), atol=1e-5)
assert torch.all(w.triu(1) == 0)
expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
assert torch.allclose(out, expected, atol=1e-5)
out, w = attention(q, k, v, causal=False, scale=False)
assert torch.allclose(w, torch.softmax(q @ k.transpose(-2, -1), -1), atol=1e-5)"""),
    ("test_bag_of_past", 1, """\
v = torch.randn(2, 4, 3)
assert torch.allclose(bag_of_past(v)[:, 2], v[:, :3].mean(1), atol=1e-6)"""),
    ("test_heads", 2, """\
torch.manual_seed(2)
x = torch.randn(2, 5, 8)
assert split_heads(x, 2).shape == (2, 2, 5, 4)
assert torch.equal(split_heads(x, 2)[:, 1], x[..., 4:])
assert torch.equal(merge_heads(split_heads(x, 2)), x)
w_q, w_k, w_v, w_o = (torch.randn(8, 8) / 8 ** 0.5 for _ in range(4))
out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=2)
assert out.shape == (2, 5, 8) and weights.shape == (2, 2, 5, 5)
assert torch.allclose(weights.sum(-1), torch.ones(2, 2, 5), atol=1e-5)"""),
    ("test_entropy", 1, """\
assert torch.allclose(attention_entropy(torch.full((2, 4), 0.25)), torch.full((2,), math.log(4)))
assert attention_entropy(torch.tensor([[1.0, 0.0]])).item() == 0"""),
]


def pick_cases(students: int) -> list[CorpusCase]:
    """Half correct alternatives, half mutants, each half spread evenly over its sorted list."""
    def spread(kind: str, n: int) -> list[CorpusCase]:
        cases = [c for c in corpus(kind) if c.assignment == ASSIGNMENT]
        return [cases[i * len(cases) // n] for i in range(n)]
    return spread("alternatives", students - students // 2) + spread("mutants", students // 2)


def student_id(index: int, case: CorpusCase) -> str:
    return f"s{index:02d}_{case.kind[:3]}_{case.path.stem}"


def nbgrader_meta(grade_id: str, *, solution: bool, points: int = 0) -> dict[str, object]:
    """The cell metadata nbgrader reads (schema 3): an answer cell, or an autograder test cell."""
    meta: dict[str, object] = {"grade_id": grade_id, "schema_version": 3, "solution": solution,
                               "grade": not solution, "locked": not solution, "task": False}
    if not solution:
        meta["points"] = points
    return {"nbgrader": meta}


def source_notebook() -> nbformat.NotebookNode:
    """The instructor's notebook: the reference between solution markers in one answer cell, then the tests."""
    reference = (ROOT / "solutions" / "attention.py").read_text(encoding="utf-8")
    cells = [nbformat.v4.new_markdown_cell("# Attention from scratch\nFill in every function below."),
             nbformat.v4.new_code_cell(f"### BEGIN SOLUTION\n{reference}\n### END SOLUTION",
                                       metadata=nbgrader_meta("answer", solution=True))]
    for grade_id, points, test in TESTS:
        cells.append(nbformat.v4.new_code_cell("import math\nimport torch\n\n" + test,
                                               metadata=nbgrader_meta(grade_id, solution=False, points=points)))
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})


def student_notebook(released: nbformat.NotebookNode, case: CorpusCase) -> nbformat.NotebookNode:
    """The released notebook with its answer cell filled by the case: the imports in the answer cell
    itself, then one cell per other top-level statement, then the released test cells."""
    imports, others = split_cells(case.source())
    cells = []
    for cell in released.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            cells.append(nbformat.v4.new_code_cell("\n".join(imports), metadata=cell.metadata))
            cells += [nbformat.v4.new_code_cell(statement) for statement in others]
        else:
            cells.append(cell)
    return nbformat.v4.new_notebook(cells=cells, metadata=released.metadata)


def ensure_venv(venv: Path) -> Path:
    """``venv``'s nbgrader command, after creating the venv and installing into it if it has none."""
    nbgrader = venv / "bin" / "nbgrader"
    if nbgrader.exists():
        return nbgrader
    torch = metadata.version("torch").split("+")[0]  # the project's torch, from the local wheel
    print(f"installing {NBGRADER}, ipykernel, numpy, torch=={torch} into {venv} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", NBGRADER, "ipykernel", "numpy",
                           f"torch=={torch}"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip install into {venv} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return nbgrader


def jupyter_env(home: Path, venv: Path) -> dict[str, str]:
    """The environment nbgrader runs in: Jupyter's and IPython's folders private to this run."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    for name, folder in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")):
        (home / folder).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / folder)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def nbgrader_run(nbgrader: Path, args: list[str], course: Path, env: dict[str, str]) -> float:
    """Wall seconds of ``nbgrader ARGS`` run in ``course``; its log's tail on failure."""
    started = time.perf_counter()
    done = subprocess.run([str(nbgrader), *args], cwd=course, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return elapsed


def make_course(course: Path, cases: list[CorpusCase], nbgrader: Path, env: dict[str, str]) -> None:
    """source/, generate_assignment (gradebook and release/), then each student's notebook in submitted/."""
    source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    source.parent.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n")
    nbformat.write(source_notebook(), source)
    nbgrader_run(nbgrader, ["generate_assignment", ASSIGNMENT, "--force"], course, env)
    released = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for index, case in enumerate(cases):
        folder = course / "submitted" / student_id(index, case) / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(student_notebook(released, case), folder / f"{ASSIGNMENT}.ipynb")


def make_class(folder: Path, cases: list[CorpusCase]) -> None:
    """grade-all's class folder: one ``<student>.py`` per student, the same students as the course's."""
    folder.mkdir()
    for index, case in enumerate(cases):
        (folder / f"{student_id(index, case)}.py").write_text(case.source(), encoding="utf-8")


def autograde(nbgrader: Path, course: Path, env: dict[str, str]) -> float:
    shutil.rmtree(course / "autograded", ignore_errors=True)
    return nbgrader_run(nbgrader, ["autograde", ASSIGNMENT, "--force"], course, env)


def nbgrader_full_marks(nbgrader: Path, course: Path, env: dict[str, str]) -> dict[str, bool]:
    """Whether each student got full marks, from nbgrader's gradebook through ``nbgrader export``."""
    nbgrader_run(nbgrader, ["export", "--to", "grades.csv"], course, env)
    with open(course / "grades.csv", newline="", encoding="utf-8") as fh:
        return {r["student_id"]: float(r["score"]) == float(r["max_score"]) for r in csv.DictReader(fh)}


def ours_full_marks(out: Path) -> dict[str, bool]:
    """Whether each student got full marks, from grade-all's cards."""
    cards = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / "cards").glob("*.json"))}
    return {student: card["score"] == card["max_score"] for student, card in cards.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2, help="rounds, each way once a round, alternating")
    parser.add_argument("--venv", type=Path, help="nbgrader's virtualenv: reused, or created there and kept")
    parser.add_argument("--students", type=int, default=20)
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0))
    jobs = default_jobs(args.students, cores)
    cases = pick_cases(args.students)

    with tempfile.TemporaryDirectory(prefix="bench-nbgrader-") as tmp_name:
        tmp = Path(tmp_name)
        venv = args.venv.resolve() if args.venv else tmp / "venv"
        nbgrader = ensure_venv(venv)
        env = jupyter_env(tmp / "jupyter", venv)
        course = tmp / "course"
        make_course(course, cases, nbgrader, env)
        make_class(tmp / "class", cases)

        ours, theirs, torch_import = [], [], []
        for round_ in range(args.repeat):
            torch_import.append(wall([sys.executable, "-c", "import torch"]))
            ours.append(grade_all(tmp / "class", tmp / "out", jobs))
            theirs.append(autograde(nbgrader, course, env))
            print(f"round {round_ + 1}: import torch {torch_import[-1]:.2f} s, grade-all {ours[-1]:.2f} s, "
                  f"nbgrader autograde {theirs[-1]:.2f} s", flush=True)
        our_full = ours_full_marks(tmp / "out")
        their_full = nbgrader_full_marks(nbgrader, course, env)

    n = args.students
    a, b, t = statistics.median(ours), statistics.median(theirs), statistics.median(torch_import)
    print(f"\n{cores} cores; {n} students ({n - n // 2} alternatives, {n // 2} mutants); "
          f"medians of {args.repeat} alternating rounds")
    print(f"{'way':<44} {'total s':>8} {'s/student':>10} {'x import torch':>15} {'full marks':>11}")
    print(f"{f'grader grade-all --jobs {jobs} (.py files)':<44} {a:>8.2f} {a / n:>10.3f} {a / n / t:>15.2f} "
          f"{f'{sum(our_full.values())}/{len(our_full)}':>11}")
    print(f"{'nbgrader autograde (notebooks)':<44} {b:>8.2f} {b / n:>10.3f} {b / n / t:>15.2f} "
          f"{f'{sum(their_full.values())}/{len(their_full)}':>11}")
    print(f"{TORCH_LABEL:<44} {t:>8.2f}")
    print(f"nbgrader / grader: {b / a:.2f}x per submission")
    differ = sorted(who for who in our_full.keys() | their_full.keys() if our_full.get(who) != their_full.get(who))
    print("full marks one way only: " + (", ".join(
        f"{who} ({'grader' if our_full.get(who) else 'nbgrader'})" for who in differ) or "none"))


if __name__ == "__main__":
    main()
