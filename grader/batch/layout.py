"""Where grade-all keeps its files under ``--out`` (``Layout``), the per-student records that make a
re-run resume, and the card key (``fingerprint``) that decides who is graded again.

``read_folder`` is how ``grader export canvas|moodle FOLDER`` reads such a folder: the CLI hands it to
``grader.export.command``, which imports nothing of the batch (the batch stands on export's rows)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from grader import files, seeds
from grader.config import CHECKS_ROOT, AssignmentConfig
from grader.export.gradebook import Row
from grader.scorecard import Scorecard
from grader.version import __version__


def fingerprint(assignment: AssignmentConfig, secret: bytes | None = None) -> str:
    """What decides a card besides the submission: config, checks, reference, versions, course secret.

    A re-run skips a student only when this and the file's sha256 are both
    unchanged, so fixing a check (or a point value) re-grades everyone, and
    so does a new course secret (every student's hidden inputs change).
    """
    def plain(value: Any) -> Any:
        if isinstance(value, Path):
            return hashlib.sha256(value.read_bytes()).hexdigest() if value.is_file() else str(value)
        if isinstance(value, frozenset):
            return sorted(value)
        raise TypeError(type(value))

    # The late policy is applied to the rows on every run (grader.deadlines), never part of a card's key.
    decided = {k: v for k, v in asdict(assignment).items() if k not in ("deadline", "extensions")}
    config = json.dumps(decided, default=plain, sort_keys=True)
    checks = hashlib.sha256()
    for path in sorted(p for p in CHECKS_ROOT.rglob("*") if p.suffix in (".py", ".ini")):
        checks.update(f"{path.relative_to(CHECKS_ROOT)}\0".encode() + path.read_bytes())
    parts = [__version__, metadata.version("torch"), config, checks.hexdigest(), seeds.secret_id(secret)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Layout:
    """Where a batch's files go under ``--out``."""

    root: Path

    @property
    def cards(self) -> Path:
        return self.root / "cards"

    @property
    def records(self) -> Path:
        return self.root / "records"

    @property
    def manifest(self) -> Path:
        return self.root / "batch.json"

    def card(self, student: str) -> Path:
        return self.cards / f"{student}.json"

    def read_card(self, student: str) -> Scorecard | None:
        """The student's card on disk, or None when there is none or it cannot be read."""
        try:
            return Scorecard.from_dict(json.loads(self.card(student).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def record(self, student: str) -> Path:
        return self.records / f"{student}.json"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    def report(self, student: str) -> Path:
        return self.reports / f"{student}.html"

    def pytest_report(self, student: str) -> Path:
        return self.reports / f"{student}.report.json"

    @property
    def index(self) -> Path:
        return self.reports / "_index.html"  # "_": intake ignores such names, so no student can be called that

    @property
    def cohort(self) -> Path:
        """The class views' own files (plots, the similarity report's token streams)."""
        return self.root / "cohort"

    @property
    def tokens(self) -> Path:
        return self.cohort / "tokens.json"

    def plot(self, name: str) -> Path:
        return self.cohort / f"{name}.png"

    @property
    def similarity(self) -> Path:
        return self.root / "similarity.json"

    def prepare(self) -> None:
        for folder in (self.root, self.cards, self.records):
            folder.mkdir(parents=True, exist_ok=True)
            files.remove_leftovers(folder)
        if self.reports.is_dir():  # made by the first --report html run only
            files.remove_leftovers(self.reports)


def write_record(layout: Layout, row: Row, key: str) -> None:
    files.write_atomically(layout.record(row.student), json.dumps({"row": row.to_dict(), "key": key}, indent=1) + "\n")


def read_record(layout: Layout, student: str) -> tuple[Row, str] | None:
    try:
        data = json.loads(layout.record(student).read_text(encoding="utf-8"))
        return Row.from_dict(data["row"]), str(data["key"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_key(sha256: str, fp: str) -> str:
    return f"{sha256}:{fp}"


class UnreadableFolder(ValueError):
    """A folder that is not grade-all's output, or one of whose records cannot be read (one line)."""


def read_folder(folder: Path) -> tuple[list[Row], str]:
    """Every student's row of a grade-all output folder (its records, ``error`` and ``missing`` rows
    included, which cards alone cannot tell) and its assignment id: ``batch.json``'s once a run
    finished, else the folder's name."""
    layout = Layout(folder)
    records = sorted(layout.records.glob("*.json"))
    if not records:
        raise UnreadableFolder(f"{folder} is not a grade-all output folder (no records/*.json)")
    rows = []
    for record in records:
        found = read_record(layout, record.stem)
        if found is None:
            raise UnreadableFolder(f"{record}: unreadable record; run grade-all there again")
        rows.append(found[0])
    try:
        assignment = str(json.loads(layout.manifest.read_text(encoding="utf-8"))["assignment"])
    except (OSError, ValueError, KeyError, TypeError):
        assignment = folder.name
    return rows, assignment
