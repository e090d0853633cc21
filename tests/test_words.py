"""Counts read right, with 1 and with 2 of everything (issue 38, item 7).

"Notebook: 1 cells" and "grading 1 submissions" came from counts written into f-strings by hand. Every
count in grader/ goes through ``grader.words.count`` (or ``plural``); this file scans the source and the
templates for a number placed straight before a plural noun, and renders the texts that count things
with 1 and with 2 of each.
"""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import pytest

from grader.words import code_spans, count, plural

ROOT = Path(__file__).resolve().parents[1]
GRADER = ROOT / "grader"

# Words ending in "s" that follow a value in an f-string but are verbs or units, not a counted noun.
NOT_COUNTED = {"does", "appears", "holds", "lies", "exists", "reads", "gives", "lists", "names", "matches",
               "decrypts", "belongs", "contains", "looks", "runs", "ends", "differs", "nats", "is", "was", "has",
               "inputs", "keeps", "sets", "applies", "returns", "gets"}
# (file, the f-string's value) that stand before a plural noun and can never be 1, with why.
NEVER_ONE = {
    ("grader/sandbox/protocol.py", "length"): "only raised above max_bytes",
    ("grader/sandbox/layers/stack.py", "threads"): "only raised when threads > 1",
    ("grader/hidden.py", "total"): "only raised above MAX_UNPACKED",
    ("grader/batch/intake.py", "MAX_ZIP_MEMBERS"): "a constant in the thousands",
    ("grader/batch/similarity.py", "len(source)"): "only above MAX_SOURCE_CHARS",
    ("grader/checks/attention_modules/test_multi_head_attention.py", "D_MODEL // N_HEADS"): "a constant above 1",
    ("grader/checks/attention/test_multi_head.py", "n_heads"): "the check's head counts are all above 1",
    ("grader/cli/parser.py", "SUBMISSIONS_PER_PROCESS"): "a constant, 2 ('one per 2 submissions')",
    ("grader/notebook/ipython.py", "TRANSFORM_LOOP_LIMIT"): "IPython's own constant, in the hundreds",
    ("grader/batch/intake.py", "lms.LAYOUT_NAMES[chosen]"): "a layout's name ('Canvas'), not a number",
}
_NOUN_AFTER = re.compile(r"^ ([a-z]{3,}s)\b")


def _counted_in_python() -> list[tuple[str, int, str, str]]:
    """(file, line, value, noun) for every ``{value} nouns`` in an f-string of grader/."""
    found = []
    for path in sorted(GRADER.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.JoinedStr):
                continue
            for before, value, after in zip([None, *node.values], node.values, node.values[1:]):
                if not (isinstance(value, ast.FormattedValue) and isinstance(after, ast.Constant)):
                    continue
                if isinstance(before, ast.Constant) and str(before.value).endswith("/"):
                    continue  # a fraction, "1/1 checks passed": the noun counts the whole
                m = _NOUN_AFTER.match(str(after.value))
                if m and m.group(1) not in NOT_COUNTED:
                    found.append((rel, node.lineno, ast.unparse(value.value), m.group(1)))
    return found


def test_no_fstring_puts_a_count_before_a_plural_noun_by_hand():
    hand = [f"{rel}:{line}: {{{value}}} {noun}" for rel, line, value, noun in _counted_in_python()
            if (rel, value) not in NEVER_ONE]
    assert not hand, ("counts written by hand read '1 " + "s' for one; use grader.words.count(n, noun):\n"
                      + "\n".join(hand))


def test_no_message_names_a_returned_value_by_its_bare_code_name():
    """`returns: [out, weights]` are code: "the out differs" read as broken English; ``returned()`` says
    "the returned `out`"."""
    bare = [f"{path.relative_to(ROOT)}:{i}" for path in sorted((GRADER / "checks").rglob("*.py"))
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"\bthe \{name\}", line)]
    assert not bare, bare


def test_the_scan_finds_a_hand_written_count(tmp_path):
    """The scan itself: a file with the faults it looks for is caught (a scan that finds nothing proves nothing)."""
    tree = ast.parse('n = 1\nline = f"Notebook: {n} cells"\nok = f"{count(n, \'cell\')}"\n')
    joined = [node for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)]
    hits = [_NOUN_AFTER.match(str(b.value)) for j in joined for a, b in zip(j.values, j.values[1:])
            if isinstance(a, ast.FormattedValue) and isinstance(b, ast.Constant)]
    assert [h.group(1) for h in hits if h] == ["cells"]
    assert all(value in {v for _, _, v, _ in _counted_in_python()} for _, value in NEVER_ONE), \
        "an allowance in NEVER_ONE names a count the source no longer has"


TEMPLATE_COUNT = re.compile(r"\{\{[^{}]*\}\}\s+([a-z]{3,}s)\b")


@pytest.mark.parametrize("template", sorted((GRADER / "export" / "templates").glob("*.j2")), ids=lambda p: p.name)
def test_no_template_puts_a_count_before_a_plural_noun_by_hand(template):
    text = template.read_text(encoding="utf-8")
    hand = [m.group(0) for m in TEMPLATE_COUNT.finditer(text) if m.group(1) not in NOT_COUNTED
            and "| counted" not in m.group(0)]
    assert not hand, f"{template.name}: use the `count` filter: {hand}"


# ------------------------------------------------------------------ the helper


@pytest.mark.parametrize("n", [0, 1, 2, 3, 0.5, 1.0, 2.5, 100])
@pytest.mark.parametrize("noun, many", [("cell", "cells"), ("submission", "submissions"), ("check", "checks"),
                                        ("student", "students"), ("file", "files"), ("entry", "entries"),
                                        ("is", "are")])
def test_count_agrees_with_the_number(n, noun, many):
    said = count(n, noun)
    assert said == (f"{n:g} {noun}" if n == 1 else f"{n:g} {many}")
    assert plural(n, noun) == (noun if n == 1 else many)
    assert not re.search(r"(?<![\d.])1 [a-z]+s\b", said.replace("1 is", "")) or noun == "is"


def test_code_spans_turn_backticks_into_code():
    assert code_spans("`attention` (out) has `NaN`") == "<code>attention</code> (out) has <code>NaN</code>"
    assert code_spans("no span") == "no span" and "`" not in code_spans("a `b` c `d`")


# ------------------------------------------------------------------ texts rendered with 1 and with 2


BAD_PLURAL = re.compile(r"(?<![\d.,/])\b1 (cells|submissions|checks|students|files|entries|statements|values|"
                        r"folders|cards|rows|points|bytes|modules|features|repositories|assignments|demo statements)\b")


def _notebook(n: int):
    from grader.scorecard import CellNote, NotebookReport
    notes = tuple(CellNote(i + 1, 2, "x = f(", "SyntaxError: `(` was never closed") for i in range(n))
    return NotebookReport(cells=n, code_cells=n, failed=notes, dropped=notes)


@pytest.mark.parametrize("n", [1, 2])
def test_notebook_lines_count_right(n):
    from grader import selfcheck
    from grader.export import text
    for lines in (selfcheck.notebook_lines(_notebook(n), 100), text.notebook_lines(_notebook(n), 100)):
        joined = "\n".join(lines)
        assert not BAD_PLURAL.search(joined), joined
        assert count(n, "cell") in joined


@pytest.mark.parametrize("n", [1, 2])
def test_progress_counts_right(n):
    from grader.batch.progress import Progress
    out = io.StringIO()
    Progress(out, bar=False).start(n, n)
    assert f"grading {count(n, 'submission')}\n" in out.getvalue() and not BAD_PLURAL.search(out.getvalue())


def _check(name: str, exercise: str, status: str, message: str = "", points: float = 1.0):
    from grader.scorecard import CheckResult
    return CheckResult(name, exercise, status, points if status == "passed" else 0.0, points, message, "visible")


def _card(n: int, notebook: bool = True):
    """A card with n of everything: failed checks, passed checks, notebook cells, points."""
    from grader.scorecard import Scorecard, SubmissionInfo
    checks = tuple(_check(f"test_fails_{i}", "softmax", "failed", "`softmax` is wrong", 1.0) for i in range(n)) + \
        tuple(_check(f"test_passes_{i}", "softmax", "passed", "", 1.0) for i in range(n))
    return Scorecard("attention", SubmissionInfo("attention.ipynb" if notebook else "attention.py", "0" * 64),
                     float(n), float(2 * n) if n > 1 else 1.0, checks, notebook=_notebook(n) if notebook else None)


def _visible_text(html: str) -> str:
    """What a reader sees: tags, styles and scripts out."""
    html = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.mark.parametrize("n", [1, 2])
def test_the_report_page_counts_right(n):
    from grader.export import html
    page = _visible_text(html.render(_card(n)))
    assert not BAD_PLURAL.search(page), BAD_PLURAL.search(page).group(0)
    assert count(n, "cell") + ", " in page and count(n, "statement") in page
    assert ("1 statement was not run" in page) == (n == 1) and ("2 statements were not run" in page) == (n == 2)


@pytest.mark.parametrize("n", [1, 2])
def test_the_class_page_counts_right(tmp_path, n):
    from grader.batch import cohort, summary
    from grader.export.gradebook import Row, row_from_card
    (tmp_path / "cards").mkdir()
    rows, cards = [], {}
    for i in range(n):
        card = _card(1, notebook=False)
        cards[f"s{i}"] = tmp_path / "cards" / f"s{i}.json"
        cards[f"s{i}"].write_text(card.to_json())
        rows.append(row_from_card(f"s{i}", card, f"s{i}.py", f"cards/s{i}.json"))
    rows += [Row(f"e{i}", "error", f"e{i}.py", message="x") for i in range(n)]
    changes = [{"student": f"s{i}", "old_score": "0", "new_score": "1", "delta": "1", "checks": "test_fails_0",
                "reason": "re-graded"} for i in range(n)]
    page = _visible_text(cohort.index_html(summary.summarise("attention", rows, cards), rows, set(), {},
                                           {"note": "", "method": "", "compared": n, "threshold": 0.8, "pairs": [],
                                            "not_compared": []},
                                           changes=changes))
    assert not BAD_PLURAL.search(page) and not re.search(r"\b1 errors\b|\b1 students'", page), page
    assert count(2 * n, "student") + ":" in page and count(n, "error") + "." in page
    assert "`" not in page and "softmax is wrong" in page  # the rows' messages, code shown as code


# ------------------------------------------------------------------ a mask, a returned value, a purpose, a layout


def _masks():
    import torch
    g = torch.Generator().manual_seed(0)
    for t in range(1, 7):
        expected = torch.ones(t, t, dtype=torch.bool).tril()
        flipped = expected.clone()
        flipped.view(-1)[int(torch.randint(t * t, (1,), generator=g))] ^= True
        yield expected, flipped, flipped.float()


@pytest.mark.parametrize("expected, bool_got, float_got", list(_masks()))
def test_a_mask_is_reported_as_true_and_false_without_a_tolerance(expected, bool_got, float_got):
    import torch
    from grader.checks import helpers as h
    for got in (bool_got, float_got):
        with pytest.raises(AssertionError) as failed:
            h.expect_close(got, expected, "`causal_mask(5)`", torch.float32)
        said = str(failed.value)
        shown = re.search(r"got (\S+), expected (\S+?)\.", said)
        assert shown and shown.group(2) in ("True", "False"), said
        assert shown.group(1) in (("True", "False") if got.dtype == torch.bool else ("0", "1")), said
        assert "rtol" not in said and "atol" not in said, said


def test_a_float_comparison_still_quotes_its_tolerance():
    import torch
    from grader.checks import helpers as h
    with pytest.raises(AssertionError, match=r"got 0\.5, expected 1 \(rtol=0\.0001, atol=1e-05\)"):
        h.expect_close(torch.tensor([0.5]), torch.tensor([1.0]), "x", torch.float32)


def _exercises():
    from grader.config import DEFAULT_CONFIG, load_config
    config = load_config(DEFAULT_CONFIG)
    return [(a.id, ex) for a in config.assignments.values() for ex in a.exercises]


@pytest.mark.parametrize("assignment, exercise", _exercises(), ids=lambda x: getattr(x, "name", x))
def test_every_returned_value_and_purpose_reads_as_a_sentence(assignment, exercise):
    from grader.words import returned, should_give
    names = tuple(exercise.returns)
    for name in names:
        said = returned(name, names)
        assert said == "the output" or said == f"the returned `{name}`", said
        assert not re.search(rf"\bthe {re.escape(name)}\b", said) or name == "output"
    sentence = should_give(exercise.purpose)
    assert sentence.startswith("What it should give: ") and sentence.endswith(".") and not sentence.endswith("..")
    assert not re.search(r"\bgive [a-z]+ [a-z]+ (is|are)\b", sentence), sentence


@pytest.mark.parametrize("files, said", [
    (["ana.py"], "a file per student"), (["ana.py", "ben.py"], "a file per student"),
    (["ana/attention.py"], "a folder per student"), (["ana/attention.py", "ben/attention.py"], "a folder per student"),
    (["ana.py", "ben/attention.py"], "a file or folder per student")])
def test_a_plain_folder_is_named_by_what_it_holds(files, said):
    from grader.batch.intake import Handin, Intake
    entries = [Handin(f.split("/")[0].removesuffix(".py"), Path(f), f) for f in files]
    assert Intake("folders", entries).line() == f"submissions: {said}, {count(len(files), 'student')}"


# ------------------------------------------------------------------ code spans, not backticks, wherever HTML is shown


MESSAGE_FIELDS = re.compile(r"\{\{ ((?:[a-z_]+\.)+(?:error|reason|message|problem|hint|shared|title)) \}\}")


@pytest.mark.parametrize("template", sorted((GRADER / "export" / "templates").glob("*.j2")), ids=lambda p: p.name)
def test_every_message_a_page_shows_goes_through_prose(template):
    """A message marks code with backticks; printed as it is, a page shows them (the notebook section and the
    "Picture not drawn" boxes once did). Each message-like field goes through `prose` (escape, then <code>)."""
    raw = [m.group(0) for m in MESSAGE_FIELDS.finditer(template.read_text(encoding="utf-8"))]
    assert not raw, f"{template.name}: pass these through `| prose`: {raw}"


@pytest.mark.parametrize("n", [1, 2])
def test_no_backtick_reaches_the_page(n):
    import dataclasses

    from grader.export import html
    from grader.scorecard import Flag
    card = dataclasses.replace(_card(n), figures={"worked_example": {"error": "`attention` (out) contains NaN"},
                                                  "head_entropy": {"error": "`multi_head_attention` raised"}},
                               flags=(Flag("flagged_call", 3, "`eval` is flagged"),) * n)
    for view in ("student", "instructor"):
        page = _visible_text(html.render(card, view=view))
        assert "`" not in page, page[max(0, page.index("`") - 200): page.index("`") + 100]


@pytest.mark.parametrize("n", [1, 2])
def test_a_moodle_comment_shows_code_not_backticks(n):
    from grader.export import moodle
    said = moodle.comment(["`softmax` sums over `dim` 0 <b>"] * n)
    assert "`" not in said and said.count("<code>softmax</code>") == n and "&lt;b&gt;" in said
