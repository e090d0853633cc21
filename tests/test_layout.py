"""The house a newcomer reads from ``ls``: the README's layout map names every module, modules stay
small, one name means one thing, and an installed package carries everything the code reads."""

from __future__ import annotations

import ast
import fnmatch
import re
import tomllib
from collections import Counter

import pytest

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


# ------------------------------------------------------------------ which layer stands on which (issue 40, item 4)

# part -> the parts it must not import. The batch and export both stand on the course's data; the batch
# stands on export's rows; the command line stands on everything. No arrow runs back up.
FORBIDDEN = {"export": ("batch",), "coursedata": ("batch", "export", "cli")}


def test_no_arrow_runs_back_up_and_no_subpackages_import_each_other_in_a_circle():
    from tests.import_graph import back_arrows, cycles, import_graph, parts

    found = parts(GRADER)
    named = {p for rule in FORBIDDEN.items() for p in (rule[0], *rule[1])}
    assert named <= {name for name, package in found.items() if package}, "a layer the rule names is gone"
    graph = import_graph(GRADER)
    assert back_arrows(graph, FORBIDDEN) == []
    assert cycles(graph, [name for name, package in found.items() if package]) == []
    assert "coursedata" in graph["batch"] and "coursedata" in graph["export"]  # both stand on it


# A generated package tree: parts a..g (subpackages, and one plain module), and an import of a target part
# written in every form Python has, from a module at several depths. ``{up}`` is the dots of a relative
# import that reaches the package's root from the importing file.
IMPORT_FORMS = (
    "import pkg.{t}.thing\n",
    "from pkg.{t} import thing\n",
    "from pkg.{t}.thing import X\n",
    "from pkg import {t}\n",
    "from {up}{t}.thing import X\n",
    "from {up}{t} import thing\n",
    "from {up} import {t}\n",
    "def f():\n    from pkg.{t}.thing import X\n    return X\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.{t} import thing\n",
    "import importlib\nimportlib.import_module('pkg.{t}.thing')\n",
)
IMPORTERS = ("mod.py", "__init__.py", "inner/deep.py")  # inside the importing subpackage
# Names that only look like a part's: another package's, a longer name, a package inside another one.
DECOYS = "import os\nimport pkgx.{t}\nfrom pkg import {t}y\nfrom pkg.{t}y import z\nfrom other.pkg.{t} import w\n"


def write_tree(root, arrows: list[tuple[str, str, str, str]], names: str = "abcdefg") -> None:
    """``root/pkg``: a subpackage per letter of ``names`` (the last one a plain module ``<letter>.py``), each
    with ``thing.py`` and ``inner/deep.py``; ``arrows`` are (importer, target, form, importing file)."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    *packages, module = names
    (pkg / f"{module}.py").write_text("X = 1\n")
    for name in packages:
        (pkg / name / "inner").mkdir(parents=True)
        for rel in ("__init__.py", "thing.py", "mod.py", "inner/__init__.py", "inner/deep.py"):
            (pkg / name / rel).write_text("X = 1\n")
        (pkg / name / "mod.py").write_text("".join(DECOYS.format(t=t) for t in names))
    for importer, target, form, where in arrows:
        path = pkg / f"{importer}.py" if importer == module else pkg / importer / where
        up = "." * (len(path.relative_to(pkg).parts))  # from pkg/a/mod.py: '..' is pkg
        if target == module and "thing" in form:
            form = form.replace(f"{{t}}.thing", "{t}").replace("import thing", "import X")
        path.write_text(path.read_text() + form.format(t=target, up=up))


@pytest.mark.parametrize("form", IMPORT_FORMS)
@pytest.mark.parametrize("where", IMPORTERS)
def test_the_rule_finds_a_back_arrow_in_every_form_and_nothing_else(tmp_path, form: str, where: str):
    from tests.import_graph import back_arrows, import_graph

    forbidden = {"a": ("b", "g"), "c": ("a",)}
    clean = [("b", "a", IMPORT_FORMS[0], "mod.py"), ("a", "c", form, where)]  # arrows the rule allows
    write_tree(tmp_path / "clean", clean)
    assert back_arrows(import_graph(tmp_path / "clean" / "pkg"), forbidden) == []
    for target in ("b", "g"):  # a subpackage, and a plain module
        tree = tmp_path / f"back_to_{target}"
        tree.mkdir()
        write_tree(tree, [*clean, ("a", target, form, where)])
        found = back_arrows(import_graph(tree / "pkg"), forbidden)
        assert len(found) == 1 and re.fullmatch(rf"a -> {target} \(a/{re.escape(where)}:\d+\)", found[0]), found


@pytest.mark.parametrize("seed", range(24))
def test_the_rule_finds_every_generated_import_circle_and_no_other(tmp_path, seed: int):
    """A random layering of the parts (arrows only downwards: no circle), then one arrow back up from the
    bottom of a chain to its top: exactly the parts of that chain form the circle found."""
    import random

    from tests.import_graph import cycles, import_graph, parts

    rng = random.Random(seed)
    order = rng.sample("abcdef", k=rng.randint(3, 6))  # order[i] may import order[j] for j > i only
    arrows = [(order[i], order[j], rng.choice(IMPORT_FORMS), rng.choice(IMPORTERS))
              for i in range(len(order)) for j in range(i + 1, len(order)) if rng.random() < 0.4]
    write_tree(tmp_path / "layered", arrows)
    graph = import_graph(tmp_path / "layered" / "pkg")
    assert cycles(graph, parts(tmp_path / "layered" / "pkg")) == []
    top, bottom = sorted(rng.sample(range(len(order)), k=2))
    chain = [(order[i], order[i + 1], rng.choice(IMPORT_FORMS), rng.choice(IMPORTERS)) for i in range(top, bottom)]
    back = (order[bottom], order[top], rng.choice(IMPORT_FORMS), rng.choice(IMPORTERS))
    (tmp_path / "circle").mkdir()
    write_tree(tmp_path / "circle", [*arrows, *chain, back])
    graph = import_graph(tmp_path / "circle" / "pkg")
    found = cycles(graph, parts(tmp_path / "circle" / "pkg"))
    assert len(found) == 1 and set(order[top:bottom + 1]) <= set(found[0]), (found, order, top, bottom)
    # the circle is exactly the parts that reach the top and are reached from it: no bigger than it is
    assert found[0] == sorted(p for p in graph if reaches(graph, order[top], p) and reaches(graph, p, order[top]))


def reaches(graph, start: str, goal: str) -> bool:
    """Whether ``goal`` is reached from ``start`` along the graph's arrows (``start`` reaches itself)."""
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), {}):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return goal in seen
