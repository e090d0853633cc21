"""The judge drives each check's phases itself (``grader.session.runner``) instead of pytest's runtest
protocol: the verdicts must be the ones pytest's own protocol gives, for every kind of ending a check
can have (pass, assertion, skip, student error, crash, not attempted), in both assignments.

``ProtocolJudge`` is the judge as it was before: each check run by ``pytest_runtest_protocol``, its
ending read from pytest's reports. A pytest release that changes ``SetupState`` (which the runner
uses) or the protocol shows here as a difference.
"""

from __future__ import annotations

import pytest

from grader import api
from grader.session.runner import Ran, run_item, skip_message
from grader.session.session import Judge
from grader.session.verdicts import UNJUDGED_PREFIX
from tests.corpus_cases import corpus

CASES = {
    "attention": ["alternatives", "mutants", "placeholders", "hostile"],
    "attention-modules": ["alternatives", "mutants", "placeholders"],
}
# Hostile files chosen for how their checks end: a crash (the worker exits inside a check), exceptions of every
# kind, wrong types. (A timeout ends a check the way a crash does, through the worker's incident count; a
# hanging file costs seconds per grade, so none is here.)
HOSTILE = {"exit_in_softmax", "base_exceptions", "wrong_return_types"}


class ProtocolJudge(Judge):
    """The judge with each check run by pytest's own per-test protocol, its ending read from the reports."""

    _ended: BaseException | None = None
    checks_run = 0  # across instances: the test sees that this judge, not the runner's, graded

    def _run_item(self, item, nextitem, context):  # noqa: ANN001, ANN202 - the Judge's own signature
        self.plugin.begin(item)
        before = context.worker.incidents
        self._ended = None
        ProtocolJudge.checks_run += 1
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        return self.plugin.verdict(item, Ran(self._ended, 0.0), incident=context.worker.incidents != before)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):  # noqa: ANN001, ANN201 - a pytest hookwrapper
        if call.excinfo is not None and self._ended is None:
            self._ended = call.excinfo.value
        yield


def _sample(assignment: str) -> list:
    """A few cases of each kind, the hostile ones by name: every way a check can end, in a few seconds."""
    chosen = []
    for kind in CASES[assignment]:
        cases = [c for c in corpus(kind) if c.assignment == assignment]
        chosen += [c for c in cases if c.path.stem in HOSTILE] if kind == "hostile" else cases[:: max(1, len(cases) // 2)][:2]
    return chosen


@pytest.mark.parametrize("assignment", sorted(CASES))
def test_the_runner_gives_the_verdicts_of_pytests_own_protocol(assignment, tmp_path, monkeypatch, server):
    files = [case.write_submission(tmp_path / case.kind) for case in _sample(assignment)]
    with api.Grader(assignment, server=server) as grader:
        ours = [grader.grade(f) for f in files]
    monkeypatch.setattr("grader.session.Judge", ProtocolJudge)  # what api.Grader builds
    with api.Grader(assignment, server=server) as grader:
        theirs = [grader.grade(f) for f in files]
    assert ProtocolJudge.checks_run >= len(files) * len(ours[0].checks), "pytest's protocol did not grade"
    endings = set()
    unjudged = 0
    for f, a, b in zip(files, ours, theirs):
        mine = [(c.id, c.status, c.score, c.message) for c in a.checks]
        pytests = [(c.id, c.status, c.score, c.message) for c in b.checks]
        assert mine == pytests, f"{f.name}: the runner's verdicts differ from pytest's protocol"
        endings |= {c.status for c in a.checks}
        unjudged += sum(c.message.startswith(UNJUDGED_PREFIX) for c in a.checks)
    # The sample really covers the endings it claims to: passes, failures, errors.
    assert {"passed", "failed", "error"} <= endings, endings
    assert unjudged, "no check skipped (could not be judged) in the sample"


def test_a_skip_is_read_from_a_group_of_skips_only():
    with pytest.raises(pytest.skip.Exception) as skipped:
        pytest.skip("no row is a distribution")
    assert skip_message(skipped.value) == "no row is a distribution"
    assert skip_message(BaseExceptionGroup("hypothesis", [skipped.value])) == "no row is a distribution"
    assert skip_message(BaseExceptionGroup("mixed", [skipped.value, ValueError("x")])) is None
    assert skip_message(AssertionError("x")) is None


class RunEach:
    """A pytest plugin whose run loop hands every collected item to ``run_item``, as the judge does."""

    def __init__(self) -> None:
        self.ended: dict[str, BaseException | None] = {}
        self.stack_after: dict | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        for item in session.items:
            self.ended[item.name] = run_item(item, None).error
        self.stack_after = dict(session._setupstate.stack)
        return True


def test_a_check_that_raises_in_its_fixture_or_body_ends_with_that_exception(tmp_path):
    (tmp_path / "test_endings.py").write_text("""
import pytest

@pytest.fixture
def broken():
    raise KeyError("fixture")

def test_fixture(broken):
    pass

def test_body():
    assert 1 == 2, "the body"

def test_pass():
    pass

def test_skip():
    pytest.skip("why")
""")
    run = RunEach()
    pytest.main([str(tmp_path), "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--rootdir", str(tmp_path)], plugins=[run])
    ended = run.ended
    assert isinstance(ended["test_fixture"], KeyError)
    assert isinstance(ended["test_body"], AssertionError) and "the body" in str(ended["test_body"])
    assert ended["test_pass"] is None
    assert skip_message(ended["test_skip"]) == "why"
    assert run.stack_after == {}, "every item's fixtures were torn down"


def test_plain_fixtures_are_handed_over_and_the_rest_stay_pytests(tmp_path, monkeypatch, server):
    """The runner fills a check's direct parameters and the judge plugin's plain fixtures itself
    (``runner.plain_fixtures``); pytest's machinery still runs the conftest's fixtures. The verdicts are
    pytest's own either way (the test above)."""
    from _pytest.fixtures import FixtureDef

    executed: set[str] = set()
    real = FixtureDef.execute

    def execute(self, request):  # noqa: ANN001, ANN202 - pytest's own signature
        executed.add(self.argname)
        return real(self, request)

    monkeypatch.setattr(FixtureDef, "execute", execute)
    case = next(c for c in corpus("alternatives") if c.assignment == "attention")
    with api.Grader("attention", server=server) as grader:
        card = grader.grade(case.write_submission(tmp_path))
    assert card.score == card.max_score
    assert not executed & {"student", "reference", "assignment", "fn", "dtype"}, executed
    assert {"cases", "hidden_cases", "hidden_seed"} <= executed  # hidden_seed: asked for by hidden_cases


def test_two_judges_of_one_process_never_import_at_once(monkeypatch):
    """A judge imports by hand (its reference as it is made, its check modules as pytest collects); judges made
    back to back (a student kit's and the course's, as test_release makes them; both assignments', as
    test_seeds does) take turns (``plugin.IMPORTING``): no reference is loaded and no two judges collect
    at the same time, whichever thread gets there first."""
    import threading
    import time

    from grader import session as checking
    from grader.config import load_config
    from grader.session import plugin
    from grader.session.plugin import GraderPlugin

    spans: dict[int, list[float]] = {}
    loads: list[tuple[float, float]] = []
    configure, finish, load = GraderPlugin.pytest_configure, Judge.pytest_collection_finish, plugin.load_reference

    def loaded(path):  # noqa: ANN001, ANN202
        start = time.monotonic()
        module = load(path)
        loads.append((start, time.monotonic()))
        return module

    first_inside = threading.Event()

    def configured(self, config):  # noqa: ANN001, ANN202 - pytest's hook signature
        spans[threading.get_ident()] = [time.monotonic()]
        first_inside.set()
        return configure(self, config)

    def finished(self, session):  # noqa: ANN001, ANN202
        spans[threading.get_ident()].append(time.monotonic())
        return finish(self, session)

    monkeypatch.setattr(GraderPlugin, "pytest_configure", configured)
    monkeypatch.setattr(Judge, "pytest_collection_finish", finished)
    monkeypatch.setattr(plugin, "load_reference", loaded)
    config = load_config()
    judges = [checking.Judge(config.assignment("attention"), cuda=False)]
    assert first_inside.wait(120)  # the first judge's pytest is configuring: the second is made now
    judges.append(checking.Judge(config.assignment("attention-modules"), cuda=False))
    try:
        assert all(j.collected() for j in judges)
    finally:
        for judge in judges:
            judge.close()
    collecting = [tuple(span) for span in spans.values()]
    assert len(collecting) == 2 and len(loads) == 2
    intervals = sorted([(*span, "collects") for span in collecting] + [(*span, "loads its reference") for span in loads])
    for (_, end, what), (start, _, then) in zip(intervals, intervals[1:]):
        assert end <= start, f"one judge {then} while another {what} ({end - start:.3f} s of overlap)"
