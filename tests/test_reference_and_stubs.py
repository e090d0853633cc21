"""The two anchors: the reference earns every point, the untouched stubs earn none."""

from __future__ import annotations

import dataclasses

import pytest

from grader.scorecard import validate
from tests.conftest import ROOT

CASES = [("attention", "attention.py"), ("attention-modules", "attention_modules.py")]


@pytest.mark.parametrize("assignment, filename", CASES)
def test_reference_scores_full_marks(grade, assignment, filename):
    card = grade(ROOT / "solutions" / filename, assignment)
    assert card.grader_error is None
    assert card.score == card.max_score > 0
    for c in card.checks:
        assert c.status in ("passed", "skipped"), (c.id, c.status, c.message)
        if c.status == "skipped":
            assert c.max_score == 0 and "CUDA" in c.message  # honest, and dropped from max_score
    validate(card.to_dict())


@pytest.mark.parametrize("assignment, filename", CASES)
def test_stubs_score_zero_of_full_max_and_say_not_attempted(grade, assignment, filename):
    card = grade(ROOT / "exercises" / filename, assignment)
    reference = grade(ROOT / "solutions" / filename, assignment)
    assert card.grader_error is None
    assert card.score == 0 and card.max_score == reference.max_score
    graded = [c for c in card.checks if c.status != "skipped"]
    assert graded and all(c.status == "failed" and c.message == "not attempted" for c in graded)


def test_grading_twice_gives_the_same_card(server, tmp_path):
    """Two graders of their own (not the module's warm one, which the ``grade`` fixture shares): the card
    does not depend on the grader that graded the file."""
    from grader import api

    def stable(card):
        data = dataclasses.asdict(card)
        data.pop("graded_at"), data.pop("duration_s")
        for c in data["checks"]:
            c.pop("duration_s")
        return data

    source = (ROOT / "solutions/attention.py").read_text() + "\ndef softmax(s, dim=-1):\n    return (s - s.amax(dim, keepdim=True)).exp()\n"
    path = tmp_path / "attention.py"
    path.write_text(source)
    assert stable(api.grade(path, "attention", server=server)) == stable(api.grade(path, "attention", server=server))


def test_dynamic_code_is_flagged_for_review_without_costing_points(grade):
    source = (ROOT / "solutions/attention.py").read_text() + (
        "\n\ndef bag_of_past(v):\n    fn = getattr(v, 'cumsum')\n"
        "    return fn(-2) / torch.arange(1, v.shape[-2] + 1, device=v.device, dtype=v.dtype)[:, None]\n"
    )
    card = grade(source)
    assert card.score == card.max_score
    assert [f.kind for f in card.flags] == ["dynamic-code"] and "getattr" in card.flags[0].message


def test_getattr_inside_softmax_fails_the_written_by_hand_check(grade):
    source = (ROOT / "solutions/attention.py").read_text() + (
        "\n\ndef softmax(scores, dim=-1):\n    return getattr(torch, 'soft' + 'max')(scores, dim)\n"
    )
    card = grade(source)
    check = next(c for c in card.checks if c.id == "test_softmax_written_by_hand")
    assert check.status == "failed" and "getattr" in check.message


def test_worked_example_in_the_stub_docstring_holds_for_the_reference():
    """fluffy / blue / cat: weights 0.446 / 0.446 / 0.108 and the new vector [1.446, 1.446]."""
    import doctest
    import importlib.util

    def load(path):
        spec = importlib.util.spec_from_file_location(path.stem + "_doc", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    stub, reference = load(ROOT / "exercises/attention.py"), load(ROOT / "solutions/attention.py")
    assert "0.446, 0.446, 0.108" in stub.__doc__ and "1.446, 1.446" in stub.__doc__
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(stub.__doc__, "worked_example", globs=dict(vars(reference))):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0 and runner.summarize(verbose=False).attempted >= 6


def test_scorecard_json_round_trips(grade):
    from grader.scorecard import Scorecard

    card = grade(ROOT / "examples/attention.py")
    assert Scorecard.from_dict(card.to_dict()) == card


def test_the_worked_example_is_a_check_that_names_the_row_a_student_gets_wrong(grade):
    reference = (ROOT / "solutions/attention.py").read_text()
    assert reference.count("    scale: bool = True,\n") == 1
    unscaled = reference.replace("    scale: bool = True,\n", "    scale: bool = False,\n")  # forgets to scale
    check = next(c for c in grade(unscaled).checks if c.id == "test_worked_example_fluffy_blue_cat")
    assert check.status == "failed" and check.visibility == "visible"
    assert "cat should attend [0.446, 0.446, 0.108]" in check.message and "divide by sqrt(2)" in check.message
    passed = next(c for c in grade(reference).checks if c.id == "test_worked_example_fluffy_blue_cat")
    assert passed.status == "passed" and passed.score == 2
