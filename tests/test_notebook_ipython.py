"""Differential: a notebook is read as IPython reads it, and what the grader keeps runs as it runs in Jupyter.

Three oracles, none of them ours: IPython's ``TransformerManager.transform_cell`` (what IPython compiles for
a cell), IPython's ``InteractiveShell.run_cell`` (what a notebook's cells define when run in order), and the
grader's score for the same code as a .py file. The cells are every code cell of the project's notebooks
(the release notebooks, empty and filled; the student notebooks the other notebook tests build from the
reference and from every corpus alternative) and a generated family of student habits: comments, strings
and docstrings ending in ``?``, ``obj?``/``obj??``/``?obj`` help lines, ``%time`` and ``%%time``/``%%capture``
cells, ``!cmd`` and ``x = !cmd``, a ``from __future__`` import at the top of a later cell, backslash and
bracket continuations, a cell that is only a comment, an indented cell, pasted ``>>>`` prompts.
"""

from __future__ import annotations

import ast
import dis
import re
import types

import nbformat
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.inputtransformer2 import TransformerManager

from grader import notebook
from grader.notebook.ipython import ipython_cell
from grader.release.notebooks import LESSON_DIR, build_notebook, fill_exercises
from grader.sandbox.child import _units
from tests import test_notebook_differential, test_notebooks
from tests.conftest import ROOT


def form_cells(form: str, k: int) -> list[str]:
    """The cells of one habit; names carry ``k`` so that forms combine. Each defines something the
    grader keeps (a function ``<form>_<k>``) beside the habit itself."""
    f = f"{form}_{k}"
    return {
        "comment_q": [f"def {f}(x):\n    return x + {k}  # is this right?\n"],
        "string_q": [f"QUESTION_{k} = 'why {k}?'\ndef {f}():\n    return QUESTION_{k} + \"really?\"\n"],
        "docstring_q": [f'def {f}(x):\n    """Why add {k}?\n\n    Because?\n    """\n    return x * {k}\n'],
        "help": [f"def {f}():\n    return {k}\n", f"{f}?\n", f"{f}??\n", f"?{f}\n", f"print({f}())\n{f}?"],
        "line_magic": [f"%time T_{k} = {k}\ndef {f}():\n    return {k}\n%timeit -n1 -r1 {f}()\n"],
        "cell_time": [f"%%time\ndef {f}():\n    return {k}\nSIZE_{k} = {k} + 1\n"],
        "cell_capture": [f"%%capture out_{k}\nprint('hidden')\ndef {f}():\n    return {k}\n"],
        "shell": [f"!echo {k} > /dev/null\ndef {f}():\n    return {k}\n"],
        "shell_assign": [f"files_{k} = !echo {k}\nlines_{k} = len(files_{k})\ndef {f}():\n    return {k}\n"],
        "future": [f"from __future__ import annotations\ndef {f}(x: Undefined_{k}) -> 'int':\n    return {k}\n"],
        "backslash": [f"LIMIT_{k} = {k} + \\\n    1\ndef {f}():\n    return LIMIT_{k}\n"],
        "brackets": [f"TABLE_{k} = [\n    {k},  # first?\n    {k} + 1,\n]\ndef {f}():\n    return TABLE_{k}\n"],
        "magic_backslash": [f"%time w_{k} = 1 + \\\n    2\ndef {f}():\n    return {k}\n"],
        "comment_only": [f"# only a comment, is it {k}?\n"],
        "indented": [f"  def {f}():\n      return {k}\n"],
        "prompts": [f">>> def {f}():\n...     return {k}\n"],
        "def_magic": [f"def {f}():\n    %time y = 1\n    return {k}\n"],
        "future_mid": [f"SEEN_{k} = {k}\nfrom __future__ import annotations\ndef {f}(x: Undefined_{k}) -> int:\n"
                       f"    return SEEN_{k}\n"],
    }[form]


def ipython_syntax(form: str, k: int) -> dict[str, str]:
    """The lines of a form's cells that are IPython syntax (as written) -> the start of the note on each."""
    f = f"{form}_{k}"
    return {
        "help": {f"{f}?": IPYTHON, f"{f}??": IPYTHON, f"?{f}": IPYTHON},
        "line_magic": {f"%time T_{k} = {k}": IPYTHON, f"%timeit -n1 -r1 {f}()": IPYTHON},
        "shell": {f"!echo {k} > /dev/null": IPYTHON},
        "shell_assign": {f"files_{k} = !echo {k}": IPYTHON,
                         f"lines_{k} = len(files_{k})": f"uses `files_{k}`, which only a dropped statement defines"},
        "magic_backslash": {f"%time w_{k} = 1 + \\": IPYTHON},
        "def_magic": {f"def {f}():": f"uses IPython syntax (`%time y = 1`, line 2), which only runs in IPython, "
                                     f"so `{f}` is not defined when grading"},
    }.get(form, {})


FORMS = ("comment_q", "string_q", "docstring_q", "help", "line_magic", "cell_time", "cell_capture", "shell",
         "shell_assign", "future", "backslash", "brackets", "magic_backslash", "comment_only", "indented",
         "prompts", "def_magic", "future_mid")
IPYTHON = "IPython magic or shell command: not Python"


CONFIG = yaml.safe_load((ROOT / "assignments.yaml").read_text(encoding="utf-8"))["assignments"]
# Every notebook the project has or builds: the release notebooks (as given, and with the solutions filled
# in), the student notebook of tests/test_notebooks.py and, for every corpus alternative,
# tests/test_notebook_differential.py's.
PROJECT_NOTEBOOKS = ([f"release:{a}:{how}" for a in sorted(CONFIG) for how in ("given", "filled")] + ["student"]
                     + [f"corpus:{c.id}" for c in test_notebook_differential.CASES])


def project_notebook(name: str) -> nbformat.NotebookNode:
    kind, _, rest = name.partition(":")
    if kind == "release":
        assignment, how = rest.split(":")
        spec = CONFIG[assignment]
        text = build_notebook(ROOT / spec["stub"], LESSON_DIR / f"{(ROOT / spec['stub']).stem}.yaml")
        if how == "filled":
            text = fill_exercises(text, (ROOT / spec["reference"]).read_text(encoding="utf-8"))
        return nbformat.reads(text, as_version=4)
    if kind == "student":
        return test_notebooks.student_notebook()
    return test_notebook_differential.student_notebook(next(c for c in test_notebook_differential.CASES if c.id == rest))


def code_cells(nb: nbformat.NotebookNode) -> list[str]:
    return [str(c.source) for c in nb.cells if c.cell_type == "code"]


def cleaned_lines(source: str) -> list[str]:
    """The cell's lines after IPython's own clean-up (a common indent removed, prompts stripped), with the
    leading blank lines it drops kept as blank: line i here is line i of the cell."""
    lines = (source if source.endswith("\n") else source + "\n").splitlines(keepends=True)  # as transform_cell
    top = len(lines) - len(TransformerManager().cleanup_transforms[0](lines))
    for transform in TransformerManager().cleanup_transforms:
        lines = transform(lines)
    return [""] * top + [line.rstrip("\n") for line in lines]


def parsed(text: str) -> str:
    """The program ``text`` stands for (its AST, positions left out), or the error Python reports."""
    try:
        return ast.dump(ast.parse(text))
    except SyntaxError as exc:
        return "SyntaxError: " + re.sub(r" (\(detected at line \d+\)|on line \d+)", "", str(exc.msg))  # lines differ: not a program


def cell_magic_of(transformed: str) -> str | None:
    """The cell magic's name when IPython transformed the cell into one ``run_cell_magic`` call."""
    try:
        [node] = ast.parse(transformed).body
    except (SyntaxError, ValueError):
        return None
    call = node.value if isinstance(node, ast.Expr) else None
    if isinstance(call, ast.Call) and ast.unparse(call.func) == "get_ipython().run_cell_magic":
        return str(ast.literal_eval(call.args[0]))
    return None


def assert_read_as_ipython(source: str) -> None:
    """The grader's reading of one cell agrees with IPython's: the same program (same AST) for what runs,
    every rewritten line located, every other line at its own number. A ``%%time``/``%%capture`` cell is
    its body (IPython transforms the body as a cell), one line lower."""
    cell = ipython_cell(source)
    try:
        expected = TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - whatever IPython raises, Jupyter runs none of the cell
        assert cell.refused.startswith("IPython cannot read this cell"), (source, cell)
        return
    magic = cell_magic_of(expected)
    if magic is not None and magic not in ("time", "capture"):
        assert cell.refused.startswith(f"cell magic %%{magic}"), (source, cell)
        return
    if magic is not None:  # the body IPython hands to the magic, which transforms it as a cell
        body = str(ast.literal_eval(ast.parse(expected).body[0].value.args[2]))
        offset = next(i for i, line in enumerate(source.splitlines()) if line.strip()) + 1
        inner = ipython_cell(body)
        assert cell.python == "\n" * offset + inner.python and cell.refused == inner.refused, source
        assert [(a, b) for a, b, _ in cell.magics] == [(a + offset, b + offset) for a, b, _ in inner.magics]
        assert [w for _, _, w in cell.magics] == [source.splitlines()[a - 1].strip()[:120] for a, _, _ in cell.magics]
        assert_read_as_ipython(body)
        return
    assert not cell.refused, (source, cell)
    assert parsed(cell.python) == parsed(expected), source
    assert len(cell.python.splitlines()) == len(source.splitlines()), (source, cell.python)
    rewritten = {line for first, last, _ in cell.magics for line in range(first, last + 1)}
    mine, cleaned = cell.python.splitlines(), cleaned_lines(source)
    for number, line in enumerate(mine, start=1):
        if number in rewritten:
            assert "get_ipython()" in line or not line.strip() or line != cleaned[number - 1]
        else:
            assert line == cleaned[number - 1], (source, number)
    for number, line in enumerate(mine, start=1):
        if "get_ipython()" in line:
            assert number in rewritten, (source, number)
    for first, _, written in cell.magics:
        assert written == source.splitlines()[first - 1].strip()[:120]


def run_in_ipython(cells: list[str]) -> dict[str, object]:
    """The namespace a fresh IPython is left with after running ``cells`` in order (as Jupyter's Run All)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"  # no history database shared between the suite's workers
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance(config=config)
    try:
        for cell in cells:
            shell.run_cell(cell, store_history=False, silent=True)
        return dict(shell.user_ns)
    finally:
        InteractiveShell.clear_instance()


def run_graded(nb: nbformat.NotebookNode) -> tuple[dict[str, object], notebook.Extracted]:
    """What the grader keeps of ``nb``, run as the sandbox child runs it (unit by unit), here: the code is
    this test's own."""
    extracted = notebook.extract_notebook(nb)
    namespace: dict[str, object] = {"__name__": "submission"}
    for code in _units(extracted.source, "notebook.ipynb", extracted.units):
        exec(code, namespace)  # noqa: S102 - generated test code, not a student's
    return namespace, extracted


def instructions(code: types.CodeType) -> list[tuple[str, object]]:
    """What a function's code does, instruction by instruction (nested code too). ``LOAD_METHOD`` counts as
    ``LOAD_ATTR``: CPython picks the latter for a module imported in the same compilation unit, and IPython
    compiles each statement alone, so ``math.sqrt(x)`` differs only in that choice."""
    return [("LOAD_ATTR" if i.opname == "LOAD_METHOD" else i.opname,
             instructions(i.argval) if isinstance(i.argval, types.CodeType) else i.argval)
            for i in dis.get_instructions(code)]


def assert_runs_as_in_jupyter(nb: nbformat.NotebookNode, *, call: bool = True) -> None:
    """Every function the grader keeps is, in the graded program, what it is in IPython: the same bytecode
    and annotations (and with ``call``, the same result); every kept value is equal; every kept line is its
    cell's line at the place the report gives."""
    graded, extracted = run_graded(nb)
    jupyter = run_in_ipython(code_cells(nb))
    kept = {name: value for name, value in graded.items() if not name.startswith("__")}
    for name, value in kept.items():
        assert name in jupyter, name
        if isinstance(value, types.FunctionType):
            assert instructions(value.__code__) == instructions(jupyter[name].__code__), name
            assert value.__annotations__ == jupyter[name].__annotations__, name
            if call:
                args = [3] * value.__code__.co_argcount
                assert value(*args) == jupyter[name](*args), name
        elif isinstance(value, type):
            assert sorted(vars(value)) == sorted(vars(jupyter[name])), name
        elif not isinstance(value, types.ModuleType):
            assert value == jupyter[name] or value is jupyter[name], name
    cells = {n: c for n, c in enumerate(nb.cells, start=1)}
    for line, place in zip(extracted.source.split("\n"), extracted.places):
        if place is not None:
            assert line == cleaned_lines(str(cells[place[0]].source))[place[1] - 1], (line, place)


@pytest.mark.parametrize("name", PROJECT_NOTEBOOKS)
def test_every_project_notebook_is_read_as_ipython_reads_it(name: str) -> None:
    nb = project_notebook(name)
    for source in code_cells(nb):
        assert_read_as_ipython(source)
    extracted = notebook.extract_notebook(nb)
    assert "get_ipython" not in extracted.source


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(form=st.sampled_from(FORMS), k=st.integers(0, 99), tail=st.sampled_from(["", "\n", "\n\n"]),
       lead=st.sampled_from(["", "\n", "\n \n"]))
def test_each_habit_cell_is_read_as_ipython_reads_it(form: str, k: int, tail: str, lead: str) -> None:
    for cell in form_cells(form, k):
        assert_read_as_ipython(lead + cell.rstrip("\n") + tail)


# Pieces of cells, Python and IPython syntax mixed, so that drawn cells hit the transformer's corners (a magic
# in a string, a ? after a bracket, nested cell magics, prompts and indents that do not line up...).
PIECES = st.sampled_from(list("ab =()[]'\"#?!%,;/\\\n \t:.1") + ['"""', "%%time\n", "%%capture\n", "%%bash\n",
                                                                   "def f():\n", "    ", "x = !", "y = %", ">>> ", "... "])


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")  # drawn '\;' escapes, `1 is 1`
@settings(max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(source=st.lists(PIECES, max_size=40).map("".join))
def test_any_cell_is_read_as_ipython_reads_it(source: str) -> None:
    assert_read_as_ipython(source)


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(forms=st.lists(st.sampled_from(FORMS), min_size=1, max_size=8))
def test_a_notebook_of_habits_runs_as_in_jupyter(forms: list[str]) -> None:
    cells = [cell for k, form in enumerate(forms) for cell in form_cells(form, k)]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    assert_runs_as_in_jupyter(nb, call=False)
    graded, extracted = run_graded(nb)
    assert "get_ipython" not in extracted.source
    notes = {n.code: n.reason for n in extracted.report.dropped}
    assert not extracted.report.failed
    for k, form in enumerate(forms):
        assert (f"{form}_{k}" in graded) == (form not in ("comment_only", "def_magic")), (form, notes)
        for written, reason in ipython_syntax(form, k).items():
            assert notes.get(written, "").startswith(reason), (written, notes)
    noted = {n.code for n in extracted.report.dropped if n.reason.startswith(IPYTHON)}
    assert noted == {w for k, form in enumerate(forms) for w, r in ipython_syntax(form, k).items() if r == IPYTHON}


@pytest.mark.parametrize("line", ["from __future__ import braces", "from __future__ import no_such_feature",
                                  "try:\n    from __future__ import annotations\nexcept ImportError:\n    pass"])
def test_a_future_import_python_refuses_fails_its_cell_only(line: str) -> None:
    """Jupyter's compiler refuses these as it would in a file; the cell is reported, the others count."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def f():\n    return 1"),
                                         nbformat.v4.new_code_cell(line + "\ndef g():\n    return 2")])
    graded, extracted = run_graded(nb)
    assert "f" in graded and "g" not in graded
    [failed] = extracted.report.failed
    assert (failed.cell, failed.line) == (2, 1) and failed.reason.startswith("syntax error: ")
    assert failed.reason.endswith("this cell was not run, the others were")


@pytest.mark.parametrize("later", range(1, 5))
def test_a_future_import_applies_from_its_cell_on_and_lines_keep_their_numbers(later: int) -> None:
    """As in Jupyter: the cells before the import evaluate their annotations (an undefined name there fails the
    load, at its own line), the cells from it on keep them as strings."""
    cells = [f"def f{i}(x: 'int') -> int:\n    return {i}" for i in range(5)]
    cells[later] = "from __future__ import annotations\n" + cells[later].replace("'int'", "Undefined")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    graded, extracted = run_graded(nb)
    assert graded[f"f{later}"].__annotations__ == {"x": "Undefined", "return": "int"}
    assert graded["f0"].__annotations__ == {"x": "int", "return": int}
    assert len(extracted.units) == 1 and extracted.places[extracted.units[0] - 1] == (later + 1, 1)
    cells[0] = cells[0].replace("'int'", "Undefined")
    broken = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    with pytest.raises(NameError) as raised:
        run_graded(broken)
    tb = raised.value.__traceback__
    while tb.tb_next:
        tb = tb.tb_next
    extracted = notebook.extract_notebook(broken)
    assert extracted.places[tb.tb_lineno - 1] == (1, 1)


def reference_in_every_form(assignment: str) -> nbformat.NotebookNode:
    """The reference of ``assignment`` handed in as a notebook that uses every habit at once: the issue's
    cases (a comment and a docstring ending in ``?``, ``from __future__`` at the top of a later cell) with
    help lines, magics, shell escapes, ``%%time``/``%%capture`` cells, continuations, a comment-only cell
    and an indented cell."""
    source = (ROOT / CONFIG[assignment]["reference"]).read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.split("\n")
    pieces = ["\n".join(lines[min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1:
                              n.end_lineno]) for n in tree.body]
    imports = [p for p in pieces if p.startswith(("import ", "from "))]
    others = [p for p in pieces if not p.startswith(("import ", "from ")) and not p.startswith('"""')]
    others = [re.sub(r"^(\s+return .*)$", r"\1  # is this right?", p, count=1, flags=re.MULTILINE) for p in others]
    others = [re.sub(r'^(\s+)"""', r'\1"""Why this way?\n\1', p, count=1, flags=re.MULTILINE) for p in others]
    habits = ["%%time\n", "%%capture out\nprint('hidden')\n", "", "  ", "%time x = 1\n!echo hi\n"]
    cells = ["%matplotlib inline", "!pip --version\n" + "\n".join(p for p in imports if "__future__" not in p),
             "# what goes here?", "files = !ls\nLIMIT = 1 + \\\n    2"]
    for i, piece in enumerate(others):
        habit = habits[i % len(habits)]
        body = "\n".join("  " + line if line else line for line in piece.split("\n")) if habit == "  " else piece
        cells.append(("from __future__ import annotations\n" if i == 2 else "") + (habit if habit != "  " else "") + body)
        name = getattr(next(n for n in ast.parse(piece).body), "name", "")
        cells.append(f"{name}?\n?{name}\n{name}??")
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


@pytest.mark.parametrize("assignment", sorted(CONFIG))
def test_the_reference_in_every_form_scores_what_its_python_file_scores(grade, tmp_path, assignment: str) -> None:
    nb = reference_in_every_form(assignment)
    path = tmp_path / ("attention.ipynb" if assignment == "attention" else "attention_modules.ipynb")
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    as_notebook = grade(path, assignment)
    as_file = grade((ROOT / CONFIG[assignment]["reference"]).read_text(encoding="utf-8"), assignment)
    assert as_notebook.notebook is not None and not as_notebook.notebook.failed, as_notebook.notebook
    assert as_notebook.score == as_file.score == as_file.max_score > 0
    assert [(c.id, c.status, c.score) for c in as_notebook.checks] == [(c.id, c.status, c.score) for c in as_file.checks]
    assert_runs_as_in_jupyter(nb, call=False)


@pytest.mark.parametrize("readings, refused", [(10_000, 0), (700, 1), (400, 2), (60, 3)])
def test_reading_ipython_syntax_has_a_cost_bound_and_says_so(readings: int, refused: int) -> None:
    """IPython rereads a whole cell after each rewrite: a notebook may spend so many line readings and no more
    (the grader's bound is LINE_READINGS), so a notebook built to make reading quadratic cannot stall grading.
    Cell 1 reads 2 lines once; each other cell is 55 lines with 5 rewrites, read 6 times: 330 readings."""
    cell = "\n".join(["x = 1"] * 50 + ["!echo hi"] * 5)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def f():\n    return 1")]
                                  + [nbformat.v4.new_code_cell(cell) for _ in range(3)])
    extracted = notebook.extract_notebook(nb, readings)
    assert [n.cell for n in extracted.report.failed] == [2, 3, 4][3 - refused:]
    assert all(n.reason.startswith("the notebook's cells are too large to read") for n in extracted.report.failed)
    assert "def f():" in extracted.source


@pytest.mark.parametrize("magic", ["%%timeit -n1 -r1", "%%bash", "%%html"])
def test_a_cell_magic_that_keeps_no_definition_drops_its_cell_as_jupyter_does(magic: str) -> None:
    """In Jupyter nothing a ``%%timeit`` body defines outlives the cell (it runs in a timing function), and
    ``%%bash`` and ``%%html`` run no Python: the cell is set aside, the others count."""
    body = "def f():\n    return 1" if magic.startswith("%%timeit") else "echo hi"
    cells = ["def g():\n    return 2", f"{magic}\n{body}"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    graded, extracted = run_graded(nb)
    assert "g" in graded and "f" not in graded and "f" not in run_in_ipython(cells)
    [failed] = extracted.report.failed
    assert (failed.cell, failed.line, failed.code) == (2, 1, magic)
    assert failed.reason.startswith(f"cell magic {magic.split()[0]}")


def test_a_name_only_a_shell_capture_sets_is_not_defined_and_the_notes_say_why() -> None:
    """``files = !ls`` runs a shell command, which grading does not: ``files`` is not defined, a function that
    reads it fails when called, and the notes say so at the line the student wrote."""
    cells = ["import os", "files = !ls\nCOUNT = len(files)", "def count():\n    return len(files)"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    graded, extracted = run_graded(nb)
    notes = {(n.cell, n.line, n.code): n.reason for n in extracted.report.dropped}
    assert notes[(2, 1, "files = !ls")] == (f"{IPYTHON}; your function `count` uses `files`, so it fails when called")
    assert notes[(2, 2, "COUNT = len(files)")].startswith("uses `files`, which only a dropped statement defines")
    assert "count" in graded and "COUNT" not in graded and "files" not in graded
    assert notebook.matters(next(n for n in extracted.report.dropped if n.code == "files = !ls"))
