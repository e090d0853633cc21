"""One import of torch per grader process: the worker server is a fork of the grader process, and holds no secret.

``WorkerServer.forked()`` forks the server from the grader process after ``import torch`` and before the
config, the hidden checks or the reference are loaded; the fork scrubs the environment it inherited.
Each test runs in a fresh interpreter (``SCRIPT``), as ``grader grade`` and a grade-all grader process
start, with course secrets in its environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECRETS = {"GRADER_COURSE_SECRET": "course-secret-6f1d2a9b8c7e", "GRADER_HIDDEN_KEY": "hidden-key-0a9e8d7c6b5f"}

# The student's side: its own memory, every readable mapping, searched for the secrets (no sandbox layer
# stands in the way: the point is what the process holds, not what the layers let it read).
SCAN = r'''
import os, re
def scan(halves):
    # Each secret is given in two halves and sought with a pattern whose text has "(?:)" between them (its
    # compiled form stores one int per character): the scanner itself never holds a secret in one piece.
    patterns = [re.compile(re.escape(a.encode()) + b"(?:)" + re.escape(b.encode())) for a, b in halves]
    found, regions = set(), 0
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            addr, perms = line.split()[:2]
            if not perms.startswith("r") or "[vvar" in line or "[vsyscall" in line:
                continue
            start, end = (int(x, 16) for x in addr.split("-"))
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue
            regions += 1
            found |= {i for i, p in enumerate(patterns) if p.search(chunk)}
    environ = open("/proc/self/environ", "rb").read()
    return sorted(found), regions, sorted({i for i, p in enumerate(patterns) if p.search(environ)}), sorted(os.environ)
'''

SCRIPT = SCAN + f"SCAN = {SCAN!r}\n" + r'''
import json, sys, tempfile
from pathlib import Path
mode = sys.argv[1]
needles = [tuple(h.split("|")) for h in sys.argv[2:]]
if mode == "after-secret":  # a grader process that already loaded what the server must not see
    import grader.session  # noqa: F401
if mode == "zygote":  # a grade-all grader process: a fork of the batch's zygote, which imported this first
    import grader.batch.zygote  # noqa: F401
    assert "torch" in sys.modules
before = scan(needles)  # the grader process itself holds the secrets: the scan can find them
from grader.sandbox.launcher import WorkerServer
from grader.sandbox.client import SubmissionWorker
from grader.sandbox.limits import Limits
from grader.sandbox.layers.policy import LAYER_ORDER
server = WorkerServer.forked()
source = SCAN + "\nimport json\nprint('SCAN', json.dumps(scan(" + repr(needles) + ")))\n"
with tempfile.TemporaryDirectory() as scratch:
    worker = SubmissionWorker(server, source, "student.py", Limits(disabled_layers=tuple(LAYER_ORDER)), Path(scratch))
    worker.ensure_started()
    worker.close()
    output = worker.output_text()
server_cmdline = open(f"/proc/{server.pid}/cmdline", "rb").read().split(b"\0")[:3]
server_parent = int(open(f"/proc/{server.pid}/stat").read().rsplit(")", 1)[1].split()[1])
forked = server._proc is None
server.close()
print(json.dumps({"before": before, "child": output, "forked": forked, "server_parent": server_parent,
                  "me": __import__("os").getpid(), "server_cmdline": [c.decode() for c in server_cmdline],
                  "my_cmdline": [c.decode() for c in open("/proc/self/cmdline", "rb").read().split(b"\0")[:3]]}))
'''


def run(mode: str) -> dict:
    env = {**os.environ, **SECRETS, "PYTHONPATH": str(ROOT)}
    halves = [f"{v[:len(v) // 2]}|{v[len(v) // 2:]}" for v in SECRETS.values()]
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode, *halves], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    line = next((l for l in result["child"].splitlines() if l.startswith("SCAN ")), None)
    assert line is not None, f"the child did not report its scan: {result['child'][-1000:]}"
    result["child"] = json.loads(line[5:])
    return result


@pytest.fixture(scope="module")
def clean() -> dict:
    return run("clean")


def test_the_server_is_a_fork_of_the_grader_process(clean: dict) -> None:
    """No second interpreter importing torch: the server's parent is the grader process and it runs the
    grader's own command line, not ``python -m grader.sandbox.server``."""
    assert clean["forked"] and clean["server_parent"] == clean["me"]
    assert clean["server_cmdline"] == clean["my_cmdline"]
    assert "grader.sandbox.server" not in " ".join(clean["server_cmdline"])


def test_no_secret_of_the_environment_reaches_the_server_or_a_child(clean: dict) -> None:
    found, regions, in_environ, _ = clean["before"]
    assert found == list(range(len(SECRETS))) and in_environ, "the scan must find the secrets where they are"
    found, regions, in_environ, names = clean["child"]
    assert regions > 20, "the child's scan read too little of its memory to mean anything"
    assert found == [] and in_environ == [], f"secrets in the child's memory: {found}, in /proc/self/environ: {in_environ}"
    assert not set(names) & set(SECRETS), names


def test_a_process_that_loaded_a_secret_starts_a_fresh_server_instead() -> None:
    """Once the hidden checks' machinery is imported, a fork would carry it: a fresh interpreter is started."""
    result = run("after-secret")
    assert not result["forked"] and "grader.sandbox.server" in " ".join(result["server_cmdline"])
    found, _, in_environ, _ = result["child"]
    assert found == [] and in_environ == []


def test_a_grader_process_forked_from_the_batch_zygote_still_forks_a_clean_server() -> None:
    """grade-all's grader processes are forks of one zygote that imported torch for all of them
    (grader/batch/zygote.py): what it loaded leaves the server a fork, and the child without a secret."""
    result = run("zygote")
    assert result["forked"] and result["server_parent"] == result["me"]
    found, regions, in_environ, _ = result["child"]
    assert regions > 20 and found == [] and in_environ == []


CLI_SCRIPT = r'''
import json, sys
from grader.cli import build_parser
from grader.cli.shared import with_server

def command(args, server):
    # What the command finds when it starts: the server forked, and nothing of the config read here.
    print(json.dumps({"forked": server._proc is None, "config_read_here": "grader.config" in sys.modules,
                      "torch": "torch" in sys.modules}))
    return 0

args = build_parser().parse_args(sys.argv[2:])
args.own_process = sys.argv[1] == "own"
code = with_server(args, command)
print(json.dumps({"returned": code}))  # a caller in-process goes on after the command
sys.exit(code)
'''


def test_the_cli_reads_the_config_in_a_fork_beside_torch_and_still_forks_the_server(tmp_path: Path) -> None:
    """``grader grade`` (and ``check``, through the same ``with_server``) ask a fork about the config while they
    import torch (``ConfigCheck``): the server is still a fork of the command's process, which has read nothing
    of the config."""
    target = tmp_path / "attention.py"
    target.write_text((ROOT / "solutions/attention.py").read_text(), encoding="utf-8")
    args = ["grade", str(target), "--assignment", "attention", "--out", str(tmp_path / "c.json")]
    done = subprocess.run([sys.executable, "-c", CLI_SCRIPT, "own", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [json.loads(line) for line in done.stdout.strip().splitlines()] == [
        {"forked": True, "config_read_here": False, "torch": True}, {"returned": 0}]


@pytest.mark.parametrize("process", ["own", "shared"])
def test_a_config_problem_found_beside_the_torch_import_is_one_line_and_runs_nothing(process: str, tmp_path: Path) -> None:
    """In its own process the command ends as soon as the fork answers; a caller in-process (a test, a
    library) gets the status back instead, its process left running."""
    target = tmp_path / "attention.py"
    target.write_text("", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", CLI_SCRIPT, process, "grade", str(target), "--assignment", "nope",
                           "--out", str(tmp_path / "c.json")], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 2
    assert done.stdout == ("" if process == "own" else '{"returned": 2}\n')
    assert done.stderr.startswith("grader: unknown assignment 'nope'") and done.stderr.count("\n") == 1
