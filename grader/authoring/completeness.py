"""Every piece an exercise still lacks, each with the file to fill: ``missing(root)``.

Per exercise of every assignment in ``assignments.yaml``:

* the stub (``exercises/``) defines it with a docstring; the reference (``solutions/``) defines it;
* its config lists it after every exercise its reference calls (``grader.calls``: cards follow the config's
  order, and the gradebook names the first exercise to lose points as the root cause);
* its config says its ``purpose``, has a gate (``gate: true``) and at least one check of its own, names only
  checks that exist as test functions in its checks package, and gives ``gradient_inputs`` where it has
  ``test_gradients_match_reference``;
* where it has a shared check (``fn``-parametrised, ``test_common.py`` / ``test_work.py``), the package's
  ``conftest.py`` ``build_cases`` gives it inputs;
* every hidden check judges each student on their own inputs (``tests/test_seeds.py`` grades two students and
  fails on any hidden check that sent both the same): its test function takes ``hidden_cases``,
  ``hidden_seed`` or ``hidden_examples``, and where it reads ``hidden_cases``, ``build_cases(salt)`` gives
  the exercise other inputs for another salt (an exercise whose inputs are only ints must salt them too);
* a corpus mutant (``# exercise: NAME``), a catalogued mistake (``exercise: NAME``), a lesson step and its
  name in the lesson intro's numbered list, a row in ``docs/CONTRACT.md``'s table for its assignment, a
  clause in ``docs/contract-clauses.yaml``;

then every line that still holds ``new_exercise.MARKER`` (a placeholder ``grader new-exercise`` wrote), and the
doc-page lines (docs/grading.md, docs/platforms.md) that disagree with the config (``grader.authoring.readme``). ``tests/test_authoring.py`` asserts
the list is empty.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from grader import calls
from grader.authoring.new_exercise import MARKER
from grader.authoring.readme import DOC_PAGES, stale_doc_lines
from grader.config import AssignmentConfig, load_config
from grader.files import read_yaml


@dataclass(frozen=True, order=True)
class Missing:
    file: str  # relative to the course repository, with ``:LINE`` where one line is meant
    exercise: str  # "*" for the assignment as a whole
    what: str

    def __str__(self) -> str:
        return f"{self.file}: {self.exercise}: {self.what}"


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _definitions(path: Path | None) -> dict[str, ast.AST]:
    if path is None or not path.is_file():
        return {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


PER_STUDENT = ("hidden_cases", "hidden_seed", "hidden_examples")  # the fixtures of a student's own inputs (grader.seeds)


def _test_functions(checks_dir: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """test function name -> the modules defining it, with the shared ones under key ``"@shared"``; and test
    function name -> the fixtures it takes (its arguments)."""
    found: dict[str, set[str]] = {"@shared": set()}
    takes: dict[str, set[str]] = {}
    for path in sorted(checks_dir.glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found.setdefault(node.name, set()).add(path.name)
                takes.setdefault(node.name, set()).update(a.arg for a in node.args.args)
                if "fn" in [a.arg for a in node.args.args]:
                    found["@shared"].add(node.name)
    return found, takes


def _build_cases(checks_dir: Path) -> Callable[[int], dict[str, list[Any]]] | None:
    """``build_cases(salt)`` of the package's conftest; None when it has none.
    Imported as written (``PlainImports``), never rewritten by an outer pytest."""
    conftest = checks_dir / "conftest.py"
    if not conftest.is_file() or "def build_cases" not in conftest.read_text(encoding="utf-8"):
        return None
    from grader.session.session import PlainImports

    name = f"grader.checks.{checks_dir.name}.conftest"
    with PlainImports(checks_dir):
        module = sys.modules.get(name) or importlib.import_module(name)
    return module.build_cases


def _same_inputs(a: Any, b: Any) -> bool:
    """Two students' inputs are the same: equal tensors (shape, dtype, values), equal plain values."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and bool(torch.equal(a, b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_inputs(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_inputs(a[k], b[k]) for k in a)
    return bool(a == b)


def _salted(build: Callable[[int], dict[str, list[Any]]]) -> set[str]:
    """The exercises whose inputs differ between two students (two salts): those ``hidden_cases`` gives each
    student their own of (tests/test_seeds.py requires it of every hidden check)."""
    one, two = build(1), build(2)
    return {n for n in one if not _same_inputs([(c.args, c.kwargs) for c in one[n]],
                                               [(c.args, c.kwargs) for c in two.get(n, [])])}


def _exercise_headers(folder: Path, key: str, comment: bool) -> set[str]:
    names = set()
    for path in sorted(folder.glob("*.py" if comment else "*.yaml")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:20]:
            prefix = f"# {key}:" if comment else f"{key}:"
            if line.startswith(prefix):
                names.add(line[len(prefix):].strip())
    return names


def _lesson_steps(root: Path, assignment: str) -> tuple[Path | None, set[str]]:
    for path in sorted((root / "grader" / "release" / "lesson").glob("*.yaml")):
        lesson = read_yaml(path) or {}
        if lesson.get("assignment") == assignment:
            return path, set(lesson.get("steps") or {})
    return None, set()


def _lesson_intro(root: Path, assignment: str) -> str:
    """The lesson's ``intro:`` text, whose numbered list names every exercise in backticks."""
    path, _ = _lesson_steps(root, assignment)
    return str((read_yaml(path) or {}).get("intro") or "") if path else ""


def _contract_rows(contract: Path, assignment: str) -> set[str]:
    """The names in the first column of the assignment's table in docs/CONTRACT.md."""
    if not contract.is_file():
        return set()
    rows, inside = set(), False
    for line in contract.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            inside = line.startswith(f"## Assignment `{assignment}`")
        elif inside and line.startswith("| `"):
            rows.add(line[3:].split("`", 1)[0].split("(", 1)[0])
    return rows


def _clause_subjects(clauses: Path, assignment: str) -> set[str]:
    if not clauses.is_file():
        return set()
    raw = read_yaml(clauses) or {}
    return {s for c in raw.get("clauses") or () if isinstance(c, dict) and c.get("assignment") == assignment
            for s in (c.get("subject") if isinstance(c.get("subject"), list) else ())}


def _exercise(a: AssignmentConfig, root: Path) -> list[Missing]:
    out: list[Missing] = []
    stub, ref = _definitions(a.stub), _definitions(a.reference)
    checks_dir = root / "grader" / "checks" / a.checks_package
    tests, takes = _test_functions(checks_dir)
    shared = tests["@shared"]
    build = _build_cases(checks_dir)
    cases = {k for k, v in build().items() if v} if build else None
    salted = _salted(build) if build else set()
    intro = _lesson_intro(root, a.id)
    mutants = _exercise_headers(root / "tests" / "corpus" / a.id / "mutants", "exercise", comment=True)
    mistakes = _exercise_headers(root / "grader" / "diagnosis" / "catalogue" / a.id, "exercise", comment=False)
    lesson, steps = _lesson_steps(root, a.id)
    contract, clauses = root / "docs" / "CONTRACT.md", root / "docs" / "contract-clauses.yaml"
    rows, subjects = _contract_rows(contract, a.id), _clause_subjects(clauses, a.id)
    config = "assignments.yaml"
    placeholders = _placeholder_files(root / "tests" / "corpus" / a.id / "placeholders", {ex.name for ex in a.exercises})
    order = [ex.name for ex in a.exercises]
    graph = calls.of_reference(a.reference, order)
    for ex in a.exercises:
        n = ex.name
        later = sorted(c for c in graph.get(n, ()) if order.index(c) > order.index(n))
        if later:
            out.append(Missing(config, n, f"list {n} after {', '.join(later)}, which it calls: cards follow this order, "
                                          "and the gradebook names the first exercise to lose points as the root cause"))

        def need(file: str, what: str) -> None:
            out.append(Missing(file, n, what))  # noqa: B023 - used within the iteration

        stub_file, ref_file = _rel(a.stub, root) if a.stub else "exercises/", _rel(a.reference, root) if a.reference else "solutions/"
        node = stub.get(n)
        if node is None:
            need(stub_file, f"define the stub `{n}` (a docstring, then `raise NotImplementedError`)")
        elif not ast.get_docstring(node):  # type: ignore[arg-type]
            need(stub_file, f"give the stub `{n}` a docstring: what it computes, in the lesson's words")
        if n not in ref:
            need(ref_file, f"write the reference solution `{n}`")
        if not ex.purpose:
            need(config, f"`purpose:` of {n} (the gate's message says it)")
        if not any(c.gate for c in ex.checks):
            need(config, f"a gate check of {n} (`gate: true`, 0 points): credit only for work done")
        if not [c for c in ex.checks if c.name not in shared and not c.gate]:
            need(config, f"a property check of {n}'s own (and its test in grader/checks/{a.checks_package}/)")
        for c in ex.checks:
            if c.name not in tests:
                need(f"grader/checks/{a.checks_package}/", f"write {c.name} (configured for {n}, "
                     "no test function has that name: it would only say 'this check did not run')")
        for c in ex.checks:
            fixtures = takes.get(c.name, set())
            if c.visibility == "visible" or c.name not in tests:
                continue
            if not fixtures & set(PER_STUDENT):
                need(f"grader/checks/{a.checks_package}/", f"{c.name} is hidden, so it must judge each student on "
                     f"their own inputs: take `hidden_cases`, `hidden_seed` or `hidden_examples` (tests/test_seeds.py)")
            elif "hidden_cases" in fixtures and build is not None and n in (cases or ()) and n not in salted:
                need(f"grader/checks/{a.checks_package}/conftest.py", f"inputs of {n} in build_cases that change "
                     f"with the salt (`s(n)`: sizes too, where every input is an int): hidden {c.name} reads them "
                     "as each student's own (tests/test_seeds.py)")
        if ex.check("test_gradients_match_reference") and not ex.gradient_inputs:
            need(config, f"`gradient_inputs:` of {n} (test_gradients_match_reference differentiates them)")
        if cases is not None and any(c.name in shared for c in ex.checks) and n not in cases:
            need(f"grader/checks/{a.checks_package}/conftest.py", f"inputs of {n} in build_cases (its shared checks run on them)")
        if n not in mutants:
            need(f"tests/corpus/{a.id}/mutants/", f"a mutant of {n} (`# exercise: {n}`): a classic mistake the checks must catch")
        if n not in mistakes:
            need(f"grader/diagnosis/catalogue/{a.id}/", f"a catalogued mistake of {n} (`exercise: {n}`)")
        if n not in steps:
            need(_rel(lesson, root) if lesson else "grader/release/lesson/", f"the lesson step `steps.{n}`")
        if lesson is not None and f"`{n}`" not in intro:
            need(_rel(lesson, root), f"`{n}` in the intro's numbered list of steps (`intro:`)")
        if n not in rows:
            need("docs/CONTRACT.md", f"the row of {n} in the table of assignment `{a.id}`")
        if n not in subjects:
            need("docs/contract-clauses.yaml", f"the clauses of {n} (subject: [{n}])")
        for path, defined in placeholders.items():
            if n not in defined:
                need(_rel(path, root), f"a placeholder `{n}` (the right shape, dtype and device, nothing "
                     "computed): the placeholder corpus must define every function to score 0")
    return out


def _placeholder_files(folder: Path, exercises: set[str]) -> dict[Path, set[str]]:
    """The placeholder cases that define contract functions themselves (the others only define how they
    fill), each with the names it defines: each must define every exercise."""
    out = {}
    for path in sorted(folder.glob("*.py*")) if folder.is_dir() else ():
        defined = set(_definitions(path))
        if defined & exercises:
            out[path] = defined
    return out


def _whose(line: str, file_name: str, names: list[str]) -> str:
    """The exercise a placeholder line is about: the first exercise it names (as a whole word), so
    ``"alibi": [],  # ... like "attention_scores"'s above`` is alibi's; else the one its file is named for."""
    for pattern in (r"(?<![\w]){}(?![\w])", "{}"):  # a whole word first, then within one (`test_NAME_todo`)
        at = {n: m.start() for n in names if (m := re.search(pattern.format(re.escape(n)), line))}
        if at:
            return min(at, key=lambda n: (at[n], -len(n)))
    return next((n for n in names if n in file_name), "*")


def _markers(root: Path, files: list[Path], names: list[str]) -> list[Missing]:
    out = []
    for path in files:
        if not path.is_file():
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if MARKER in line:
                whose = _whose(line, path.name, names)
                out.append(Missing(f"{_rel(path, root)}:{i}", whose, f"fill the placeholder: {line.strip()[:120]}"))
    return out


def missing(root: Path | None = None) -> list[Missing]:
    """What every exercise of ``root``'s course still lacks; [] when nothing does."""
    if root is None:
        from grader.config import COURSE_ROOT
        root = COURSE_ROOT
    config = load_config(root / "assignments.yaml")
    out: list[Missing] = []
    files: list[Path] = [root / "assignments.yaml", root / "docs" / "CONTRACT.md", root / "docs" / "contract-clauses.yaml"]
    names: list[str] = []
    for a in config.assignments.values():
        out += _exercise(a, root)
        names += sorted((ex.name for ex in a.exercises), key=len, reverse=True)
        files += [p for p in (a.stub, a.reference) if p is not None]
        files += sorted((root / "grader" / "checks" / a.checks_package).glob("*.py"))
        files += sorted((root / "tests" / "corpus" / a.id / "mutants").glob("*.py"))
        files += sorted((root / "grader" / "diagnosis" / "catalogue" / a.id).glob("*.yaml"))
    files += sorted((root / "grader" / "release" / "lesson").glob("*.yaml"))
    out += _markers(root, list(dict.fromkeys(files)), names)
    if all((root / page).is_file() for page in DOC_PAGES):
        out += [Missing(line.split(": ", 1)[0], "*", line.split(": ", 1)[1] if ": " in line else line)
                for line in stale_doc_lines(root, config)]
    return out
