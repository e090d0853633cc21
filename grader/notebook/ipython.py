"""A code cell as IPython reads it, with its line numbers kept.

Jupyter hands each cell to IPython, which rewrites its own syntax into Python before compiling
(``IPython.core.inputtransformer2.TransformerManager``): ``%time f(x)`` becomes
``get_ipython().run_line_magic('time', 'f(x)')``, ``obj?`` a help call, ``x = !ls`` a call that
captures a shell command's output, a ``%%bash`` cell one ``run_cell_magic`` call; an indented
cell is dedented and pasted ``>>>`` prompts are stripped. Whether a line is IPython syntax is
IPython's decision, made here by its own transformer, never by a pattern of ours: a comment or a
docstring that ends in ``?`` is Python, and IPython runs it as written.

The rewriting is replayed one step at a time (``TransformerManager.do_one_token_transform``, the
loop ``transform_cell`` runs) so that each rewritten line is known: those are the IPython syntax,
which cannot run when grading. A step that joins backslash-continued lines into one is padded
with blank lines, so the Python has as many lines as the cell and each line keeps its number.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.core.inputtransformer2 import TransformerManager

# Cell magics whose body IPython runs as an ordinary cell, in the notebook's namespace, so the
# definitions in it exist afterwards: graded as their body (a grading policy). ``%%timeit`` is not
# one: it runs its body inside a timing function, and nothing the body defines outlives the cell.
BODY_RUNS_CELL_MAGICS = ("time", "capture")
# IPython rereads (tokenizes) the whole cell after each rewrite, so reading a cell costs its lines times its
# rewrites plus one. A notebook may spend this many line readings: far more than any real notebook (a 5 MiB
# notebook of short lines and no IPython syntax reads under a million lines), while a notebook built to make
# the reading quadratic (huge cells, a magic on every line) is stopped in seconds instead of hours.
LINE_READINGS = 2_000_000
TOO_COSTLY = ("the notebook's cells are too large to read with their IPython syntax (IPython rereads a whole "
              "cell for each magic, shell or help line in it): from this cell on, none was run when grading; "
              "put such lines in small cells of their own")


@dataclass
class Allowance:
    """The line readings a notebook has left (``LINE_READINGS``): one per notebook, spent cell by cell."""

    left: int = LINE_READINGS

    def spend(self, lines: int) -> bool:
        """Spend ``lines`` readings; False when there were not enough left."""
        self.left -= lines
        return self.left >= 0


@dataclass(frozen=True)
class IPythonCell:
    """One code cell as IPython would compile it.

    ``python``: the Python IPython runs, padded to the cell's own line numbers (line ``i`` of it is
    line ``i`` of the cell); ``magics``: the cell's lines holding IPython syntax, each as
    (first line, last line, the first line as written); ``refused``: why the cell as a whole does
    not run when grading ('' when it does).
    """

    python: str
    magics: tuple[tuple[int, int, str], ...] = ()
    refused: str = ""


def ipython_cell(source: str, allowance: Allowance | None = None) -> IPythonCell:
    """``source`` (a code cell) as IPython compiles it, with its IPython syntax located; its reading is paid
    from ``allowance`` (the notebook's), or from one of its own."""
    return _transformed(source, 0, allowance or Allowance(), source.splitlines())


def _transformed(source: str, offset: int, allowance: Allowance, written: list[str]) -> IPythonCell:
    """The cell whose first line is line ``offset + 1`` of the notebook cell (a cell magic's body, which
    IPython hands over cleaned up), with the lines the student wrote from there (``written``)."""
    # Imported here: only a notebook needs IPython, and a .py grade (or the worker server the judge
    # forks) does not pay for importing it.
    from IPython.core.inputtransformer2 import TRANSFORM_LOOP_LIMIT, TransformerManager

    if not source.strip():
        return IPythonCell("\n" * len(source.splitlines()))  # nothing to run: an empty cell, a %%time with no body
    manager = TransformerManager()
    lines = (source if source.endswith("\n") else source + "\n").splitlines(keepends=True)  # as transform_cell
    try:
        lines, top = _cleaned(manager, lines)
        magic = _cell_magic(manager, lines)
    except Exception as exc:  # noqa: BLE001 - IPython refuses the cell on any error here (run_cell), so do we
        return IPythonCell("", (), _cannot_read(exc))
    if magic is not None:
        name, body = magic
        if name in BODY_RUNS_CELL_MAGICS:
            inner = _transformed(body, offset + top + 1, allowance, written[top + 1:])
            return IPythonCell("\n" * (top + 1) + inner.python, inner.magics, inner.refused)
        if name == "timeit":
            return IPythonCell("", (), "cell magic %%timeit: it runs the cell's body in a timing loop and keeps "
                                       "nothing the body defines (in Jupyter too), so it is not run when grading")
        return IPythonCell("", (), f"cell magic %%{name}: not Python, not run when grading")
    # origin[i]: the lines of the cleaned cell (first, last) that line i of ``lines`` stands for
    origin = [(i, i) for i in range(len(lines))]
    rewritten: set[int] = set()
    for _ in range(TRANSFORM_LOOP_LIMIT):
        if not allowance.spend(len(lines)):
            return IPythonCell("", (), TOO_COSTLY)
        try:
            changed, after = manager.do_one_token_transform(lines)
        except Exception as exc:  # noqa: BLE001 - as above: IPython's run_cell reports it and runs nothing
            return IPythonCell("", (), _cannot_read(exc))
        if not changed:
            break
        # A step rewrites the line where the syntax starts (always changed) and joins the lines it
        # continues over into it: lines before it and after them are as they were.
        at = next(i for i, (old, new) in enumerate(zip(lines, after)) if old != new)
        joined = len(lines) - len(after)
        origin[at: at + joined + 1] = [(origin[at][0], origin[at + joined][1])]
        rewritten.add(origin[at][0])
        lines = after
    else:
        return IPythonCell("", (), f"IPython gives up on this cell after {TRANSFORM_LOOP_LIMIT} rewrites of its "
                                   "syntax and runs none of it; not run when grading either, the others were")
    python = "\n" * top + "".join(line + "\n" * (last - first) for line, (first, last) in zip(lines, origin))
    magics = tuple((offset + top + first + 1, offset + top + last + 1, _shown(written, top + first))
                   for first, last in origin if first in rewritten)
    return IPythonCell(python, magics)


def _cleaned(manager: TransformerManager, lines: list[str]) -> tuple[list[str], int]:
    """IPython's clean-up of a cell (leading blank lines dropped, a common indent removed, pasted
    prompts stripped), and how many leading blank lines it dropped: the only lines it removes."""
    top = 0
    for transform in manager.cleanup_transforms:
        after = transform(lines)
        top += len(lines) - len(after)
        lines = after
    return lines, top


def _cannot_read(exc: Exception) -> str:
    return (f"IPython cannot read this cell ({type(exc).__name__}), so Jupyter does not run it either; "
            "it was not run, the others were")


def _cell_magic(manager: TransformerManager, lines: list[str]) -> tuple[str, str] | None:
    """(name, body) when IPython reads the cell as one cell magic (``%%bash``...), else None."""
    for transform in manager.line_transforms:
        after = transform(lines)
        if after != lines:
            call = ast.parse("".join(after)).body[0]
            if isinstance(call, ast.Expr) and isinstance(call.value, ast.Call) and len(call.value.args) == 3:
                name, _, body = (ast.literal_eval(a) for a in call.value.args)
                return str(name), str(body)
    return None


def _shown(written: list[str], index: int) -> str:
    return written[index].strip()[:120] if 0 <= index < len(written) else ""
