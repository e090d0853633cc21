"""`.grader/hidden.bundle`: the release's encrypted full grader. It opens with the key and nothing else,
unpacks only inside the folder it is given, and the tree inside grades exactly as `grader grade` does
here: "the released repository grades as the instructor's grader when the secret is present"."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Iterator

import pytest
from cryptography.fernet import Fernet

from grader import api, cli, hidden, integrity
from grader.config import load_config
from grader.release import bundle, hidden_bundle, kit, tree
from tests.corpus_cases import corpus
from tests.test_release import _reference_statements, _squash, _text, bundle_files

ROOT = Path(__file__).resolve().parents[1]
CONFIG = load_config(ROOT / "assignments.yaml")
ASSIGNMENTS = [CONFIG.assignment(aid) for aid in sorted(CONFIG.assignments)]


def private_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="hidden-test-"))  # mode 700, empty: what unlock asks for


@pytest.fixture(scope="module")
def unlocked(hidden_release: Path, hidden_key: str) -> Iterator[Path]:
    root = hidden.unlock(hidden_release / hidden.BUNDLE, hidden_key, private_dir())
    yield root
    shutil.rmtree(root)


# ------------------------------------------------------------------ the bundle


def test_the_bundle_round_trips_to_the_full_grader_tree(hidden_release, unlocked):
    unpacked = bundle_files(unlocked)
    assert unpacked == tree.source_tree(CONFIG, ASSIGNMENTS, "grader release --hidden-key-file")
    for a in ASSIGNMENTS:  # every check, hidden ones included, and the reference
        for check in sorted(a.checks_dir.glob("*.py")):
            assert unpacked[f"grader/checks/{a.checks_package}/{check.name}"] == check.read_bytes()
        assert unpacked[f"solutions/{a.reference.name}"] == a.reference.read_bytes()
    full = load_config(unlocked / hidden.CONFIG)
    assert sorted(full.assignments) == sorted(CONFIG.assignments)
    for aid, a in full.assignments.items():
        assert a.reference == (unlocked / f"solutions/{a.reference.name}").resolve() and not a.is_kit
        assert (a.exercises, a.limits) == (CONFIG.assignment(aid).exercises, CONFIG.assignment(aid).limits)
    assert not any(p.startswith(("grader/release/", "grader/course/")) for p in unpacked)
    mode = (unlocked / hidden.CONFIG).stat().st_mode & 0o777
    assert mode == 0o600  # the references are readable by this user only


def test_the_leak_scans_would_find_the_tree_were_it_not_encrypted(hidden_release, unlocked):
    """The scans of tests/test_release.py pass on the sealed release (they run on it too) because
    the bundle is ciphertext, not because they could not see: the tree inside holds all they look for."""
    plain = _text(bundle_files(unlocked))
    sealed = _text(bundle_files(hidden_release))
    for a in ASSIGNMENTS:
        assert kit.hidden_test_names(a) and all(name in plain for name in kit.hidden_test_names(a))
        statements = _reference_statements(a.reference, a.stub)
        assert all(s in _squash(plain) for s in statements)
        assert not any(name in sealed for name in kit.hidden_test_names(a))


def test_without_a_key_the_release_has_no_bundle(release):
    files = bundle_files(release)
    assert hidden.BUNDLE not in files
    manifest = json.loads(files[bundle.INTEGRITY])
    assert hidden.BUNDLE not in manifest["files"] and bundle.WORKFLOWS[False] in manifest["files"]


def test_the_same_course_and_key_release_the_same_bytes(hidden_release, hidden_key, tmp_path):
    """Fernet's IV is random, so an earlier release's ciphertext is kept while it holds the same archive."""
    again = tmp_path / "again"
    shutil.copytree(hidden_release, again)
    bundle.build_release(again, hidden_key=hidden_key)
    assert bundle_files(again) == bundle_files(hidden_release)
    archive = Fernet(hidden_key).decrypt((hidden_release / hidden.BUNDLE).read_bytes())
    other = hidden_bundle.new_key()
    resealed = hidden_bundle.seal(archive, other, (hidden_release / hidden.BUNDLE).read_bytes())
    assert resealed != (hidden_release / hidden.BUNDLE).read_bytes()  # another key: sealed anew
    assert Fernet(other).decrypt(resealed) == archive
    assert hidden_bundle.seal(archive + b"x", hidden_key, (hidden_release / hidden.BUNDLE).read_bytes()) != \
        (hidden_release / hidden.BUNDLE).read_bytes()  # another tree: sealed anew


def test_the_kit_can_open_the_bundle():
    """hidden.py ships in the kit, and the kit's pyproject installs what it imports."""
    deps = tomllib.loads(kit.pyproject().decode())["project"]["dependencies"]
    assert any(d.startswith("cryptography") for d in deps)
    assert "grader/hidden.py" in kit.package_files(set())


# ------------------------------------------------------------------ wrong keys, damaged bundles


@pytest.mark.parametrize("case, fragment", [
    ("another key", "not the key this release was made with"),
    ("damaged", "not the key this release was made with, or"),
    ("not a key", "is not a key made by `grader keygen`"),
    ("no key", "is not available to this run"),
    ("no bundle", "has no hidden checks"),
])
def test_a_wrong_key_or_damaged_bundle_is_one_clear_sentence(hidden_release, hidden_key, tmp_path, case, fragment):
    path, key = hidden_release / hidden.BUNDLE, hidden_key
    if case == "another key":
        key = hidden_bundle.new_key()
    elif case == "damaged":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] = ord("A") if data[len(data) // 2] != ord("A") else ord("B")
        path = tmp_path / "damaged.bundle"
        path.write_bytes(bytes(data))
    elif case == "not a key":
        key = "hunter2"
    elif case == "no key":
        key = ""
    elif case == "no bundle":
        path = tmp_path / "missing.bundle"
    into = private_dir()
    try:
        with pytest.raises(hidden.HiddenChecksUnavailable) as caught:
            hidden.unlock(path, key, into)
        message = str(caught.value)
        assert fragment in message and "\n" not in message and message.count(". ") == 0, message
        assert hidden_key not in message
        assert not any(into.iterdir())  # nothing was unpacked
    finally:
        shutil.rmtree(into)


def _sealed_zip(key: str, entries: list[tuple[zipfile.ZipInfo | str, bytes]], folder: Path) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for info, data in entries:
            z.writestr(info, data)
    path = folder / "crafted.bundle"
    path.write_bytes(hidden_bundle.seal(buffer.getvalue(), key))
    return path


def _link(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = 0o120777 << 16
    return info


@pytest.mark.parametrize("entry", ["../escaped.py", "/tmp/absolute.py", "grader/../../escaped.py", "a\\..\\b.py",
                                   "link"])
def test_unlock_refuses_entries_that_leave_the_folder(tmp_path, entry):
    key = hidden_bundle.new_key()
    bad = _link("grader/evil") if entry == "link" else entry
    path = _sealed_zip(key, [("assignments.yaml", b"x"), ("grader/__init__.py", b""), (bad, b"/etc/passwd")], tmp_path)
    into = private_dir()
    try:
        with pytest.raises(hidden.HiddenChecksUnavailable, match="refused"):
            hidden.unlock(path, key, into)
        assert not any(into.iterdir())  # checked before anything is written
        assert not (tmp_path / "escaped.py").exists() and not Path("/tmp/absolute.py").exists()
    finally:
        shutil.rmtree(into)


def test_unlock_refuses_an_archive_without_a_grader_tree(tmp_path):
    key = hidden_bundle.new_key()
    path = _sealed_zip(key, [("notes.txt", b"hi")], tmp_path)
    into = private_dir()
    try:
        with pytest.raises(hidden.HiddenChecksUnavailable, match="no grader source tree"):
            hidden.unlock(path, key, into)
    finally:
        shutil.rmtree(into)


def test_unlock_needs_an_empty_private_folder(hidden_release, hidden_key, tmp_path):
    path = hidden_release / hidden.BUNDLE
    with pytest.raises(ValueError, match="does not exist"):
        hidden.unlock(path, hidden_key, tmp_path / "nowhere")
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with pytest.raises(ValueError, match="private"):
        hidden.unlock(path, hidden_key, shared)
    busy = tmp_path / "busy"
    busy.mkdir(mode=0o700)
    (busy / "x").write_text("x")
    with pytest.raises(ValueError, match="not empty"):
        hidden.unlock(path, hidden_key, busy)


# ------------------------------------------------------------------ integrity


def test_integrity_lists_the_protected_files_as_grader_integrity_reads_them(hidden_release, tmp_path):
    files = bundle_files(hidden_release)
    manifest = json.loads(files[bundle.INTEGRITY])
    protected = {bundle.WORKFLOWS[False], "pyproject.toml", hidden.BUNDLE, *(p for p in files if p.startswith("grader/"))}
    assert manifest["version"] == integrity.VERSION and set(manifest["files"]) == protected
    assert "grader/course/assignments.yaml" in protected and "grader/course/expected/attention.json" in protected
    assert integrity.verify(hidden_release, hidden_release / integrity.MANIFEST) == []
    copy = tmp_path / "copy"
    shutil.copytree(hidden_release, copy)
    integrity.write_manifest(copy, sorted(manifest["files"]))  # the CI side's writer gives the same bytes
    assert (copy / integrity.MANIFEST).read_bytes() == files[bundle.INTEGRITY]
    (copy / "grader/checks/attention/test_softmax.py").write_text("def test_nothing():\n    pass\n")
    assert integrity.verify(copy, copy / integrity.MANIFEST) == ["grader/checks/attention/test_softmax.py"]
    release_manifest = json.loads(files[bundle.MANIFEST])
    assert {bundle.INTEGRITY, hidden.BUNDLE} <= set(release_manifest["files"])


# ------------------------------------------------------------------ the commands


def test_keygen_prints_one_key_and_advice_on_stderr(capsys):
    assert cli.main(["keygen"]) == 0
    first = capsys.readouterr()
    assert cli.main(["keygen"]) == 0
    second = capsys.readouterr()
    key = first.out.strip()
    assert first.out == key + "\n" and len(key) == 44 and key != second.out.strip()
    Fernet(key)  # a real key
    assert "GRADER_HIDDEN_KEY" in first.err and "--hidden-key-file" in first.err and key not in first.err


def test_release_cli_with_a_key_from_the_environment_and_the_classroom_workflow(tmp_path, monkeypatch, capsys):
    key = hidden_bundle.new_key()
    monkeypatch.setenv("COURSE_KEY", key)
    out = tmp_path / "template"
    assert cli.main(["release", "--out", str(out), "--assignment", "attention", "--hidden-key-env", "COURSE_KEY",
                     "--classroom"]) == 0
    said = capsys.readouterr()
    assert said.err == "" and hidden.BUNDLE in said.out and said.out.count("\n") == 1
    files = bundle_files(out)
    assert bundle.WORKFLOWS[True] in files and bundle.WORKFLOWS[False] not in files
    assert bundle.WORKFLOWS[True] in json.loads(files[bundle.INTEGRITY])["files"]
    assert key.encode() not in b"".join(files.values())
    root = hidden.unlock(out / hidden.BUNDLE, key, private_dir())
    try:
        assert list(load_config(root / hidden.CONFIG).assignments) == ["attention"]
        assert not (root / "grader/checks/attention_modules").exists()
    finally:
        shutil.rmtree(root)


@pytest.mark.parametrize("args, fragment", [
    (["--hidden-key-file", "{tmp}/missing.txt"], "no such file"),
    (["--hidden-key-file", "{tmp}/bad.txt"], "does not hold a key made by `grader keygen`"),
    (["--hidden-key-file", "{tmp}/out/key.txt"], "lies inside the release folder"),
    (["--hidden-key-env", "GRADER_TEST_NO_SUCH_VARIABLE"], "is not set or is empty"),
])
def test_release_cli_bad_key_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, args, fragment):
    monkeypatch.delenv("GRADER_TEST_NO_SUCH_VARIABLE", raising=False)
    (tmp_path / "bad.txt").write_text("not a key\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "key.txt").write_text(hidden_bundle.new_key())
    assert cli.main(["release", "--out", str(tmp_path / "out"), *(a.format(tmp=tmp_path) for a in args)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grader: ") and err.count("\n") == 1 and fragment in err, err
    assert "not a key\n" not in err  # the file's text is never echoed
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["key.txt"]  # nothing released


def test_release_cli_takes_one_key_source(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["release", "--out", str(tmp_path), "--hidden-key-env", "X", "--hidden-key-file", "k"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("grader: ") and err.count("\n") == 1 and "not allowed with" in err


# ------------------------------------------------------------------ grades exactly as the instructor's grader


@pytest.mark.slow
def test_the_decrypted_tree_grades_exactly_as_grader_grade(hidden_release, unlocked, server, tmp_path):
    """What CI does with the secret: `PYTHONPATH=<root> python -P -m grader.cli grade ... --config
    <root>/assignments.yaml`, run in the repository (whose kit `grader/` must not be the one imported).
    The reference and a corpus mutant get the card the course's own grader gives: same checks,
    statuses, points and messages (diagnosis sentences included)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(unlocked)
    python = [sys.executable, "-P"]
    where = subprocess.run([*python, "-c", "import grader; print(grader.__file__)"], cwd=hidden_release, env=env,
                           capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert where == str(unlocked / "grader/__init__.py")
    mutant = next(c for c in corpus("mutants") if c.id == "attention/mutants/softmax_dim0")
    submissions = {"reference": ROOT / "solutions/attention.py", "mutant": mutant.write_submission(tmp_path)}
    scores = {}
    with api.Grader("attention", server=server) as course:
        for name, path in submissions.items():
            card = tmp_path / f"{name}.json"
            proc = subprocess.run([*python, "-m", "grader.cli", "grade", str(path), "--assignment", "attention",
                                   "--config", str(unlocked / hidden.CONFIG), "--out", str(card), "--format", "none"],
                                  cwd=hidden_release, env=env, capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr[-2000:]
            got = json.loads(card.read_text())
            want = course.grade(path).to_dict()
            assert _rows(got) == _rows(want), [(g, w) for g, w in zip(_rows(got), _rows(want)) if g != w][:2]
            assert (got["score"], got["max_score"], got.get("grader_error")) == \
                (want["score"], want["max_score"], want.get("grader_error"))
            scores[name] = got["score"]
    assert 0 < scores["mutant"] < scores["reference"]


def _rows(card: dict) -> list[tuple]:
    return [(c["id"], c["status"], c["score"], c["message"]) for c in card["checks"]]
