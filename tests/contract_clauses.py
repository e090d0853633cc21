"""The contract, clause by clause: which checks enforce each promise, which corpus cases prove them.

``docs/contract-clauses.yaml`` is the source of truth; this module reads it,
renders ``docs/contract-clauses.md`` from it, and offers what
``tests/test_contract_clauses.py`` needs to keep both true (the check
functions that exist, which exercises build on which). Run

    .venv/bin/python -m tests.contract_clauses --write

after editing the YAML; ``--check`` exits 1 when the markdown is stale.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "contract-clauses.yaml"
MARKDOWN = ROOT / "docs" / "contract-clauses.md"
CONTRACT = ROOT / "docs" / "CONTRACT.md"  # the student contract: this project's own copy
SHARED_CONTRACT = ROOT.parent / "shared" / "spec" / "CONTRACT.md"  # the course's text, where a checkout has it
WRITE_COMMAND = ".venv/bin/python -m tests.contract_clauses --write"
KINDS = ("requirement", "freedom")


class ContractMissing(FileNotFoundError):
    """docs/CONTRACT.md is not there: nothing can say what the clauses quote."""


def read_contract(path: Path = CONTRACT) -> str:
    """The student contract's text; a missing file is an error, never a reason to skip."""
    if not path.is_file():
        raise ContractMissing(
            f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} is missing: it is the student "
            "contract this project owns (the course's text word for word, then its Additions); restore it "
            "from git, or copy ../shared/spec/CONTRACT.md there and add the Additions section back")
    return path.read_text(encoding="utf-8")


def contract_blocks(text: str) -> list[str]:
    """A markdown text as its blocks, whitespace collapsed: headings, table rows, list items, paragraphs.

    A copy contains another word for word when the other's blocks occur in it in the same order, so a
    re-wrapped paragraph is the same text and a table row or section added in between is an addition.
    """
    blocks: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            blocks.append(" ".join(" ".join(current).split()))
            current.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            flush()
        elif stripped.startswith(("#", "|")):
            flush()
            blocks.append(" ".join(stripped.split()))
        elif stripped.startswith(("- ", "* ")):
            flush()
            current.append(stripped)
        else:
            current.append(stripped)
    flush()
    return blocks


def missing_blocks(shared: str, ours: str) -> list[str]:
    """The blocks of ``shared`` that ``ours`` does not hold in the same order (empty: contained)."""
    held, at, missing = contract_blocks(ours), 0, []
    for block in contract_blocks(shared):
        try:
            at = held.index(block, at) + 1
        except ValueError:
            missing.append(block)  # not there after the previous block: changed, dropped or moved
    return missing


@dataclass(frozen=True)
class MutantRef:
    """A corpus case that breaks a clause; ``also_loses`` names exercises whose checks run it too, and why."""

    case: str
    also_loses: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Clause:
    id: str
    assignment: str
    subject: tuple[str, ...]  # exercise names, or ("*",) for every exercise of the assignment
    text: str
    means: str = ""
    kind: str = "requirement"
    checks: dict[str, tuple[str, ...]] = field(default_factory=dict)  # exercise or "*" -> check names
    mutants: tuple[MutantRef, ...] = ()
    alternatives: tuple[str, ...] = ()
    mutant_missing: str = ""

    @property
    def proven(self) -> bool:
        """A requirement is proven by a case that breaks it, a freedom by a case that uses it."""
        return bool(self.mutants if self.kind == "requirement" else self.alternatives)


def load_clauses(path: Path = DATA) -> list[Clause]:
    """Read the YAML strictly: an unknown key is a typo that would silently prove nothing."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    allowed = {"id", "assignment", "subject", "text", "means", "kind", "checks", "mutants", "alternatives",
               "mutant_missing"}
    clauses = []
    for entry in raw["clauses"]:
        unknown = set(entry) - allowed
        if unknown:
            raise ValueError(f"{entry.get('id')}: unknown keys {sorted(unknown)}")
        subject = entry["subject"]
        mutants = tuple(MutantRef(m) if isinstance(m, str) else MutantRef(m["case"], dict(m.get("also_loses") or {}))
                        for m in entry.get("mutants") or ())
        clauses.append(Clause(
            id=entry["id"], assignment=entry["assignment"],
            subject=("*",) if subject == "*" else tuple(subject),
            text=" ".join(str(entry["text"]).split()), means=str(entry.get("means", "")),
            kind=entry.get("kind", "requirement"),
            checks={ex: tuple(names) for ex, names in (entry.get("checks") or {}).items()},
            mutants=mutants, alternatives=tuple(entry.get("alternatives") or ()),
            mutant_missing=str(entry.get("mutant_missing", "")),
        ))
    return clauses


# ---------------------------------------------------------------------------- facts about the grader


def check_functions(checks_dir: Path) -> set[str]:
    """Every check (``test_*`` function) in one assignment's check package, found by reading, not importing."""
    names: set[str] = set()
    for path in sorted(checks_dir.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}
    return names


def builds_on(reference: Path, names: set[str]) -> dict[str, set[str]]:
    """For each contract name, the contract names the reference's code for it uses, transitively.

    A mutant of ``softmax`` may lose points in ``attention`` (which calls it) without
    breaking the clause's isolation; it must not lose any in ``bag_of_past``.
    """
    tree = ast.parse(reference.read_text(encoding="utf-8"))
    direct: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            direct[node.name] = (used & names) - {node.name}
    closure = {}
    for name in direct:
        seen, todo = set(), list(direct[name])
        while todo:
            dep = todo.pop()
            if dep not in seen:
                seen.add(dep)
                todo.extend(direct.get(dep, ()))
        closure[name] = seen
    return closure


def expand_checks(clause: Clause, configured: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The clause's checks as (exercise, check) pairs; ``*`` means every exercise that configures the check."""
    pairs = set()
    for exercise, names in clause.checks.items():
        targets = sorted(configured) if exercise == "*" else [exercise]
        for name in names:
            pairs |= {(ex, name) for ex in targets if name in configured.get(ex, set())}
    return pairs


# ---------------------------------------------------------------------------- the markdown


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _case_name(case: str) -> str:
    return f"`{case.rsplit('/', 1)[-1]}`"


def _checks_cell(clause: Clause) -> str:
    if not clause.checks:
        return "— (nothing to enforce)"
    every = "every function" if clause.assignment == "attention" else "both modules"
    parts = []
    for exercise, names in clause.checks.items():
        listed = ", ".join(f"`{n}`" for n in names)
        if exercise == "*":
            parts.append(f"{listed} ({every})")
        elif clause.subject == (exercise,):
            parts.append(listed)
        else:
            parts.append(f"{exercise}: {listed}")
    return "<br>".join(parts)


def _proof_cell(clause: Clause) -> str:
    if clause.kind == "freedom":
        proof = ", ".join(_case_name(a) for a in clause.alternatives)
        return f"used by {proof} (full marks)" if proof else f"**none**: {clause.mutant_missing}"
    if not clause.mutants:
        return f"**no mutant**: {clause.mutant_missing}"
    return "broken by " + ", ".join(_case_name(m.case) for m in clause.mutants)


def render(clauses: list[Clause]) -> str:
    """docs/contract-clauses.md, byte for byte."""
    checks = {(c.assignment, n) for c in clauses for names in c.checks.values() for n in names}
    mutants = {m.case for c in clauses for m in c.mutants}
    alternatives = {a for c in clauses for a in c.alternatives}
    unproven = [c for c in clauses if not c.proven]
    freedoms = [c for c in clauses if c.kind == "freedom"]
    lines = [
        "# The contract, clause by clause",
        "",
        f"<!-- Generated from docs/contract-clauses.yaml; do not edit. Regenerate: {WRITE_COMMAND} -->",
        "",
        "Every promise of the student contract (`docs/CONTRACT.md`), split into single clauses, with the",
        "hidden checks that enforce it and the corpus cases (`tests/corpus/`) that prove those checks work. A",
        "**mutant** breaks exactly that clause: `tests/test_contract_clauses.py` grades it and requires that it",
        "loses points in one of the clause's checks of its own exercise and in no exercise that does not build on",
        "that one (a broken `softmax` may cost `attention` points too, since `attention` calls it; never",
        "`bag_of_past`'s). A **freedom** is a promise to students; it is proven by an alternative that relies on it",
        "and still scores full marks.",
        "",
        f"{len(clauses)} clauses ({len(clauses) - len(freedoms)} requirements, {len(freedoms)} freedoms), "
        f"{len(checks)} distinct check functions, {len(mutants)} mutants, {len(alternatives)} alternatives; "
        f"{len(unproven)} clause{'s' if len(unproven) != 1 else ''} without a proof.",
        "",
    ]
    for assignment in dict.fromkeys(c.assignment for c in clauses):
        lines += [f"## Assignment `{assignment}`", "",
                  "| Clause | About | Contract says | Enforced by | Proof |", "|---|---|---|---|---|"]
        for c in (c for c in clauses if c.assignment == assignment):
            every = "every function" if assignment == "attention" else "both modules"
            about = every if c.subject == ("*",) else ", ".join(f"`{s}`" for s in c.subject)
            says = f"“{c.text}”" + (f" — {c.means}" if c.means else "")
            lines.append(f"| `{c.id}` | {about} | {_cell(says)} | {_cell(_checks_cell(c))} | {_cell(_proof_cell(c))} |")
        lines.append("")
    lines += ["## Clauses without a mutant", ""]
    if not freedoms and not unproven:
        lines.append("None.")
    for c in freedoms:
        lines.append(f"- `{c.id}` is a freedom, not a requirement: no submission can break it; "
                     + (f"proven by {', '.join(_case_name(a) for a in c.alternatives)}." if c.alternatives
                        else f"not proven: {c.mutant_missing}"))
    for c in unproven:
        if c.kind == "requirement":
            lines.append(f"- `{c.id}`: {c.mutant_missing or 'no reason given'}")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"write {MARKDOWN.relative_to(ROOT)}")
    mode.add_argument("--check", action="store_true", help="exit 1 if the markdown is out of date")
    args = parser.parse_args(argv)
    text = render(load_clauses())
    if args.write:
        MARKDOWN.write_text(text, encoding="utf-8")
        return 0
    current = MARKDOWN.read_text(encoding="utf-8") if MARKDOWN.is_file() else ""
    if current != text:
        print(f"{MARKDOWN.relative_to(ROOT)} is out of date; run {WRITE_COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
