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


# The suite runs on two xdist workers (pyproject's addopts). Session fixtures are built once per worker,
# so the modules that share an expensive one run on the same worker: the graded corpus (~45 s) and the
# releases. Everything else is spread by load.
SHARED_SETUPS = {
    "corpus": ("test_blame", "test_contract_clauses", "test_corpus", "test_credit", "test_diagnosis",
               "test_notebook_differential"),
    "releases": ("test_ci", "test_hidden_bundle", "test_release", "test_round_trip", "test_workflows"),
    "nonfinite": ("test_nonfinite",),  # its variants graded once, in a module fixture
}


# The quick tier (`pytest -m "not slow"`) leaves out every test that grades through the sandbox (it needs
# the worker server, directly or through another fixture), every test of grade-all (its name says so) and
# the modules that drive the grader's command line end to end; CI runs everything.
SANDBOX_FIXTURES = frozenset({"server", "release", "hidden_release"})
END_TO_END = frozenset({"test_batch", "test_cli", "test_hostile", "test_student_environment", "test_selfcheck",
                        "test_forked_server", "test_release_notebooks", "test_gradescope_bundle", "test_ci",
                        "test_hidden_bundle", "test_html_report", "test_changes", "test_cohort", "test_links"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    group_of = {module: group for group, modules in SHARED_SETUPS.items() for module in modules}
    for item in items:
        module = item.path.stem
        if module in group_of:
            item.add_marker(pytest.mark.xdist_group(group_of[module]))
        if (module in END_TO_END or "grade_all" in item.name
                or SANDBOX_FIXTURES & set(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.slow)
