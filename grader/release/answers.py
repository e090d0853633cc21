"""The answer scan: no file a student receives writes out an exercise's answer.

``grader release`` runs it over every file it is about to write and refuses, in one line, when one
computes an answer: a demo cell that re-implements ``forward``, a figure that builds the causal mask
with ``tril``, a visible check that computes its expected value by hand. A test that scanned the
release after the fact would let a course build and hand out such a release whenever the tests were
not run; a release that refuses fails closed.

What counts as code, so that prose may name what it teaches (``masked_fill`` in a hint) without being a
finding: in ``.py`` files and notebook code cells, everything but comments and prose strings (strings with
whitespace); in markdown (``.md`` files, notebook markdown cells), fenced and indented code blocks; in
``.yaml`` / ``.yml`` files, every value (comments are dropped by the YAML scanner); in every other file
that decodes as UTF-8 (README templates, ``.toml``, ``.json``, shell scripts, ...), every line. A file
that does not decode is not text and is skipped: the decision is by content, not by the file's name.

This module is the course's staff side: ``grader/release/`` never ships in the student kit, so the
patterns below (which spell the answers' constructions) stay with the staff.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Iterator, Mapping

import nbformat
import yaml
from markdown_it import MarkdownIt

# A rule written as a tuple needs each of its expressions within WINDOW lines of the first, as in
# `e = x.exp()` then `return e / e.sum(-1)`; the window never spans two notebook cells.
WINDOW = 3

# The answers of every exercise, as the constructions a solution would use: regular expressions on the code.
# A new exercise adds its own (docs/adding-an-exercise.md, section 3); tests/test_release.py fails until every
# exercise has an entry here or in COMPOSED_OF_OTHERS, and until a pattern finds the exercise in the reference.
ANSWER_PATTERNS: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "attention_scores": (r"@\s*[\w.]*?(\.\w+\(\))*\.(transpose\(\s*-2\s*,\s*-1\s*\)|mT\b)",
                         r"\bmatmul\(.*(transpose\(|\.mT\b)", r"\beinsum\(.*->"),
    "scale_scores": (r"/\s*(math\.|torch\.|np\.)?sqrt\(", r"/\s*\(?[\w.\[\]\-]+\)?\s*\*\*\s*0?\.5\b", r"\brsqrt\("),
    "causal_mask": (r"\b(tril|triu)(_indices)?_?\(", r"arange\([^)]*\)\s*\[\s*:\s*,\s*None\s*\]\s*[<>]="),
    "apply_mask": (r"\bmasked_fill_?\(", r"\bwhere\(.*-inf"),
    "softmax": ((r"\bexp\(", r"\bsum\("), r"\blogsumexp\("),
    "mix_values": (r"\bweights\s*@\s*v\b",),
    "bag_of_past": (r"\bcumsum\(", r"\bcummean\("),
    "split_heads": (r"\.(view|reshape)\(\s*B\s*,\s*T\s*,\s*n_heads", r"\bpermute\(\s*0\s*,\s*2\s*,\s*1\s*,\s*3\s*\)",
                    r"\.(view|reshape)\([^)]*n_heads[^)]*\)\s*\.\s*transpose\(\s*1\s*,\s*2\s*\)"),
    "merge_heads": (r"\.transpose\(\s*1\s*,\s*2\s*\)\s*\.\s*(contiguous\(\)\s*\.\s*)?(view|reshape)\(",),
    "attention_entropy": ((r"\blog2?\(", r"\bsum\("), r"\bxlogy\(", r"\bentr\("),
    "SelfAttentionHead / MultiHeadAttention": (r"\bregister_buffer\(", r"\bcat\(\s*\[\s*\w+\(\s*x\s*\)\s*for\b"),
}
# Exercises whose answer is calls of the other exercises (whose patterns find it): no construction of their own.
COMPOSED_OF_OTHERS = frozenset({"attention", "multi_head_attention"})

# Findings the release accepts, by (path, exercise), each with the reason it gives nothing away. The
# release refuses any other; tests/test_release.py fails once one of these is gone (drop it then).
ALLOWED_SITES: dict[tuple[str, str], str] = {
    # The warm-up runs one matmul against a transpose and one masked_fill on the meta device before the
    # server forks (their first call imports kernels and torch._dynamo): no exercise's answer (it fills a
    # full mask with 0), but the patterns see them.
    ("grader/sandbox/warmup.py", "attention_scores"): "the judge's warm-up of the matmul kernels, on the meta device",
    ("grader/sandbox/warmup.py", "apply_mask"): "the judge's warm-up of masked_fill, on a mask of ones",
}

# String tokens whose text is prose when it has spaces: a whole string, and from Python 3.12 the literal
# parts of an f-string (before 3.12 an f-string is one STRING token, its expressions included).
_PREFIX = re.compile(r"[A-Za-z]*")  # a string token's prefix: r, b, f, rb, ...
_STRINGS = {tokenize.STRING} | ({tokenize.FSTRING_MIDDLE} if hasattr(tokenize, "FSTRING_MIDDLE") else set())
_RULES = {exercise: [[re.compile(p) for p in ((rule,) if isinstance(rule, str) else rule)] for rule in rules]
          for exercise, rules in ANSWER_PATTERNS.items()}


@dataclass(frozen=True)
class AnswerLine:
    """One line of a released file that starts an exercise's answer."""

    path: str
    line: int  # in the file, or in the cell when ``cell`` is set
    exercise: str
    code: str
    cell: int | None = None  # a notebook's cell, counted from 1 over all its cells

    @property
    def allowed(self) -> bool:
        return (self.path, self.exercise) in ALLOWED_SITES

    def __str__(self) -> str:
        where = f"cell {self.cell}, line {self.line}" if self.cell is not None else f"line {self.line}"
        return f"{self.path}: {where}: {self.exercise}: {self.code}"


def scan(files: Mapping[str, bytes]) -> list[AnswerLine]:
    """Every finding in ``files`` (path -> bytes, as the release writes them), in path order."""
    found = []
    for path, data in sorted(files.items()):
        text = decoded(data)
        if text is None:
            continue
        for cell, source, lines in code_units(path, text):
            found += _findings(path, cell, lines, source.splitlines())
    return found


def refusal(findings: list[AnswerLine]) -> str | None:
    """The one line ``grader release`` stops with when ``findings`` holds one not in ALLOWED_SITES, else None."""
    new = [f for f in findings if not f.allowed]
    if not new:
        return None
    more = f" (and {len(new) - 1} more)" if len(new) > 1 else ""
    return (f"the release would hand out an answer: {new[0]}{more}; write the demo, check or input without it "
            "(grader/release/answers.py says what the scan looks for)")


def decoded(data: bytes) -> str | None:
    """``data`` as text, or None for a file that is not text (does not decode as UTF-8, or holds a NUL byte)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text


def code_units(path: str, text: str) -> Iterator[tuple[int | None, str, list[str]]]:
    """``(cell, source, lines)`` for each unit of ``text`` the window runs over: the file, or each notebook
    cell. In ``lines`` what is not code is blanked, so line numbers stay those of ``source``."""
    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith(".ipynb"):
        cells = _notebook_cells(text)
        if cells is not None:
            yield from cells
            return
    if name.endswith(".py"):
        yield None, text, python_code_lines(text)
    elif name.endswith(".md"):
        yield None, text, markdown_code_lines(text)
    elif name.endswith((".yaml", ".yml")):
        yield None, text, yaml_code_lines(text)
    else:
        yield None, text, text.splitlines()


def python_code_lines(source: str) -> list[str]:
    """``source``'s lines with comments and prose strings (any with whitespace) blanked to spaces,
    line numbers kept; short strings such as ``"-inf"`` stay, they are part of the code, and so do the
    expressions of an f-string. Source that does not tokenize (a bracket never closed, a triple quote
    never ended) is scanned whole: prose is not told from code there, and the scan fails closed."""
    lines = [list(line) for line in source.splitlines()]
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source.splitlines()
    for tok in tokens:
        if tok.type == tokenize.COMMENT or (tok.type in _STRINGS and any(c.isspace() for c in tok.string)):
            fstring = tok.type == tokenize.STRING and "f" in _PREFIX.match(tok.string).group().lower()
            keep = _fstring_expressions(tok.string) if fstring else set()
            row, col = tok.start
            for index, char in enumerate(tok.string):
                if index not in keep and row <= len(lines) and col < len(lines[row - 1]):
                    lines[row - 1][col] = " "
                row, col = (row + 1, 0) if char == "\n" else (row, col + 1)
    return ["".join(line) for line in lines]


def _fstring_expressions(text: str) -> set[int]:
    """The indexes of ``text`` (one f-string token, as Python before 3.12 gives it whole) inside its
    replacement fields ``{...}``: code, as Python 3.12's tokenizer reports it; ``{{`` and ``}}`` are text."""
    inside: set[int] = set()
    depth, index = 0, 0
    while index < len(text):
        pair = text[index:index + 2]
        if depth == 0 and pair in ("{{", "}}"):
            index += 2
            continue
        if text[index] == "{":
            depth += 1
        elif text[index] == "}" and depth:
            depth -= 1
        elif depth:
            inside.add(index)
        index += 1
    return inside


def markdown_code_lines(text: str) -> list[str]:
    """``text``'s lines with all but its code blocks (fenced and indented, as CommonMark finds them,
    inside lists and quotes too) blanked to empty lines: inline code in a sentence is prose."""
    lines = text.splitlines()
    keep = [False] * len(lines)
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block") and token.map:
            start, end = token.map
            for n in range(start, min(end, len(lines))):
                keep[n] = True
    return [line if kept else "" for line, kept in zip(lines, keep)]


def yaml_code_lines(text: str) -> list[str]:
    """``text``'s block scalars (``code: |``, ``run: >``: the form code takes in YAML) at their lines, all else
    blanked: comments, keys, and one-line values with spaces, which are prose as a Python string with spaces
    is (a ``purpose:`` sentence may say ``weights @ v``). YAML that does not parse is scanned whole."""
    lines = [""] * len(text.splitlines())
    try:
        tokens = list(yaml.scan(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return text.splitlines()
    for token in tokens:
        if not isinstance(token, yaml.ScalarToken):
            continue
        block = token.style in ("|", ">")
        if not block and any(c.isspace() for c in token.value):
            continue
        first = token.start_mark.line + (1 if block else 0)
        for offset, value_line in enumerate(token.value.splitlines()):
            row = min(first + offset, len(lines) - 1)
            lines[row] = f"{lines[row]} {value_line}" if lines[row] else value_line
    return lines


def _notebook_cells(text: str) -> list[tuple[int | None, str, list[str]]] | None:
    """Each cell of a notebook as its own unit: code cells as Python, markdown cells' code blocks, raw cells
    whole. None when ``text`` is not a notebook nbformat reads (then it is scanned as plain text)."""
    try:
        notebook = nbformat.reads(text, as_version=4)
    except (ValueError, KeyError, TypeError, AttributeError):  # not JSON, or JSON that is no notebook
        return None
    units: list[tuple[int | None, str, list[str]]] = []
    for number, cell in enumerate(notebook.cells, start=1):
        source = cell.get("source", "")
        if cell.get("cell_type") == "code":
            units.append((number, source, python_code_lines(source)))
        elif cell.get("cell_type") == "markdown":
            units.append((number, source, markdown_code_lines(source)))
        else:
            units.append((number, source, source.splitlines()))
    return units


def _findings(path: str, cell: int | None, lines: list[str], shown: list[str]) -> list[AnswerLine]:
    """The answers ``lines`` start, each reported with its line of ``shown`` (the source, nothing blanked)."""
    found = []
    for number, line in enumerate(lines, start=1):
        window = lines[number - 1:number - 1 + WINDOW]
        for exercise, rules in _RULES.items():
            if any(first.search(line) and all(any(p.search(w) for w in window) for p in rest)
                   for first, *rest in rules):
                code = shown[number - 1] if number <= len(shown) else line
                found.append(AnswerLine(path, number, exercise, code.strip(), cell))
    return found
