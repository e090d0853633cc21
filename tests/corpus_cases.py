"""Read the corpus: small files under tests/corpus/<assignment>/{mutants,alternatives,hostile}.

Each file starts with ``# key: value`` header lines saying what grading it
must yield; mutants and alternatives are appended to the reference solution
(their definitions override the reference's), hostile files stand alone
unless their header says ``base: reference``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

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

    def source(self) -> str:
        text = self.path.read_text(encoding="utf-8", errors="surrogateescape")
        base = self.header.get("base", "none" if self.kind == "hostile" else "reference")
        if base == "reference":
            return REFERENCE[self.assignment].read_text() + "\n\n# ---- corpus case ----\n" + text
        return text

    def write_submission(self, folder: Path) -> Path:
        """The file as a student would hand it in (bytes kept for hostile cases)."""
        out = folder / self.path.stem / FILENAME[self.assignment]
        out.parent.mkdir(parents=True, exist_ok=True)
        if self.header.get("base", "none" if self.kind == "hostile" else "reference") == "reference":
            out.write_text(self.source(), encoding="utf-8")
        else:
            out.write_bytes(self.path.read_bytes())
        return out


def read_header(path: Path) -> dict[str, str]:
    header: dict[str, str] = {}
    for line in path.read_bytes().decode("utf-8", "replace").splitlines():
        m = re.match(r"#\s*([a-z_]+):\s*(.*)$", line)
        if not m:
            break
        header[m.group(1)] = m.group(2).strip()
    return header


def corpus(kind: str) -> list[CorpusCase]:
    return [CorpusCase(p, kind, read_header(p)) for p in sorted(CORPUS.glob(f"*/{kind}/*.py"))]
