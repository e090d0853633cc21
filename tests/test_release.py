"""`grader release`: deterministic, complete, and without anything students must not see;
the kit's recorded expected values judge submissions exactly as the reference does."""

from __future__ import annotations

import ast
import base64
import json
from pathlib import Path

import pytest
import torch

from grader import api, tape
from grader.config import load_config
from grader.release import bundle, kit
from grader.checking import load_reference
from grader.tape import Recorder
from tests.corpus_cases import corpus

ROOT = Path(__file__).resolve().parents[1]
CONFIG = load_config(ROOT / "assignments.yaml")


def bundle_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_release_holds_exercises_notebooks_kit_and_readme(release):
    files = bundle_files(release)
    for a in CONFIG.assignments.values():
        assert files[a.file] == a.stub.read_bytes()
        assert f"{Path(a.file).stem}.ipynb" in files
        assert f"grader/course/expected/{a.id}.json" in files
    for needed in ("README.md", "pyproject.toml", "release.json", "grader/course/assignments.yaml", "grader/cli.py",
                   "grader/selfcheck.py", "grader/tape.py", "grader/sandbox/child.py", "grader/checks/helpers.py"):
        assert needed in files, needed
    assert not any(p.startswith(("solutions/", "grader/release/", "tests/")) for p in files)
    manifest = json.loads(files["release.json"])
    assert set(manifest["files"]) == set(files) - {"release.json"}
    readme = files["README.md"].decode()
    for command in ("pip install .", "grader check attention.ipynb", "grader check --watch", "Submit"):
        assert command in readme
    assert "does not mean full marks" in readme


def test_kit_check_modules_keep_only_what_the_visible_checks_use(release):
    for path in sorted((release / "grader/checks").rglob("test_*.py")):
        source = path.read_text()
        compile(source, str(path), "exec")
        assert "hypothesis" not in source and "NO_SHRINK" not in source, path.name  # only hidden checks used them
    assert "def test_output_matches_reference" in (release / "grader/checks/attention/test_common.py").read_text()


def test_the_kit_config_lists_only_visible_checks_and_how_many_are_hidden(release):
    kit_config = load_config(release / "grader/course/assignments.yaml")
    for aid, a in CONFIG.assignments.items():
        k = kit_config.assignment(aid)
        assert k.is_kit and k.reference is None and k.expected.is_file()
        assert {(ex.name, c.name) for ex in k.exercises for c in ex.checks} == {
            (ex.name, c.name) for ex in a.exercises for c in ex.checks if c.visibility == "visible"}
        assert k.hidden_checks > 0


def test_releasing_again_gives_byte_identical_files(release, tmp_path):
    again = tmp_path / "again"
    bundle.build_release(again)
    assert bundle_files(again) == bundle_files(release)
    (again / "attention.py").write_text("# a student's edit\n")
    (again / "grader/course/expected/old-assignment.json").write_text("{}")
    manifest = json.loads((again / "release.json").read_text())
    manifest["files"]["grader/course/expected/old-assignment.json"] = "0" * 64
    (again / "release.json").write_text(json.dumps(manifest))
    bundle.build_release(again)  # over an earlier release: rewritten, and its stale files removed
    assert bundle_files(again) == bundle_files(release)


def test_release_refuses_a_folder_that_is_not_a_release(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(bundle.ReleaseError, match="not empty"):
        bundle.build_release(tmp_path, ["attention"])
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_release_cli_gives_one_line_for_bad_input(tmp_path, capsys):
    from grader import cli

    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    assert cli.main(["release", "--out", str(tmp_path / "busy")]) == 2
    assert cli.main(["release", "--out", str(tmp_path / "new"), "--assignment", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("grader: ") for line in err)
    assert "unknown assignment 'nope'" in err[1] and "Traceback" not in "".join(err)


# --- nothing students must not see ---------------------------------------------------------------

def _text(files: dict[str, bytes]) -> str:
    return "\n".join(data.decode("utf-8", errors="replace") for data in files.values())


def _squash(text: str) -> str:
    return " ".join(text.split())


IDIOMS = {"super().__init__()"}  # statements any Python package may hold: they give nothing of the reference away


def _reference_statements(path: Path, stub: Path) -> set[str]:
    """Every simple statement in the reference's function bodies (docstrings left out), whitespace
    squashed, that is long enough to be distinctive and that the stub does not have."""
    source = path.read_text()
    stub_text = _squash(stub.read_text())
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue  # a docstring
            nested = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if getattr(stmt, f, None)]
            nested += [h.body for h in getattr(stmt, "handlers", [])]
            if nested:
                for block in nested:
                    visit(block)
                continue
            text = _squash(ast.get_source_segment(source, stmt) or "")
            if len(text) >= 16 and text not in stub_text and text not in IDIOMS:
                found.add(text)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef):
            visit(node.body)
    return found


@pytest.fixture(params=["plain", "with hidden bundle"])
def any_release(request: pytest.FixtureRequest) -> Path:
    """The leak scans run on both releases: without a key, and with `.grader/hidden.bundle`, whose
    ciphertext must give away nothing (the decrypted tree holds everything they look for)."""
    return request.getfixturevalue("release" if request.param == "plain" else "hidden_release")


def test_no_reference_code_reaches_the_bundle(any_release):
    text = _squash(_text(bundle_files(any_release)))
    for a in CONFIG.assignments.values():
        statements = _reference_statements(a.reference, a.stub)
        assert len(statements) >= 5, f"the scan found too few distinctive statements in {a.reference.name}"
        leaked = sorted(s for s in statements if s in text)
        assert not leaked, f"reference code of {a.reference.name} in the bundle: {leaked[:5]}"


def test_no_hidden_check_name_reaches_the_bundle(any_release):
    text = _text(bundle_files(any_release))
    for a in CONFIG.assignments.values():
        hidden = kit.hidden_test_names(a)
        assert hidden, f"{a.id} has no hidden checks to look for"
        found = sorted(name for name in hidden if name in text)
        assert not found, f"hidden checks named in the bundle: {found}"


@pytest.fixture(scope="module")
def hidden_only_outputs(server) -> dict[str, list[torch.Tensor]]:
    """Grade the reference with every check recording: per assignment, the reference's outputs that
    only hidden checks asked for (at least 4 numbers each, none also seen by a visible check)."""
    found = {}
    for a in CONFIG.assignments.values():
        recorder = Recorder(load_reference(a.reference), gradients=True)
        with api.Grader(a.id, server=server, reference=recorder.for_check) as grader:
            grader.grade(a.reference)
        hidden_names = kit.hidden_test_names(a)
        visible, hidden = set(), []
        for check_id, log in recorder.checks.items():
            name = check_id.rsplit("::", 1)[-1].split("[", 1)[0]
            results = [tape.decode(e["result"]) for e in log if e["kind"] == "call"]
            results += [tape.decode(f["out"]) for e in log if e["kind"] == "module" for f in e["forwards"]]
            tensors = [t for r in results for t in (r if isinstance(r, tuple) else (r,)) if isinstance(t, torch.Tensor)]
            if name in hidden_names:
                hidden += tensors
            else:
                visible.update(_raw(t) for t in tensors)
        found[a.id] = [t for t in hidden if _raw(t) not in visible and t.numel() >= 4]
    return found


def test_no_reference_output_on_a_hidden_checks_inputs_reaches_the_bundle(any_release, hidden_only_outputs):
    """What the hidden checks alone asked of the reference must not be in any file of the bundle,
    raw or as the tape would encode it."""
    blob = b"\n".join(bundle_files(any_release).values())
    # An assignment whose hidden checks compare the student with itself asks the reference nothing;
    # the scan must still find something to look for somewhere, or it proves nothing.
    assert any(hidden_only_outputs.values()), "the scan found no hidden-only reference output to look for"
    for aid, secret in hidden_only_outputs.items():
        for t in secret:
            raw = _raw(t)
            assert raw not in blob and base64.b64encode(raw) not in blob, (
                f"{aid}: a reference output of shape {tuple(t.shape)} from a hidden check is in the bundle")


def _raw(t: torch.Tensor) -> bytes:
    return t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


# --- the kit judges like the course --------------------------------------------------------------

KIT_SAMPLE = corpus("mutants")[::4] + corpus("alternatives")[::4]


@pytest.mark.slow
def test_the_kit_gives_the_same_visible_verdicts_as_the_reference(release, server, tmp_path):
    """Mutants and correct alternatives: the recorded values pass and fail exactly the visible
    checks that the reference itself passes and fails, with the same messages. The one difference:
    the kit names no known mistake (its catalogue would show the reference), so the course's
    "Likely mistake" sentence is left out of the comparison."""
    kit_config = release / "grader/course/assignments.yaml"
    for aid in CONFIG.assignments:
        cases = [c for c in KIT_SAMPLE if c.assignment == aid]
        assert cases
        with api.Grader(aid, server=server, visible_only=True) as course, \
                api.Grader(aid, server=server, visible_only=True, config_path=kit_config) as student:
            for case in cases:
                path = case.write_submission(tmp_path)
                want = [(c.id, c.status, c.message.split("\nLikely mistake: ")[0]) for c in course.grade(path).checks]
                kit_card = student.grade(path)
                assert not any(c.diagnosis for c in kit_card.checks)
                got = [(c.id, c.status, c.message) for c in kit_card.checks]
                assert got == want, f"{case.id}: " + str([(g, w) for g, w in zip(got, want) if g != w][:2])


def test_a_question_the_tape_did_not_record_is_the_graders_error_not_the_students():
    replay = tape.Tape({"attention/x.py::test_y": []}).for_check("attention/x.py::test_y")
    with pytest.raises(tape.TapeMiss, match="did not record"):
        replay.attention(torch.zeros(2, 2), torch.zeros(2, 2), torch.zeros(2, 2))
    from grader.checking import _verdict

    class Report:
        skipped, passed = False, False

    class Call:
        class excinfo:
            value = tape.TapeMiss("the visible check x asked for y")

    verdict = _verdict(Report(), Call(), {})
    assert verdict["status"] == "error" and "could not run this check" in verdict["message"]


def test_recorded_inputs_match_within_rounding_and_not_beyond():
    x = torch.randn(4, 5, dtype=torch.float64)
    recorded = tape.digest([x])
    assert tape.same_inputs(recorded, [x * (1 + 1e-13)])
    assert not tape.same_inputs(recorded, [x.flip(0)])
    changed = x.clone()
    changed[2, 3] += 1e-3
    assert not tape.same_inputs(recorded, [changed])
    assert not tape.same_inputs(recorded, [x.float()])


def test_a_visible_check_that_needs_a_gradient_through_the_reference_cannot_be_released():
    recorder = Recorder(load_reference(ROOT / "solutions/attention_modules.py"))
    head = recorder.for_check("c").SelfAttentionHead(12, 5, 8, 0.0)
    x = torch.randn(2, 6, 12, requires_grad=True)
    with pytest.raises(tape.TapeUnsupported, match="gradient"):
        head(x)
    with pytest.raises(tape.TapeUnsupported, match="only"):
        head.state_dict()
