"""Every piece an exercise still lacks, each with the file to fill: ``missing(root)``.

Per exercise of every assignment in ``assignments.yaml``:

* the stub (``exercises/``) defines it with a docstring; the reference (``solutions/``) defines it;
* its config says its ``purpose``, has a gate (``gate: true``) and at least one check of its own, names only
  checks that exist as test functions in its checks package, and gives ``gradient_inputs`` where it has
  ``test_gradients_match_reference``;
* where it has a shared check (``fn``-parametrised, ``test_common.py`` / ``test_work.py``), the package's
  ``conftest.py`` ``build_cases`` gives it inputs;
* a corpus mutant (``# exercise: NAME``), a catalogued mistake (``exercise: NAME``), a lesson step, a row in
  ``docs/CONTRACT.md``'s table for its assignment, a clause in ``docs/contract-clauses.yaml``;

then every line that still holds ``new_exercise.MARKER`` (a placeholder ``grader new-exercise`` wrote), and the
README lines that disagree with the config (``grader.authoring.readme``). ``tests/test_authoring.py`` asserts
the list is empty.
"""

from __future__ import annotations

import ast
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.authoring.new_exercise import MARKER
from grader.authoring.readme import stale_lines
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


def _test_functions(checks_dir: Path) -> dict[str, set[str]]:
    """test function name -> the modules defining it; and the shared ones under key ``"@shared"``."""
    found: dict[str, set[str]] = {"@shared": set()}
    for path in sorted(checks_dir.glob("test_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                found.setdefault(node.name, set()).add(path.name)
                if "fn" in [a.arg for a in node.args.args]:
                    found["@shared"].add(node.name)
    return found


def _case_names(checks_dir: Path, root: Path) -> set[str] | None:
    """The exercises ``build_cases()`` of the package's conftest gives inputs to; None when it has none.
    Imported as written (``PlainImports``), never rewritten by an outer pytest."""
    conftest = checks_dir / "conftest.py"
    if not conftest.is_file() or "def build_cases" not in conftest.read_text(encoding="utf-8"):
        return None
    from grader.session.session import PlainImports

    name = f"grader.checks.{checks_dir.name}.conftest"
    with PlainImports(checks_dir):
        module = sys.modules.get(name) or importlib.import_module(name)
    return {k for k, v in module.build_cases().items() if v}


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
    tests = _test_functions(checks_dir)
    shared = tests["@shared"]
    cases = _case_names(checks_dir, root)
    mutants = _exercise_headers(root / "tests" / "corpus" / a.id / "mutants", "exercise", comment=True)
    mistakes = _exercise_headers(root / "grader" / "diagnosis" / "catalogue" / a.id, "exercise", comment=False)
    lesson, steps = _lesson_steps(root, a.id)
    contract, clauses = root / "docs" / "CONTRACT.md", root / "docs" / "contract-clauses.yaml"
    rows, subjects = _contract_rows(contract, a.id), _clause_subjects(clauses, a.id)
    config = "assignments.yaml"
    placeholders = _placeholder_files(root / "tests" / "corpus" / a.id / "placeholders", {ex.name for ex in a.exercises})
    for ex in a.exercises:
        n = ex.name

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


def _markers(root: Path, files: list[Path], names: list[str]) -> list[Missing]:
    out = []
    for path in files:
        if not path.is_file():
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if MARKER in line:
                whose = next((n for n in names if n in line or n in path.name), "*")
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
    if (root / "README.md").is_file():
        out += [Missing(line.split(": ", 1)[0], "*", line.split(": ", 1)[1] if ": " in line else line)
                for line in stale_lines(root / "README.md", config)]
    return out
