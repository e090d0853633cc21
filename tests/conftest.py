"""Fixtures for this project's own tests: one warm worker server for the session."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from grader import api
from grader.sandbox.client import WorkerServer
from grader.scorecard import Scorecard

ROOT = Path(__file__).resolve().parents[1]
CORPUS_WAIT_SECONDS = 900  # a generous bound for the other worker's share of the corpus, on a busy machine


@pytest.fixture(scope="session")
def server() -> Iterator[WorkerServer]:
    with WorkerServer() as s:
        yield s


@pytest.fixture(scope="module")
def warm_graders(server: WorkerServer) -> Iterator[dict[str, api.Grader]]:
    """One warm grader per assignment for a module's ``grade`` calls, made at its first: the judge (the
    checks collected, the reference loaded) is paid for once per module, as grade-all pays for it once
    per class, not once per file."""
    graders: dict[str, api.Grader] = {}
    yield graders
    for grader in graders.values():
        grader.close()


@pytest.fixture
def grade(server: WorkerServer, warm_graders: dict[str, api.Grader], tmp_path: Path) -> Callable[..., Scorecard]:
    """grade(source_or_path, assignment) -> Scorecard, through the shared server and the module's warm grader."""

    def run(source: str | bytes | Path, assignment: str = "attention", name: str | None = None) -> Scorecard:
        if isinstance(source, Path):
            path = source
        else:
            path = tmp_path / (name or ("attention.py" if assignment == "attention" else "attention_modules.py"))
            path.write_bytes(source.encode() if isinstance(source, str) else source)
        if assignment not in warm_graders:
            warm_graders[assignment] = api.Grader(assignment, server=server)
        return warm_graders[assignment].grade(path)

    return run


def _shared_folder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The folder this run's xdist workers share (beside their own temporary folders); None when the
    tests run in one process."""
    if getattr(request.config, "workerinput", None) is None:
        return None
    shared = tmp_path_factory.getbasetemp().parent / "shared"
    shared.mkdir(exist_ok=True)
    return shared


def _claim(path: Path) -> bool:
    """True for the one worker that creates ``path`` first (O_EXCL): that one makes what others wait for."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


def _wait_for(ready: Path, failed: Path, what: str) -> None:
    deadline = time.monotonic() + CORPUS_WAIT_SECONDS
    while not ready.exists() and not failed.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    if failed.exists():
        pytest.fail(f"the worker that made {what} failed: {failed.read_text()}", pytrace=False)
    assert ready.exists(), f"another worker did not make {what} within {CORPUS_WAIT_SECONDS} s"


def built_once(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], object]) -> Path:
    """``build(folder)`` once per run, whichever worker needs it first; the others wait for it and read
    the same folder, which is read only for every test. A release grades the reference of every
    assignment (10-15 s of CPU): building it on each worker bought nothing."""
    shared = _shared_folder(request, tmp_path_factory)
    if shared is None:
        out = tmp_path_factory.mktemp(name)
        build(out)
        return out
    out, ready, failed = shared / name, shared / f"{name}.ready", shared / f"{name}.failed"
    if _claim(shared / f"{name}.claim"):
        try:
            out.mkdir()
            build(out)
        except BaseException as exc:
            failed.write_text(f"{type(exc).__name__}: {exc}")
            raise
        ready.touch()
    else:
        _wait_for(ready, failed, f"the shared {name!r}")
    return out


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """One `grader release` of every assignment, shared by the release and round-trip tests (read only;
    built once per run, by the first worker that needs it)."""
    from grader.release import bundle

    return built_once(request, tmp_path_factory, "release", bundle.build_release)


@pytest.fixture(scope="session")
def hidden_key(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> str:
    """The key the session's sealed release is made with (a fresh one: no key lives in this repository);
    one per run, so that every worker opens the one sealed release."""
    from grader.release import hidden_bundle

    key = built_once(request, tmp_path_factory, "hidden-key",
                     lambda folder: (folder / "key").write_text(hidden_bundle.new_key(), encoding="ascii"))
    return (key / "key").read_text(encoding="ascii")


@pytest.fixture(scope="session")
def hidden_release(tmp_path_factory: pytest.TempPathFactory, hidden_key: str, request: pytest.FixtureRequest) -> Path:
    """One `grader release --hidden-key-file` of every assignment: the release with `.grader/hidden.bundle`
    (read only; shared by the leak scans, the hidden-bundle and the workflow tests; built once per run)."""
    from grader.release import bundle

    return built_once(request, tmp_path_factory, "hidden-release",
                      lambda out: bundle.build_release(out, hidden_key=hidden_key))


@pytest.fixture(scope="session")
def corpus_cards(server: WorkerServer, tmp_path_factory: pytest.TempPathFactory,
                 request: pytest.FixtureRequest) -> dict[str, Scorecard]:
    """Every mutant and alternative of the corpus graded once, through one warm grader per assignment.

    Keyed by case id (``attention/mutants/softmax_dim0``). The corpus, diagnosis and
    contract-clause tests all read these cards instead of grading the same files again. Under xdist
    the workers share the work through the run's shared temporary folder: each grades the cases no
    other worker has claimed yet (a file created with O_EXCL is the claim) and leaves each card there
    as JSON, then reads the others' cards, so the corpus is graded once per run, on every worker at once.
    """
    from tests.corpus_cases import corpus, grade_corpus

    cases = corpus("mutants") + corpus("alternatives")
    if getattr(request.config, "workerinput", None) is None:  # not an xdist worker: nothing to share
        return {case.id: card for case, card in grade_corpus(cases, server)}
    shared = tmp_path_factory.getbasetemp().parent / "corpus-cards"
    shared.mkdir(exist_ok=True)

    def path(case_id: str, suffix: str) -> Path:
        return shared / (case_id.replace("/", "__") + suffix)

    def claim(case) -> bool:  # one at a time, as this worker gets to it: the workers share the corpus
        try:
            os.close(os.open(path(case.id, ".claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            return False

    for case, card in grade_corpus(cases, server, claim):
        done = path(case.id, ".json")
        done.with_suffix(".tmp").write_text(card.to_json())
        done.with_suffix(".tmp").replace(done)  # whole, or not there
    deadline = time.monotonic() + CORPUS_WAIT_SECONDS
    while (missing := [c.id for c in cases if not path(c.id, ".json").is_file()]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not missing, f"another worker did not grade {missing[:3]} within {CORPUS_WAIT_SECONDS} s"
    return {c.id: Scorecard.from_dict(json.loads(path(c.id, ".json").read_text())) for c in cases}


# The suite runs on two xdist workers (pyproject's addopts), a test module at a time (--dist loadscope), so a
# module's own fixtures are built once; the set-ups several modules share at a cost are made once per run and
# shared through the run's temporary folder: the graded corpus (``corpus_cards``) and the releases
# (``built_once``).

# The quick tier (`pytest -m "not slow"`) leaves out every test that grades through the sandbox (it needs
# the worker server, directly or through another fixture), every test of grade-all (its name says so) and
# the modules that drive the grader's command line end to end; CI runs everything.
SANDBOX_FIXTURES = frozenset({"server", "release", "hidden_release"})
END_TO_END = frozenset({"test_batch", "test_cli", "test_hostile", "test_student_environment", "test_selfcheck",
                        "test_forked_server", "test_release_notebooks", "test_gradescope_bundle", "test_ci",
                        "test_hidden_bundle", "test_html_report", "test_changes", "test_cohort", "test_links"})


def pytest_itemcollected(item: pytest.Item) -> None:
    """As each test is collected: its tier."""
    module = item.path.stem
    if (module in END_TO_END or "grade_all" in item.name
            or SANDBOX_FIXTURES & set(getattr(item, "fixturenames", ()))):
        item.add_marker(pytest.mark.slow)
