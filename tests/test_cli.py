"""The command line keeps the contract's promises: exit codes, one-line errors, a card for every grade."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader import api, cli
from grader import session
from grader.config import load_config
from grader.scorecard import validate
from tests.conftest import ROOT


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, timeout=300)


def test_grades_a_file_and_prints_the_table(tmp_path):
    out = tmp_path / "card.json"
    proc = run_cli("grade", str(ROOT / "examples/attention.py"), "--assignment", "attention", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    card = json.loads(out.read_text())
    validate(card)
    assert 0 < card["score"] < card["max_score"]
    assert "divides every row by T" in proc.stdout and "score:" in proc.stdout


@pytest.mark.parametrize("args, fragment", [
    (["grade", "examples/attention.py", "--assignment", "nope", "--out", "x.json"], "unknown assignment 'nope'"),
    (["grade", "missing.py", "--assignment", "attention", "--out", "x.json"], "cannot read missing.py"),
    (["grade", "examples/attention.py", "--out", "x.json"], "required: --assignment"),
    (["frobnicate"], "invalid choice"),
])
def test_cannot_grade_exits_2_with_one_line(tmp_path, args, fragment):
    proc = subprocess.run([sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert fragment in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_bad_config_names_file_and_key(tmp_path):
    bad = tmp_path / "assignments.yaml"
    bad.write_text((ROOT / "assignments.yaml").read_text().replace("memory_mib: 3072", "memory_mib: lots"))
    proc = run_cli("grade", str(ROOT / "examples/attention.py"), "--assignment", "attention",
                   "--out", str(tmp_path / "c.json"), "--config", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"grader: {bad}: defaults.limits.memory_mib: 'lots' is not of type 'integer'")


@pytest.mark.parametrize("content, fragment, through", [
    (b"def softmax(x:\n    pass\n", "syntax error at line 1, column", "the command line"),
    (b"", "the file is empty", "the warm server"),
    (b"x = '\xff\xfe'\n", "not UTF-8", "the warm server"),
])
def test_unrunnable_files_are_graded_with_a_message(grade, tmp_path, content, fragment, through):
    """A file that cannot run is graded, not refused: a card, 0 points, the problem said once. One goes
    through `grader grade` (exit 0, the card written); the others through the session's warm server,
    the same grading path (`grader grade` is `api.grade`), without a cold start each (~3 s of CPU)."""
    sub = tmp_path / "attention.py"
    sub.write_bytes(content)
    if through == "the command line":
        out = tmp_path / "card.json"
        proc = run_cli("grade", str(sub), "--assignment", "attention", "--out", str(out), "--format", "none")
        assert proc.returncode == 0, proc.stderr
        card = json.loads(out.read_text())
    else:
        card = json.loads(grade(sub).to_json())  # UnreadableSubmission (the command's exit 2) would raise here
    assert card["score"] == 0 and card["max_score"] > 0
    assert fragment in card["problem"]  # said once, for the file; each check refers to it
    graded = [c for c in card["checks"] if c["status"] != "skipped"]
    assert graded and all(c["status"] == "failed" and "could not be loaded (see the problem above)" in c["message"]
                          for c in graded)


def test_internal_error_writes_a_marked_card_and_exits_3(tmp_path, monkeypatch, capsys):
    def broken(*a, **k):
        raise RuntimeError("the checks exploded")

    monkeypatch.setattr(session.Judge, "run", broken)
    out = tmp_path / "card.json"
    code = cli.main(["grade", str(ROOT / "solutions/attention.py"), "--assignment", "attention", "--out", str(out), "--format", "none"])
    assert code == 3
    card = json.loads(out.read_text())
    validate(card)
    assert "the checks exploded" in card["grader_error"]
    assert card["score"] == 0 and all(c["status"] in ("error", "skipped") for c in card["checks"])
    assert capsys.readouterr().err.count("\n") == 1


def test_strict_refuses_when_a_layer_is_missing():
    with pytest.raises(api.StrictModeRefused, match="landlock"):
        api._enforce_strict(True, {"seccomp": "active", "landlock": "unavailable: kernel too old"})
    api._enforce_strict(True, {"seccomp": "active"})


def test_notebook_submissions_are_graded(grade, tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    source = (ROOT / "solutions/attention.py").read_text()
    nb.cells = [nbformat.v4.new_markdown_cell("# My attention"), nbformat.v4.new_code_cell("%matplotlib inline\n" + source)]
    path = tmp_path / "attention.ipynb"
    path.write_text(nbformat.writes(nb))
    card = grade(Path(path))
    assert card.score == card.max_score > 0


def test_a_bad_policy_is_reported_and_the_server_keeps_serving(server, tmp_path):
    from grader.sandbox.client import Limits, SubmissionWorker
    from grader.sandbox.errors import WorkerUnavailable

    bad = SubmissionWorker(server, "x = 1\n", "attention.py", Limits(disabled_layers=("no-such-layer",)), tmp_path)
    with pytest.raises(WorkerUnavailable, match="unknown layer names"):
        bad.ensure_started()
    good = SubmissionWorker(server, "x = 1\n", "attention.py", Limits(), tmp_path)
    good.ensure_started()
    assert good.names == {"x": "value"}
    good.close()


def test_refuses_to_grade_when_the_checks_are_readable_from_the_sandbox(tmp_path):
    import dataclasses

    from grader.config import load_config
    from grader.sandbox import layers

    assignment = load_config(ROOT / "assignments.yaml").assignment("attention")
    api.assert_secrets_unreadable(assignment, ROOT / "assignments.yaml")  # the editable layout is safe
    inside = Path(layers.python_readable_paths()[-1]) / "solutions" / "attention.py"
    with pytest.raises(api.SecretsExposed, match="readable from the sandbox"):
        api.assert_secrets_unreadable(dataclasses.replace(assignment, reference=inside), ROOT / "assignments.yaml")


def test_a_reference_that_cannot_load_gives_a_marked_card_and_exit_3(tmp_path, capsys):
    import yaml

    broken = tmp_path / "reference.py"
    broken.write_text("def softmax(:\n")
    raw = yaml.safe_load((ROOT / "assignments.yaml").read_text())
    raw["assignments"]["attention"]["reference"] = str(broken)  # absolute: wins over the config's folder
    config = tmp_path / "assignments.yaml"
    config.write_text(yaml.safe_dump(raw))
    out = tmp_path / "card.json"
    code = cli.main(["grade", str(ROOT / "solutions/attention.py"), "--assignment", "attention", "--out", str(out),
                     "--format", "none", "--config", str(config)])
    assert code == 3
    card = json.loads(out.read_text())
    assert "reference.py cannot be loaded" in card["grader_error"] and card["score"] == 0
    assert capsys.readouterr().err.count("\n") == 1


# ------------------------------------------------------------------ nothing left behind


def _class_folder(tmp_path: Path) -> Path:
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "alice.py").write_text((ROOT / "examples/attention.py").read_text())
    return klass


@pytest.mark.parametrize("refusal", ["no such folder", "not a zip", "unknown assignment", "roster missing",
                                     "roster without a header", "bad shard"])
def test_a_refused_grade_all_leaves_nothing_behind(tmp_path, capsys, refusal):
    klass = _class_folder(tmp_path)
    fake_zip = tmp_path / "week3.zip"
    fake_zip.write_text("alice: attention.py\n")
    empty_roster = tmp_path / "roster.csv"
    empty_roster.write_text("")
    out = tmp_path / "graded" / "attention"
    submissions, extra = {
        "no such folder": (tmp_path / "nowhere", []),
        "not a zip": (fake_zip, []),
        "unknown assignment": (klass, ["--assignment", "nope"]),
        "roster missing": (klass, ["--roster", str(tmp_path / "missing.csv")]),
        "roster without a header": (klass, ["--roster", str(empty_roster)]),
        "bad shard": (klass, ["--shard", "4/4"]),
    }[refusal]
    options = {"--assignment": "attention", "--out": str(out), **dict(zip(extra[::2], extra[1::2]))}
    code = cli.main(["grade-all", str(submissions), *[x for pair in options.items() for x in pair]])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("grader: ") and err.count("\n") == 1, err
    assert not (tmp_path / "graded").exists()


@pytest.mark.parametrize("name", ["week3.zip", "attention.py"])
def test_grade_refuses_a_zip_by_its_bytes_whatever_its_name(tmp_path, capsys, name):
    import zipfile

    archive = tmp_path / name
    with zipfile.ZipFile(archive, "w") as z:
        z.write(ROOT / "examples/attention.py", "alice/attention.py")
    out = tmp_path / "card.json"
    code = cli.main(["grade", str(archive), "--assignment", "attention", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err == (f"grader: {name} is a zip archive: `grader grade` takes one .py or .ipynb file; "
                   f"use `grader grade-all {name}` for a class\n")


def test_grade_writes_nothing_but_its_outputs(tmp_path):
    """Run from an empty folder: the card and the page asked for, and nothing else (no `.hypothesis/`
    from the property checks, no cache)."""
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade", str(ROOT / "solutions/attention.py"),
                           "--assignment", "attention", "--out", "card.json", "--report", "html", "--format", "none"],
                          capture_output=True, text=True, cwd=work, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.relative_to(work).as_posix() for p in work.rglob("*")) == ["card.html", "card.json"]
    card = json.loads((work / "card.json").read_text())
    properties = {c["id"]: c["status"] for c in card["checks"] if "on_random_shapes" in c["id"]}  # hypothesis's
    assignment = load_config().assignment("attention")
    asked = [c for e in assignment.exercises for c in e.checks if "on_random_shapes" in c.name]  # from assignments.yaml
    assert asked and len(properties) == len(asked) and set(properties.values()) == {"passed"}, properties


def _descendants(pid: int) -> set[int]:
    """``pid``'s children, theirs, and so on, from /proc."""
    parents: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                parents.setdefault(int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(int(proc.name))
            except (OSError, IndexError, ValueError):
                continue
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _torch_loading(pid: int) -> bool:
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("when", ["while torch loads", "inside a hanging check"])
def test_ctrl_c_is_one_line_and_exit_130_and_leaves_no_process(tmp_path, when):
    """Ctrl-C during `grader grade`, at any stage: `grader: interrupted`, exit 130, no traceback, and the worker
    server and the sandboxed child go too. Each moment is waited for by what /proc shows, never by a sleep:
    torch's library mapped into the process, or the sandboxed child (the server's child) running a file that
    loops in softmax."""
    import signal
    import time

    from tests.corpus_cases import corpus

    hang = next(c for c in corpus("hostile") if c.path.stem == "loop_in_softmax")
    sub = tmp_path / "attention.py"
    sub.write_text(hang.source(), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "grader.cli", "grade", str(sub), "--assignment", "attention",
                             "--out", str(tmp_path / "card.json")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline, seen = time.monotonic() + 120, set()
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            seen = _descendants(proc.pid)
            grandchildren = {p for c in seen for p in _descendants(c)}
            if _torch_loading(proc.pid) if when == "while torch loads" else grandchildren:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the grade ended before the moment this test waits for"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (130, "grader: interrupted\n"), err[-2000:]
    assert not (tmp_path / "card.json").exists()
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in seen):
        time.sleep(0.05)
    assert not [p for p in seen if Path(f"/proc/{p}").exists()], "a process of the grade was left running"


FOLDERS = {  # what a folder given to `grade`/`check` holds -> the file `check` may suggest (None: no example)
    "empty": ([], None),
    "one file": (["attention.py"], "attention.py"),
    "one notebook": (["attention.ipynb", "notes.txt"], "attention.ipynb"),
    "two files": (["attention.py", "attention.ipynb"], None),
    "a class": (["alice/attention.py", "bob/attention.py"], None),
}


@pytest.mark.parametrize("command", ["grade", "check"])
@pytest.mark.parametrize("holds", sorted(FOLDERS))
def test_a_folder_is_named_as_a_folder_in_one_line_exit_2(tmp_path, capsys, command, holds):
    """`grader grade FOLDER` once said "no such file" of a folder that exists (issue 37)."""
    folder = tmp_path / "class"
    folder.mkdir()
    names, suggested = FOLDERS[holds]
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("x = 1\n")
    out = tmp_path / "card.json"
    args = ["--assignment", "attention", "--out", str(out)] if command == "grade" else []
    code = cli.main([command, str(folder), *args])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and not out.exists(), err
    assert err.startswith(f"grader: {folder} is a folder: `grader {command}` ") and "no such file" not in err
    if command == "grade":
        assert err.endswith(f"`grader grade-all {folder} --assignment attention --out DIR` grades a class\n")
    elif suggested:
        assert err.endswith(f"name the file, e.g. `grader check {folder / suggested}`\n")
    else:
        assert err.endswith("name the file\n")
