"""The house a newcomer reads from ``ls``: the README's layout map names every module, modules stay
small, one name means one thing, and an installed package carries everything the code reads."""

from __future__ import annotations

import ast
import fnmatch
import re
import tomllib
from collections import Counter

from tests.conftest import ROOT

GRADER = ROOT / "grader"
MAX_LINES = 400
# The hidden checks of each assignment are pytest modules, one per group of properties: the map names
# their folders (grader/checks/<assignment>/); the mistake catalogue is data (grader/diagnosis/catalogue/).
NOT_MAPPED = ("checks/attention/", "checks/attention_modules/", "diagnosis/catalogue/")


def layout_block() -> list[str]:
    """The README's layout map: the code block under '## Layout'."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Layout", 1)[1]
    return section.split("```", 2)[1].splitlines()[1:]


def mapped_paths() -> set[str]:
    """Every path the map names under grader/, from its indentation: ``sandbox/`` then an indented
    ``layers/`` then ``seccomp.py`` is ``sandbox/layers/seccomp.py``. A line may name several entries
    separated by ', ' (``a.py, b.py``)."""
    found: set[str] = set()
    stack: list[tuple[int, str]] = []  # (indent, folder) of the open folders under grader/
    inside = False
    for line in layout_block():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        first = line.split("  ", 1)[0].strip() if line.strip() else ""
        if indent == 0:
            inside = first == "grader/"
            stack = []
            continue
        if not inside:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        prefix = "".join(folder for _, folder in stack)
        names = [n.strip() for n in re.split(r",\s*", line.strip().split("  ", 1)[0])]
        for name in names:
            if re.fullmatch(r"[\w./]+", name):
                found.add(prefix + name)
        if len(names) == 1 and names[0].endswith("/"):
            stack.append((indent, names[0]))
    return found


def modules() -> list[str]:
    """Every module of the package, relative to grader/ (``__init__.py`` files are their folder's)."""
    out = []
    for path in sorted(GRADER.rglob("*.py")):
        rel = path.relative_to(GRADER).as_posix()
        if "__pycache__" in rel or path.name == "__init__.py" or rel.startswith(NOT_MAPPED):
            continue
        out.append(rel)
    return out


def test_the_readme_layout_map_names_every_module_and_nothing_else():
    named = mapped_paths()
    folders = {p for p in named if p.endswith("/")}
    missing = [m for m in modules() if m not in named]
    assert not missing, f"README.md '## Layout' does not name these modules of grader/: {missing}"
    gone = sorted(p for p in named - folders if not (GRADER / p).exists())
    assert not gone, f"README.md '## Layout' names modules that do not exist: {gone}"
    empty = sorted(f for f in folders if not (GRADER / f).is_dir())
    assert not empty, f"README.md '## Layout' names folders that do not exist: {empty}"


def test_the_map_reader_follows_indentation():
    """The reader itself: a nested folder's modules get the folder's path."""
    assert {"sandbox/", "sandbox/layers/", "sandbox/layers/seccomp.py", "batch/run.py", "cli/parser.py"} <= mapped_paths()


def test_every_module_is_small():
    sizes = {m: len((GRADER / m).read_text(encoding="utf-8").splitlines()) for m in modules()}
    sizes.update({f"{p.parent.relative_to(GRADER).as_posix()}/__init__.py": len(p.read_text().splitlines())
                  for p in GRADER.rglob("__init__.py")})
    big = {m: n for m, n in sizes.items() if n > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines (split them by job): {big}"


def test_one_meaning_per_name():
    """No two classes of the package share a name: a reader who sees ``Outcome`` knows which one."""
    where: dict[str, list[str]] = {}
    for path in GRADER.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(path.relative_to(GRADER).as_posix())
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, f"class names defined twice: {twice}"


def test_exit_codes_are_defined_once():
    """Every exit status lives in grader/exits.py; no other module assigns an EXIT_ constant."""
    elsewhere = []
    for path in GRADER.rglob("*.py"):
        if path.name == "exits.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) else []
            for t in targets:
                names = [getattr(e, "id", "") for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
                elsewhere += [f"{path.relative_to(GRADER)}: {n}" for n in names if n.startswith("EXIT_")]
    assert not elsewhere, f"exit codes defined outside grader/exits.py: {elsewhere}"


def test_an_installed_package_carries_every_package_and_data_file():
    """pyproject finds the packages (a listed one is forgotten when a package is added) and its
    package-data globs cover every file the code reads that is not Python."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = project["tool"]["setuptools"]
    assert setuptools["packages"] == {"find": {"include": ["grader*"]}}  # found, never listed
    globs = setuptools["package-data"]["grader"]
    data = [p.relative_to(GRADER).as_posix() for p in GRADER.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
            and p.parent.name != "course"]  # grader/course/: written into a student kit by grader release
    uncovered = [d for d in data if not any(fnmatch.fnmatch(d, g) for g in globs)]
    assert not uncovered, f"files under grader/ no package-data glob ships: {uncovered}"


def test_no_two_modules_share_a_name_within_the_top_level():
    """``ls grader/`` shows each stage once: no module beside a package of the same name."""
    top = Counter(p.stem for p in GRADER.iterdir() if (p.suffix == ".py" or p.is_dir()) and p.name != "__pycache__")
    assert [name for name, n in top.items() if n > 1] == []


def test_the_suites_longest_first_list_names_only_existing_modules():
    """``tests/conftest.py`` schedules these modules first; a renamed module would silently lose its place."""
    from tests.conftest import LONGEST_FIRST

    tests = ROOT / "tests"
    assert [m for m in LONGEST_FIRST if not (tests / f"{m}.py").exists()] == []
