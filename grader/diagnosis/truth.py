"""Only true names: a mistake's title that quotes code is said only when the student's code contains it.

Every generated title quotes code in backticks ("`attention_entropy` with `clamp_min_` (in place)",
"`x = step(x)` applied twice"), and so may a catalogued one. The
answers show that the student's code *behaves* like the mistake; they do not show that it is *written*
like it. A student who writes ``weights[weights == 0] = 1.0`` into their input matches the in-place
``clamp_min_`` variant, and reading "`clamp_min_`" about code that has none sends them looking for a
call they never wrote.

So each quoted fragment (a backtick span that parses as a Python expression or statement) is read
against the mistake's code and the reference's:

- the mistake's code holds more of it: what the mistake adds (`clamp_min_`: none in the reference, one
  in the variant; a statement "applied twice": one, then two). The student's code must hold it as often;
- both hold it alike: code the mistake keeps, quoted as the student's (`scores` in "`scores` not scaled
  at all"). The student's code must hold it at least once;
- the mistake's code holds less of it (none, often): the lesson's code, quoted as such ("where the
  lesson uses `q.shape[-1]`", "`e.sum(dim=-1)` taken over dim 0"). It claims nothing.

Both codes are counted in the definitions the mistake changes (a variant: its exercise's). The claims
hold when the student's definitions of the same functions, with the helpers of their own these call
(not the assignment's other functions, which their own checks judge), hold each fragment that often. Fragments are compared by structure: local names (parameters, variables, ``self``)
are ignored, so ``s = scale_scores(s, d.shape[-1])`` is the same statement as the reference's with
other names, while the names of modules and of the assignment's functions, attributes, methods,
operators and constants must agree; a bare name (``clamp_min_``, ``log2``) must occur as a name,
attribute or definition. The student's source is parsed here, in the judge, and never run.

Where a claim fails (or the source cannot be parsed, or does not define the exercise: fail closed),
the sentence speaks of behaviour instead: the mistake's ``effect``, quoting no code, or a generic
"a known variant of the reference's `attention`".
"""

from __future__ import annotations

import ast
import builtins
import copy
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from grader.diagnosis.catalogue import Mistake

SPAN = re.compile(r"`([^`\n]+)`")
Definitions = dict[str, ast.AST]  # a module's top-level functions and classes by name; the last definition wins


def fragments(text: str) -> list[ast.AST]:
    """The backtick spans of ``text`` that parse as one Python expression or statement, parsed."""
    found = []
    for span in SPAN.findall(text):
        node = parse_fragment(span)
        if node is not None:
            found.append(node)
    return found


METHOD = re.compile(r"^\.?([A-Za-z_]\w*)(\(\.\.\.\))?$")  # `.mean(...)`, `.view`, `scale_scores(...)`: a name alone


def parse_fragment(text: str) -> ast.AST | None:
    """``text`` as one expression or one simple statement; None when it is neither (``if x:``). A method or a call
    written with its arguments left out (``.mean(...)``, ``.view``, ``scale_scores(...)``) is its name alone."""
    named = METHOD.match(text.strip())
    if named:
        return ast.Name(named.group(1), ast.Load())
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        pass
    try:
        body = ast.parse(text.strip()).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 and not isinstance(body[0], (ast.If, ast.For, ast.While, ast.With)) else None


def definitions(tree: ast.Module) -> Definitions:
    """The top-level functions and classes of ``tree``; a later definition replaces an earlier one, as at run time."""
    return {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def module_names(tree: ast.Module) -> frozenset[str]:
    """Names bound at the top of ``tree`` (imports, definitions, assignments) and Python's builtins: the names a
    comparison keeps, where every other name is a local the student may spell their own way."""
    bound: set[str] = set(dir(builtins))
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return frozenset(bound)


def reach(defined: Definitions, starts: Iterable[str], contract: Iterable[str] = ()) -> list[ast.AST]:
    """The definitions of ``starts`` and of the functions they refer to, directly or not, except the ``contract``'s
    (the assignment's own functions, judged by their own checks): a student's helpers are followed, the
    functions the lesson asks for are not. [] where none of ``starts`` is defined."""
    skip = set(contract) - set(starts)
    seen: list[str] = []
    todo = list(starts)
    while todo:
        name = todo.pop()
        if name in seen or name not in defined or name in skip:
            continue
        seen.append(name)
        todo.extend(n.id for n in ast.walk(defined[name]) if isinstance(n, ast.Name) and n.id in defined)
    return [defined[name] for name in seen]


class _Locals(ast.NodeTransformer):
    """Every name not in ``keep`` written ``_``, every context ``Load``: what a structural comparison ignores."""

    def __init__(self, keep: frozenset[str]) -> None:
        self.keep = keep

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(node.id if node.id in self.keep else "_", ast.Load())

    def visit_Attribute(self, node: ast.Attribute) -> ast.Attribute:
        return ast.Attribute(self.visit(node.value), node.attr, ast.Load())

    def visit_Subscript(self, node: ast.Subscript) -> ast.Subscript:
        return ast.Subscript(self.visit(node.value), self.visit(node.slice), ast.Load())


def shape(node: ast.AST, keep: frozenset[str]) -> str:
    """``node`` as a comparison sees it: its structure, local names ignored."""
    return ast.dump(_Locals(keep).visit(copy.deepcopy(node)), annotate_fields=False, include_attributes=False)


def count(fragment: ast.AST, scope: Iterable[ast.AST], keep: frozenset[str]) -> int:
    """How often ``fragment`` occurs in ``scope``: a bare name as a name, attribute, argument or definition; any
    other fragment as a node of the same structure."""
    nodes = [n for root in scope for n in ast.walk(root)]
    if isinstance(fragment, ast.Name):
        name = fragment.id
        return sum((isinstance(n, ast.Name) and n.id == name) or (isinstance(n, ast.Attribute) and n.attr == name)
                   or (isinstance(n, ast.arg) and n.arg == name)
                   or (isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name) for n in nodes)
    wanted = shape(fragment, keep)
    return sum(type(n) is type(fragment) and shape(n, keep) == wanted for n in nodes)


class ReferenceReading:
    """The reference's side of ``TrueNames``, read once per judge (a ``Diagnoser`` keeps one) rather than once
    per card: its definitions and names, and per mistake the definitions it changes and the fragments its title
    claims, each a parse of the whole reference. Keyed by the mistake itself (a frozen dataclass: equal mistakes,
    equal readings); a card reads only the student's code anew."""

    def __init__(self, reference: str) -> None:
        tree = ast.parse(reference)
        self.source, self.definitions, self.keep = reference, definitions(tree), module_names(tree)
        self.changed: dict[object, tuple[list[str], Definitions]] = {}
        self.claims: dict[object, list[tuple[ast.AST, int]]] = {}


def _held(memo: dict[object, Any], mistake: object, work: Callable[[], Any]) -> Any:
    """``memo[mistake]``, worked out by ``work`` the first time; a mistake that cannot be a key is worked out each time."""
    try:
        hash(mistake)
    except TypeError:  # unhashable: nothing to key it by
        return work()
    if mistake not in memo:
        memo[mistake] = work()
    return memo[mistake]


class TrueNames:
    """Which of a card's named mistakes may quote code, for one student's source and one reference."""

    def __init__(self, reference: str | ReferenceReading, student: str | None) -> None:
        self._read = reference if isinstance(reference, ReferenceReading) else ReferenceReading(reference)
        self._reference, self._keep, self._reference_source = self._read.definitions, self._read.keep, self._read.source
        try:
            self._student: Definitions | None = definitions(ast.parse(student)) if student is not None else None
        except (SyntaxError, ValueError):
            self._student = None  # fail closed: no claim about code that cannot be read holds

    def _mistake_definitions(self, mistake: Mistake | object) -> Definitions:
        """The top-level definitions of the reference with the mistake in it."""
        if isinstance(mistake, Mistake):
            return definitions(ast.parse(mistake.source(self._reference_source)))
        edited = definitions(ast.parse(getattr(mistake, "definition")))
        return {**self._reference, **edited}

    def changed(self, mistake: Mistake | object) -> tuple[list[str], Definitions]:
        """The names of the definitions the mistake changes (a variant: its exercise's), and its definitions."""
        return _held(self._read.changed, mistake, lambda: self._changed(mistake))

    def _changed(self, mistake: Mistake | object) -> tuple[list[str], Definitions]:
        theirs = self._mistake_definitions(mistake)
        names = [name for name, node in theirs.items()
                 if name not in self._reference or ast.dump(node) != ast.dump(self._reference[name])]
        return names or [getattr(mistake, "exercise")], theirs

    def claims(self, mistake: Mistake | object) -> list[tuple[ast.AST, int]]:
        """The fragments ``mistake``'s title says of the student's code, each with how often it must occur there.
        Counted in the definitions the mistake changes, against the reference's definitions of the same names."""
        return _held(self._read.claims, mistake, lambda: self._claims(mistake))

    def _claims(self, mistake: Mistake | object) -> list[tuple[ast.AST, int]]:
        fragments_said = fragments(getattr(mistake, "title"))
        if not fragments_said:
            return []
        names, defined = self.changed(mistake)
        theirs = [defined[n] for n in names if n in defined]
        ours = [self._reference[n] for n in names if n in self._reference]
        found = []
        for fragment in fragments_said:
            wanted, lesson = count(fragment, theirs, self._keep), count(fragment, ours, self._keep)
            if isinstance(fragment, ast.Name) and fragment.id in names:
                found.append((fragment, 1))  # the function's own name: the student defines it
            elif wanted > lesson:
                found.append((fragment, wanted))  # what the mistake adds: the student's code must hold it as often
            elif wanted and wanted == lesson:
                found.append((fragment, 1))  # code the mistake keeps, quoted as the student's: it must be there
        return found

    def _scope(self, names: Iterable[str]) -> list[ast.AST]:
        """The student's definitions of ``names``, with their own helpers (not the assignment's other functions)."""
        return reach(self._student, names, self._reference) if self._student is not None else []

    def holds(self, mistake: Mistake | object) -> bool:
        """Whether every fragment the title claims is in the student's code as often as it must be."""
        mistake = getattr(mistake, "mistake", mistake)  # a mistake that fits where both codes run claims what it claims
        if not isinstance(mistake, Mistake) and not hasattr(mistake, "definition"):
            return True  # read from the answers (a relation, an observation): it claims no code, it speaks of results
        claimed = self.claims(mistake)
        if not claimed:
            return True
        scope = self._scope(self.changed(mistake)[0])
        return bool(scope) and all(count(fragment, scope, self._keep) >= wanted for fragment, wanted in claimed)

    def present(self, text: str, exercise: str) -> bool:
        """Whether every fragment ``text`` quotes occurs at least once in the student's ``exercise`` (and their own
        helpers): a fix that quotes code the student never wrote is left out with the title that needed it."""
        said = fragments(text)
        if not said:
            return True
        scope = self._scope([exercise])
        return bool(scope) and all(count(fragment, scope, self._keep) >= 1 for fragment in said)


def behaviour_title(mistake: Mistake | object) -> str:
    """What the mistake does, quoting no code but the exercise's name (the student's own function)."""
    effect = getattr(mistake, "effect", "")
    exercise = getattr(mistake, "exercise")
    return f"`{exercise}` with {effect}" if effect else f"a known variant of the reference's `{exercise}`"


def said_titles(found: Sequence[object], names: TrueNames | None) -> dict[str, str]:
    """Each mistake's id -> the title a card says: its own where it is true of the student's code (or where no
    source is known to check, ``names`` None), its behaviour otherwise."""
    return {getattr(m, "id"): getattr(m, "title") if names is None or names.holds(m) else behaviour_title(m)
            for m in found}
