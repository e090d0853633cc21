"""Nothing left in $TMPDIR (issue 26): every verb `grader --help` lists, run with a TMPDIR of its own,
leaves that folder as empty as it found it. A forced --dry-run once left an empty torchinductor_root/
there: the worker server's warm-up imported torch._dynamo, which makes inductor's cache folder at
import (grader.sandbox.server.own_inductor_cache)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import cli, seeds
from tests.conftest import ROOT

# Every verb, in a cheap variant. new-exercise writes into the course itself (a copy of the whole course
# would be needed to run it here); it imports nothing of torch and writes no temporary file.
NOT_RUN = {"new-exercise"}


def verbs(work: Path) -> list[tuple[str, list[str]]]:
    klass, out = work / "class", work / "out"
    return [
        ("grade", ["grade", str(ROOT / "examples/attention.py"), "--assignment", "attention",
                   "--out", str(work / "card.json"), "--format", "none", "--report", "html"]),
        ("check", ["check", str(klass / "alice.py"), "--assignment", "attention"]),
        ("grade-all", ["grade-all", str(klass), "--assignment", "attention", "--out", str(out), "--jobs", "1"]),
        ("grade-all --dry-run", ["grade-all", str(klass), "--assignment", "attention", "--out", str(out),
                                 "--jobs", "1", "--dry-run"]),
        ("grade-all --force --dry-run", ["grade-all", str(klass), "--assignment", "attention", "--out", str(out),
                                         "--jobs", "1", "--force", "--dry-run"]),
        ("override", ["override", "alice", "--exercise", "softmax", "--points", "1", "--reason", "seen in class",
                      "--by", "TA", "--course", str(out)]),
        ("merge", ["merge", str(out), "--out", str(work / "merged")]),
        ("export", ["export", "html", str(out / "cards" / "alice.json"), "--out", str(work / "pages")]),
        ("keygen", ["keygen"]),
        ("release", ["release", "--out", str(work / "release"), "--assignment", "attention"]),
        ("gradescope", ["gradescope", "--out", str(work / "autograder.zip"), "--assignment", "attention"]),
        ("ci", ["ci", "--root", str(work / "release"), "--out", str(work / "ci-results")]),
    ]


@pytest.mark.slow
def test_no_verb_leaves_a_file_or_folder_in_tmpdir(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "class").mkdir(parents=True)
    shutil.copy(ROOT / "examples/attention.py", work / "class" / "alice.py")
    shutil.copy(ROOT / "solutions/attention.py", work / "class" / "bob.py")
    listed = set(cli.COMMANDS)
    run = verbs(work)
    assert {argv[0] for _, argv in run} | NOT_RUN == listed, "a verb is neither run here nor said why not"
    env = {k: v for k, v in os.environ.items() if k not in (seeds.SECRET_ENV, "TORCHINDUCTOR_CACHE_DIR")}
    left: dict[str, list[str]] = {}
    for name, argv in run:
        tmp = tmp_path / f"tmp-{name.replace(' ', '_')}"
        tmp.mkdir()
        proc = subprocess.run([sys.executable, "-m", "grader.cli", *argv], capture_output=True, text=True,
                              cwd=work, env={**env, "TMPDIR": str(tmp)}, timeout=600)
        assert "Traceback" not in proc.stderr, (name, proc.stderr)
        assert proc.returncode in (0, 1), (name, proc.returncode, proc.stderr)  # check, ci: 1 when a check fails
        print(f"{name}: exit {proc.returncode}, ls -a $TMPDIR: {sorted(['.', '..', *os.listdir(tmp)])}")
        if os.listdir(tmp):
            left[name] = sorted(os.listdir(tmp))
    assert left == {}, f"left in $TMPDIR, by verb: {left}"


IMPORT_DYNAMO = """
import os, sys
from grader.sandbox import server
with server.own_inductor_cache():
    import torch._dynamo
print(sorted(os.listdir(os.environ["TMPDIR"])), os.environ.get("TORCHINDUCTOR_CACHE_DIR"))
"""


def test_torch_dynamo_imported_in_the_warm_up_leaves_no_inductor_folder(tmp_path: Path) -> None:
    """At the source: whatever imports torch._dynamo during the server's warm-up (torch makes its inductor
    cache folder at that import) makes it in a folder of the server's own, removed after; and the
    variable torch sets is unset again, so a child's compile caches in the child's own scratch."""
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    proc = subprocess.run([sys.executable, "-c", IMPORT_DYNAMO], capture_output=True, text=True, cwd=ROOT,
                          env={**env, "TMPDIR": str(tmp_path)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]", "None"], proc.stdout
    bare = subprocess.run([sys.executable, "-c", "import torch._dynamo"], cwd=ROOT, env={**env, "TMPDIR": str(tmp_path)},
                          timeout=300)
    assert bare.returncode == 0 and [p.name for p in tmp_path.iterdir()][0].startswith("torchinductor_")  # the cause
