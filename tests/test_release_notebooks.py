"""The student notebooks of `grader release`: deterministic, faithful to the stubs, safe to grade, runnable.

The property that matters most: grading a notebook never runs its demos or
plots. ``grader.notebook.extract`` keeps imports, definitions and library-made
constants, so the notebooks must import matplotlib only inside functions and
call student code only in statements the extractor drops. These tests check
it on the extracted text, by loading that text in a fresh interpreter, and by
grading the notebooks for real.
"""

from __future__ import annotations

import ast
import base64
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from grader import notebook
from grader.release import notebooks
from grader.release.notebooks import LESSON_DIR, LessonError, build_notebook, fill_exercises
from tests.conftest import ROOT

CONFIG = yaml.safe_load((ROOT / "assignments.yaml").read_text(encoding="utf-8"))["assignments"]
ASSIGNMENTS = sorted(CONFIG)
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"  # ipykernel's own; draws PNG outputs (Agg would not)
LIBRARY_ROOTS = {"torch", "math", "numpy", "nn"}  # names the stubs' imports bind


def stub_path(assignment: str) -> Path:
    return ROOT / CONFIG[assignment]["stub"]


def lesson_path(assignment: str) -> Path:
    return LESSON_DIR / f"{stub_path(assignment).stem}.yaml"


def reference_source(assignment: str) -> str:
    return (ROOT / CONFIG[assignment]["reference"]).read_text(encoding="utf-8")


def contract_names(assignment: str) -> list[str]:
    return list(CONFIG[assignment]["exercises"])


def top_level_definitions(source: str) -> dict[str, str]:
    """Name -> the whole lines of each top-level def/class, by ast (the tests' own oracle, not the module's)."""
    lines = source.split("\n")
    return {n.name: "\n".join(lines[n.lineno - 1: n.end_lineno]) for n in ast.parse(source).body
            if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


@pytest.fixture(scope="module")
def built() -> dict[str, str]:
    return {a: build_notebook(stub_path(a), lesson_path(a)) for a in ASSIGNMENTS}


@pytest.fixture(scope="module")
def finished(built: dict[str, str]) -> dict[str, str]:
    """Each notebook as a student who finished would have it: the reference in every exercise cell."""
    return {a: fill_exercises(text, reference_source(a)) for a, text in built.items()}


def cells(text: str) -> list[nbformat.NotebookNode]:
    return nbformat.reads(text, as_version=4).cells


def tagged(text: str, tag: str) -> list[nbformat.NotebookNode]:
    return [c for c in cells(text) if tag in c.get("metadata", {}).get("tags", [])]


# ------------------------------------------------------------------ the notebook as built


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_building_twice_gives_byte_identical_text(built: dict[str, str], assignment: str) -> None:
    again = build_notebook(stub_path(assignment), lesson_path(assignment))
    assert again == built[assignment]
    assert again.encode() == build_notebook(stub_path(assignment), lesson_path(assignment)).encode()


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_notebook_is_valid_nbformat_v4_with_fixed_metadata(built: dict[str, str], assignment: str) -> None:
    nb = nbformat.reads(built[assignment], as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4 and nb.nbformat_minor >= 5
    assert nb.metadata.kernelspec.name == "python3" and nb.metadata.language_info.name == "python"
    assert nb.metadata.grader.assignment == assignment
    ids = [c.id for c in nb.cells]
    assert len(set(ids)) == len(ids) and f"{contract_names(assignment)[0]}-exercise" in ids
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_one_exercise_cell_per_stub_definition_in_stub_order_with_its_exact_source(
        built: dict[str, str], assignment: str) -> None:
    stub = stub_path(assignment).read_text(encoding="utf-8")
    expected = top_level_definitions(stub)
    exercises = tagged(built[assignment], "exercise")
    assert [c.metadata.exercise for c in exercises] == list(expected)
    assert [c.source for c in exercises] == list(expected.values())
    assert all(c.cell_type == "code" and c.metadata.tags == ["exercise"] for c in exercises)
    assert sorted(expected) == sorted(contract_names(assignment))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_exercise_is_explained_before_and_demonstrated_after(built: dict[str, str], assignment: str) -> None:
    nb = cells(built[assignment])
    assert nb[0].cell_type == "markdown" and nb[0].source.startswith("# ")
    assert nb[1].cell_type == "code" and nb[1].metadata.tags == ["imports"] and "import torch" in nb[1].source
    for i, cell in enumerate(nb):
        if "exercise" in cell.metadata:
            assert nb[i - 1].cell_type == "markdown" and nb[i - 1].source.startswith("## "), cell.metadata.exercise
            assert "demo" in nb[i + 1].metadata.get("tags", []), cell.metadata.exercise
            assert f"{cell.metadata.exercise}(" in nb[i + 1].source, cell.metadata.exercise


def test_the_worked_example_comes_before_the_first_exercise(built: dict[str, str]) -> None:
    nb = cells(built["attention"])
    first_exercise = next(i for i, c in enumerate(nb) if "exercise" in c.metadata)
    [example] = [i for i, c in enumerate(nb) if c.cell_type == "markdown" and "0.446" in c.source]
    assert example < first_exercise
    for number in ("fluffy", "blue", "cat", "1.000", "0.500", "0.108", "1.446", "[3.000, 0.000]", "[1.500, 1.500]"):
        assert number in nb[example].source
    [tensors] = tagged(built["attention"], "example")
    assert nb.index(tensors) < first_exercise
    import torch

    namespace: dict = {"torch": torch}
    exec(tensors.source, namespace)
    assert namespace["keys"].tolist() == [[1, 0], [1, 0], [0, 1]]
    assert namespace["queries"].tolist() == [[0, 1], [0, 1], [2, 0]]
    assert namespace["values"].tolist() == [[3, 0], [0, 3], [1, 1]]


def test_the_attention_demo_runs_the_worked_example(built: dict[str, str]) -> None:
    demos = [c.source for c in tagged(built["attention"], "demo")]
    assert any("attention(queries, keys, values)" in s and "1.446" in s for s in demos)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_break_it_cells_draw_and_import_matplotlib_only_inside_functions(built: dict[str, str],
                                                                        assignment: str) -> None:
    breaks = [c for c in tagged(built[assignment], "break-it") if c.cell_type == "code"]
    assert breaks
    helpers = {n.name for c in breaks for n in ast.parse(c.source).body if isinstance(n, ast.FunctionDef)}
    assert helpers and not helpers & set(contract_names(assignment))
    for cell in cells(built[assignment]):
        if cell.cell_type != "code":
            continue
        for node in ast.parse(cell.source).body:
            if "matplotlib" in ast.unparse(node) or "plt." in ast.unparse(node):
                assert isinstance(node, ast.FunctionDef), (cell.id, ast.unparse(node)[:80])
    calls = "\n".join(c.source for c in breaks)
    assert "plt.show()" in calls and any(name.startswith("plot_") and f"{name}(" in calls for name in helpers)


def test_the_attention_break_it_experiments_are_the_chapters(built: dict[str, str]) -> None:
    source = "\n".join(c.source for c in tagged(built["attention"], "break-it"))
    for piece in ("256", "scale=False", "attention_entropy(", ".std()", "causal=False", "plot_score_spread(",
                  "the token that looks", "the token looked at"):
        assert piece in source, piece


# ------------------------------------------------------------------ what grading sees


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grading_keeps_only_the_stubs_imports_helpers_and_library_constants(built: dict[str, str],
                                                                           assignment: str) -> None:
    graded, report = notebook.extract(built[assignment])
    assert report.failed == ()
    stub = stub_path(assignment).read_text(encoding="utf-8")
    stub_defs = top_level_definitions(stub)
    stub_imports = [ast.unparse(n) for n in ast.parse(stub).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    helper_cells = [c.source for c in tagged(built[assignment], "break-it") if c.cell_type == "code"]
    helpers = {n.name for s in helper_cells for n in ast.parse(s).body if isinstance(n, ast.FunctionDef)}
    tree = ast.parse(graded)
    kept_defs = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert [n for n in kept_defs if n not in helpers] == list(stub_defs)  # each stub once, in order
    assert set(kept_defs) - set(stub_defs) == helpers
    for name, source in stub_defs.items():
        assert source in graded, name
    assert [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))] == stub_imports
    functions = set(kept_defs)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        assert isinstance(node, ast.Assign), ast.unparse(node)  # no bare calls, loops, with blocks...
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            root = call.func
            while isinstance(root, (ast.Attribute, ast.Call)):
                root = root.value if isinstance(root, ast.Attribute) else root.func
            assert isinstance(root, ast.Name) and root.id in LIBRARY_ROOTS and root.id not in functions, \
                ast.unparse(node)
    for node in tree.body:  # matplotlib appears only inside the drawing functions, never run when grading
        assert "matplotlib" not in ast.unparse(node) or (isinstance(node, ast.FunctionDef) and node.name in helpers)
    for name in helpers:  # each helper appears once, where it is defined: its calls were dropped as demo code
        assert graded.count(f"{name}(") == 1, name
    assert report.dropped


_LOAD = """
import json, sys
results = []
for source in json.load(sys.stdin):
    namespace = {"__name__": "graded"}
    exec(compile(source, "graded", "exec"), namespace)
    results.append(sorted(k for k, v in namespace.items() if callable(v)))
print(json.dumps({"callables": results, "matplotlib": any(m.split(".")[0] == "matplotlib" for m in sys.modules)}))
"""


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_graded_source_loads_without_matplotlib_and_defines_the_contract(
        built: dict[str, str], finished: dict[str, str], assignment: str) -> None:
    reference = top_level_definitions(reference_source(assignment))
    filled = tagged(finished[assignment], "exercise")
    assert [c.source for c in filled] == [reference[c.metadata.exercise] for c in filled]
    sources = [notebook.extract(built[assignment])[0], notebook.extract(finished[assignment])[0]]
    run = subprocess.run([sys.executable, "-c", _LOAD], input=json.dumps(sources), capture_output=True,
                         text=True, timeout=120, cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert result["matplotlib"] is False
    for names in result["callables"]:
        assert set(contract_names(assignment)) <= set(names)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_grader_gives_the_finished_notebook_full_marks_and_the_stub_notebook_nothing(
        grade, tmp_path: Path, built: dict[str, str], finished: dict[str, str], assignment: str) -> None:
    name = f"{stub_path(assignment).stem}.ipynb"
    (tmp_path / "finished").mkdir()
    (tmp_path / "stub").mkdir()
    (tmp_path / "finished" / name).write_text(finished[assignment], encoding="utf-8")
    done = grade(tmp_path / "finished" / name, assignment)
    assert done.score == done.max_score > 0, \
        [(c.id, c.status, c.message) for c in done.checks if c.status not in ("passed", "skipped")]
    (tmp_path / "stub" / name).write_text(built[assignment], encoding="utf-8")
    untouched = grade(tmp_path / "stub" / name, assignment)
    assert untouched.score == 0
    assert all(c.message == "not attempted" for c in untouched.checks if c.status != "skipped")


# ------------------------------------------------------------------ running it in Jupyter


def execute(text: str, workdir: Path, *, allow_errors: bool = False) -> nbformat.NotebookNode:
    nbclient = pytest.importorskip("nbclient", reason="nbclient is needed to run a notebook")
    pytest.importorskip("ipykernel", reason="ipykernel is needed to run a notebook")
    nb = nbformat.reads(text, as_version=4)
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=allow_errors,
                            resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def calls_a_plot_helper(cell: nbformat.NotebookNode) -> bool:
    """A code cell that calls plot_...() outside any function: it must leave a picture."""
    if cell.cell_type != "code":
        return False
    tree = ast.parse(cell.source)
    outside = [n for n in tree.body if not isinstance(n, ast.FunctionDef)]
    return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id.startswith("plot_")
               for node in outside for c in ast.walk(node))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_finished_notebook_runs_and_draws_the_break_it_pictures(
        finished: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assignment: str) -> None:
    monkeypatch.setenv("MPLBACKEND", INLINE_BACKEND)  # the kernel inherits it
    nb = execute(finished[assignment], tmp_path)  # a cell that fails raises CellExecutionError
    drawing = [c for c in nb.cells if "break-it" in c.metadata.get("tags", []) and calls_a_plot_helper(c)]
    assert drawing
    saved = []
    for cell in drawing:
        pngs = [o.data["image/png"] for o in cell.outputs if "image/png" in o.get("data", {})]
        assert pngs, f"cell {cell.id} drew nothing"
        for n, data in enumerate(pngs, start=1):
            path = tmp_path / f"{cell.id}-{n}.png"
            path.write_bytes(base64.b64decode(data))
            assert path.read_bytes().startswith(b"\x89PNG")
            saved.append(path)
    assert len(saved) >= (4 if assignment == "attention" else 2)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == []
    if assignment == "attention":
        [example] = [c for c in nb.cells if "attention(queries, keys, values)" in c.source]
        printed = "".join(o.get("text", "") for o in example.outputs)
        assert "[0.446, 0.446, 0.108]" in printed and "[1.446, 1.446]" in printed


def test_the_untouched_notebook_stops_first_at_not_implemented(built: dict[str, str], tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MPLBACKEND", INLINE_BACKEND)
    nb = execute(built["attention"], tmp_path, allow_errors=True)
    failing = [(c.id, o.ename) for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert failing[0] == ("attention_scores-1", "NotImplementedError")
    assert {ename for _, ename in failing} == {"NotImplementedError"}


# ------------------------------------------------------------------ the modules' pictures come from the student's forward


def module_helpers(built: dict[str, str]) -> dict:
    """The attention-modules notebook's break-it helpers (``head_weights``, ``plot_heads``), defined as the cell does."""
    import torch

    [cell] = [c for c in tagged(built["attention-modules"], "break-it") if "def head_weights(" in c.source]
    namespace: dict = {"torch": torch}
    exec(compile(cell.source, "head_weights cell", "exec"), namespace)  # noqa: S102 - the lesson's own cell
    return namespace


def load_module(source: str, name: str):
    import types

    module = types.ModuleType(name)
    exec(compile(source, name, "exec"), module.__dict__)  # noqa: S102 - the course's reference and corpus
    return module


def weights_by_hand(head, x, scale: bool = True):
    """What a head of the reference's design computes as weights: the test's own oracle (never shipped)."""
    import torch

    T = x.shape[1]
    scores = head.query(x) @ head.key(x).transpose(-2, -1)
    if scale:
        scores = scores * head.query.out_features ** -0.5
    return torch.softmax(scores.masked_fill(head.tril[:T, :T] == 0, float("-inf")), dim=-1)


def reference_without_head_dropout() -> str:
    """The reference with its head's nn.Dropout taken out (MultiHeadAttention keeps its own)."""
    source = reference_source("attention-modules")
    for line in ("        self.dropout = nn.Dropout(dropout)\n", "        wei = self.dropout(wei)  # active only in training mode\n"):
        assert line in source, line
        source = source.replace(line, "", 1)
    return source


def test_the_modules_demo_shows_the_weights_the_students_own_forward_computes(built: dict[str, str], capsys) -> None:
    """No demo re-implements forward: ``head_weights`` catches the weights as the head's forward hands them to
    its dropout. On the reference it gives exactly the weights the old cell recomputed (the same pictures); on
    a mutant that forgets the scaling it gives that mutant's weights, not the reference's."""
    import torch
    from tests.corpus_cases import corpus

    head_weights = module_helpers(built)["head_weights"]
    reference = load_module(reference_source("attention-modules"), "reference_modules")
    [no_scaling] = [c for c in corpus("mutants") if c.id == "attention-modules/mutants/head_no_scaling"]
    mutant = load_module(no_scaling.source(), "head_no_scaling")
    for module, scale in ((reference, True), (mutant, False)):
        torch.manual_seed(0)
        mha = module.MultiHeadAttention(d_model=32, n_heads=4, context_length=8).eval()
        x = torch.randn(1, 8, 32)
        with torch.no_grad():
            shown = head_weights(mha.heads, x)
            assert shown is not None and len(shown) == 4
            for head, weights in zip(mha.heads, shown):
                torch.testing.assert_close(weights, weights_by_hand(head, x, scale), rtol=0, atol=0)
                assert not torch.allclose(weights, weights_by_hand(head, x, not scale))
    assert capsys.readouterr().out == ""


def test_a_head_with_nothing_to_catch_gets_one_line_not_a_traceback(built: dict[str, str], capsys) -> None:
    """Every correct alternative and every mutant of the corpus: ``head_weights`` returns one (B, T, T) tensor of
    values in [0, 1] per head, or None after exactly one printed line that says why (a forward still the stub;
    no nn.Dropout; a forward that never calls it, such as one built on scaled_dot_product_attention or
    F.dropout; a dropout that is handed the output, not the weights). It never raises."""
    import torch
    from tests.corpus_cases import corpus

    head_weights = module_helpers(built)["head_weights"]
    without_dropout = reference_without_head_dropout()
    sources = {c.id: c.source() for c in corpus("mutants") + corpus("alternatives") if c.assignment == "attention-modules"}
    sources["reference without its head's nn.Dropout"] = without_dropout
    sources["reference whose head's forward is the stub's"] = reference_source("attention-modules") + (
        "\n\ndef stub_forward(self, x):\n    raise NotImplementedError\n\n\nSelfAttentionHead.forward = stub_forward\n")
    said, ran = {}, 0
    for name, source in sorted(sources.items()):
        try:
            module = load_module(source, name.replace("/", "_"))
        except ImportError:
            continue  # a mutant that imports the other assignment's file: the notebook would stop at its imports
        torch.manual_seed(0)
        mha = module.MultiHeadAttention(d_model=32, n_heads=4, context_length=8).eval()
        ran += 1
        with torch.no_grad():
            shown = head_weights(mha.heads, torch.randn(1, 8, 32))
        printed = capsys.readouterr().out
        if shown is None:
            assert printed.count("\n") == 1 and printed.startswith("no weights to show: "), (name, printed)
            said[name] = printed
        else:
            assert printed == "" and all(w.shape == (1, 8, 8) and 0 <= w.min() <= w.max() <= 1 for w in shown), name
    assert ran >= 20, ran
    assert "it has no nn.Dropout" in said["reference without its head's nn.Dropout"]
    assert "its forward still raises NotImplementedError" in said["reference whose head's forward is the stub's"]
    assert "never calls its nn.Dropout" in said["attention-modules/alternatives/head_sdpa"]
    assert "not weights between 0 and 1" in said["attention-modules/mutants/head_dropout_on_output"]
    assert "attention-modules/alternatives/dropout_named_differently" not in said


def test_the_modules_break_it_cells_say_one_line_and_draw_nothing_for_a_head_without_dropout(
        built: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In Jupyter: a finished notebook whose head has no nn.Dropout runs to the end; each cell that would draw the
    weights prints the one line instead, and no cell fails."""
    monkeypatch.setenv("MPLBACKEND", INLINE_BACKEND)
    without_dropout = reference_without_head_dropout()
    assert without_dropout.count("nn.Dropout(") == 1  # only MultiHeadAttention's own is left
    nb = execute(fill_exercises(built["attention-modules"], without_dropout), tmp_path)
    assert [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"] == []
    weights_cells = [c for c in nb.cells if c.cell_type == "code" and "head_weights(" in c.source
                     and "def head_weights(" not in c.source]
    assert len(weights_cells) == 2
    for cell in weights_cells:
        said = [line for o in cell.outputs if o.get("name") == "stdout" for line in o.text.splitlines()
                if line.startswith("no weights to show")]
        assert said == ["no weights to show: this cell catches them on their way into the head's dropout, "
                        "and it has no nn.Dropout"], (cell.id, cell.outputs)
        assert not any("image/png" in o.get("data", {}) for o in cell.outputs), cell.id


def test_no_demo_cell_writes_out_an_answer(built: dict[str, str]) -> None:
    """The release refuses a notebook that does (grader/release/answers.py); the lesson files must not."""
    from grader.release import answers

    found = answers.scan({f"{stub_path(a).stem}.ipynb": text.encode() for a, text in built.items()})
    assert found == [], [str(f) for f in found]


# ------------------------------------------------------------------ lesson files that do not fit


def write_lesson(tmp_path: Path, change: dict) -> Path:
    lesson = yaml.safe_load(lesson_path("attention").read_text(encoding="utf-8"))
    lesson.update(change)
    path = tmp_path / "lesson.yaml"
    path.write_text(yaml.safe_dump(lesson), encoding="utf-8")
    return path


def test_a_lesson_missing_a_step_is_refused(tmp_path: Path) -> None:
    lesson = yaml.safe_load(lesson_path("attention").read_text(encoding="utf-8"))
    steps = {k: v for k, v in lesson["steps"].items() if k != "softmax"}
    with pytest.raises(LessonError, match="missing: softmax"):
        build_notebook(stub_path("attention"), write_lesson(tmp_path, {"steps": steps}))


def test_a_lesson_with_an_unknown_key_or_a_bad_cell_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LessonError, match="unknown keys"):
        build_notebook(stub_path("attention"), write_lesson(tmp_path, {"outro": "bye"}))
    with pytest.raises(LessonError, match="exactly one of markdown or code"):
        both = {"after_steps": [{"markdown": "a", "code": "b"}]}
        build_notebook(stub_path("attention"), write_lesson(tmp_path, both))


def test_a_stub_with_top_level_code_is_refused(tmp_path: Path) -> None:
    stub = tmp_path / "attention.py"
    stub.write_text(stub_path("attention").read_text(encoding="utf-8") + "\nprint('hello')\n", encoding="utf-8")
    with pytest.raises(LessonError, match="top-level code"):
        notebooks.read_stub(stub)
