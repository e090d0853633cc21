"""Notebooks graded the way students write them: definitions count, demo code never blocks grading."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import nbformat
import pytest

from grader import notebook
from grader.export import text
from tests.conftest import ROOT

REFERENCE = (ROOT / "solutions/attention.py").read_text()


def reference_cells() -> list[str]:
    """The reference, one top-level statement per cell (imports together first)."""
    tree = ast.parse(REFERENCE)
    lines = REFERENCE.splitlines()
    cells = []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        cells.append("\n".join(lines[start - 1: node.end_lineno]))
    return cells


def student_notebook(*, broken: str | None = None) -> nbformat.NotebookNode:
    """The reference as a student's notebook: markdown, magics, outputs, widgets and demo cells between."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb.cells.append(nbformat.v4.new_markdown_cell("# Attention from scratch\nMy work."))
    nb.cells.append(nbformat.v4.new_code_cell("%matplotlib inline\n!pip install einops\nimport torch\n?torch.tril"))
    for source in reference_cells():
        if broken and f"def {broken}(" in source:
            source = source.replace(f"def {broken}(", f"def {broken}((", 1)  # a syntax error in this cell only
        cell = nbformat.v4.new_code_cell(source)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ok\n")]
        cell.execution_count = 3
        nb.cells.append(cell)
    nb.cells += [
        nbformat.v4.new_raw_cell("raw text"),
        nbformat.v4.new_code_cell("q = torch.randn(2, 5, 4)\nprint(attention_scores(q, q).shape)"),
        nbformat.v4.new_code_cell("name = input('your name? ')"),
        nbformat.v4.new_code_cell("while True:\n    pass"),
        nbformat.v4.new_code_cell("%%time\nEPS = 1e-9\nweights, _ = attention(q, q, q)"),
        nbformat.v4.new_code_cell("%%bash\necho hello"),
        nbformat.v4.new_code_cell("import sys\nsys.exit(0)"),
        nbformat.v4.new_code_cell("import matplotlib_that_is_not_installed as mpl\nimport math"),
    ]
    return nb


def write(nb: nbformat.NotebookNode, path: Path) -> Path:
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path


def test_a_notebook_with_demos_magics_and_an_endless_loop_gets_full_marks(grade, tmp_path: Path) -> None:
    card = grade(write(student_notebook(), tmp_path / "attention.ipynb"))
    assert card.score == card.max_score > 0, [c for c in card.checks if c.status != "passed" and c.status != "skipped"]
    nb = card.notebook
    assert nb is not None and nb.cells == len(student_notebook().cells)
    dropped = {n.code: n.reason for n in nb.dropped}
    assert dropped["print(attention_scores(q, q).shape)"] == "demo code: a call of `print`, not run when grading"
    assert dropped["name = input('your name? ')"].startswith("asks for input")
    assert dropped["while True:"] == "demo code: a loop, not run when grading"
    assert dropped["weights, _ = attention(q, q, q)"].startswith("computes with your function `attention`")
    assert dropped["sys.exit(0)"] == "demo code: a call of `sys.exit`, not run when grading"
    assert dropped["q = torch.randn(2, 5, 4)"] == "demo code: `q` is used by none of your functions"
    assert "EPS = 1e-9" not in dropped  # an UPPER_CASE constant stays
    assert dropped["!pip install einops"] == "IPython magic or shell command: not Python"
    assert any("matplotlib_that_is_not_installed" in n.reason for n in nb.dropped)
    assert [n.reason.split(":")[0] for n in nb.failed] == ["cell magic %%bash"]


def test_a_notebook_grades_exactly_as_its_python_file(grade, tmp_path: Path) -> None:
    as_notebook = grade(write(student_notebook(), tmp_path / "attention.ipynb"))
    as_file = grade(REFERENCE, name="attention.py")
    assert [(c.id, c.status, c.score, c.max_score) for c in as_notebook.checks] == \
           [(c.id, c.status, c.score, c.max_score) for c in as_file.checks]
    assert as_file.notebook is None and "notebook" not in as_file.to_dict()


def test_a_syntax_error_in_one_cell_costs_only_what_that_cell_defines(grade, tmp_path: Path) -> None:
    nb = student_notebook(broken="bag_of_past")
    card = grade(write(nb, tmp_path / "attention.ipynb"))
    by_exercise: dict[str, list] = {}
    for check in card.checks:
        by_exercise.setdefault(check.exercise, []).append(check)
    assert all(c.score == 0 for c in by_exercise["bag_of_past"] if c.status != "skipped")
    for exercise in ("attention_scores", "softmax", "attention", "multi_head_attention"):
        assert all(c.status in ("passed", "skipped") for c in by_exercise[exercise]), exercise
    [failed] = [n for n in card.notebook.failed if n.reason.startswith("syntax error")]
    cell = next(i for i, c in enumerate(nb.cells, start=1) if "def bag_of_past(" in c.source)
    assert failed.cell == cell and failed.line == 1 and "def bag_of_past" in failed.code
    shown = text.render(card)
    assert f"cell {cell}, line 1: syntax error" in shown and "NOTEBOOK:" in shown


def test_notebooks_of_older_nbformat_versions_are_read(grade, tmp_path: Path) -> None:
    v3 = nbformat.v3.new_notebook(worksheets=[nbformat.v3.new_worksheet(cells=[
        nbformat.v3.new_code_cell(input=source) for source in reference_cells()])])
    path = tmp_path / "attention.ipynb"
    path.write_text(nbformat.v3.writes_json(v3), encoding="utf-8")
    card = grade(path)
    assert card.score == card.max_score > 0


@pytest.mark.parametrize("content, message", [
    ("{not json", "the notebook cannot be read"),
    ('{"cells": "nope"}', "the notebook cannot be read"),
    (json.dumps({"nbformat": 99, "nbformat_minor": 0, "cells": [], "metadata": {}}), "the notebook cannot be read"),
])
def test_an_unreadable_notebook_is_graded_with_one_clear_message(grade, tmp_path: Path, content: str,
                                                                 message: str) -> None:
    path = tmp_path / "attention.ipynb"
    path.write_text(content)
    card = grade(path)
    assert card.score == 0 and not card.grader_error
    assert card.problem and message in card.problem and "\n" not in card.problem  # said once, above the checks
    graded = [c for c in card.checks if c.status != "skipped"]
    assert graded and all(c.status == "failed" and "see the problem above" in c.message for c in graded)


# ------------------------------------------------------------------ the keep rule, statement by statement


@pytest.mark.parametrize("source, kept", [
    ("import torch\nEPS = 1e-9", True),  # an UPPER_CASE constant
    ("import torch\nsm = torch.softmax\ndef f(x):\n    return sm(x, -1)", True),  # used by a function
    ("import torch\nsm = torch.softmax", False),  # used by nothing kept
    ("import torch\nMASK = torch.ones(4, 4).tril()", True),
    ("import torch.nn.functional as F\nACT = F.gelu", True),
    ("import math\nSCALE = math.sqrt(64)", True),
    ("MASK_VALUE = float('-inf')", True),
    ("AXES = tuple([-2, -1])", True),
    ("import torch\ndef make_weights(n):\n    return n\nW = make_weights(4)", False),  # the student's own function
    ("x = input()", False),
    ("for i in range(3):\n    print(i)", False),
    ("if __name__ == '__main__':\n    main()", False),
    ("try:\n    import torch\nexcept ImportError:\n    pass", True),
    ('"""A docstring."""', True),
])
def test_the_keep_rule(source: str, kept: bool) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    graded, report = notebook.extract(nbformat.writes(nb))
    tree = ast.parse(source)
    last = ast.get_source_segment(source, tree.body[-1] if not isinstance(tree.body[-1], ast.FunctionDef)
                                  else tree.body[-2])
    assert (last in graded) is kept, (graded, report)
    assert bool(report.dropped) is not kept


def _with_softmax(body: str) -> nbformat.NotebookNode:
    """The reference in cell 2, a demo cell 3 (left out), and ``softmax`` written in cell 4."""
    rest = "\n\n".join(c for c in reference_cells() if "def softmax(" not in c)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Attention"), nbformat.v4.new_code_cell(rest),
                nbformat.v4.new_code_cell("x = torch.randn(3)\nprint(x)\nx"),
                nbformat.v4.new_code_cell("def softmax(x, dim=-1):\n" + body)]
    return nb


@pytest.mark.parametrize("body, expected", [
    ("    m = x.max(dim, keepdim=True).values\n    raise ValueError('boom')\n",
     "`softmax` raised ValueError (cell 4, line 3): boom"),
    ("    return torch.softmax(x, dim)\n", "it uses `softmax` (cell 4, line 2, in `softmax`)"),
])
def test_a_notebooks_messages_name_the_cell_and_its_line(grade, tmp_path: Path, body: str, expected: str) -> None:
    """An error raised in a notebook, or a forbidden call found in it, is placed where the student finds it:
    its cell and the line in that cell, not a line of the graded source the extraction put together."""
    path = tmp_path / "attention.ipynb"
    path.write_text(nbformat.writes(_with_softmax(body)), encoding="utf-8")
    messages = [c.message for c in grade(path).checks if c.exercise == "softmax"]
    assert any(expected in m for m in messages), messages
    assert not any("(line " in m for m in messages), messages


def test_a_notebooks_places_map_each_graded_line_to_its_cell() -> None:
    graded, _ = notebook.extract(nbformat.writes(_with_softmax("    return x\n")))
    submission_lines = graded.splitlines()
    places = notebook.extract_notebook(nbformat.reads(nbformat.writes(_with_softmax("    return x\n")), 4)).places
    assert len(places) == len(submission_lines)
    cell4 = [i for i, p in enumerate(places) if p and p[0] == 4]
    assert [submission_lines[i] for i in cell4] == ["def softmax(x, dim=-1):", "    return x"]
    assert [places[i] for i in cell4] == [(4, 1), (4, 2)]
    assert all(places[i] is None for i, line in enumerate(submission_lines) if line.startswith("# --- cell"))
