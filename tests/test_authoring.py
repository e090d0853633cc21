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

import pytest

from grader.authoring.completeness import missing
from grader.authoring.new_exercise import MARKER
from grader.authoring.readme import DOC_PAGES  # the pages stating totals and the catalogue
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

    # (a) the completeness check lists exactly the placeholders, by file and line, and the inputs and the docs' catalogue rows.
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
    assert all(ex == NAME for f, ex, what in rows if not f.startswith(DOC_PAGES)), rows
    from grader.files import read_yaml

    lesson = read_yaml(copy / "grader/release/lesson/attention.yaml")
    [demo] = lesson["steps"][NAME]["cells"]  # the shape the notebook builder takes: a mapping, `code:`
    assert set(demo) == {"code"} and MARKER in demo["code"]
    assert f"`{NAME}`: {MARKER}" in lesson["intro"]
    assert any(f.startswith("docs/grading.md:") and f"no row for `{NAME}`" in what for f, _, what in rows)
    unlisted = [r for r in rows if not r[2].startswith("fill the placeholder") and not r[0].startswith(DOC_PAGES)]
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


def test_the_contract_row_spells_each_stubs_parameters_as_the_contract_does():
    """The scaffold's row copies `--like`'s parameters with their defaults (`causal_mask(T, device=None)`, not
    `causal_mask(T, device)`): rendered from every stub function, it is that function's row in docs/CONTRACT.md."""
    import ast

    from grader.authoring.new_exercise import call_signature

    contract = (ROOT / "docs/CONTRACT.md").read_text()
    functions = [n for n in ast.parse((ROOT / "exercises/attention.py").read_text()).body if isinstance(n, ast.FunctionDef)]
    assert len(functions) >= 10
    for node in functions:
        assert f"| `{node.name}({call_signature(node)})` |" in contract, node.name
    [odd] = ast.parse("def f(a, /, b: int = 2, *rest, c, d=None, **more): pass").body
    assert call_signature(odd) == "a, b=2, *rest, c, d=None, **more"


def test_a_placeholder_is_listed_under_the_exercise_its_line_names_first():
    """build_cases' placeholder names the new exercise and then its model: a new name shorter than the model's
    (`alibi`, like `attention_scores`) was listed under the model."""
    from grader.authoring.completeness import _whose

    names = sorted(["attention_scores", "attention", "alibi", "causal_mask"], key=len, reverse=True)
    line = f'        "alibi": [],  # {MARKER}: alibi\'s inputs, Case("alibi", args, kwargs, label) each, like "attention_scores"\'s above'
    assert _whose(line, "conftest.py", names) == "alibi"
    assert _whose(f"    raise NotImplementedError  # {MARKER}: the reference's attention", "attention.py", names) == "attention"
    assert _whose(f"title: '{MARKER}: the mistake in a few words'", "causal_mask_todo.yaml", names) == "causal_mask"
    assert _whose(f"  test_alibi_todo_property: 1  # {MARKER}: rename", "assignments.yaml", names) == "alibi"
    assert _whose(f"# message: {MARKER}", "notes.py", names) == "*"


def test_a_hidden_check_without_each_students_own_inputs_is_listed(tmp_path: Path):
    """tests/test_seeds.py fails on a hidden check that sends two students the same inputs; the completeness
    check says so first: a hidden check that takes none of the per-student fixtures, and a hidden check reading
    `hidden_cases` of an exercise whose inputs do not change with the salt (causal_mask's are ints, unsalted)."""
    copy = _copy(tmp_path / "course")
    config = copy / "assignments.yaml"
    text = config.read_text()
    own = "          test_mask_is_built_on_the_requested_device: 2\n"
    assert text.count(own) == 1
    config.write_text(text.replace(own, "          test_mask_is_built_on_the_requested_device: {points: 2, visibility: hidden}\n"
                                        "          test_accepts_non_contiguous_inputs: {points: 0.5, visibility: hidden}\n"))
    listed = {(m.exercise, m.what.split(" ", 1)[0], m.file) for m in missing(copy) if "test_seeds.py" in m.what}
    assert listed == {("causal_mask", "test_mask_is_built_on_the_requested_device", "grader/checks/attention/"),
                      ("causal_mask", "inputs", "grader/checks/attention/conftest.py")}, listed


@pytest.mark.parametrize(("signature", "returns", "gradients"), [
    (None, "[out, weights]", "[0, 1, 2]"),  # the model's own signature: everything fits
    ("q_new: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor -> torch.Tensor", None, "[0, 1, 2]"),
    ("q: torch.Tensor, k: torch.Tensor -> tuple[torch.Tensor, torch.Tensor]", "[out, weights]", "[0, 1]"),
    ("x -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]", "[value_0, value_1, value_2]", "[0]"),
    ("n: int", None, "[0]"),
])
def test_like_copies_only_what_fits_the_new_signature(tmp_path: Path, signature, returns, gradients):
    """--like attention (returns [out, weights], gradient inputs 0-2): a new signature keeps the names only for a
    tuple of two, placeholders for another count, nothing for one value; gradient inputs only among its
    parameters. The contract row and the stub spell the new parameters."""
    from grader.authoring.new_exercise import new_exercise
    from grader.files import read_yaml

    copy = _copy(tmp_path / "course")
    new_exercise("next_step", "attention", "attention", copy, signature)
    entry = read_yaml(copy / "assignments.yaml")["assignments"]["attention"]["exercises"]["next_step"]
    assert (f"[{', '.join(entry['returns'])}]" if "returns" in entry else None) == returns
    assert f"[{', '.join(map(str, entry.get('gradient_inputs', [])))}]" == gradients
    params = "q, k, v, causal=True, scale=True" if signature is None else \
        ", ".join(p.split(":")[0].strip() for p in signature.split("->")[0].split(","))
    assert f"| `next_step({params})` |" in (copy / "docs/CONTRACT.md").read_text()
    import ast

    for written in ("exercises/attention.py", "solutions/attention.py"):
        [stub] = [n for n in ast.parse((copy / written).read_text()).body if getattr(n, "name", "") == "next_step"]
        assert [a.arg for a in stub.args.args] == [p.split("=")[0] for p in params.split(", ")], written
    if returns and "value_0" in returns:
        assert MARKER in next(line for line in (copy / "assignments.yaml").read_text().splitlines() if "value_0" in line)


@pytest.mark.parametrize(("like", "signature", "said"), [
    ("attention", "q, k ->", "is not a parameter list"),
    ("attention", "q k", "is not a parameter list"),
    ("SelfAttentionHead", "x: torch.Tensor", "is for a function"),
])
def test_a_bad_signature_is_one_line_and_exit_2(tmp_path: Path, like, signature, said):
    copy = _copy(tmp_path / "course")
    assignment = "attention-modules" if like[0].isupper() else "attention"
    done = _run(copy, "-m", "grader.cli", "new-exercise", "next_step", "--assignment", assignment, "--like", like,
                "--signature", signature)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
