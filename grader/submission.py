"""Stage 1: read a submission and learn what we can without running it.

Bytes become source text (for a notebook, its definitions, cell by cell, by
the rule in ``grader/notebook/``); the AST
then tells which contract names are defined, which are still the stub, and
which forbidden calls appear. Nothing here executes student code: forbidden
calls are found by reading, so a submission cannot hide them by behaving
differently when watched.
"""

from __future__ import annotations

import ast
import codecs
import hashlib
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from grader import links, notebook
from grader.scorecard import NotebookReport

MAX_SUBMISSION_BYTES = 5 * 1024 * 1024  # the code: a .py file, or a notebook's code cells
MAX_NOTEBOOK_FILE_BYTES = 64 * 1024 * 1024  # a notebook file, saved outputs included: only so memory is safe


class UnreadableSubmission(Exception):
    """The file could not be read, or not graded at all (the caller reports it: not a grade of 0)."""


class SubmissionTooLarge(UnreadableSubmission):
    """The code (or a notebook file, outputs included) is over its size limit: not graded, said why."""


@dataclass(frozen=True)
class Finding:
    """One forbidden or flagged construct: what, where, inside which function."""

    name: str
    line: int
    function: str | None


@dataclass(frozen=True)
class Submission:
    path: Path
    filename: str
    sha256: str
    source: str
    problem: str | None = None  # why the source cannot be run at all (syntax, encoding, size)
    problem_line: int | None = None
    defined: frozenset[str] = frozenset()
    stubs: frozenset[str] = frozenset()
    flags: tuple[Finding, ...] = ()
    tree: ast.Module | None = field(default=None, compare=False, repr=False)
    notebook: NotebookReport | None = None  # for a notebook: what was left out, and why
    places: tuple[tuple[int, int] | None, ...] = field(default=(), compare=False, repr=False)  # notebook: line -> (cell, line)
    units: tuple[int, ...] = ()  # notebook: the lines where a `from __future__` import starts a compilation unit

    def attempted(self, name: str) -> bool:
        return name in self.defined and name not in self.stubs

    def where(self, line: int) -> str:
        """Line ``line`` of the graded source as the student finds it (``place_of``)."""
        return place_of(self.places, line)


def place_of(places: tuple[tuple[int, int] | None, ...], line: int) -> str:
    """Line ``line`` of a graded source as the student finds it: ``line 12`` in a .py file, ``cell 4, line 3``
    in a notebook (whose graded source is its kept statements put together; ``places`` maps them back)."""
    place = places[line - 1] if 0 < line <= len(places) else None
    return f"cell {place[0]}, line {place[1]}" if place else f"line {line}"


def load_submission(path: Path, *, flagged_calls: frozenset[str] = frozenset()) -> Submission:
    """Read ``path`` (.py or .ipynb) into a Submission; never raises for bad *content*.

    Raises UnreadableSubmission when the file cannot be read, and its SubmissionTooLarge when the code
    is over MAX_SUBMISSION_BYTES (a notebook's code cells; its outputs do not count): the caller says
    why instead of grading it (``grader grade``: exit 2; ``grade-all``: an error row).
    """
    is_notebook = path.suffix == ".ipynb"
    raw = _read_capped(path, MAX_NOTEBOOK_FILE_BYTES if is_notebook else MAX_SUBMISSION_BYTES)
    digest = hashlib.sha256(raw).hexdigest()
    base = {"path": path, "filename": path.name, "sha256": digest}
    # A notebook is JSON, always UTF-8; a .py file is read as Python reads it (PEP 263 coding line).
    text, problem = decode_json_text(raw) if is_notebook else decode_python_source(raw)
    if text is None:
        return Submission(**base, source="", problem=problem)
    if is_notebook:
        try:
            nb = notebook.read(text)
        except notebook.NotebookError as exc:
            return Submission(**base, source="", problem=str(exc))
        _check_code_size(path, notebook.code_bytes(nb))
        text, base["notebook"], base["places"], base["units"] = notebook.extract_notebook(nb)
        if not text.strip():
            return Submission(**base, source=text, problem="the notebook defines nothing that can be graded")
    if not text.strip():
        return Submission(**base, source=text, problem="the file is empty")
    try:
        tree = ast.parse(text, filename=path.name)
    except SyntaxError as exc:
        return Submission(
            **base,
            source=text,
            problem=f"syntax error at {place_of(base.get('places', ()), exc.lineno or 0)}, column {exc.offset}: {exc.msg}",
            problem_line=exc.lineno,
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        return Submission(**base, source=text, problem=f"the file cannot be parsed: {exc}")
    defined, stubs = defined_names(tree)
    return Submission(
        **base,
        source=text,
        defined=frozenset(defined),
        stubs=frozenset(stubs),
        flags=tuple(find_names(tree, flagged_calls)),
        tree=tree,
    )


def _read_capped(path: Path, cap: int) -> bytes:
    """The file's bytes, reading at most ``cap + 1`` of them, so a giant file cannot exhaust memory.

    Over ``cap`` is SubmissionTooLarge: a .py file's cap is the code limit itself; a notebook's is
    generous, because saved outputs (plots as base64 PNG) do not count and its code is measured after
    it is read (``_check_code_size``). A symbolic link is UnreadableSubmission, saying so
    (``grader.links``): a link named like the submission could point at the reference, or at any file
    outside the class.
    """
    try:
        with links.open_file(path) as f:  # O_NOFOLLOW: a link is refused by the open itself, never read through
            raw = f.read(cap + 1)
    except links.LinkRefused as exc:
        raise UnreadableSubmission(str(exc)) from None
    except OSError as exc:
        raise UnreadableSubmission(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) <= cap:
        return raw
    if path.suffix == ".ipynb":
        raise SubmissionTooLarge(f"{path.name} is over {_size(cap)} with its saved outputs, too large to read; "
                                 "clear its outputs (Kernel > Restart & Clear Output), save it and submit it again")
    raise SubmissionTooLarge(f"{path.name} is over {_size(cap)}, the limit for a submission's code; "
                             "submit only your own code, without data pasted into it")


def _check_code_size(path: Path, size: int) -> None:
    """A notebook's code cells together are held to the code limit; its saved outputs do not count."""
    if size > MAX_SUBMISSION_BYTES:
        raise SubmissionTooLarge(f"the code cells of {path.name} hold {_size(size)} of code; the limit is "
                                 f"{_size(MAX_SUBMISSION_BYTES)} (saved outputs do not count); "
                                 "submit only your own code, without data pasted into it")


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{max(n // 1024, 1)} KiB"


# PEP 263: a comment in line 1 or 2 whose text matches this names the file's encoding.
CODING_LINE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def decode_json_text(raw: bytes) -> tuple[str | None, str | None]:
    """A notebook's bytes as text: JSON is UTF-8 (a byte-order mark tolerated)."""
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return None, f"the file is not UTF-8 text (bad byte at offset {exc.start})"


def decode_python_source(raw: bytes) -> tuple[str | None, str | None]:
    """A .py file's bytes as the text Python itself would run, or None and why it cannot be read.

    Python reads a source file as UTF-8 unless a coding line (PEP 263, e.g.
    ``# -*- coding: latin-1 -*-`` in line 1 or 2) names another encoding;
    ``tokenize.detect_encoding`` applies exactly that rule, so a file Python
    runs is graded, and a file Python refuses fails with a reason a student
    can act on. The decoded text keeps its coding line: ``compile`` and
    ``ast.parse`` ignore a coding line in a ``str``, so the judge's parse and
    the sandbox child's compile read the same text.
    """
    declared = _declared_coding(raw)
    name, line = declared if declared else ("", 0)
    where = f"the coding line (line {line}) declares {name!r}" if declared else "a coding line names another encoding"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        reason = str(exc.msg or exc)
        if reason.startswith("unknown encoding"):
            return None, (f"{where}, which is not an encoding Python knows; save the file as UTF-8 "
                          "and remove the coding line, or name a real encoding such as latin-1")
        if reason.startswith("encoding problem"):
            return None, (f"the file starts with a UTF-8 byte-order mark but {where}; "
                          "save it as UTF-8 and remove the coding line")
        encoding = "utf-8"  # "invalid or missing encoding declaration": not UTF-8, no coding line
    if encoding.startswith("utf-8"):
        try:
            return raw.decode("utf-8-sig"), None
        except UnicodeDecodeError as exc:
            return None, (f"the file is not UTF-8 text (bad byte at offset {exc.start}) and has no coding line "
                          "naming another encoding; save it as UTF-8")
    try:
        return raw.decode(encoding), None  # "hex" or "rot13" exist but are no text encodings: LookupError
    except (UnicodeDecodeError, LookupError, ValueError, TypeError) as exc:
        detail = f"bad byte at offset {exc.start}" if isinstance(exc, UnicodeDecodeError) else str(exc)
        return None, f"{where}, but the file cannot be read in that encoding ({detail}); save it as UTF-8"


def _declared_coding(raw: bytes) -> tuple[str, int] | None:
    """The encoding a PEP 263 coding line names, as written, and its line (1 or 2); None without one."""
    lines = raw.removeprefix(codecs.BOM_UTF8).splitlines()[:2]
    for number, line in enumerate(lines, start=1):
        m = CODING_LINE.match(line)
        if m:
            return m.group(1).decode("ascii", "replace"), number
        if number == 1 and not re.match(rb"^[ \t\f]*(#.*)?$", line):
            return None  # a coding line counts in line 2 only when line 1 is blank or a comment
    return None


def defined_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Top-level functions/classes/assignments, and which of them are still stubs.

    A stub is a body that, docstring aside, only raises NotImplementedError;
    for a class, when ``__init__`` (or every method) is such a stub.
    """
    defined: set[str] = set()
    stubs: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
            stubs.discard(node.name)
            if _is_stub_body(node.body):
                stubs.add(node.name)
        elif isinstance(node, ast.ClassDef):
            defined.add(node.name)
            stubs.discard(node.name)
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
            init = next((m for m in methods if m.name == "__init__"), None)
            if (init is not None and _is_stub_body(init.body)) or (methods and all(_is_stub_body(m.body) for m in methods)):
                stubs.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    defined.add(t.id)
                    stubs.discard(t.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                defined.add((alias.asname or alias.name).split(".")[0])
    return defined, stubs


def _is_stub_body(body: list[ast.stmt]) -> bool:
    stmts = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(stmts) != 1 or not isinstance(stmts[0], ast.Raise) or stmts[0].exc is None:
        return False
    exc = stmts[0].exc
    target = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(target, ast.Name) and target.id == "NotImplementedError"


def find_names(tree: ast.AST, names: frozenset[str]) -> list[Finding]:
    """Every use of a name or attribute in ``names`` (calls, references, imports), with its function."""
    found: list[Finding] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            hit = None
            if isinstance(child, ast.Name) and child.id in names:
                hit = child.id
            elif isinstance(child, ast.Attribute) and child.attr in names:
                hit = child.attr
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                module = getattr(child, "module", None) or ""
                for alias in child.names:
                    parts = set(alias.name.split(".")) | set(module.split("."))
                    if parts & names:
                        hit = (parts & names).pop()
            if hit:
                found.append(Finding(hit, getattr(child, "lineno", 0), function))
            visit(child, inner)

    visit(tree, None)
    return found


def forbidden_in(tree: ast.Module, function: str, forbidden: frozenset[str], flagged: frozenset[str]) -> list[Finding]:
    """Forbidden names used by ``function`` or any module-level helper it reaches.

    Import aliases are resolved (``from torch.nn.functional import softmax as
    sm`` makes ``sm`` forbidden), as are module-level assignments such as
    ``sm = torch.softmax``; dynamic lookups (``getattr``, ``eval``...) inside
    that code count as forbidden, because they could hide anything.
    """
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    aliases = _forbidden_aliases(tree, forbidden)
    seen: set[str] = set()
    found: list[Finding] = []
    pending = [function]
    while pending:
        name = pending.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        for node in ast.walk(functions[name]):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip() in forbidden:
                found.append(Finding(repr(node.value)[:40], node.lineno, name))  # a name spelled as a string
            elif isinstance(node, ast.Attribute) and node.attr in flagged:
                found.append(Finding(node.attr, node.lineno, name))
            elif isinstance(node, ast.Attribute) and node.attr in forbidden:
                found.append(Finding(node.attr, node.lineno, name))
            elif isinstance(node, ast.Name):
                if node.id in aliases:
                    found.append(Finding(aliases[node.id], node.lineno, name))
                elif node.id in flagged:
                    found.append(Finding(node.id, node.lineno, name))
                elif node.id in functions and node.id != name:
                    pending.append(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                found.extend(Finding(f.name, f.line, name) for f in find_names(ast.Module(body=[node], type_ignores=[]), forbidden | flagged))
    return sorted(set(found), key=lambda f: (f.line, f.name))


def _forbidden_aliases(tree: ast.Module, forbidden: frozenset[str]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in forbidden:
                    aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.Assign):
            refs = [n for n in ast.walk(node.value) if isinstance(n, ast.Attribute) and n.attr in forbidden]
            refs += [n for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id in aliases]
            if refs:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        aliases[t.id] = getattr(refs[0], "attr", None) or aliases[refs[0].id]
    return aliases
