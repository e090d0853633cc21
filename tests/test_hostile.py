"""Hostile submissions: the sandbox holds, the judge survives, and no attack earns points.

Every file in ``tests/corpus/*/hostile/`` is graded through the session's warm
worker server with a copy of assignments.yaml whose per-call limits are
lowered (so the timeouts stay cheap), and its header is checked:

* ``expect``: ``zero`` | ``partial`` | ``full`` | ``below_full`` (the total);
* ``status``: at least one check ended with this status;
* ``message``: some check that did not pass says this (regex, any case);
* ``failing_only``: only this exercise's checks may fail;
* ``output_has`` / ``output_lacks``: what the card's ``output`` must (not) contain;
* ``output_capped``: the output is cut at ``output_keep_kib`` with a note, and
  the judge's memory stays flat;
* ``absent_file``: a file the attack tries to create must not exist afterwards;
* ``listen_port`` / ``listen_unix``: listeners the attack tries to reach must
  see no connection and no datagram;
* ``card_stable``: a card already on disk is untouched by grading, and one
  written after grading is byte-identical 1 s later;
* ``max_seconds``: grading the file takes at most this long (the card's
  ``duration_s``). Such files are graded through the CLI in a subprocess with
  a hard time cap, so a judge that waits on the submission fails the test in
  seconds instead of hanging the suite.

Every case also checks that the grader itself did not fail (``grader_error``
is None), that no check crashed on what the submission returned ("internal
check error"), that the worker server is alive and still grades, and that no
process started during grading is left behind (the test process is made a
child subreaper, so even a double-forked daemon would show up as ours).

Every hostile file bounds itself (loops give up after a minute, allocations
stop at 8 GiB, forks at 20, writes at 2 GiB, only 127.0.0.1 is contacted), so
a protection that regresses makes a test fail, not the machine fall over.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from grader import api, scorecard
from grader.sandbox.client import WorkerServer
from grader.submission import SubmissionTooLarge
from grader.scorecard import Scorecard
from tests.corpus_cases import ROOT, CorpusCase, corpus

HOSTILE = corpus("hostile")
EXPECTATIONS = {"zero", "partial", "full", "below_full"}
LIMITS = {"call_cpu_seconds": 0.5, "call_wall_seconds": 3, "load_cpu_seconds": 2}
OUTPUT_KEEP = 64 * 1024
TRUNCATION_NOTE = re.compile(r"truncat|dropped|omitted|not shown|more bytes|cut off", re.IGNORECASE)
PR_SET_CHILD_SUBREAPER = 36
CLI_START_ALLOWANCE_S = 8.0  # a fresh worker server imports torch before grading starts


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def hostile_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """assignments.yaml with cheap per-call limits; paths made absolute so the copy can live elsewhere."""
    raw = yaml.safe_load((ROOT / "assignments.yaml").read_text(encoding="utf-8"))
    raw["defaults"]["limits"].update(LIMITS)
    for spec in raw["assignments"].values():
        for key in ("reference", "stub"):
            if spec.get(key):
                spec[key] = str(ROOT / spec[key])
    path = tmp_path_factory.mktemp("hostile-config") / "assignments.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module", autouse=True)
def subreaper() -> Iterator[None]:
    """Orphans of anything we started are re-parented to us, so an escaped daemon is still seen."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    yield
    libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
    _reap_orphans()


def _reap_orphans() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


# --------------------------------------------------------------------------- processes


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, session) of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0].decode(), int(fields[1]), int(fields[3])


def _all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def descendants(root: int) -> set[int]:
    """Live (non-zombie) processes below ``root``."""
    children: dict[int, list[int]] = {}
    for pid in _all_pids():
        st = _stat(pid)
        if st and st[0] != "Z":
            children.setdefault(st[1], []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def session_members(sid: int) -> set[int]:
    return {pid for pid in _all_pids() if (st := _stat(pid)) and st[2] == sid and st[0] != "Z"}


def assert_no_leftover_processes(server: WorkerServer, before: set[int], settle_s: float = 2.0) -> None:
    """Nothing started while grading may outlive it: no new descendant of ours, no child of the server."""
    server_pid = server._proc.pid
    deadline = time.monotonic() + settle_s
    while True:
        _reap_orphans()
        new = descendants(os.getpid()) - before
        stray = (session_members(server_pid) | descendants(server_pid)) - {server_pid}
        if not new and not stray:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"processes left behind after grading: new descendants {sorted(new)}, "
                                 f"in the worker server's session {sorted(stray)}")
        time.sleep(0.05)


def assert_server_healthy(server: WorkerServer) -> None:
    assert server._proc.poll() is None, f"the worker server died (exit {server._proc.returncode})"
    assert _stat(server._proc.pid) is not None


# --------------------------------------------------------------------------- listeners


@contextlib.contextmanager
def listeners(header: dict[str, str]) -> Iterator[list[socket.socket]]:
    socks: list[socket.socket] = []
    try:
        if "listen_port" in header:
            port = int(header["listen_port"])
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                s = socket.socket(socket.AF_INET, kind)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:  # busy (another run of this suite?): the refusal is still checked by `message`
                    s.close()
                    continue
                if kind == socket.SOCK_STREAM:
                    s.listen(8)
                s.setblocking(False)
                socks.append(s)
        if "listen_unix" in header:
            path = header["listen_unix"]
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            s.listen(8)
            s.setblocking(False)
            socks.append(s)
        yield socks
    finally:
        for s in socks:
            s.close()
        if "listen_unix" in header:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(header["listen_unix"])


def assert_nothing_arrived(socks: list[socket.socket]) -> None:
    for s in socks:
        ready, _, _ = select.select([s], [], [], 0)
        if not ready:
            continue
        try:
            if s.type == socket.SOCK_STREAM:
                conn, peer = s.accept()
                conn.close()
                raise AssertionError(f"the submission connected to {s.getsockname()} from {peer}")
            data = s.recv(1024)
            raise AssertionError(f"the submission sent {data!r} to {s.getsockname()}")
        except BlockingIOError:
            pass


# --------------------------------------------------------------------------- header checks


def _failed(card: Scorecard) -> list[tuple[str, str, str, str]]:
    return [(c.exercise, c.id, c.status, c.message) for c in card.checks if c.status not in ("passed", "skipped")]


def assert_expectation(card: Scorecard, header: dict[str, str]) -> None:
    expect = header["expect"]
    failing = _failed(card)
    summary = f"score {card.score}/{card.max_score}; not passed: {failing[:4]}"
    if expect == "zero":
        passed = [(c.exercise, c.id) for c in card.checks if c.score > 0]
        assert card.score == 0, f"expected no points, {summary}; points from {passed[:6]}"
    elif expect == "full":
        assert card.score == card.max_score, f"expected full marks, {summary}"
    elif expect == "partial":
        assert 0 < card.score < card.max_score, f"expected partial credit, {summary}"
    elif expect == "below_full":
        assert card.score < card.max_score, f"expected to lose points, {summary}"
    if "status" in header:
        statuses = {c.status for c in card.checks}
        assert header["status"] in statuses, f"no check ended with status {header['status']!r}: {sorted(statuses)}"
    if "message" in header:
        pattern = re.compile(header["message"], re.IGNORECASE)
        messages = [c.message for c in card.checks if c.status != "passed"] + ([card.problem] if card.problem else [])
        assert any(pattern.search(m) for m in messages), (
            f"no message matches {header['message']!r}; messages: {sorted(set(messages))[:5]}"
        )
    if "failing_only" in header:
        others = [f for f in failing if f[0] != header["failing_only"]]
        assert not others, f"checks outside {header['failing_only']} failed: {others[:4]}"
    for needle in filter(None, [header.get("output_has")]):
        assert needle in card.output, f"the output lacks {needle!r} (the attack did not run?): {card.output[:300]!r}"
    for needle in filter(None, [header.get("output_lacks")]):
        assert needle not in card.output, f"the attack succeeded: {card.output[card.output.find(needle):][:300]!r}"


@pytest.fixture(scope="module")
def graders(server: WorkerServer, hostile_config: Path) -> Iterator[dict[str, api.Grader]]:
    """One warm grader per assignment for the whole hostile corpus, as ``grade-all`` grades a class:
    every attack also has to leave the judge able to grade the next submission."""
    made: dict[str, api.Grader] = {}
    yield made
    for grader in made.values():
        grader.close()


def grade_hostile(graders: dict[str, api.Grader], server: WorkerServer, config: Path, path: Path,
                  assignment: str) -> Scorecard:
    if assignment not in graders:
        graders[assignment] = api.Grader(assignment, server=server, config_path=config)
    card = graders[assignment].grade(path)
    assert card.grader_error is None, card.grader_error
    internal = [(c.id, c.message) for c in card.checks if "internal check error" in c.message]
    assert not internal, f"a check crashed on what the submission returned: {internal[:3]}"
    named = [(c.id, c.diagnosis.id) for c in card.checks if c.diagnosis]
    assert not named, f"an attack makes no catalogued mistake, yet the card names one: {named[:3]}"
    return card


def grade_with_cli(config: Path, path: Path, assignment: str, out: Path, max_seconds: float) -> Scorecard:
    """The CLI in its own process (own worker server), killed if it runs far past ``max_seconds``."""
    cap = max_seconds + CLI_START_ALLOWANCE_S
    cmd = [sys.executable, "-m", "grader.cli", "grade", str(path), "--assignment", assignment,
           "--out", str(out), "--format", "none", "--config", str(config)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"grading did not finish within {cap:g} s (limit {max_seconds:g} s plus {CLI_START_ALLOWANCE_S:g} s "
                    f"to start a worker server; per-call limits {LIMITS}): the judge keeps waiting on the submission")
    assert proc.returncode == 0, f"grader exited {proc.returncode}: {err.decode(errors='replace')[-500:]}"
    card = Scorecard.from_dict(json.loads(out.read_text(encoding="utf-8")))
    assert card.grader_error is None, card.grader_error
    internal = [(c.id, c.message) for c in card.checks if "internal check error" in c.message]
    assert not internal, f"a check crashed on what the submission returned: {internal[:3]}"
    assert card.duration_s <= max_seconds, (
        f"grading took {card.duration_s:.1f} s (limit {max_seconds:g} s, per-call limits {LIMITS}): "
        "the judge waited on the submission past its limits"
    )
    return card


# --------------------------------------------------------------------------- the corpus


def test_hostile_corpus_is_large_enough():
    assert len(HOSTILE) >= 22
    for case in HOSTILE:
        assert {"expect", "why"} <= set(case.header), case.id
        assert case.header["expect"] in EXPECTATIONS, case.id


@pytest.mark.parametrize("case", HOSTILE, ids=lambda c: c.id)
def test_hostile_submission(server: WorkerServer, hostile_config: Path, graders: dict[str, api.Grader], tmp_path: Path,
                            case: CorpusCase):
    header = case.header
    path = case.write_submission(tmp_path)
    marker = header.get("absent_file")
    if marker:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(marker)
    before = descendants(os.getpid())
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sentinel = tmp_path / "hostile-forgery-target-earlier.json"  # a card from an earlier run, already on disk
    if header.get("card_stable"):
        sentinel.write_text('{"earlier": true}\n', encoding="utf-8")
    with listeners(header) as socks:
        if "max_seconds" in header:
            card = grade_with_cli(hostile_config, path, case.assignment, tmp_path / "cli-card.json",
                                  float(header["max_seconds"]))
        else:
            card = grade_hostile(graders, server, hostile_config, path, case.assignment)
        if header.get("card_stable"):
            assert sentinel.read_text(encoding="utf-8") == '{"earlier": true}\n', "a card on disk changed during grading"
            out = tmp_path / "hostile-forgery-target.json"  # the name the forgers look for
            scorecard.write(card, out)
            written = out.read_bytes()
            time.sleep(1.0)
            assert out.read_bytes() == written, "the card on disk changed after grading"
            assert not list(tmp_path.glob("**/*forged*")), "a forged file appeared beside the card"
        assert_nothing_arrived(socks)
    assert_server_healthy(server)
    assert_no_leftover_processes(server, before)
    if marker:
        assert not os.path.exists(marker), f"the submission created {marker}"
    if header.get("output_capped"):
        kept = card.output.encode("utf-8", "surrogateescape")
        assert len(kept) <= OUTPUT_KEEP + 1024, f"the card keeps {len(kept)} bytes of output"
        grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
        assert grown_kib < 64 * 1024, f"the judge's peak memory grew by {grown_kib} KiB while draining the output"
        assert TRUNCATION_NOTE.search(card.output), (
            "the output was cut at 64 KiB without a note saying so: "
            f"...{card.output[-120:]!r}"
        )
    if card.environment.get("isolation") is not None:
        inactive = {k: v for k, v in card.environment["isolation"].items() if v != "active"}
        assert not inactive, f"isolation layers not active, so this case proves nothing: {inactive}"
    assert_expectation(card, header)


# --------------------------------------------------------------------------- direct cases


def test_huge_file_is_refused_without_running_it(server: WorkerServer, hostile_config: Path,
                                                 graders: dict[str, api.Grader], tmp_path: Path):
    """A 10 MB submission is over the code limit: not graded (never a graded 0), one reason, never sent to a worker."""
    path = tmp_path / "attention.py"
    line = "x = 1  # " + "padding " * 12 + "\n"
    with path.open("w", encoding="utf-8") as fh:
        fh.write("import os\nos._exit(3)\n")
        fh.write(line * (10 * 1024 * 1024 // len(line) + 1))
    assert path.stat().st_size >= 10 * 1024 * 1024
    before = descendants(os.getpid())
    with pytest.raises(SubmissionTooLarge, match="MiB, the limit for a submission's code") as refused:
        grade_hostile(graders, server, hostile_config, path, "attention")
    assert "\n" not in str(refused.value)
    assert_server_healthy(server)
    assert_no_leftover_processes(server, before)


@pytest.mark.parametrize("content", [b"", b"\n\n   \n", b"\xef\xbb\xbf"], ids=["empty", "whitespace", "bom-only"])
def test_empty_file_is_graded_zero(server: WorkerServer, hostile_config: Path, graders: dict[str, api.Grader],
                                   tmp_path: Path, content: bytes):
    path = tmp_path / "attention.py"
    path.write_bytes(content)
    card = grade_hostile(graders, server, hostile_config, path, "attention")
    assert card.score == 0 and card.max_score > 0
    assert card.problem and "empty" in card.problem  # said once; every check refers to it
    assert all("could not be loaded (see the problem above)" in c.message for c in card.checks if c.status != "skipped"), card.checks[0].message


def test_forgery_and_fork_cases_check_the_card_and_the_processes():
    """The fork bomb, the atexit forger and the setsid daemon are graded above like every case, which checks
    that no process outlives grading; the two forgers also have their card written with scorecard.write and
    compared byte for byte after 1 s (``card_stable``). Keep those guarantees from being edited away."""
    by_name = {c.path.stem: c.header for c in HOSTILE}
    assert by_name["atexit_forgery"].get("card_stable") and by_name["daemon_forgery"].get("card_stable")
    assert by_name["daemon_forgery"].get("output_lacks") == "DAEMON-STARTED"
    assert by_name["fork_bomb"].get("output_lacks") == "FORK-SUCCEEDED"
    assert by_name["loop_at_import"].get("max_seconds") and by_name["protocol_drip"].get("max_seconds")


def test_server_still_grades_the_reference_after_the_hostile_corpus(server: WorkerServer, hostile_config: Path,
                                                                   graders: dict[str, api.Grader]):
    """Last: after every attack above, the same warm server still gives the reference full marks."""
    card = grade_hostile(graders, server, hostile_config, ROOT / "solutions/attention.py", "attention")
    assert card.score == card.max_score, [(c.id, c.message) for c in card.checks if c.status != "passed"][:3]
    assert_server_healthy(server)
