"""A Ctrl-C at any moment of ``grader grade-all``'s start-up is one line and exit 130, with nothing left behind;
a SIGINT the command was started with ignored (a shell's background job) stays ignored throughout.

The moment is chosen without a clock: ``tests/interrupt_at.py`` sends the SIGINT as a named module starts to
import, for a spread of the modules the command imports (the CLI's own, the batch's, the libraries they pull
in). The later moments (the zygote importing torch, the pool starting) are tests/test_batch.py's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WRAPPER = ROOT / "tests" / "interrupt_at.py"
SAMPLED = 10  # modules of the import chain tried, spread evenly from the first to the last (each run ~1-3 s)
LAZY_IMPORTS = ("grader.batch.fork_server", "grader.batch.run")  # imported by cmd_grade_all itself, after the parse

LISTING = r"""
import sys
import grader.cli
before = set(sys.modules)
from grader.cli import commands
print("\n".join(m for m in sys.modules if m not in before))
"""


def import_chain() -> list[str]:
    """The modules ``grader.cli.commands`` imports (in the order they start), sampled evenly, then those
    grade-all imports itself."""
    listed = subprocess.run([sys.executable, "-c", LISTING], capture_output=True, text=True, cwd=ROOT, check=True,
                            timeout=120).stdout.split()
    named = [m for m in listed if not m.startswith("_") and (m.startswith("grader") or "." not in m)]
    step = max(1, len(named) // (SAMPLED - 1))
    return list(dict.fromkeys([*named[::step], named[-1], *LAZY_IMPORTS]))


def grade_all(tmp_path: Path, disposition: str, module: str) -> tuple[subprocess.CompletedProcess, Path, Path]:
    klass, out, marker = tmp_path / "class", tmp_path / "out", tmp_path / "tmp"
    (klass / "alice").mkdir(parents=True)
    (klass / "alice" / "attention.py").write_text((ROOT / "solutions" / "attention.py").read_text())
    marker.mkdir()
    done = subprocess.run([sys.executable, str(WRAPPER), disposition, module, "grade-all", str(klass),
                           "--assignment", "attention", "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "TMPDIR": str(marker), "PYTHONPATH": str(ROOT)}, timeout=300)
    return done, out, marker


@pytest.mark.parametrize("module", import_chain())
def test_a_ctrl_c_while_the_command_imports_is_one_line_and_exit_130(tmp_path: Path, module: str) -> None:
    done, out, marker = grade_all(tmp_path, "default", module)
    assert done.returncode == 130, done.stderr[-2000:]
    assert done.stderr.splitlines() == ["grader: interrupted"] or (
        "Traceback" not in done.stderr and done.stderr.splitlines()[-1] == "grader: interrupted"), done.stderr[-2000:]
    assert not (out / "gradebook.csv").exists()
    assert not list(marker.glob("grader-*")), "scratch left behind"


@pytest.mark.slow
@pytest.mark.parametrize("module", LAZY_IMPORTS)
def test_a_sigint_ignored_from_the_start_stays_ignored(tmp_path: Path, module: str) -> None:
    """Started with SIGINT ignored (``grader grade-all ... &`` from a script), the same signal at the same
    moment changes nothing: the class is graded, as without it."""
    done, out, _ = grade_all(tmp_path, "ignored", module)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "interrupted" not in done.stderr
    assert (out / "cards" / "alice.json").exists() and (out / "gradebook.csv").exists()
