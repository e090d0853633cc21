"""``pytest --affected-by NAME``: every test an exercise can change the outcome of, and no other.

Adding or changing an exercise touches three kinds of tests:

* the tests that read every exercise of the config (points and totals, the contract, the kit and its
  notebook, hidden inputs, placeholders, NaN, the scaffold's completeness test...): ``WHOLE_CONFIG``;
* the tests of the corpus, the blame and the diagnosis, each parametrised by a case or an exercise: a case
  matters when it defines, or its exercise is, the exercise itself, one it calls (a mistake in ``softmax``
  now also changes the new caller's checks: ``callers::`` in ``may_fail``) or one that calls it;
* nothing else: the sandbox, the batch runner, exporters and the like never read an exercise by name.

Which exercises call which is read from the references' code (``grader.diagnosis.callgraph.uses``), never
listed by hand, so the selection follows the reference as it is written.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = (ROOT / "solutions" / "attention.py", ROOT / "solutions" / "attention_modules.py")

# Modules whose tests read every exercise of the config, or are parametrised by corpus cases or exercises
# (filtered to the affected ones below).
WHOLE_CONFIG = frozenset({
    "test_authoring", "test_corpus", "test_blame", "test_diagnosis", "test_readme_config", "test_contract_clauses",
    "test_credit", "test_same_total", "test_release", "test_release_notebooks", "test_seeds", "test_nonfinite",
    "test_reference_and_stubs", "test_scoring", "test_overrides", "test_returns", "test_said_once", "test_cli",
    "test_gate_family", "test_answer_scan", "test_root_cause", "test_operators", "test_hostile", "test_docs_site",
    "test_help_matches_readme", "test_layout", "test_words",
})

ASSIGNMENT_PARAMS = frozenset({"assignment", "aid", "assignment_id"})


def add_option(parser: pytest.Parser) -> None:
    parser.addoption("--affected-by", metavar="EXERCISE", default=None,
                     help="run only the tests that adding or changing EXERCISE can affect (tests/affected.py)")


def reach(name: str, references: tuple[Path, ...] = REFERENCES) -> frozenset[str]:
    """``name``, every function or class of its reference it calls, and every one that calls it.

    Raises ``pytest.UsageError`` when no reference defines ``name``.
    """
    from grader.diagnosis.callgraph import uses

    for path in references:
        spec = importlib.util.spec_from_file_location(f"_affected_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        closure = uses(module)
        if name in closure:
            return frozenset({name, *closure[name], *(other for other, used in closure.items() if name in used)})
    raise pytest.UsageError(f"--affected-by {name}: no reference in solutions/ defines `{name}`")


def exercises_of(value: Any, assignments: frozenset[str] = frozenset()) -> frozenset[str] | None:
    """The exercises a test parameter is about, or None where it is about no exercise in particular.

    A corpus case is about the functions and classes it defines, its ``# exercise:`` and the exercises its
    ``# failing_only:`` names (a hostile case that deletes ``softmax`` is about ``softmax``'s callers); a generated
    family member about its ``exercise``; an id such as ``attention/softmax/list`` or a bare name about
    the names it holds after the leading assignment id (the assignment ``attention`` shares its name with
    an exercise; ``keep`` filters the names to exercises).
    """
    if hasattr(value, "header") and hasattr(value, "path"):  # tests.corpus_cases.CorpusCase
        named = {value.header.get("exercise", "")} | set(re.findall(r"\w+", value.header.get("failing_only", "")))
        return frozenset(defined_names(value.path.read_bytes()) | named)
    if isinstance(getattr(value, "exercise", None), str):
        return frozenset({value.exercise})
    if isinstance(value, str):
        parts = value.replace("::", "/").split("/")
        return frozenset(parts[1:] if len(parts) > 1 and parts[0] in assignments else parts)
    if isinstance(value, tuple):
        parts = [part for part in value if isinstance(part, str)]
        return frozenset(parts[1:] if len(parts) > 1 and parts[0] in assignments else parts)
    return None


def defined_names(source: bytes) -> set[str]:
    """The top-level functions and classes a file defines; in a file that does not parse (a hostile case),
    every name after a line's ``def`` or ``class``."""
    try:
        return {node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    except (SyntaxError, ValueError):
        return set(re.findall(r"^\s*(?:def|class)\s+(\w+)", source.decode("utf-8", "replace"), re.MULTILINE))


def keep(item: pytest.Item, affected: frozenset[str], exercises: frozenset[str],
         assignments: frozenset[str] = frozenset()) -> bool:
    """Whether ``item`` can change when an exercise of ``affected`` changes."""
    if item.path.stem not in WHOLE_CONFIG:
        return False
    callspec = getattr(item, "callspec", None)
    about: set[str] = set()
    for param, value in (callspec.params.items() if callspec is not None else ()):
        if param in ASSIGNMENT_PARAMS:  # `attention` the assignment, not the exercise
            continue
        names = exercises_of(value, assignments)
        if names is not None:
            about |= names & exercises
    return not about or bool(about & affected)


def select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect every item ``--affected-by`` does not reach (reported as deselected, as ``-k`` does)."""
    name = config.getoption("--affected-by")
    if not name:
        return
    from grader.config import load_config

    affected = reach(name)
    loaded = load_config()
    exercises = frozenset(ex.name for aid in loaded.assignments for ex in loaded.assignment(aid).exercises)
    assignments = frozenset(loaded.assignments)
    kept = [item for item in items if keep(item, affected, exercises, assignments)]
    dropped = [item for item in items if not keep(item, affected, exercises, assignments)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
