"""Fixtures for this project's own tests: one warm worker server for the session."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest
import torch

# One intra-op thread in every test process, set before any test module is imported: a module that computes
# with torch at import (a generated family's members, tests/test_gate_family.py) would otherwise start
# torch's thread pool, and a process forked after that (tests/test_layers.py's children, the judge's worker
# server) deadlocks on its first parallel op (ARCHITECTURE, "Facts measured"). Which modules a worker
# imports first depends on how xdist shares them out, so it is set here, once, for all.
torch.set_num_threads(1)

# SIGINT as an interactive terminal gives it, in every test process: a suite a shell started in the background
# (``bash .ci/run &``, side by side with another) inherits SIGINT ignored, hands that on to every command it
# starts, and the Ctrl-C tests (tests/test_interrupt.py, tests/test_batch.py) would then test an ignored signal.
# Which disposition a test's command gets is the test's choice (tests/test_interrupt.py tests both).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN and threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.default_int_handler)

from grader import api  # noqa: E402 - after the thread count, as above
from grader.sandbox.client import WorkerServer
from grader.scorecard import Scorecard
from tests import affected

if TYPE_CHECKING:
    from tests.corpus_cases import CorpusCase

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


class CorpusCards(Mapping[str, Scorecard]):
    """The corpus's cards, keyed by case id (``attention/mutants/softmax_dim0``), each graded when first read.

    Graded lazily, so ``pytest tests/test_corpus.py -k NAME`` grades only the cases its selected tests read
    (a fixture that graded the whole corpus up front made ``-k`` as slow as the full run); a test that reads
    every card (``values()``, ``items()``) grades what is left. Through one warm grader per assignment, as
    grade-all grades a class. Under xdist the workers share the work through ``shared`` (the run's shared
    temporary folder): a case is graded by the worker that claims it first (a file created with O_EXCL),
    which leaves its card there as JSON for the others to read.
    """

    def __init__(self, server: WorkerServer, folder: Path, shared: Path | None) -> None:
        from tests.corpus_cases import corpus

        self._cases = {c.id: c for c in corpus("mutants") + corpus("alternatives")}
        self._server, self._folder, self._shared = server, folder, shared
        self._cards: dict[str, Scorecard] = {}
        self._graders: dict[str, api.Grader] = {}

    def __getitem__(self, case_id: str) -> Scorecard:
        if case_id not in self._cards:
            case = self._cases[case_id]  # KeyError for an id the corpus does not have, as a dict says it
            if self._shared is None or self._claim(case_id):
                self._cards[case_id] = self._grade(case)
            else:
                self._cards[case_id] = self._wait(case_id)
        return self._cards[case_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)

    def values(self) -> list[Scorecard]:  # type: ignore[override]
        return [card for _, card in self.items()]

    def items(self) -> list[tuple[str, Scorecard]]:  # type: ignore[override]
        """Every card: first those no other worker has claimed (graded here), then the others' (read)."""
        for case_id in self._cases:
            if case_id not in self._cards and (self._shared is None or self._claim(case_id)):
                self._cards[case_id] = self._grade(self._cases[case_id])
        return [(case_id, self[case_id]) for case_id in self._cases]

    def close(self) -> None:
        for grader in self._graders.values():
            grader.close()

    def _path(self, case_id: str, suffix: str) -> Path:
        assert self._shared is not None
        return self._shared / (case_id.replace("/", "__") + suffix)

    def _claim(self, case_id: str) -> bool:
        return _claim(self._path(case_id, ".claim"))

    def _grade(self, case: CorpusCase) -> Scorecard:
        try:
            if case.assignment not in self._graders:
                self._graders[case.assignment] = api.Grader(case.assignment, server=self._server)
            card = self._graders[case.assignment].grade(case.write_submission(self._folder / case.kind))
        except BaseException as exc:
            if self._shared is not None:  # the workers waiting for this card learn why at once
                self._path(case.id, ".failed").write_text(f"{type(exc).__name__}: {exc}")
            raise
        if self._shared is not None:
            done = self._path(case.id, ".json")
            done.with_suffix(".tmp").write_text(card.to_json())
            done.with_suffix(".tmp").replace(done)  # whole, or not there
        return card

    def _wait(self, case_id: str) -> Scorecard:
        """Another worker is grading ``case_id``: grade the cases after it that nobody has claimed yet (a
        test reading the corpus in order will want them next) until its card is there, then read it.
        Two modules reading the corpus at once then split it between them instead of one idling."""
        done, failed = self._path(case_id, ".json"), self._path(case_id, ".failed")
        ids = list(self._cases)
        start = ids.index(case_id) + 1
        for other in ids[start:] + ids[:start]:
            if done.exists() or failed.exists():
                break
            if other not in self._cards and self._claim(other):
                self._cards[other] = self._grade(self._cases[other])
        _wait_for(done, failed, f"the card of {case_id}")
        return Scorecard.from_dict(json.loads(done.read_text()))


@pytest.fixture(scope="session")
def corpus_cards(server: WorkerServer, tmp_path_factory: pytest.TempPathFactory,
                 request: pytest.FixtureRequest) -> Iterator[CorpusCards]:
    """Every mutant and alternative of the corpus, each graded once per run when a test first reads its card
    (``CorpusCards``): the corpus, diagnosis, blame and contract-clause tests all read these cards instead of
    grading the same files again."""
    shared = None
    if getattr(request.config, "workerinput", None) is not None:  # an xdist worker: the run's workers share
        shared = tmp_path_factory.getbasetemp().parent / "corpus-cards"
        shared.mkdir(exist_ok=True)
    cards = CorpusCards(server, tmp_path_factory.mktemp("corpus"), shared)
    yield cards
    cards.close()


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
                        "test_hidden_bundle", "test_html_report", "test_changes", "test_cohort", "test_links",
                        "test_platforms"})


# xdist hands out modules in the order collected (``--no-loadscope-reorder`` in pyproject), so the modules
# that took longest in a full run go first and the run ends on short ones, not with one worker idle while the
# other finishes a 30 s module. Only the order changes; a module left off the list keeps its place after them.
LONGEST_FIRST = ("test_batch", "test_platforms", "test_returns", "test_diagnosis", "test_blame", "test_tmpdir", "test_runner",
                 "test_nonfinite", "test_doc_commands",
                 "test_hostile", "test_changes", "test_hidden_bundle", "test_ci", "test_overrides",
                 "test_notebook_differential", "test_forked_server", "test_release", "test_round_trip",
                 "test_release_notebooks", "test_seeds", "test_selfcheck")


def pytest_addoption(parser: pytest.Parser) -> None:
    affected.add_option(parser)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    affected.select(config, items)  # `--affected-by NAME` (tests/affected.py); nothing without it
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))  # stable: each module's own order kept


def pytest_itemcollected(item: pytest.Item) -> None:
    """As each test is collected: its tier."""
    module = item.path.stem
    if (module in END_TO_END or "grade_all" in item.name
            or SANDBOX_FIXTURES & set(getattr(item, "fixturenames", ()))):
        item.add_marker(pytest.mark.slow)
