"""Differential: every correct alternative of the corpus, handed in as a notebook with students' habits,
scores exactly what its .py scores.

One notebook per alternative combines every habit: pyplot at the top with ``%matplotlib inline``, a
heatmap cell, ``input()`` and a missing data file with later cells building on them, constants used
inside the functions and finished in a later cell (``KEY_AXES.append(-1)``, ``CFG.update(...)``,
``CFG["k"] = v``, ``MASK_SIGN *= -1``; one more change asks for input), a seed and a device, a tqdm
loop, MBs of saved plots, and an nbgrader-style test cell after each definition (top-level tensors,
asserts, the result recomputed by hand, shapes that only agree when the cells run in order). The .py scores come from the session's
``corpus_cards``; the notebooks are graded through one warm grader per assignment.
"""

from __future__ import annotations

import ast
import base64
import random

import nbformat
import pytest

from tests.corpus_cases import FILENAME, CorpusCase, corpus

CASES = [c for c in corpus("alternatives") if c.assignment in ("attention", "attention-modules")]
PLOT_BYTES = 2 * 1024 * 1024  # per saved plot; three of them: over the 5 MiB code limit, as outputs only


def split_cells(source: str) -> tuple[list[str], list[str]]:
    """``source`` as cells: (the imports, each other top-level statement alone)."""
    lines = source.splitlines()
    imports, others = [], []
    for node in ast.parse(source).body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "\n".join(lines[start - 1: node.end_lineno])
        (imports if isinstance(node, (ast.Import, ast.ImportFrom)) else others).append(text)
    return imports, others


def with_constants(cell: str) -> str:
    """The habit of naming constants once: ``float("-inf")`` -> ``CFG["mask_value"]``, ``transpose(-2, -1)``
    -> ``transpose(*last_two)`` (a lowercase alias of KEY_AXES, kept only because a function uses it, and
    set before KEY_AXES is finished)."""
    return (cell.replace('float("-inf")', 'CFG["mask_value"]').replace("float('-inf')", 'CFG["mask_value"]')
            .replace("transpose(-2, -1)", "transpose(*last_two)"))


# The constants as a student builds them up over two cells: each change is needed for the right value
# (without the append, transpose(-2) raises; without the update, the *= or the item assignment the fill
# value is 0.0, -0.0 or +inf). The last change asks for input: dropped, it costs no points.
CONSTANTS = "CFG = {'mask_value': 0.0}\nMASK_SIGN = 1.0\nKEY_AXES = []\nKEY_AXES.append(-2)\nlast_two = KEY_AXES"
FINISHED = ("KEY_AXES.append(-1)\nCFG.update(mask_value=float('inf'))\nMASK_SIGN *= -1\n"
            "CFG['mask_value'] = MASK_SIGN * CFG['mask_value']\nCFG.update(prompt=input('mask? '))")


def plot_output(rng: random.Random) -> nbformat.NotebookNode:
    png = base64.b64encode(rng.randbytes(PLOT_BYTES)).decode("ascii")
    return nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure size 640x480>"})


def nbgrader_cell(index: int) -> str:
    """nbgrader's habit: tensors at the top level, asserts, the answer recomputed by hand. ``k`` comes from
    the previous test cell and has one channel fewer than ``q``: run out of order, the shapes disagree."""
    d = 4 + index
    return (f"q = torch.randn(2, 3, 5, {d})\n"
            f"expected = torch.matmul(q, torch.transpose(k, -2, -1)) / math.sqrt({d})\n"
            f"k = torch.randn(2, 3, 5, {d})\n"
            "assert expected.shape == (2, 3, 5, 5)\n"
            "assert torch.allclose(torch.softmax(expected, -1).sum(-1), torch.ones(2, 3, 5))")


def heatmap_cell(assignment: str) -> str:
    if assignment == "attention":
        return "out, w = attention(x, x, x)\nplt.imshow(w[0].detach())\nplt.colorbar()\nplt.show()"
    return ("head = SelfAttentionHead(8, 4, 16)\nout = head(x)\nw = torch.softmax(torch.randn(5, 5), dim=-1)\n"
            "plt.imshow(w.detach())\nplt.show()")


def student_notebook(case: CorpusCase) -> nbformat.NotebookNode:
    """The case's full source as a notebook with every habit."""
    rng = random.Random(case.id)
    imports, others = split_cells(case.source())
    cells = [nbformat.v4.new_markdown_cell(f"# {case.assignment}\nMy solution.")]
    code = nbformat.v4.new_code_cell
    cells.append(code("%matplotlib inline\nimport matplotlib.pyplot as plt\nimport numpy as np\nimport math\n"
                      "from tqdm import tqdm\n" + "\n".join(imports)))
    cells.append(code("torch.manual_seed(0)\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                      "plt.rcParams['figure.figsize'] = (6, 4)"))
    cells.append(code(CONSTANTS))
    cells.append(code("T = int(input('sequence length? '))"))
    cells.append(code("data = np.load('tokens.npy')\nvocab = int(data.max()) + 1"))
    cells.append(code(FINISHED))
    cells.append(code("x = torch.randn(1, T, 8)\ntokens = torch.tensor(data)[:T]\nk = torch.randn(2, 3, 5, 3)\n"
                      "shapes = []\nshapes.append(k.shape)"))
    for index, cell in enumerate(others):
        cells.append(code(with_constants(cell)))
        cells.append(code(nbgrader_cell(index)))
    cells.append(code("def on_device(t):\n    return t.to(device) if CFG['mask_value'] < 0 else t"))
    cells.append(code("for step in tqdm(range(3)):\n    x = on_device(torch.randn(1, T, 8))"))
    for _ in range(3):
        cells.append(code(heatmap_cell(case.assignment), outputs=[plot_output(rng)], execution_count=7))
    return nbformat.v4.new_notebook(cells=cells)


@pytest.fixture(scope="module")
def notebook_cards(server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    from grader import api

    folder = tmp_path_factory.mktemp("notebooks")
    cards = {}
    for assignment in sorted({c.assignment for c in CASES}):
        with api.Grader(assignment, server=server) as grader:
            for case in (c for c in CASES if c.assignment == assignment):
                path = folder / case.path.stem / FILENAME[assignment].replace(".py", ".ipynb")
                path.parent.mkdir()
                path.write_text(nbformat.writes(student_notebook(case)), encoding="utf-8")
                assert path.stat().st_size > 5 * 1024 * 1024  # the saved plots alone are over the code limit
                cards[case.id] = grader.grade(path)
    return cards


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_notebook_scores_what_the_python_file_scores(case: CorpusCase, corpus_cards, notebook_cards) -> None:
    as_file, as_notebook = corpus_cards[case.id], notebook_cards[case.id]
    assert as_notebook.notebook is not None and not as_notebook.grader_error
    lost = [(c.id, c.message[:160]) for c in as_notebook.checks if c.status not in ("passed", "skipped")]
    assert as_notebook.score == as_file.score, lost[:3]
    assert [(c.id, c.status, c.score) for c in as_notebook.checks] == [(c.id, c.status, c.score) for c in as_file.checks]
    assert not as_notebook.notebook.failed
    reasons = {n.code: n.reason for n in as_notebook.notebook.dropped}
    assert reasons["x = torch.randn(1, T, 8)"] == "uses `T`, which only a dropped statement defines (cell 5, line 1)"
    assert reasons["data = np.load('tokens.npy')"].startswith("reads or writes a file (`np.load`)")
    assert reasons["CFG.update(prompt=input('mask? '))"].startswith("asks for input (`input()`)")
    assert reasons["shapes.append(k.shape)"] == "demo code: `shapes` is used by none of your functions"
    assert not any(code.startswith(("KEY_AXES", "CFG = ", "CFG[", "MASK_SIGN")) for code in reasons), reasons
