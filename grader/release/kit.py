"""The student kit: the grader package as students install it, without what they must not see.

It is this same package, file for file, except that the check modules keep
only the visible checks (hidden test functions are cut out of the source,
with the imports and private helpers only they used), the reference is
replaced by the values the visible checks expect (``grader.session.tape``), and the
configuration lists only visible checks and how many hidden ones exist.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from grader.config import CHECKS_ROOT, COURSE_ROOT, AssignmentConfig, Config, ExerciseConfig
from grader.files import read_yaml

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
KIT_PACKAGE_DATA = ["schema/*.json", "checks/pytest.ini", "course/*.yaml", "course/expected/*.json",
                    "export/templates/*.j2"]  # the HTML report: `grader ci` writes one for the student
EXTRA_KIT_DEPENDENCIES = ["matplotlib>=3.7"]  # the notebooks' "break it" pictures
INSTRUCTOR_ONLY = ("release", "authoring")  # sub-packages a student kit leaves out
INSTRUCTOR_ONLY_DEPENDENCIES = ("copydetect",)  # grade-all's similarity report: never run from a kit


def visible_test_names(assignment: AssignmentConfig) -> set[str]:
    return {c.name for ex in assignment.exercises for c in ex.checks if c.visibility == "visible"}


def hidden_test_names(assignment: AssignmentConfig) -> set[str]:
    """Checks hidden for every exercise: their very names stay out of the kit."""
    hidden = {c.name for ex in assignment.exercises for c in ex.checks if c.visibility != "visible"}
    return hidden - visible_test_names(assignment)


def visible_source(source: str, keep_tests: set[str], used_elsewhere: frozenset[str] = frozenset()) -> str:
    """``source`` of a check module with every ``test_*`` function not in ``keep_tests`` cut out,
    then the private helpers, constants and imports nothing left uses (repeated until nothing
    changes); ``used_elsewhere``: names the package's other modules may import from this one."""
    lines = source.splitlines(keepends=True)
    tree = ast.parse(source)
    cut = [node for node in tree.body if isinstance(node, ast.FunctionDef)
           and node.name.startswith("test_") and node.name not in keep_tests]
    lines = _without(lines, cut)
    while True:
        text = "".join(lines)
        tree = ast.parse(text)
        used = _names_used(tree) | used_elsewhere
        unused = [node for node in tree.body if _defines_only_unused(node, used)]
        if not unused:
            return re.sub(r"\n{4,}", "\n\n\n", text)
        lines = _without(text.splitlines(keepends=True), unused)


def _without(lines: list[str], nodes: Iterable[ast.stmt]) -> list[str]:
    drop: set[int] = set()
    for node in nodes:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        drop.update(range(first - 1, (node.end_lineno or node.lineno)))
    return [line for i, line in enumerate(lines) if i not in drop]


def _imported_from(source: str, module: str) -> set[str]:
    """Names ``source`` imports from the sibling check module ``module``."""
    return {a.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)
            and (node.module or "").split(".")[-1] == module for a in node.names}


def _names_used(tree: ast.Module) -> set[str]:
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name):
                used.add(root.id)
    return used


def _defines_only_unused(node: ast.stmt, used: set[str]) -> bool:
    if isinstance(node, ast.FunctionDef) and node.name.startswith("_"):
        return node.name not in used
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        names = [t.id for t in node.targets]  # type: ignore[attr-defined]
        return all(n.isupper() and n not in used for n in names)
    if isinstance(node, (ast.Import, ast.ImportFrom)) and not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
        names = [(a.asname or a.name).split(".")[0] for a in node.names]
        return all(n not in used for n in names)
    return False


def check_files(assignment: AssignmentConfig) -> dict[str, bytes]:
    """The kit's copy of one assignment's check package: visible checks only."""
    keep = visible_test_names(assignment)
    modules = {p: p.read_text(encoding="utf-8") for p in sorted(assignment.checks_dir.glob("*.py"))}
    files = {}
    for path, source in modules.items():
        elsewhere = frozenset(n for other, text in modules.items() if other != path for n in _imported_from(text, path.stem))
        rel = f"grader/checks/{assignment.checks_package}/{path.name}"
        files[rel] = visible_source(source, keep, elsewhere).encode()
    return files


def package_files(check_packages: set[str]) -> dict[str, bytes]:
    """Every file of the grader package a kit needs, the released assignments' checks left to ``check_files``."""
    files = {}
    for path in sorted(PACKAGE_ROOT.rglob("*")):
        rel = path.relative_to(PACKAGE_ROOT)
        if not path.is_file() or "__pycache__" in rel.parts or path.suffix not in (".py", ".json", ".ini", ".j2"):
            continue
        if rel.parts[0] in (*INSTRUCTOR_ONLY, "course"):
            continue
        if path.parent != CHECKS_ROOT and rel.parts[0] == "checks":
            continue  # check packages come from check_files, and only those released
        files[f"grader/{rel.as_posix()}"] = path.read_bytes()
    for package in sorted(check_packages):
        files.setdefault(f"grader/checks/{package}/__init__.py", b"")
    return files


def kit_config(config: Config, hidden: dict[str, int]) -> bytes:
    """assignments.yaml for the kit: visible checks with their points, no reference, the hidden count."""
    raw = read_yaml(config.path)
    out: dict[str, Any] = {"schema_version": raw["schema_version"]}
    if "defaults" in raw:  # never the extensions file: students' names and reasons stay with staff
        out["defaults"] = {k: v for k, v in raw["defaults"].items() if k != "extensions"}
    if "flagged_calls" in raw:
        out["flagged_calls"] = raw["flagged_calls"]
    out["assignments"] = {}
    for aid in sorted(hidden):
        a = config.assignment(aid)
        entry = dict(raw["assignments"][aid])
        visible = a.visible_part()
        for key in ("reference", "stub", "exercises", "extensions"):
            entry.pop(key, None)
        entry["expected"] = f"expected/{aid}.json"
        entry["hidden_checks"] = hidden[aid]
        entry["exercises"] = {ex.name: _exercise_entry(ex) for ex in visible.exercises}
        out["assignments"][aid] = entry
    header = "# The student kit's configuration, written by `grader release`: visible checks only.\n"
    return (header + yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=100)).encode()


def _exercise_entry(ex: ExerciseConfig) -> dict[str, Any]:
    """An exercise as the kit's config states it: what its shared checks read of it (purpose, returns, gradient
    inputs: grader/checks/<pkg>/test_common.py and test_work.py), its forbidden calls, its visible checks."""
    entry: dict[str, Any] = {}
    if ex.purpose:
        entry["purpose"] = ex.purpose
    if ex.returns != ("output",):
        entry["returns"] = list(ex.returns)
    if ex.gradient_inputs:
        entry["gradient_inputs"] = list(ex.gradient_inputs)
    if ex.gradient_where != "anywhere":
        entry["gradient_where"] = ex.gradient_where
    if ex.forbidden_calls:
        entry["forbidden_calls"] = sorted(ex.forbidden_calls)
    entry["checks"] = {c.name: _check_entry(c) for c in ex.checks}
    return entry


def _check_entry(check: Any) -> Any:
    """A check as the kit's config states it: points, and the flags its scoring needs (a GPU-only check,
    the exercise's placeholder gate: the kit withholds credit exactly as the course's grader does)."""
    flags = {"requires_cuda": True} if check.requires_cuda else {}
    if check.gate:
        flags["gate"] = True
    if check.output:
        flags["output"] = True
    return {"points": check.points, **flags} if flags else check.points


def pyproject(packages: Sequence[str] = ()) -> bytes:
    """The kit's pyproject: the course grader's dependencies, its version, a `grader` command.

    ``packages``: the course's extra packages (``course_packages``), so that ``pip install .``
    (the student README, the CI workflows) installs what a submission may import.
    """
    deps = [d for d in course_project()["dependencies"] if not d.startswith(INSTRUCTOR_ONLY_DEPENDENCIES)]
    return package_pyproject("attention-autograder-kit",
                             "Self-check for the 'attention from scratch' exercises: the visible checks only",
                             with_packages(deps + EXTRA_KIT_DEPENDENCIES, packages), KIT_PACKAGE_DATA)


def course_packages(assignments: Iterable[AssignmentConfig]) -> list[str]:
    """The extra packages (``packages:`` in assignments.yaml) of these assignments, each once, in order."""
    return list(dict.fromkeys(p for a in assignments for p in a.packages))


def with_packages(dependencies: Sequence[str], packages: Sequence[str]) -> list[str]:
    """``dependencies`` and then each of ``packages`` not already among them (pip takes a requirement once)."""
    return list(dict.fromkeys([*dependencies, *packages]))


def course_project() -> dict[str, Any]:
    """The ``[project]`` table of the course grader's own pyproject.toml."""
    return tomllib.loads((COURSE_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def package_pyproject(name: str, description: str, dependencies: list[str],
                      package_data: list[str] | None = None) -> bytes:
    """A pyproject for a packaged copy of the grader (the student kit, the Gradescope bundle):
    the course grader's version and Python, these dependencies, a ``grader`` command."""
    main = course_project()
    lines = [
        "[build-system]",
        'requires = ["setuptools>=68"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f"name = {json.dumps(name)}",
        f'version = "{main["version"]}"',
        f"description = {json.dumps(description)}",
        f'requires-python = "{main["requires-python"]}"',
        "dependencies = [",
        *(f"    {json.dumps(d)}," for d in dependencies),
        "]",
        "",
        "[project.scripts]",
        'grader = "grader.cli:run"',
        "",
        "[tool.setuptools.packages.find]",
        'include = ["grader*"]',
        "",
    ]
    if package_data:
        lines += ["[tool.setuptools.package-data]", f"grader = [{', '.join(json.dumps(p) for p in package_data)}]", ""]
    return "\n".join(lines).encode()


# What a student's repository should not commit: environments, build output, caches, and what the
# grader writes (`grader check --out`, `grader ci --out grader-results`, `grader grade`'s cards and pages).
GITIGNORE_PATTERNS = (
    "# Environments and build output",
    ".venv/", "venv/", "env/", "build/", "dist/", "*.egg-info/",
    "# Caches",
    "__pycache__/", "*.py[cod]", ".ipynb_checkpoints/", ".hypothesis/", ".pytest_cache/", ".mypy_cache/",
    ".DS_Store",
    "# What the grader writes",
    "scorecard.json", "card.json", "*.card.json", "grader-results/",
)


def gitignore() -> bytes:
    """The kit's ``.gitignore``: a student's repository holds their work and the released files only,
    so a pushed virtual environment or cache never reaches the autograding run or the course's review."""
    header = "# Written by `grader release`: what this repository should not commit.\n"
    return (header + "\n".join(GITIGNORE_PATTERNS) + "\n").encode()
