"""The catalogue of known mistakes: data files, one per mistake.

``grader/diagnosis/catalogue/<assignment>/<id>.yaml`` holds the exercise, a
short title in the lesson's words, an explanation with the fix, and the patch
that turns the reference into the mistake (``replace`` one-line edits, or
``define`` code appended that overrides the reference's definitions). Adding
a mistake is adding a file; every file is checked against
``schema/mistake.schema.json`` and every patch must apply, so a change to the
reference breaks a stale entry loudly instead of silently diagnosing nothing.

The variants are trusted code (ours), loaded only in the judge. The
catalogue is left out of student kits: its patches show the reference.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType

import jsonschema
import yaml

from grader.files import read_yaml

CATALOGUE_ROOT = Path(__file__).resolve().parent / "catalogue"


class CatalogueError(Exception):
    """A catalogue file that is not valid, or whose patch no longer applies to the reference."""


@dataclass(frozen=True)
class Mistake:
    id: str  # the file's stem
    assignment: str
    exercise: str
    title: str
    explanation: str
    replace: tuple[tuple[str, str], ...] = ()
    define: str = ""
    effect: str = ""  # what it does, quoting no code: said when the student's code lacks what the title quotes

    def source(self, reference: str) -> str:
        """The reference with this mistake in it.

        A ``replace`` edit applies inside the definition of the entry's exercise only, so a new definition
        elsewhere in the reference (an exercise added, holding the same line) never breaks an old entry."""
        for old, new in self.replace:
            start, end = definition_span(reference, self.exercise)
            own = reference[start:end]
            if own.count(old) != 1:
                raise CatalogueError(f"mistake {self.assignment}/{self.id}: `{old}` must occur exactly once in "
                                     f"the reference's definition of `{self.exercise}`")
            reference = reference[:start] + own.replace(old, new) + reference[end:]
        return reference + (f"\n\n# ---- catalogued mistake {self.id} ----\n{self.define}" if self.define else "")

    def variant(self, reference: Path) -> ModuleType:
        """The patched reference as a module (not left in ``sys.modules``)."""
        name = "_mistake_" + re.sub(r"\W", "_", f"{self.assignment}_{self.id}")
        return module_from_source(self.source(reference.read_text(encoding="utf-8")), name)


def definition_span(source: str, name: str) -> tuple[int, int]:
    """Where the top-level function or class ``name`` of ``source`` is written: its whole lines, decorators and
    a comment on its last line included. Raises CatalogueError when ``source`` defines no such name."""
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            start = sum(len(line) for line in lines[:first - 1])
            return start, start + sum(len(line) for line in lines[first - 1:node.end_lineno])
    raise CatalogueError(f"the reference defines no function or class `{name}` for a catalogued mistake to edit")


def module_from_source(source: str, name: str) -> ModuleType:
    """Execute trusted source (the reference, or a variant of it) as a fresh module, in the judge."""
    code = compile(source, f"<{name}>", "exec")
    module = ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module  # dataclasses and friends look their module up while the code runs
    try:
        exec(code, module.__dict__)  # noqa: S102 - our own reference and catalogue
    finally:
        del sys.modules[name]
    return module


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    """Built once: a grader process checks every catalogued mistake against it."""
    schema = json.loads(resources.files("grader.schema").joinpath("mistake.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def read_mistake(path: Path, assignment: str) -> Mistake:
    try:
        data = read_yaml(path)
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogueError(f"{path}: {exc}") from None
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise CatalogueError(f"{path}: {where}: {error.message}")
    return Mistake(
        id=path.stem,
        assignment=assignment,
        exercise=data["exercise"],
        title=data["title"].strip(),
        explanation=data["explanation"].strip(),
        replace=tuple((r["old"], r["new"]) for r in data.get("replace", ())),
        define=data.get("define", ""),
        effect=data.get("effect", "").strip(),
    )


def load_catalogue(assignment: str, root: Path = CATALOGUE_ROOT) -> tuple[Mistake, ...]:
    """Every catalogued mistake of ``assignment`` (none when the folder is absent, as in a student kit)."""
    folder = root / assignment
    return tuple(read_mistake(p, assignment) for p in sorted(folder.glob("*.yaml"))) if folder.is_dir() else ()
