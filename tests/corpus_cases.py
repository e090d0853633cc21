"""Read the corpus: small files under tests/corpus/<assignment>/{mutants,alternatives,hostile,placeholders}.

Each file starts with ``# key: value`` header lines saying what grading it
must yield; mutants and alternatives are appended to the reference solution
(their definitions override the reference's), hostile files stand alone
unless their header says ``base: reference``.

A case changes the reference only by whole definitions: a mutant that differs
in one line holds the whole function (or class) with that line changed. No
case patches the reference's text, so a new definition in the reference (an
exercise added) can never break an old case; a ``# replace:`` header line is
refused with a message saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from grader.sandbox.client import WorkerServer
    from grader.scorecard import Scorecard

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "corpus"
REFERENCE = {"attention": ROOT / "solutions/attention.py", "attention-modules": ROOT / "solutions/attention_modules.py"}
FILENAME = {"attention": "attention.py", "attention-modules": "attention_modules.py"}


@dataclass(frozen=True)
class CorpusCase:
    path: Path
    kind: str  # mutants | alternatives | hostile
    header: dict[str, str]

    @property
    def assignment(self) -> str:
        return self.header.get("assignment", self.path.parents[1].name)

    @property
    def id(self) -> str:
        return f"{self.path.parents[1].name}/{self.kind}/{self.path.stem}"

    @property
    def base(self) -> str:
        """``reference``: the case is appended to the reference; ``none``: it stands alone (hostile files,
        placeholders); any other value names a template beside the case (``every_function.py.in``) that
        the case is appended to, so cases that differ in one helper share the rest."""
        return self.header.get("base", "reference" if self.kind in ("mutants", "alternatives") else "none")

    def source(self) -> str:
        text = self.path.read_text(encoding="utf-8", errors="surrogateescape")
        if self.base == "reference":
            return REFERENCE[self.assignment].read_text() + "\n\n# ---- corpus case ----\n" + text
        if self.base != "none":
            return (self.path.parent / self.base).read_text(encoding="utf-8") + "\n\n" + text
        return text

    def write_submission(self, folder: Path) -> Path:
        """The file as a student would hand it in (bytes kept for hostile cases)."""
        out = folder / self.path.stem / FILENAME[self.assignment]
        out.parent.mkdir(parents=True, exist_ok=True)
        if self.base == "none":
            out.write_bytes(self.path.read_bytes())
        else:
            out.write_text(self.source(), encoding="utf-8")
        return out


def read_header(path: Path) -> dict[str, str]:
    """The ``# key: value`` lines at the top."""
    header: dict[str, str] = {}
    for line in path.read_bytes().decode("utf-8", "replace").splitlines():
        m = re.match(r"#\s*([a-z_]+):\s*(.*)$", line)
        if not m:
            break
        if m.group(1) == "replace":
            raise ValueError(f"{path}: `# replace:` patches the reference's text, which a new definition in the "
                             "reference can break; write the changed definition whole in the case instead")
        header[m.group(1)] = m.group(2).strip()
    return header


def corpus(kind: str) -> list[CorpusCase]:
    return [CorpusCase(p, kind, read_header(p)) for p in sorted(CORPUS.glob(f"*/{kind}/*.py"))]


def expected_diagnosis(case: CorpusCase) -> str | None:
    """The catalogue id a mutant's ``# diagnosis:`` header names; None for ``none ...`` and alternatives.
    A mutant with no header expects a diagnosis it cannot get: it counts as a miss."""
    if case.kind != "mutants":
        return None
    value = case.header.get("diagnosis", "(no diagnosis header)").split(" ", 1)[0]
    return None if value == "none" else value


def diagnosis_outcome(card: "Scorecard", expected: str | None) -> str:
    """How a card's diagnoses compare with the mistake a case is known to make.

    ``right``: only ``expected`` is named; ``ambiguous``: it is named beside others
    that match as well; ``wrong``: a mistake is named and it is not ``expected``;
    ``none``: nothing is named. ``expected`` None (a correct alternative): any name is wrong.
    """
    named = {m for c in card.checks if c.diagnosis for m in (c.diagnosis.id, *(a.id for a in c.diagnosis.also))}
    if not named:
        return "none"
    if expected in named:
        return "right" if named == {expected} else "ambiguous"
    return "wrong"


def grade_corpus(cases: list[CorpusCase], server: "WorkerServer | None" = None,
                 claim: "Callable[[CorpusCase], bool] | None" = None) -> "Iterator[tuple[CorpusCase, Scorecard]]":
    """Every case graded through one warm grader per assignment, as ``grade-all`` grades a class.

    ``server``: a running worker server to share (the tests' session one); without it, one is
    started here and closed at the end. ``claim``: asked as each case's turn comes, and the case is
    graded only if it says yes (workers sharing a corpus take the cases one at a time).
    """
    import contextlib
    import tempfile

    from grader import api
    from grader.sandbox.client import WorkerServer

    with contextlib.ExitStack() as stack:
        if server is None:
            server = stack.enter_context(WorkerServer())
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="corpus-")))
        for assignment in sorted({c.assignment for c in cases}):
            with api.Grader(assignment, server=server) as grader:
                for case in (c for c in cases if c.assignment == assignment):
                    if claim is None or claim(case):
                        yield case, grader.grade(case.write_submission(folder / case.kind))
