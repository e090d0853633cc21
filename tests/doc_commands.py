"""The shell commands the docs show: read from their fenced blocks (issue 40).

A ```bash block (indented ones inside list items too) holds commands that tests/test_doc_commands.py
runs, in order, page by page; a ```sh block holds commands shown but not run (they need GitHub, an LMS,
a fresh virtual environment, or run until Ctrl-C), each listed in that test with why. No other shell
fence is used, so the marker is the only way a command escapes being run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

RUN, SHOWN = "bash", "sh"
SHELL_FENCES = ("console", "shell", "zsh", "powershell", "bat", "cmd")  # not used by the docs: bash or sh only
FENCE = re.compile(r"^\s*```+\s*([A-Za-z0-9_+-]*)")


@dataclass(frozen=True)
class Command:
    """One command line as the page shows it (continuation lines joined, a trailing comment dropped)."""

    page: str
    line: int
    fence: str
    text: str


def commands(page: str, text: str, skip_first_block: bool = False) -> list[Command]:
    """Every command of the page's ```bash and ```sh blocks, in page order."""
    found: list[Command] = []
    fence: str | None = None
    pending, start, blocks = "", 0, 0
    for number, raw in enumerate(text.splitlines(), 1):
        m = FENCE.match(raw)
        if m:
            if fence is None:
                fence, blocks = m.group(1), blocks + 1
            else:
                fence = None
            continue
        if fence not in (RUN, SHOWN) or (skip_first_block and blocks == 1):
            continue
        line = raw.strip()
        if not line and not pending:
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        whole = (pending + line).split("   #", 1)[0].strip()
        pending = ""
        found.append(Command(page, start, fence, whole))
    return found


def fences(text: str) -> list[str]:
    """The info string of every opening fence of ``text``."""
    opened, out = False, []
    for raw in text.splitlines():
        m = FENCE.match(raw)
        if m:
            if not opened:
                out.append(m.group(1))
            opened = not opened
    return out


def page_commands(root: Path) -> dict[str, list[Command]]:
    """The README (after its first block: the set-up lines, which .ci/run runs) and every page of docs/."""
    pages = {"README.md": commands("README.md", (root / "README.md").read_text(encoding="utf-8"), skip_first_block=True)}
    for path in sorted((root / "docs").glob("*.md")):
        pages[f"docs/{path.name}"] = commands(f"docs/{path.name}", path.read_text(encoding="utf-8"))
    return pages
