"""Fixtures for this project's own tests: one warm worker server for the session."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from grader import api
from grader.sandbox.client import WorkerServer
from grader.scorecard import Scorecard

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def server() -> Iterator[WorkerServer]:
    with WorkerServer() as s:
        yield s


@pytest.fixture
def grade(server: WorkerServer, tmp_path: Path) -> Callable[..., Scorecard]:
    """grade(source_or_path, assignment) -> Scorecard, through the shared server."""

    def run(source: str | bytes | Path, assignment: str = "attention", name: str | None = None) -> Scorecard:
        if isinstance(source, Path):
            path = source
        else:
            path = tmp_path / (name or ("attention.py" if assignment == "attention" else "attention_modules.py"))
            path.write_bytes(source.encode() if isinstance(source, str) else source)
        return api.grade(path, assignment, server=server)

    return run


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `grader release` of every assignment, shared by the release and round-trip tests (read only)."""
    from grader.release import bundle

    out = tmp_path_factory.mktemp("release")
    bundle.build_release(out)
    return out


@pytest.fixture(scope="session")
def hidden_key() -> str:
    """The key the session's sealed release is made with (a fresh one: no key lives in this repository)."""
    from grader.release import hidden_bundle

    return hidden_bundle.new_key()


@pytest.fixture(scope="session")
def hidden_release(tmp_path_factory: pytest.TempPathFactory, hidden_key: str) -> Path:
    """One `grader release --hidden-key-file` of every assignment: the release with `.grader/hidden.bundle`
    (read only; shared by the leak scans, the hidden-bundle and the workflow tests)."""
    from grader.release import bundle

    out = tmp_path_factory.mktemp("hidden-release")
    bundle.build_release(out, hidden_key=hidden_key)
    return out


@pytest.fixture(scope="session")
def corpus_cards(server: WorkerServer) -> dict[str, Scorecard]:
    """Every mutant and alternative of the corpus graded once, through one warm grader per assignment.

    Keyed by case id (``attention/mutants/softmax_dim0``). The corpus, diagnosis and
    contract-clause tests all read these cards instead of grading the same files again.
    """
    from tests.corpus_cases import corpus, grade_corpus

    return {case.id: card for case, card in grade_corpus(corpus("mutants") + corpus("alternatives"), server)}
