"""The docs' totals and check catalogue, checked against assignments.yaml.

The documentation pages state each assignment's total in several places (the Gradescope walk-through
in docs/platforms.md, the credit section and the catalogue's heading in docs/grading.md) and list the
checks of ``attention`` with their points. ``stale_lines`` compares every such statement with the
loaded config and names each stale line; ``tests/test_readme_config.py`` asserts it finds none, and
``grader.authoring.completeness`` reports the same lines for an exercise just added.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Sequence

from grader.config import AssignmentConfig, Config
from grader.words import plural

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
CATALOGUE = "attention"  # the assignment whose checks the docs' catalogue table lists
# The pages that state the totals and hold the catalogue, relative to the course's root: a statement
# moved to another page is looked for there only once the page is listed here.
DOC_PAGES = ("docs/grading.md", "docs/platforms.md")


def _g(x: float) -> str:
    return f"{x:g}"


def _cuda_count(a: AssignmentConfig) -> str:
    return str(sum(1 for ex in a.exercises for c in ex.checks if c.requires_cuda))


Claim = tuple[str, dict[str, Callable[[Config], str]]]
# Each statement of a total: a pattern (whitespace matches across lines) and, per named group, its value.
CLAIMS: list[Claim] = [
    (r"## Check catalogue \(assignment `attention`, (?P<a>[\d.]+) points without CUDA, (?P<b>[\d.]+) with\)",
     {"a": lambda c: _g(c.assignment("attention").without_cuda_points()),
      "b": lambda c: _g(c.assignment("attention").max_points)}),
    (r"Assignment `attention-modules` \((?P<m>[\d.]+) points\)",
     {"m": lambda c: _g(c.assignment("attention-modules").without_cuda_points())}),
    (r"`max_score` there: (?P<a>[\d.]+)\s+for `attention` \(Gradescope's machines have no GPU, so the "
     r"(?P<n>\w+) CUDA checks are dropped\), (?P<m>[\d.]+) for\s+`attention-modules`",
     {"a": lambda c: _g(c.assignment("attention").without_cuda_points()),
      "n": lambda c: _cuda_count(c.assignment("attention")),
      "m": lambda c: _g(c.assignment("attention-modules").without_cuda_points())}),
    (r"the reference scores (?P<a>[\d.]+) of\s+(?P<b>[\d.]+);",
     {"a": lambda c: _g(c.assignment("attention").without_cuda_points()),
      "b": lambda c: _g(c.assignment("attention").without_cuda_points())}),
    (r"score 0 of (?P<a>[\d.]+) and 0 of (?P<m>[\d.]+)",
     {"a": lambda c: _g(c.assignment("attention").without_cuda_points()),
      "m": lambda c: _g(c.assignment("attention-modules").without_cuda_points())}),
]


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _said(value: str) -> str:
    return str(NUMBER_WORDS.get(value, value))


def stale_doc_lines(root: Path, config: Config) -> list[str]:
    """``docs/PAGE.md:LINE: ...`` for every statement of the course's doc pages that disagrees with ``config``."""
    return stale_lines([root / page for page in DOC_PAGES], config, root)


def stale_lines(pages: Path | Sequence[Path], config: Config, root: Path | None = None) -> list[str]:
    """``PAGE:LINE: what it says, what the config says`` for every statement that disagrees; a statement
    may stand on any of ``pages``, and one that stands on none is named too. ``PAGE`` is the path
    relative to ``root`` where given, else the file's name."""
    paths = [pages] if isinstance(pages, Path) else list(pages)
    texts = [(_name(path, root), path.read_text(encoding="utf-8")) for path in paths]
    problems: list[str] = []
    for pattern, values in CLAIMS:
        found = [(name, text, m) for name, text in texts for m in re.finditer(pattern.replace(" ", r"\s+"), text)]
        if not found:
            where = ", ".join(name for name, _ in texts)
            problems.append(f"{where}: no line says {pattern!r} any more (reword grader/authoring/readme.py's CLAIMS too)")
        for name, text, m in found:
            for group, want in values.items():
                wanted = want(config)
                got = _said(m.group(group))
                if _g(float(got)) != wanted:
                    problems.append(f"{name}:{_line(text, m.start(group))}: says {m.group(group)}, "
                                    f"assignments.yaml gives {wanted}")
    if CATALOGUE in config.assignments:
        name, text = next(((n, x) for n, x in texts if re.search(r"^## Check catalogue", x, re.M)), texts[0])
        problems += _catalogue(name, text, config.assignment(CATALOGUE))
    if "attention-modules" in config.assignments:
        for name, text in texts:
            problems += _modules_paragraph(name, text, config.assignment("attention-modules"))
    return problems


def _name(path: Path, root: Path | None) -> str:
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return path.name


def _catalogue(name: str, text: str, a: AssignmentConfig) -> list[str]:
    """The table: a row per exercise, each listing its own checks with their points (the shared checks of the
    paragraph above it may be left out), ``hidden`` where the check is."""
    head = re.search(r"^## Check catalogue.*$", text, re.M)
    if head is None:
        return [f"{name}: no '## Check catalogue' section"]
    end = text.find("\n## ", head.end())
    section = text[head.end(): end if end >= 0 else len(text)]
    offset = _line(text, head.end()) - 1
    lines = section.split("\n")
    table_at = next((i for i, line in enumerate(lines) if line.startswith("| exercise |")), None)
    if table_at is None:
        return [f"{name}:{offset}: the check catalogue has no `| exercise | checks (points) |` table"]
    paragraph = "\n".join(lines[:table_at])
    problems: list[str] = []
    shared: set[str] = {"test_" + m.group(1) for m in re.finditer(r"`test_([a-z0-9_]+)`", paragraph)}
    for m in re.finditer(r"`(test_[a-z0-9_]+)` \((\d+(?:\.\d+)?)([^)]*)\)", paragraph):
        check, points, hidden = m.group(1), float(m.group(2)), "hidden" in m.group(3)
        differ = [f"{ex.name} ({_g(c.points)}, {c.visibility})" for ex in a.exercises_with(check)
                  if (c := ex.check(check)) is not None and (c.points != points or (c.visibility != "visible") != hidden)]
        if differ:
            problems.append(f"{name}:{offset + paragraph.count(chr(10), 0, m.start()) + 1}: `{check}` ({_g(points)}"
                            f"{', hidden' if hidden else ''}) but assignments.yaml: {', '.join(differ)}")
    cuda = re.search(r"`test_cuda_matches_cpu` \([^)]*\) for ([a-z_, ]+)\.", paragraph)
    if cuda:
        said = {n.strip() for n in cuda.group(1).split(",")}
        configured = {ex.name for ex in a.exercises_with("test_cuda_matches_cpu")}
        if said != configured:
            problems.append(f"{name}:{offset + paragraph.count(chr(10), 0, cuda.start()) + 1}: test_cuda_matches_cpu "
                            f"for {', '.join(sorted(said))}; assignments.yaml: {', '.join(sorted(configured))}")
    rows: dict[str, int] = {}
    for i in range(table_at + 2, len(lines)):
        line = lines[i]
        if not line.startswith("|"):
            break
        number = offset + i + 1
        cells = [c.strip() for c in line.strip("|").split("|")]
        exercise = a.exercise(cells[0])
        rows[cells[0]] = number
        if exercise is None:
            problems.append(f"{name}:{number}: `{cells[0]}` is not an exercise of {a.id!r} in assignments.yaml")
            continue
        listed = {}
        for m in re.finditer(r"([a-z0-9_]+) \((\d+(?:\.\d+)?)([^()]*)\)", cells[1] if len(cells) > 1 else ""):
            listed["test_" + m.group(1)] = (float(m.group(2)), "hidden" in m.group(3))
        for check, (points, hidden) in listed.items():
            cfg = exercise.check(check)
            if cfg is None:
                problems.append(f"{name}:{number}: {exercise.name} lists {check[5:]}, which assignments.yaml does not configure")
            elif cfg.points != points or (cfg.visibility != "visible") != hidden:
                problems.append(f"{name}:{number}: {exercise.name}'s {check[5:]} ({_g(points)}{', hidden' if hidden else ''}) "
                                f"but assignments.yaml: {_g(cfg.points)} {plural(cfg.points, 'point')}, {cfg.visibility}")
        for cfg in exercise.checks:
            if cfg.name not in listed and cfg.name not in shared and not cfg.gate:
                problems.append(f"{name}:{number}: {exercise.name}'s row leaves out {cfg.name[5:]} ({_g(cfg.points)})")
    for ex in a.exercises:
        if ex.name not in rows:
            problems.append(f"{name}:{offset + table_at + 1}: the check catalogue has no row for `{ex.name}` "
                            f"(| {ex.name} | its own checks (points) |)")
    return problems


def _modules_paragraph(name: str, text: str, a: AssignmentConfig) -> list[str]:
    """The paragraph on ``attention-modules`` names every one of its checks."""
    m = re.search(r"Assignment `attention-modules` \(.*?(?:\n\n|$)", text, re.S)
    if m is None:
        return []
    said = m.group(0)
    line = _line(text, m.start())
    return [f"{name}:{line}: the `attention-modules` paragraph does not name {c.name[5:]} ({ex.name})"
            for ex in a.exercises for c in ex.checks if c.name[5:] not in said and c.name not in said]
