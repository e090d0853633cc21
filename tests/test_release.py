"""`grader release`: deterministic, complete, and without anything students must not see;
the kit's recorded expected values judge submissions exactly as the reference does."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import base64
import json
import re
import zlib
import shutil
import subprocess
import types
from pathlib import Path
from typing import Any, Callable

import nbformat
import pytest
import torch

from grader import api
from grader.session import tape
from grader.config import load_config
from grader.release import answers, bundle, kit
from grader.session import load_reference
from grader.session.tape import Recorder
from grader.sandbox import rng
from grader.sandbox.errors import StudentError
from grader.sandbox.proxy import CallResult
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
    for needed in ("README.md", "pyproject.toml", "release.json", "grader/course/assignments.yaml", "grader/cli/__init__.py",
                   "grader/selfcheck.py", "grader/session/tape.py", "grader/sandbox/child.py", "grader/checks/helpers.py"):
        assert needed in files, needed
    assert not any(p.startswith(("solutions/", "grader/release/", "tests/")) for p in files)
    manifest = json.loads(files["release.json"])
    assert set(manifest["files"]) == set(files) - {"release.json"}
    readme = files["README.md"].decode()
    for command in ("pip install .", "grader check attention.ipynb", "grader check --watch", "Submit"):
        assert command in readme
    assert "does not mean full marks" in readme


def test_the_kit_ignores_environments_caches_and_grader_outputs_but_none_of_its_own_files(release, tmp_path):
    """A student's repository commits their work and the released files: not a virtual environment,
    build output, caches, or the grader's cards and results (`git check-ignore` reads the kit's .gitignore)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_bytes((release / ".gitignore").read_bytes())
    unwanted = [".venv/bin/python", "venv/lib/x.py", "build/lib/grader/cli.py", "dist/kit.whl",
                "attention_autograder_kit.egg-info/PKG-INFO", "__pycache__/attention.cpython-311.pyc",
                "grader/__pycache__/cli.cpython-311.pyc", ".ipynb_checkpoints/attention-checkpoint.ipynb",
                ".hypothesis/constants/abc", ".pytest_cache/v/cache/nodeids", "scorecard.json",
                "grader-results/attention.json"]
    released = sorted(bundle_files(release))
    check = subprocess.run(["git", "-C", str(repo), "check-ignore", "--no-index", "--stdin"],
                           input="\n".join(unwanted + released), capture_output=True, text=True)
    assert sorted(check.stdout.split()) == sorted(unwanted), check.stderr


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
    """One more release, over a copy of the session's with every file changed (a student's edit), one
    stale file an earlier release listed, and that file in its manifest: the release writes each file
    again as computed, removes the stale one, and ends byte for byte as the session's release. Every
    file differs before, so the equality shows a second build computes the same bytes (one build,
    not two: a build grades the reference of every assignment)."""
    again = tmp_path / "again"
    shutil.copytree(release, again)
    for path in sorted(p for p in again.rglob("*") if p.is_file() and p.name != "release.json"):
        path.write_bytes(path.read_bytes() + b"\n# a student's edit\n")
    (again / "grader/course/expected/old-assignment.json").write_text("{}")
    manifest = json.loads((again / "release.json").read_text())
    manifest["files"]["grader/course/expected/old-assignment.json"] = "0" * 64
    (again / "release.json").write_text(json.dumps(manifest))
    assert all(data != bundle_files(release).get(rel) for rel, data in bundle_files(again).items())
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


# The answer scan (grader/release/answers.py) refuses a release that writes out an exercise's answer in any
# text file: these tests hold its patterns to the exercises and the references, and the release to it. What it
# reads as code in each kind of file, and the generated family that proves it, are in tests/test_answer_scan.py.

def test_the_answer_scan_finds_each_exercises_answer_in_the_reference():
    """The patterns are not vacuous: every exercise's answer in the references is found by them."""
    references = {f"solutions/{a.reference.name}": a.reference.read_bytes() for a in CONFIG.assignments.values()}
    found = {f.exercise for f in answers.scan(references)}
    assert not set(answers.ANSWER_PATTERNS) - found, \
        f"patterns that miss the reference: {set(answers.ANSWER_PATTERNS) - found}"


def test_the_answer_scan_has_patterns_for_every_exercise():
    """A new exercise adds its answer's constructions to ANSWER_PATTERNS (docs/adding-an-exercise.md), or the
    release cannot see its answer written into a check, an input, a figure or a notebook's demo."""
    covered = {name.strip() for key in answers.ANSWER_PATTERNS for name in key.split("/")}
    lacking = [ex.name for a in CONFIG.assignments.values() for ex in a.exercises
               if ex.name not in covered | answers.COMPOSED_OF_OTHERS]
    assert not lacking, (f"ANSWER_PATTERNS in grader/release/answers.py has no pattern for {lacking}: add the "
                         "constructions a solution of each uses (or, for one built only of the other exercises' "
                         "calls, add it to COMPOSED_OF_OTHERS)")
    assert not answers.COMPOSED_OF_OTHERS & covered


def test_no_exercises_answer_is_written_in_the_kit(any_release):
    """No file of either release (stubs, notebooks, README, config, checks, figures...) writes out an
    answer but the allowed sites; and each allowed site is still there, or the list is stale."""
    found = answers.scan(bundle_files(any_release))
    new = [str(f) for f in found if not f.allowed]
    assert not new, "answers in the kit:\n" + "\n".join(new)
    gone = set(answers.ALLOWED_SITES) - {(f.path, f.exercise) for f in found}
    assert not gone, f"no longer in the kit, drop from ALLOWED_SITES in grader/release/answers.py: {sorted(gone)}"


@pytest.mark.slow  # records the expected values: grades the reference through the sandbox
def test_release_refuses_to_write_an_answer_in_one_line(tmp_path, monkeypatch, capsys):
    """A lesson whose demo writes out an answer (today's `head_weights` cell, put back) stops `grader release`
    with one line naming the notebook, the cell, the line and the exercise, exit 2, and nothing written."""
    from grader import cli
    from grader.release import notebooks
    from tests.test_answer_scan import read_case

    cell, _ = read_case("head_weights_cell.txt")
    real = notebooks.build_notebook

    def with_the_old_cell(stub, lesson):
        nb = nbformat.reads(real(stub, lesson), as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(cell, id="old-head-weights"))
        return nbformat.writes(nb)

    monkeypatch.setattr(bundle, "build_notebook", with_the_old_cell)
    out = tmp_path / "out"
    with pytest.raises(bundle.ReleaseError) as refused:
        bundle.build_release(out, ["attention-modules"])
    message = str(refused.value)
    assert "\n" not in message and "attention_modules.ipynb: cell " in message, message
    assert ": attention_scores: scores = q @ k.transpose(-2, -1)" in message and "(and 1 more)" in message
    assert not out.exists()
    assert cli.main(["release", "--out", str(out), "--assignment", "attention-modules"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("grader: ") and "hand out an answer" in err[0], err
    assert not out.exists()


# --- the kit judges like the course --------------------------------------------------------------

def kit_cases(assignment: str, cards: Any) -> list[Any]:
    """The corpus cases the kit is held to: for every visible check that some mutant fails on the course's card,
    the mutant that fails it with the fewest visible failures (ties by id), so each check's own failure path runs
    in the kit, not a crash on the way to it (a path only a wrong submission takes asks the recorded reference
    questions its pass never does); and every fourth correct alternative by a hash of its id, so that adding a
    case never changes which of the others are chosen."""
    def failed(case: Any) -> set[str]:
        return {c.id for c in cards[case.id].checks if c.visibility == "visible" and c.status not in ("passed", "skipped")}

    mutants = sorted((c for c in corpus("mutants") if c.assignment == assignment), key=lambda c: c.id)
    fails = {c.id: failed(c) for c in mutants}
    chosen = {min((c for c in mutants if check in fails[c.id]), key=lambda c: (len(fails[c.id]), c.id)).id: None
              for check in sorted(set().union(*fails.values()))}
    chosen = [c for c in mutants if c.id in chosen]
    alternatives = [c for c in corpus("alternatives") if c.assignment == assignment and zlib.crc32(c.id.encode()) % 4 == 0]
    return chosen + alternatives


CALLEE_NOTE = re.compile(r"(; your `[^`]+` calls your `[^`]+`.*?: fix `[^`]+` first)"
                         r"|( \(your `[^`]+` calls your `[^`]+`.*?: fix `[^`]+` first\))")


@pytest.mark.slow
def test_the_kit_gives_the_same_visible_verdicts_as_the_reference(release, server, corpus_cards, tmp_path):
    """Mutants (``kit_cases``: one failing each visible check some mutant fails) and correct alternatives: the recorded values pass and fail exactly the visible
    checks that the reference itself passes and fails, with the same messages. The two differences:
    the kit names no known mistake (its catalogue would show the reference), and no callee whose return
    is not the contract's (``proxy._callee_note``: it compares with the reference's outputs on the
    student's own arguments, which no tape can record), so the course's "Likely mistake" sentence and
    "; your `X` calls your `Y` ...: fix `Y` first" note are left out of the comparison.

    The course's side is the visible checks of the session's corpus cards (graded once for the corpus,
    diagnosis and blame tests, every check run): only the kit grades here. A visible check's verdict does
    not depend on the hidden checks graded beside it, so these are the verdicts ``grader check`` gives."""
    kit_config = release / "grader/course/assignments.yaml"
    for aid in CONFIG.assignments:
        cases = kit_cases(aid, corpus_cards)
        assert cases
        with api.Grader(aid, server=server, visible_only=True, config_path=kit_config) as student:
            for case in cases:
                assert not corpus_cards[case.id].grader_error, f"{case.id}: {corpus_cards[case.id].grader_error}"
                want = [(c.id, c.status, CALLEE_NOTE.sub("", c.message.split("\nLikely mistake: ")[0]))
                        for c in corpus_cards[case.id].checks if c.visibility == "visible"]
                assert want, f"{case.id}: the course card has no visible check"
                kit_card = student.grade(case.write_submission(tmp_path))
                assert not any(c.diagnosis for c in kit_card.checks)
                got = [(c.id, c.status, c.message) for c in kit_card.checks]
                assert got == want, f"{case.id}: " + str([(g, w) for g, w in zip(got, want) if g != w][:2])


class InProcessStudent:
    """A corpus case run in this process, answering a gate's ``student.call`` as the sandbox's proxy does:
    each stream its own RNG state (``grader.sandbox.rng``), inputs copied, and any raise of the submission's
    code as ``StudentError`` (the child turns every exception of student code into that reply). Enough for
    the gate's path and nothing else: replaying it needs no worker, so every corpus case costs milliseconds."""

    def __init__(self, module: types.ModuleType, check: str) -> None:
        self._module, self._check = module, check

    def call(self, name: str, *args: Any, stream: int = 0, **kwargs: Any) -> CallResult:
        rng.reset(rng.derive(self._check, stream))
        copied = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        try:
            value = getattr(self._module, name)(*copied, **kwargs)
        except Exception as exc:  # noqa: BLE001 - student code may raise anything; the sandbox says StudentError
            raise StudentError(name, {"type": type(exc).__name__, "message": str(exc)}) from None
        return CallResult(value)


GATE_ARGS = ["student", "reference", "cases", "assignment", "fn"]


def _gate_takes_cases(aid: str) -> bool:
    """Whether the assignment's gate judges per exercise from ``cases`` (``GATE_ARGS``): the gate whose questions
    to the reference follow its inputs. attention-modules' gate probes one module and asks its reference for
    the same two forwards whatever the student answers."""
    path = ROOT / "grader" / "checks" / CONFIG.assignment(aid).checks_package / "test_work.py"
    gates = [n for n in ast.parse(path.read_text()).body
             if isinstance(n, ast.FunctionDef) and n.name == "test_output_is_not_a_placeholder"] if path.is_file() else []
    return bool(gates) and [a.arg for a in gates[0].args.args] == GATE_ARGS


GATED_BY_CASES = [aid for aid in sorted(CONFIG.assignments) if _gate_takes_cases(aid)]


def _kit_gate(release: Path, package: str) -> Callable[..., None]:
    """The kit's own gate, as released (its ``test_work.py``, its imports resolved in this grader)."""
    path = release / "grader" / "checks" / package / "test_work.py"
    module_spec = importlib.util.spec_from_file_location(f"kit_{package}_test_work", path)
    assert module_spec is not None and module_spec.loader is not None, path
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    gate = module.test_output_is_not_a_placeholder
    assert list(inspect.signature(gate).parameters) == GATE_ARGS, path
    return gate


def test_the_gate_replay_finds_the_gate_that_judges_from_cases():
    """The replay below is parametrised by what it finds: finding nothing would prove nothing."""
    assert "attention" in GATED_BY_CASES and "attention-modules" not in GATED_BY_CASES


@pytest.mark.parametrize("aid", GATED_BY_CASES)
def test_the_kit_answers_every_input_the_gate_asks_of_every_corpus_case(release, aid):
    """Issue 26: a gate that asked the reference for its next input only once the student's answer on the
    previous one proved nothing left the kit without that input's answer (the reference passes on its
    first), so a mutant such as ``attention_scores_k_T`` read "the kit and the course's grader differ".
    Every mutant and alternative of the corpus goes through the kit's gate of every exercise, its reference
    the kit's tape (``Tape.for_check``, as the kit's ``reference`` fixture hands it): no case may meet a
    question the release did not record. In process, no worker: a few seconds for the whole corpus."""
    kit_config = load_config(release / "grader/course/assignments.yaml").assignment(aid)
    gate = _kit_gate(release, kit_config.checks_package)
    prefix = f"{kit_config.checks_package}/test_work.py::test_output_is_not_a_placeholder"
    recorded = tape.Tape.load(kit_config.expected)
    conftest = importlib.import_module(f"grader.checks.{kit_config.checks_package}.conftest")
    cases = conftest.build_cases()
    exercises = [ex.name for ex in kit_config.exercises_with("test_output_is_not_a_placeholder")]
    corpus_cases = [c for c in corpus("mutants") + corpus("alternatives") if c.assignment == aid]
    assert exercises and len(corpus_cases) >= 20, (exercises, len(corpus_cases))
    misses, placeholders = [], []
    for case in corpus_cases:
        module = types.ModuleType(f"corpus_{case.path.stem}")
        exec(compile(case.source(), case.id, "exec"), module.__dict__)  # noqa: S102 - the course's own corpus
        for fn in exercises:
            check = f"{prefix}[{fn}]"
            try:
                gate(InProcessStudent(module, check), recorded.for_check(check), cases, kit_config, fn)
            except tape.TapeMiss as miss:
                misses.append(f"{case.id} at {fn}: {miss}")
            except AssertionError:  # a placeholder verdict: the tape answered every question it was asked
                placeholders.append(f"{case.id} at {fn}")
    assert not misses, f"{len(misses)} gate runs asked the kit what it did not record:\n" + "\n".join(misses[:5])
    # The replay judges as the kit does: no correct alternative is taken for a placeholder (tests/test_credit.py).
    wrong = [p for p in placeholders if "/alternatives/" in p]
    assert not wrong, f"the in-process replay took correct code for a placeholder: {wrong[:3]}"


def test_a_question_the_tape_did_not_record_is_the_graders_error_not_the_students():
    replay = tape.Tape({"attention/x.py::test_y": []}).for_check("attention/x.py::test_y")
    with pytest.raises(tape.TapeMiss, match="did not record"):
        replay.attention(torch.zeros(2, 2), torch.zeros(2, 2), torch.zeros(2, 2))
    from grader.session.verdicts import check_verdict

    verdict = check_verdict(tape.TapeMiss("the visible check x asked for y"))
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
