"""The notebook a student receives for one assignment: lesson text around the stub's exercises.

The words, demos and "break it" experiments are data, in ``lesson/<stub stem>.yaml``;
this module only assembles them around the stub, so course staff edit prose without
touching code. Three properties matter more than looks:

* The exercise cells hold the stub's definitions byte for byte (cut out by AST
  position), so a notebook and the ``.py`` stub can never disagree on a signature
  or a docstring.
* The output is deterministic (fixed cell ids and metadata, no timestamps), so a
  release built twice is byte-identical and diffs show only real changes.
* Grading ignores everything but the definitions: the grader's notebook reader
  (``grader.notebook.extract``) keeps imports, definitions and library-made
  constants. The lesson files therefore import matplotlib only inside plotting
  functions and call student code only in statements the reader drops;
  ``tests/test_release_notebooks.py`` holds them to it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from grader.files import read_yaml

LESSON_DIR = Path(__file__).with_name("lesson")

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}
EXERCISE_TAG = "exercise"
DEMO_TAG = "demo"
BREAK_IT_TAG = "break-it"

_LESSON_KEYS = {"assignment", "title", "intro", "before_steps", "steps", "after_steps"}
_CELL_KEYS = {"markdown", "code", "tags"}
_STEP_KEYS = {"explain", "cells"}
_CELL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # nbformat 4.5's rule for cell ids


class LessonError(ValueError):
    """The lesson file or the stub cannot make a notebook (one line, naming the file and the fault)."""


@dataclass(frozen=True)
class Stub:
    """What the notebook takes from a stub file: its imports and its exercises, in file order."""

    imports: str
    exercises: tuple[tuple[str, str], ...]  # (name, exact source of the def/class)


def build_notebook(stub_path: Path, lesson_path: Path) -> str:
    """The notebook a student receives for one assignment, as nbformat v4 JSON text (deterministic).

    Order: title and introduction, the stub's imports, the lesson's opening cells
    (the worked example), then per exercise an explanation, the stub's code and
    its demos, and last the lesson's closing cells (break it, questions).
    """
    stub = read_stub(Path(stub_path))
    lesson = load_lesson(Path(lesson_path))
    _check_steps_match(stub, lesson, Path(lesson_path))
    cells = [_markdown("intro", f"# {lesson['title']}\n\n{_text(lesson['intro'])}", [])]
    if stub.imports:
        cells.append(_code("imports", stub.imports, ["imports"]))
    cells += _spec_cells("before", lesson["before_steps"])
    for name, source in stub.exercises:
        step = lesson["steps"][name]
        cells.append(_markdown(f"{name}-explain", _text(step["explain"]), []))
        cells.append(_code(f"{name}-exercise", source, [EXERCISE_TAG], exercise=name))
        cells += _spec_cells(name, step["cells"])
    cells += _spec_cells("after", lesson["after_steps"])
    _check_ids(cells, Path(lesson_path))
    nb = nbformat.v4.new_notebook(cells=cells, metadata=_notebook_metadata(lesson["assignment"]))
    nbformat.validate(nb)
    return nbformat.writes(nb)


def read_stub(stub_path: Path) -> Stub:
    """The stub's imports (one cell) and each top-level function or class with its exact source.

    Anything else at the top level (a constant, a call) has no place in the
    notebook's layout, so it is refused rather than silently left out.
    """
    source = stub_path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(stub_path))
    imports: list[str] = []
    exercises: list[tuple[str, str]] = []
    for index, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(_segment(source, node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            exercises.append((node.name, _segment(source, node)))
        elif not (index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            raise LessonError(f"{stub_path}: line {node.lineno}: top-level code other than imports, "
                              "functions and classes has no place in the notebook")
    return Stub("\n".join(imports), tuple(exercises))


def definition_sources(source: str) -> dict[str, str]:
    """Each top-level function or class of ``source`` by name, with its exact text (decorators included)."""
    tree = ast.parse(source)
    return {node.name: _segment(source, node) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def fill_exercises(notebook_text: str, solution_source: str) -> str:
    """The notebook with every exercise cell replaced by the solution's definition of the same name.

    For staff previews and tests: the notebook as a student who finished would have it.
    """
    nb = nbformat.reads(notebook_text, as_version=4)
    solutions = definition_sources(solution_source)
    for cell in nb.cells:
        name = cell.get("metadata", {}).get("exercise")
        if name is None:
            continue
        if name not in solutions:
            raise LessonError(f"the solution does not define {name!r}")
        cell.source = solutions[name]
    nbformat.validate(nb)
    return nbformat.writes(nb)


def load_lesson(lesson_path: Path) -> dict[str, Any]:
    """The lesson file, checked for shape so that a typo fails the release, not a student's notebook."""
    lesson = read_yaml(lesson_path)
    if not isinstance(lesson, dict):
        raise LessonError(f"{lesson_path}: expected a mapping at the top")
    _require_keys(lesson, _LESSON_KEYS, {"assignment", "title", "intro", "steps"}, str(lesson_path))
    for key in ("assignment", "title", "intro"):
        _require_str(lesson[key], f"{lesson_path}: {key}")
    lesson.setdefault("before_steps", [])
    lesson.setdefault("after_steps", [])
    for key in ("before_steps", "after_steps"):
        _check_cell_specs(lesson[key], f"{lesson_path}: {key}")
    if not isinstance(lesson["steps"], dict):
        raise LessonError(f"{lesson_path}: steps must map exercise names to their text")
    for name, step in lesson["steps"].items():
        where = f"{lesson_path}: steps.{name}"
        if not isinstance(step, dict):
            raise LessonError(f"{where}: expected a mapping with explain and cells")
        _require_keys(step, _STEP_KEYS, {"explain"}, where)
        _require_str(step["explain"], f"{where}.explain")
        step.setdefault("cells", [])
        _check_cell_specs(step["cells"], f"{where}.cells")
    return lesson


def _check_steps_match(stub: Stub, lesson: dict[str, Any], lesson_path: Path) -> None:
    """Every exercise has its explanation and every explanation its exercise: no silent gaps."""
    names = [name for name, _ in stub.exercises]
    missing = [n for n in names if n not in lesson["steps"]]
    unknown = [n for n in lesson["steps"] if n not in names]
    if missing or unknown:
        raise LessonError(f"{lesson_path}: steps do not match the stub's exercises "
                          f"(missing: {', '.join(missing) or 'none'}; not in the stub: {', '.join(unknown) or 'none'})")


def _check_cell_specs(specs: Any, where: str) -> None:
    if not isinstance(specs, list):
        raise LessonError(f"{where}: expected a list of cells")
    for i, spec in enumerate(specs, start=1):
        if not isinstance(spec, dict):
            raise LessonError(f"{where}[{i}]: expected a mapping with markdown or code")
        _require_keys(spec, _CELL_KEYS, set(), f"{where}[{i}]")
        kinds = [k for k in ("markdown", "code") if k in spec]
        if len(kinds) != 1:
            raise LessonError(f"{where}[{i}]: give exactly one of markdown or code")
        _require_str(spec[kinds[0]], f"{where}[{i}].{kinds[0]}")
        tags = spec.get("tags", [])
        if not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
            raise LessonError(f"{where}[{i}].tags: expected a list of strings")


def _require_keys(mapping: dict[str, Any], allowed: set[str], required: set[str], where: str) -> None:
    unknown = sorted(set(mapping) - allowed)
    missing = sorted(required - set(mapping))
    if unknown or missing:
        raise LessonError(f"{where}: unknown keys {unknown}, missing keys {missing}")


def _require_str(value: Any, where: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise LessonError(f"{where}: expected non-empty text")


def _spec_cells(prefix: str, specs: list[dict[str, Any]]) -> list[nbformat.NotebookNode]:
    """Cells from the lesson's specs; code cells default to the demo tag, ids count from 1 per section."""
    cells = []
    for i, spec in enumerate(specs, start=1):
        cell_id = f"{prefix}-{i}"
        if "markdown" in spec:
            cells.append(_markdown(cell_id, _text(spec["markdown"]), spec.get("tags", [])))
        else:
            cells.append(_code(cell_id, _text(spec["code"]), spec.get("tags", [DEMO_TAG])))
    return cells


def _markdown(cell_id: str, text: str, tags: list[str]) -> nbformat.NotebookNode:
    metadata = {"tags": list(tags)} if tags else {}
    return nbformat.v4.new_markdown_cell(text, id=cell_id, metadata=nbformat.from_dict(metadata))


def _code(cell_id: str, source: str, tags: list[str], exercise: str | None = None) -> nbformat.NotebookNode:
    metadata: dict[str, Any] = {"exercise": exercise} if exercise else {}
    if tags:
        metadata["tags"] = list(tags)
    return nbformat.v4.new_code_cell(source, id=cell_id, metadata=nbformat.from_dict(metadata))


def _check_ids(cells: list[nbformat.NotebookNode], lesson_path: Path) -> None:
    ids = [c.id for c in cells]
    bad = [i for i in ids if not _CELL_ID.match(i)]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if bad or duplicates:
        raise LessonError(f"{lesson_path}: cell ids invalid {bad} or repeated {duplicates}")


def _notebook_metadata(assignment: str) -> nbformat.NotebookNode:
    return nbformat.from_dict({"grader": {"assignment": assignment}, "kernelspec": KERNELSPEC,
                               "language_info": LANGUAGE_INFO})


def _segment(source: str, node: ast.stmt) -> str:
    """The exact text of a top-level statement, decorators included, without its final line break."""
    lines = source.split("\n")  # not splitlines(): ast numbers lines by line feeds only, not form feeds
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(lines[start - 1: node.end_lineno]).rstrip("\r")


def _text(value: str) -> str:
    """A YAML block without the blank lines around it (a block scalar ends with a newline)."""
    return value.strip("\n")
