"""The student kit where students work: macOS, Windows, Colab, simulated here (``tests/platform_sim.py``).

Each simulation takes away, in a fresh interpreter and before the grader is imported, what that system
lacks (macOS: ``prctl``/``unshare``/``pidfd_open``/libseccomp; Windows: ``os.fork``, ``AF_UNIX``,
``resource``, ``SIGKILL``, ``ctypes.CDLL(None)``; Colab: unprivileged namespaces). Under each,
``grader check`` must judge a file exactly as it does on Linux: the reference passes every visible
check, a mutant fails the very checks it fails on Linux; the card lists which layers were active
and why the others were not; and a call that hangs still ends at the judge's limit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from tests import platform_sim
from tests.conftest import ROOT
from tests.corpus_cases import corpus
from tests.test_selfcheck import _read_until

PLATFORMS = tuple(platform_sim.MISSING)
LINUX_LAYERS = ("netns", "mountns_scratch", "no_new_privs", "landlock", "capabilities", "seccomp")
SPAWNED = ("macos", "windows")  # no pidfd_open / no fork: the spawned worker; colab keeps the fork server
# Two mutants a platform, from different places in the corpus: a family across platforms, not one case.
LOSING = [c for c in corpus("mutants") if c.assignment == "attention" and c.header.get("expect") == "lose"]
# One mutant a platform (a different one each), so the suite pays ~6 s a case: the reference test and the kit test
# already run every platform's worker end to end.
CASES = [(platform, LOSING[(7 * i) % len(LOSING)]) for i, platform in enumerate(PLATFORMS)]


@pytest.fixture(scope="module")
def wrappers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("platforms")
    return {platform: platform_sim.write_wrapper(folder, platform) for platform in PLATFORMS}


@pytest.fixture(scope="module")
def linux_cards() -> dict[str, dict[str, str]]:
    """The Linux run of each file (no simulation), made once: what every platform must agree with."""
    return {}


def check(python: str | Path, file: Path, out: Path, kit: Path | None = None) -> tuple[int, str, dict[str, Any]]:
    """``grader check FILE --out CARD`` under ``python``: (exit code, output, card); ``kit``: the grader
    package of that released kit instead of this repository's."""
    env = {**os.environ, "PYTHONPATH": str(kit)} if kit is not None else None
    run = subprocess.run([str(python), "-m", "grader.cli", "check", str(file), "--out", str(out)],
                         capture_output=True, text=True, cwd=out.parent, timeout=600, env=env)
    card = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return run.returncode, run.stdout + run.stderr, card


def statuses(card: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in card["checks"]}


def linux_statuses(file: Path, linux_cards: dict[str, dict[str, str]], tmp_path: Path) -> dict[str, str]:
    key = file.read_text(encoding="utf-8")
    if key not in linux_cards:
        code, output, card = check(sys.executable, file, tmp_path / "linux.json")
        assert card, output
        linux_cards[key] = statuses(card)
    return linux_cards[key]


def assert_layers_listed(platform: str, card: dict[str, Any]) -> None:
    """Every layer is on the card: the ones this system lacks as unavailable, with the reason."""
    layers = card["environment"]["isolation"]
    assert set(layers) == {*LINUX_LAYERS, "rlimits"}
    if platform in ("macos", "windows"):
        for name in LINUX_LAYERS:
            assert layers[name].startswith("unavailable: ") and len(layers[name]) > len("unavailable: ") + 5
        assert "worker" in card["environment"] and "spawned" in card["environment"]["worker"]
        assert "pyseccomp cannot be loaded" in layers["seccomp"]  # it raised at import, as it does there
    if platform == "macos":
        assert "no prctl()" in layers["no_new_privs"] and "no unshare()" in layers["netns"]
        assert layers["rlimits"] == "active"
    if platform == "windows":
        assert "no C library" in layers["netns"]
        assert layers["rlimits"].startswith("unavailable: ") and "no resource module" in layers["rlimits"]
    if platform == "colab":
        assert "worker" not in card["environment"]  # the warm fork server, as on any Linux
        for name in ("netns", "mountns_scratch"):
            assert "Operation not permitted" in layers[name]
        assert layers["landlock"].startswith("unavailable: ")
        assert layers["rlimits"] == layers["seccomp"] == "active"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_reference_passes_every_visible_check(platform: str, wrappers: dict[str, Path], tmp_path: Path,
                                                  linux_cards: dict[str, dict[str, str]]) -> None:
    file = tmp_path / "attention.py"
    file.write_text((ROOT / "solutions/attention.py").read_text(encoding="utf-8"), encoding="utf-8")
    code, output, card = check(wrappers[platform], file, tmp_path / "card.json")
    assert code == EXIT_OK, output
    assert "Traceback" not in output
    seen = statuses(card)
    assert seen and set(seen.values()) <= {"passed", "skipped"}
    assert seen == linux_statuses(file, linux_cards, tmp_path)
    assert_layers_listed(platform, card)


@pytest.mark.parametrize(("platform", "case"), CASES, ids=[f"{p}-{c.path.stem}" for p, c in CASES])
def test_a_mutant_fails_the_checks_it_fails_on_linux(platform: str, case: Any, wrappers: dict[str, Path],
                                                     tmp_path: Path, linux_cards: dict[str, dict[str, str]]) -> None:
    file = case.write_submission(tmp_path)
    code, output, card = check(wrappers[platform], file, tmp_path / "card.json")
    assert code == EXIT_FAILED, output
    assert "Traceback" not in output
    seen = statuses(card)
    assert any(s != "passed" and s != "skipped" for s in seen.values()), output
    assert seen == linux_statuses(file, linux_cards, tmp_path)
    assert_layers_listed(platform, card)


@pytest.mark.parametrize("platform", SPAWNED)  # colab keeps Linux's fork server: the kit tests of test_release
def test_the_released_kit_checks_with_a_spawned_worker(platform: str, wrappers: dict[str, Path], release: Path,
                                                     tmp_path: Path) -> None:
    """The kit as students install it (``grader release``: visible checks, recorded expected values): the
    reference passes, the unfilled exercise file fails as not attempted."""
    reference = tmp_path / "attention.py"
    reference.write_text((ROOT / "solutions/attention.py").read_text(encoding="utf-8"), encoding="utf-8")
    code, output, card = check(wrappers[platform], reference, tmp_path / "card.json", kit=release)
    assert code == EXIT_OK and "Traceback" not in output, output
    assert_layers_listed(platform, card)
    code, output, card = check(wrappers[platform], release / "attention.py", tmp_path / "stub.json", kit=release)
    assert code == EXIT_FAILED and "Traceback" not in output, output
    assert "not attempted" in output and all(s != "passed" for s in statuses(card).values())


@pytest.mark.parametrize("platform", SPAWNED)
def test_watch_checks_again_with_a_spawned_worker(platform: str, wrappers: dict[str, Path], tmp_path: Path) -> None:
    """``grader check --watch`` where each run gets a fresh spawned child: a save is checked again, and
    Ctrl-C ends it with a run's verdict. Both versions fail (two mutants), so the exit code is 1 whether
    Ctrl-C comes after the second run returned or while it returns (then the first run's verdict)."""
    first_bug, second_bug = LOSING[0], LOSING[len(LOSING) // 2]
    path = first_bug.write_submission(tmp_path)
    proc = subprocess.Popen([str(wrappers[platform]), "-m", "grader.cli", "check", "--watch", path.name],
                            cwd=path.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = _read_until(proc, "Visible checks:")
        assert "failed" in first.split("Visible checks:")[1]
        path.write_text(second_bug.source(), encoding="utf-8")
        second = _read_until(proc, "Visible checks:")
        assert "changed: checking again" in second and "failed" in second.split("Visible checks:")[1]
        assert first.split("changed")[0] != second.split("checking again")[1]  # the new file's own table
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == EXIT_FAILED, proc.stderr.read()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


IMPORT_ALL = """
import importlib, json, pkgutil, sys
import grader
skip = ("grader.release", "grader.authoring")  # instructor-only: a kit leaves them out
names = [m.name for m in pkgutil.walk_packages(grader.__path__, "grader.")
         if not m.name.startswith(skip) and not m.name.endswith(".__main__")]
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"names": names, "failed": failed}))
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_module_of_the_kit_imports(platform: str, wrappers: dict[str, Path]) -> None:
    run = subprocess.run([str(wrappers[platform]), "-c", IMPORT_ALL], capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    result = json.loads(run.stdout.splitlines()[-1])
    assert {"grader.cli", "grader.sandbox.layers.syscalls", "grader.sandbox.spawn_server",
            "grader.selfcheck"} <= set(result["names"])
    assert result["failed"] == {}


HANG = """
import json, sys, tempfile
from pathlib import Path
from grader.sandbox.client import SubmissionWorker
from grader.sandbox.errors import StudentTimeout
from grader.sandbox.launcher import start_server
from grader.sandbox.limits import Limits

source = "import time\\ndef sleeps():\\n    time.sleep(600)\\ndef spins():\\n    while True:\\n        pass\\n"
# The spinning call's wall limit is far above its CPU limit: on a machine shared with other runs it may get a
# tenth of a core, and must still reach its CPU second before the wall clock ends it.
limits = {"sleeps": Limits(call_cpu_seconds=1.0, call_wall_seconds=4.0),
          "spins": Limits(call_cpu_seconds=1.0, call_wall_seconds=60.0)}
said = {}
with start_server(fork=False) as server, tempfile.TemporaryDirectory() as scratch:
    for fn in ("sleeps", "spins"):
        worker = SubmissionWorker(server, source, "hang.py", limits[fn], Path(scratch))
        try:
            worker.request({"op": "call", "fn": fn, "args": []}, fn)
            said[fn] = "returned"
        except StudentTimeout as exc:
            said[fn] = str(exc)
        finally:
            worker.close()
print(json.dumps(said))
"""


@pytest.mark.parametrize("platform", SPAWNED)  # colab: Linux's fork server, whose limits test_hostile covers
def test_a_call_that_hangs_ends_at_the_judges_limit(platform: str, wrappers: dict[str, Path]) -> None:
    """A sleeping call ends at the wall-clock limit, a spinning one at the CPU limit (read from /proc here),
    whichever worker the system gets: the judge kills the child."""
    run = subprocess.run([str(wrappers[platform]), "-c", HANG], capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    said = json.loads(run.stdout.splitlines()[-1])
    assert "wall time" in said["sleeps"], said
    assert "CPU time" in said["spins"], said


MEMORY_HOG = """
import json, sys, tempfile
from pathlib import Path
from grader.sandbox.client import SubmissionWorker
from grader.sandbox.errors import StudentCrash, StudentError, StudentTimeout
from grader.sandbox.launcher import start_server
from grader.sandbox.limits import Limits

source = "import time\\ndef hog(mib):\\n    kept = b'x' * (mib << 20)\\n    time.sleep(600)\\n    return len(kept)\\n"
limits = Limits(call_wall_seconds=20.0, memory_mib=int(sys.argv[1]))
with start_server(fork=False) as server, tempfile.TemporaryDirectory() as scratch:
    worker = SubmissionWorker(server, source, "hog.py", limits, Path(scratch))
    try:
        worker.request({"op": "call", "fn": "hog", "args": [int(sys.argv[2])]}, "hog")
        said = "returned"
    except (StudentCrash, StudentError, StudentTimeout) as exc:
        said = f"{type(exc).__name__}: {exc}"
    finally:
        worker.close()
print(json.dumps({"said": said, "rlimits": worker.layers.get("rlimits")}))
"""


@pytest.mark.parametrize(("platform", "limit_mib", "hog_mib"), [("windows", 1200, 2000),
                                                                 ("windows", 1500, 2600)])
def test_where_the_child_has_no_memory_limit_the_judge_stops_it(platform: str, limit_mib: int, hog_mib: int,
                                                                wrappers: dict[str, Path]) -> None:
    """No rlimits in the child (Windows; on macOS, which does not enforce RLIMIT_AS, the same rule: see the
    darwin case of test_rlimits_say_what_the_system_does_not_enforce): the judge reads the child's
    memory while a call runs and kills it past ``memory_mib``, long before the call's wall-clock limit."""
    run = subprocess.run([str(wrappers[platform]), "-c", MEMORY_HOG, str(limit_mib), str(hog_mib)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    result = json.loads(run.stdout.splitlines()[-1])
    if platform == "windows":
        assert result["rlimits"].startswith("unavailable: ")
    assert result["said"] == f"StudentCrash: hog: your code used more than {limit_mib} MiB of memory, so the judge stopped it"


@pytest.mark.parametrize("command", ["grade", "grade-all"])
@pytest.mark.parametrize("system", ["darwin", "win32", "cygwin"])
def test_course_grading_refuses_other_systems_in_one_line(command: str, system: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from grader import cli

    file = tmp_path / "attention.py"
    file.write_text("", encoding="utf-8")
    argv = [command, str(file), "--assignment", "attention"] + (["--out", str(tmp_path / "out")])
    monkeypatch.setattr(sys, "platform", system)
    assert cli.main(argv) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"`grader {command}` runs only on Linux" in err and system in err
    assert "grader check" in err


RLIMITS_AS_DARWIN = """
import json, resource, sys
from grader.sandbox.layers.policy import ChildPolicy, LayerUnavailable
from grader.sandbox.layers.rlimits import _apply_rlimits
sys.platform = sys.argv[1]
try:
    _apply_rlimits(ChildPolicy(memory_mib=int(sys.argv[2]), cpu_seconds=int(sys.argv[3])))
    said = "active"
except LayerUnavailable as exc:
    said = str(exc)
print(json.dumps({"said": said, "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0]}))
"""


@pytest.mark.parametrize(("system", "memory_mib", "cpu_seconds"), [("darwin", 2048, 50), ("darwin", 3072, 120),
                                                                   ("linux", 2048, 50), ("linux", 4096, 77)])
def test_rlimits_say_what_the_system_does_not_enforce(system: str, memory_mib: int, cpu_seconds: int) -> None:
    """macOS accepts RLIMIT_AS and never enforces it: there the layer sets the other limits and says it is
    not active, naming the memory limit; on Linux it is active. (A fresh process: it lowers its own limits.)"""
    run = subprocess.run([sys.executable, "-c", RLIMITS_AS_DARWIN, system, str(memory_mib), str(cpu_seconds)],
                         capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(run.stdout)
    assert result["cpu"] == cpu_seconds  # set either way
    if system == "darwin":
        assert result["said"].startswith("not set on darwin: RLIMIT_AS") and "no memory limit" in result["said"]
    else:
        assert result["said"] == "active"


@pytest.mark.parametrize("name", ["prctl_", "unshare2", "landlock_create_ruleset", "no_such_function"])
def test_a_function_libc_lacks_makes_its_layer_unavailable(name: str) -> None:
    from grader.sandbox.layers.policy import LayerUnavailable
    from grader.sandbox.layers.syscalls import libc_function

    with pytest.raises(LayerUnavailable, match=f"the C library has no {name}"):
        libc_function(name)


@pytest.mark.parametrize("system", ["darwin", "win32", "freebsd14"])
@pytest.mark.parametrize("call", ["landlock_create_ruleset", "mount_setattr", "setxattrat"])
def test_linux_syscall_numbers_are_never_used_elsewhere(system: str, call: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS has a syscall() too, with other numbers: a Linux number there would run another call."""
    from grader.sandbox.layers.policy import LayerUnavailable
    from grader.sandbox.layers.syscalls import _syscall

    monkeypatch.setattr(sys, "platform", system)
    with pytest.raises(LayerUnavailable, match=f"not available on {system}"):
        _syscall(call, 0, 0, 0)


class _Running:
    """A child that is still starting (``Popen.poll`` says nothing yet)."""

    stdout = None

    def poll(self) -> None:
        return None


@pytest.mark.parametrize("wrong", [b"", b"short", b"\0" * 32, b"x" * 31, None])
def test_only_the_child_with_the_token_is_taken_for_the_worker(wrong: bytes | None) -> None:
    """Another local process that finds the port first (wrong token, a prefix of it, or one that says
    nothing and hangs up) is dropped; the connection that sends the token is the one returned."""
    import secrets
    import socket

    from grader.sandbox import spawn_server

    token = secrets.token_bytes(spawn_server.TOKEN_BYTES)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        intruder = socket.create_connection(("127.0.0.1", port))
        if wrong is None:
            intruder.close()
        else:
            intruder.sendall(wrong if wrong != b"short" else token[:5])
            intruder.shutdown(socket.SHUT_WR)
        child = socket.create_connection(("127.0.0.1", port))
        child.sendall(token + b"hello")
        conn = spawn_server._accept(listener, _Running(), token)  # type: ignore[arg-type]
        try:
            assert conn.recv(5) == b"hello"  # the child's connection, right after its token
        finally:
            conn.close()
            child.close()
            if wrong is not None:
                intruder.close()


PRINTS = """
import json, tempfile
from pathlib import Path
from grader.sandbox.client import SubmissionWorker
from grader.sandbox.launcher import start_server
from grader.sandbox.limits import Limits

source = "import sys\\nprint('said at import')\\ndef f():\\n    print('said in f', file=sys.stderr)\\n    return 3\\n"
with start_server(fork=False) as server, tempfile.TemporaryDirectory() as scratch:
    worker = SubmissionWorker(server, source, "prints.py", Limits(), Path(scratch))
    reply = worker.request({"op": "call", "fn": "f", "args": []}, "f")
    worker.close()
print(json.dumps({"value": reply.get("value"), "output": worker.output_text()}))
"""


@pytest.mark.parametrize("platform", SPAWNED)
def test_what_the_students_code_prints_is_kept_with_a_spawned_worker(platform: str,
                                                                     wrappers: dict[str, Path]) -> None:
    """The child's own start-up is silent (its imports print nowhere); the student's prints, at import
    and in a call, on stdout and stderr, reach the judge's capped output as with a forked child."""
    run = subprocess.run([str(wrappers[platform]), "-c", PRINTS], capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["value"] == 3
    assert sorted(result["output"].splitlines()) == ["said at import", "said in f"]


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(("target", "said"), [("solutions/attention.py", "is a symbolic link (to "),
                                              ("exercises/attention.py", "is a symbolic link (to "),
                                              ("no/such/file.py", "no such file")])
def test_a_linked_file_is_refused_without_o_nofollow_too(platform: str, target: str, said: str,
                                                         wrappers: dict[str, Path], tmp_path: Path) -> None:
    """Windows has no O_NOFOLLOW: there the link is looked for before the open. Either way one line and
    exit 2, as on Linux (a dangling link is a file that is not there)."""
    link = tmp_path / "attention.py"
    link.symlink_to(ROOT / target)
    run = subprocess.run([str(wrappers[platform]), "-m", "grader.cli", "check", str(link)], capture_output=True,
                         text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == EXIT_BAD_INPUT and run.stdout == ""
    assert run.stderr.count("\n") == 1 and said in run.stderr, run.stderr
