"""The student's page and terminal table, read as a student: what issue 25 found on them.

Cards are built by hand here (no sandbox): each test sets up exactly the situation a student met,
then reads the page (``grader.export.html``) or the table (``grader.export.text``) for what it says.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from grader.export import html, text
from grader.scorecard import CheckResult, Scorecard, SubmissionInfo
from grader.scoring import FILE_PROBLEM_REFERENCE

NO_CUDA = "no CUDA device on this machine: GPU-only check not run"


def check(exercise: str, name: str, status: str = "passed", message: str = "", points: float = 1.0,
          visibility: str = "visible") -> CheckResult:
    return CheckResult(id=name, exercise=exercise, status=status, score=points if status == "passed" else 0.0,
                       max_score=points, message=message, visibility=visibility)


def card_of(*checks: CheckResult, **fields) -> Scorecard:
    return Scorecard(assignment="attention", submission=SubmissionInfo("alice.py", "0" * 64),
                     score=sum(c.score for c in checks), max_score=sum(c.max_score for c in checks),
                     checks=tuple(checks), **fields)


@pytest.fixture
def unloadable() -> Scorecard:
    """A file with a syntax error: every check not run, two GPU checks skipped, hidden checks among them."""
    checks = [check(ex, f"test_{i}[{ex}]", "failed", FILE_PROBLEM_REFERENCE,
                    visibility="hidden" if i % 2 else "visible")
              for ex in ("softmax", "attention") for i in range(6)]
    checks += [check(ex, f"test_cuda_matches_cpu[{ex}]", "skipped", NO_CUDA, points=0.0) for ex in ("softmax", "attention")]
    return card_of(*checks, problem="your file could not be graded: syntax error at line 2, column 27: expected ':'")


@pytest.mark.parametrize("view", ["student", "instructor"])
def test_a_file_that_cannot_load_says_so_once_on_the_page(unloadable, view):
    page = html.render(unloadable, view=view)
    problems = page.split('id="problems"')[1].split("</section>")[0]
    assert problems.count("could not be loaded") == 1, "the reason is said once, not once per check"
    assert "All 12 checks: not run" in problems, "with the number of checks it kept from running"
    assert 'class="problem failed' not in problems, "no row per check under What to fix"
    assert "What to fix: your file" in problems


def test_a_file_that_cannot_load_says_so_once_in_the_table(unloadable):
    table = text.render(unloadable)
    assert table.count("could not be loaded") == 1
    assert "all 12 checks: not run" in table
    assert "FAIL" not in table, "no line per check"
    assert re.search(r"^softmax  0/6$", table, re.M) and re.search(r"^attention  0/6$", table, re.M)


def test_a_file_problem_that_left_some_checks_running_lists_them(unloadable):
    """Said once only when the problem stopped every check: one that passed means the checks ran."""
    ran = replace(unloadable, checks=(check("softmax", "test_ok"),) + unloadable.checks)
    assert text.stopped_by_problem(ran) is None
    assert "FAIL" in text.render(ran)


def test_backticks_in_messages_render_as_code_and_stay_escaped():
    card = card_of(check("softmax", "test_rows_sum_to_one", "failed",
                         "`softmax` returned <script>alert(1)</script> where `x.exp()` was expected"))
    page = html.render(card)
    assert "<code>softmax</code> returned &lt;script&gt;alert(1)&lt;/script&gt; where <code>x.exp()</code>" in page
    assert "`softmax`" not in page and "<script>" not in page


def test_checks_not_run_on_this_machine_do_not_count_against_checks_passed():
    checks = [check("softmax", f"test_{i}") for i in range(14)]
    card = card_of(*checks, check("softmax", "test_cuda_matches_cpu[softmax]", "skipped", NO_CUDA, points=0.0))
    row = re.search(r"<code>softmax</code></td>\s*<td[^>]*>[^<]*</td>\s*<td[^>]*>(.*?)</td>", html.render(card), re.S)
    assert row is not None
    assert row.group(1).startswith("14 / 14"), row.group(1)
    assert "+1 not run" in row.group(1)


def entropy_card(own_entropy_passes: bool) -> Scorecard:
    figure = {"student": [1.2, 0.8], "reference": [1.2, 0.8], "uniform": 1.5}
    status = "passed" if own_entropy_passes else "failed"
    return card_of(check("multi_head_attention", "test_output_matches_reference"),
                   check("attention_entropy", "test_uniform_rows_give_log_n", status, "`attention_entropy` returned 0"),
                   figures={"head_entropy": figure})


def test_the_entropy_chart_says_whose_entropy_it_measures():
    page = html.render(entropy_card(own_entropy_passes=False))
    chart = page.split('id="fig-head_entropy"')[1].split("</div>")[0]
    assert "not your <code>attention_entropy</code>" in chart
    assert 'id="own-entropy"' in chart, "a failing attention_entropy is named beside a chart that does not use it"
    assert "match the reference" not in chart


def test_the_entropy_chart_is_quiet_about_an_entropy_that_passes():
    chart = html.render(entropy_card(own_entropy_passes=True)).split('id="fig-head_entropy"')[1].split("</div>")[0]
    assert 'id="own-entropy"' not in chart
    assert "have the reference heads' entropies" in chart
