"""The notebook rule follows names: what the definitions need is kept, demo code is dropped with a reason.

Each problem the old rule had (it kept any assignment that called only torch/math/numpy) is a small
notebook here; ``bullet_notebooks`` builds them whole (the reference plus the habit) so they can also be
graded: ``python -m tests.test_notebook_rule OUT_DIR`` writes them as .ipynb files.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import sys
from pathlib import Path

import nbformat
import pytest

from grader import notebook
from grader.scorecard import CellNote
from tests.conftest import ROOT

REFERENCE = (ROOT / "solutions/attention.py").read_text(encoding="utf-8")


def extract(*cells: str) -> tuple[str, dict[str, CellNote]]:
    """The graded source of a notebook of these code cells, and its dropped statements by their code."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    graded, report = notebook.extract(nbformat.writes(nb))
    assert report.failed == ()
    return graded, {n.code: n for n in report.dropped}


def kept(graded: str) -> list[str]:
    """The graded source's statements, one line each."""
    return [ast.unparse(n).splitlines()[0] for n in ast.parse(graded).body]


# ------------------------------------------------------------------ the problems, one by one


def test_input_and_what_builds_on_it_are_dropped_with_the_name_that_breaks_them() -> None:
    graded, dropped = extract(
        "import torch",
        "def double(x):\n    return 2 * x",
        "T = int(input('sequence length? '))\nx = torch.randn(1, T, 8)\ny = double(x)",
    )
    assert kept(graded) == ["import torch", "def double(x):"]
    assert dropped["T = int(input('sequence length? '))"].reason == \
        "asks for input (`input()`), which nobody types when grading"
    assert dropped["x = torch.randn(1, T, 8)"].reason == \
        "uses `T`, which only a dropped statement defines (cell 3, line 1)"
    assert dropped["y = double(x)"].reason == "uses `x`, which only a dropped statement defines (cell 3, line 2)"
    assert not any(notebook.matters(n) for n in dropped.values())  # nothing the definitions need


def test_a_missing_data_file_and_what_builds_on_it_are_dropped() -> None:
    graded, dropped = extract(
        "import numpy as np\nimport torch",
        "data = np.load('tokens.npy')\nvocab = int(data.max()) + 1\ntokens = torch.tensor(data)",
        "import pandas as pd\ndf = pd.read_csv('scores.csv')\nmean = df.mean()",
        "def f(x):\n    return x",
    )
    assert kept(graded) == ["import numpy as np", "import torch", "def f(x):"]
    assert dropped["data = np.load('tokens.npy')"].reason == \
        "reads or writes a file (`np.load`), which is not there when grading"
    assert dropped["vocab = int(data.max()) + 1"].reason.startswith("uses `data`, which only a dropped statement")
    assert dropped["tokens = torch.tensor(data)"].reason.startswith("uses `data`")
    if importlib.util.find_spec("pandas") is None:
        assert "not installed where grading runs" in dropped["import pandas as pd"].reason
        assert dropped["df = pd.read_csv('scores.csv')"].reason == \
            "uses `pd`, which only a dropped statement defines (cell 3, line 1)"
    else:
        assert dropped["df = pd.read_csv('scores.csv')"].reason == \
            "reads or writes a file (`pd.read_csv`), which is not there when grading"
    assert dropped["mean = df.mean()"].reason.startswith("uses `df`")


def test_constants_made_with_builtins_and_pure_stdlib_functions_are_kept() -> None:
    graded, dropped = extract(
        "import math\nimport torch",
        "MASK_VALUE = float('-inf')\nAXES = tuple([-2, -1])\nSCALE = math.sqrt(64)\nsizes = sorted({3, 1, 2})",
        "def masked(scores, mask):\n    return scores.masked_fill(~mask, MASK_VALUE).transpose(*AXES) / SCALE + len(sizes)",
    )
    assert kept(graded) == ["import math", "import torch", "MASK_VALUE = float('-inf')", "AXES = tuple([-2, -1])",
                            "SCALE = math.sqrt(64)", "sizes = sorted({3, 1, 2})", "def masked(scores, mask):"]
    assert dropped == {}


def test_an_nbgrader_test_cell_after_each_function_is_dropped_whole() -> None:
    graded, dropped = extract(
        "import math\nimport torch",
        "def attention_scores(q, k):\n    return q @ k.transpose(-2, -1)",
        "q = torch.randn(2, 5, 8)\nk = torch.randn(2, 5, 8)\nout = attention_scores(q, k)\n"
        "assert out.shape == (2, 5, 5)\nexpected = torch.matmul(q, torch.transpose(k, -2, -1))\n"
        "assert torch.allclose(out, expected)",
        "def scale_scores(scores, head_size):\n    return scores / math.sqrt(head_size)",
        "q = torch.randn(2, 3, 6, 4)\nexpected = torch.matmul(q, torch.transpose(k, -2, -1)) / math.sqrt(4)\n"
        "assert torch.allclose(scale_scores(q @ q.transpose(-2, -1), 4), expected)",
    )
    assert kept(graded) == ["import math", "import torch", "def attention_scores(q, k):", "def scale_scores(scores, head_size):"]
    assert dropped["q = torch.randn(2, 5, 8)"].reason == "demo code: `q` is used by none of your functions"
    assert dropped["out = attention_scores(q, k)"].reason == \
        "computes with your function `attention_scores`: demo code, not run when grading"
    assert dropped["assert out.shape == (2, 5, 5)"].reason.startswith("a test (`assert`): not run when grading")
    assert dropped["expected = torch.matmul(q, torch.transpose(k, -2, -1))"].reason == \
        "demo code: `expected` is used by none of your functions"
    assert len(dropped) == 9


def test_the_graded_source_of_the_problem_notebooks_loads(tmp_path: Path) -> None:
    """Each problem notebook, the reference with a student's habit: its graded source runs and defines
    every function of the reference (the old rule's sources raised NameError or RuntimeError)."""
    names = {n.name for n in ast.parse(REFERENCE).body if isinstance(n, ast.FunctionDef)}
    for name, nb in bullet_notebooks().items():
        graded, report = notebook.extract(nbformat.writes(nb))
        namespace: dict[str, object] = {"__name__": "graded"}
        exec(compile(graded, name, "exec"), namespace)  # noqa: S102 - our own test notebook
        assert names <= set(namespace), (name, names - set(namespace))
        assert not any(notebook.matters(n) for n in report.dropped), name
        assert bool(report.dropped) is (name != "constants"), name


# ------------------------------------------------------------------ the cases the rule must think about


def test_the_binding_a_function_uses_is_the_last_one() -> None:
    graded, dropped = extract(
        "eps = 1e-3",
        "def f(x):\n    return x + eps",
        "eps = 1e-9",
        "def f(x):\n    return x - eps",
    )
    assert kept(graded) == ["def f(x):", "eps = 1e-09", "def f(x):"]
    assert dropped["eps = 1e-3"].reason == \
        "demo code: `eps` is set again later (cell 3, line 1), and that is the one your functions use"


def test_a_name_a_kept_function_needs_but_only_a_dropped_statement_sets_is_flagged() -> None:
    graded, dropped = extract(
        "import torch",
        "scale = float(input('scale? '))",
        "def f(x):\n    return x * scale",
    )
    note = dropped["scale = float(input('scale? '))"]
    assert note.reason == ("asks for input (`input()`), which nobody types when grading; "
                           "your function `f` uses `scale`, so it fails when called")
    assert notebook.matters(note)
    assert kept(graded) == ["import torch", "def f(x):"]


def test_seeds_devices_settings_and_imports() -> None:
    graded, dropped = extract(
        "import torch\nfrom tqdm import tqdm\nimport matplotlib.pyplot as plt\n"
        "try:\n    import einops\nexcept ImportError:\n    einops = None",
        "torch.manual_seed(0)\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "plt.rcParams['figure.figsize'] = (6, 4)",
        "def to_device(x):\n    return x.to(device)",
        "for step in tqdm(range(3)):\n    pass",
        "if __name__ == '__main__':\n    to_device(torch.ones(1))",
    )
    assert kept(graded) == ["import torch", "from tqdm import tqdm", "import matplotlib.pyplot as plt", "try:",
                            "device = 'cuda' if torch.cuda.is_available() else 'cpu'", "def to_device(x):"]
    assert dropped["torch.manual_seed(0)"].reason == "demo code: a call of `torch.manual_seed`, not run when grading"
    assert dropped["plt.rcParams['figure.figsize'] = (6, 4)"].reason.startswith("changes a setting of `plt`")
    assert dropped["for step in tqdm(range(3)):"].reason == "demo code: a loop, not run when grading"
    assert dropped["if __name__ == '__main__':"].reason.startswith('`if __name__ == "__main__":` runs only')


def test_augmented_tuple_annotated_and_conditional_assignments_follow_their_names() -> None:
    graded, dropped = extract(
        "import torch",
        "n_heads, d_head = 4, 16\nwidth: int = n_heads * d_head\nwidth += 0\nunused_a, unused_b = 1, 2",
        "if torch.cuda.is_available():\n    dtype = torch.float16\nelse:\n    dtype = torch.float32",
        "def f(x):\n    return x.to(dtype).reshape(-1, width)",
    )
    assert kept(graded) == ["import torch", "n_heads, d_head = (4, 16)", "width: int = n_heads * d_head",
                            "width += 0", "if torch.cuda.is_available():", "def f(x):"]
    assert dropped["unused_a, unused_b = 1, 2"].reason == \
        "demo code: `unused_a` and `unused_b` are used by none of your functions"


def test_calls_of_the_students_own_code_at_the_top_level_are_dropped_even_as_constants() -> None:
    graded, dropped = extract(
        "import torch",
        "class Head(torch.nn.Module):\n    def forward(self, x):\n        return x",
        "HEAD = Head()\nout = HEAD(torch.ones(2))",
    )
    assert kept(graded) == ["import torch", "class Head(torch.nn.Module):"]
    assert dropped["HEAD = Head()"].reason == "computes with your class `Head`: demo code, not run when grading"
    assert dropped["out = HEAD(torch.ones(2))"].reason.startswith("uses `HEAD`, which only a dropped statement")


def test_a_definition_whose_default_needs_a_dropped_name_is_dropped_and_flagged() -> None:
    graded, dropped = extract("n = int(input())", "def f(x, k=n):\n    return x * k")
    assert kept(graded) == []
    note = dropped["def f(x, k=n):"]
    assert note.reason == "uses `n`, which only a dropped statement defines (cell 1, line 1), so `f` is not defined when grading"
    assert notebook.matters(note)


# ------------------------------------------------------------------ statements that finish a kept constant


def run(graded: str) -> dict[str, object]:
    """The graded source run as the grader runs it: its module namespace."""
    namespace: dict[str, object] = {"__name__": "graded"}
    exec(compile(graded, "graded", "exec"), namespace)  # noqa: S102 - our own test notebook
    return namespace


@pytest.mark.parametrize(("made", "finished", "value"), [
    ("KEY_AXES = []\nKEY_AXES.append(-2)", "KEY_AXES.append(-1)", [-2, -1]),
    ("KEY_AXES = [-2]", "KEY_AXES.extend([-1])", [-2, -1]),
    ("CFG = {'mask_value': 0.0}", "CFG.update(mask_value=float('-inf'))", {"mask_value": -math.inf}),
    ("KEY_AXES = [-1]", "KEY_AXES.insert(0, -2)", [-2, -1]),
    ("KEY_AXES = [-1, -2]", "KEY_AXES.sort()", [-2, -1]),
    ("CFG = {}", "CFG.setdefault('mask_value', -math.inf)", {"mask_value": -math.inf}),
    ("CFG = {'mask_value': 0.0}", "CFG['mask_value'] = float('-inf')", {"mask_value": -math.inf}),
    ("SCALE = 8.0", "SCALE *= 2", 16.0),
    ("CAUSAL = torch.ones(2, 2)", "CAUSAL.tril_()", [[1.0, 0.0], [1.0, 1.0]]),
], ids=["append", "extend", "update", "insert", "sort", "setdefault", "item", "augmented", "tensor_in_place"])
def test_a_statement_that_finishes_a_kept_constant_runs_where_it_stands(made: str, finished: str, value: object) -> None:
    """The change runs after the definition, in the later cell it stands in; the function sees the finished value."""
    name = made.split()[0]
    graded, dropped = extract("import math\nimport torch", made, f"def f():\n    return {name}", finished)
    assert dropped == {}
    assert kept(graded)[-2:] == ["def f():", ast.unparse(ast.parse(finished))]
    got = run(graded)["f"]()  # type: ignore[operator]
    assert (got.tolist() if hasattr(got, "tolist") else got) == value


def test_a_value_a_function_reads_through_an_alias_is_finished_too() -> None:
    """``last_two = axes`` is set before the second append: following names alone would miss it."""
    graded, dropped = extract(
        "axes = []\naxes.append(-2)\nlast_two = axes",
        "def f():\n    return last_two",
        "axes.append(-1)",
    )
    assert kept(graded) == ["axes = []", "axes.append(-2)", "last_two = axes", "def f():", "axes.append(-1)"]
    assert dropped == {}
    assert run(graded)["f"]() == [-2, -1]  # type: ignore[operator]


def test_a_change_to_a_demo_name_or_a_module_is_still_dropped() -> None:
    graded, dropped = extract(
        "import sys\nimport torch",
        "def f(x):\n    return x",
        "shapes = []\nshapes.append((2, 5))\nresults = {}\nresults.update(out=f(torch.ones(2)))\n"
        "sys.path.append('..')\ntorch.nn.init.zeros_(torch.ones(2))",
    )
    assert kept(graded) == ["import sys", "import torch", "def f(x):"]
    assert dropped["shapes.append((2, 5))"].reason == "demo code: `shapes` is used by none of your functions"
    assert dropped["results.update(out=f(torch.ones(2)))"].reason == \
        "computes with your function `f`: demo code, not run when grading"
    assert dropped["sys.path.append('..')"].reason == "demo code: a call of `sys.path.append`, not run when grading"
    assert dropped["torch.nn.init.zeros_(torch.ones(2))"].reason == \
        "demo code: a call of `torch.nn.init.zeros_`, not run when grading"
    assert not any(notebook.matters(n) for n in dropped.values())


def test_a_change_that_cannot_run_is_dropped_and_the_functions_get_the_value_without_it() -> None:
    graded, dropped = extract(
        "import numpy as np",
        "CFG = {'mask_value': 0.0}\nCFG.update(mask_value=float(input('mask? ')))\nCFG['table'] = np.load('t.npy')",
        "def f():\n    return CFG",
    )
    assert kept(graded) == ["import numpy as np", "CFG = {'mask_value': 0.0}", "def f():"]
    note = dropped["CFG.update(mask_value=float(input('mask? ')))"]
    assert note.reason == ("asks for input (`input()`), which nobody types when grading; "
                           "your function `f` uses `CFG` without this change")
    assert notebook.matters(note)
    assert dropped["CFG['table'] = np.load('t.npy')"].reason == ("reads or writes a file (`np.load`), which is not "
                                                                 "there when grading; your function `f` uses `CFG` without this change")
    assert run(graded)["f"]() == {"mask_value": 0.0}  # type: ignore[operator]


def test_a_change_of_a_name_nothing_before_it_sets_is_dropped_so_the_notebook_still_loads() -> None:
    graded, dropped = extract(
        "import torch\nLOG.append(1)\nTABLE['k'] = 1\nSCALE *= 2\nWIDTHS = [4]\nWIDTHS.extend(q.shape)",
        "q = torch.ones(3)\ndef f():\n    return WIDTHS",
    )
    assert kept(graded) == ["import torch", "WIDTHS = [4]", "def f():"]
    assert dropped["LOG.append(1)"].reason == "changes `LOG`, which no statement before it sets"
    assert dropped["TABLE['k'] = 1"].reason == "changes `TABLE`, which no statement before it sets"
    assert dropped["SCALE *= 2"].reason == "changes `SCALE`, which no statement before it sets"
    assert dropped["WIDTHS.extend(q.shape)"].reason == \
        "uses `q`, which no statement before it sets; your function `f` uses `WIDTHS` without this change"
    assert run(graded)["f"]() == [4]  # type: ignore[operator]


# ------------------------------------------------------------------ whole notebooks with each habit


def reference_cells(source: str = REFERENCE) -> list[str]:
    """``source``, one top-level statement per cell."""
    lines = source.splitlines()
    cells = []
    for node in ast.parse(source).body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        cells.append("\n".join(lines[start - 1: node.end_lineno]))
    return cells


def _notebook(cells: list[str]) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


def bullet_notebooks() -> dict[str, nbformat.NotebookNode]:
    """The reference as a notebook, once per problem of the old rule (big outputs: see test_submission)."""
    cells = reference_cells()
    imports, definitions = cells[:3], cells[3:]  # the docstring, import math, import torch
    demo_input = ["T = int(input('sequence length? '))", "x = torch.randn(1, T, 8)\nout, w = attention(x, x, x)"]
    data_file = ["import numpy as np\ndata = np.load('tokens.npy')",
                 "tokens = torch.tensor(data)\nx = torch.randn(1, tokens.shape[-1], 8)"]
    constants = [c.replace('float("-inf")', "MASK_VALUE").replace("transpose(-2, -1)", "transpose(*AXES)")
                 for c in definitions]
    nbgrader = []
    for i, cell in enumerate(definitions):
        # k is still the previous cell's, one channel short of q: run as it stands, the test fails
        nbgrader += [cell, f"q = torch.randn(2, 3, 5, {4 + i})\n"
                           f"expected = torch.matmul(q, torch.transpose(k, -2, -1)) / math.sqrt({4 + i})\n"
                           f"k = torch.randn(2, 3, 5, {4 + i})\nassert expected.shape == (2, 3, 5, 5)"]
    return {
        "input": _notebook(imports + demo_input + definitions),
        "data_file": _notebook(imports + data_file + definitions),
        "constants": _notebook(imports + ["MASK_VALUE = float('-inf')\nAXES = tuple([-2, -1])"] + constants),
        "nbgrader": _notebook(imports + ["k = torch.randn(2, 3, 5, 3)"] + nbgrader),
    }


if __name__ == "__main__":  # write the problem notebooks, to grade them: python -m tests.test_notebook_rule OUT
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, nb in bullet_notebooks().items():
        (out / name).mkdir(exist_ok=True)
        (out / name / "attention.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
        print(out / name / "attention.ipynb")
