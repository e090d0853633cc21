"""The HTML feedback page: what it shows, what it hides from students, that it stands alone, and that it draws.

Three submissions are graded once for the module (the reference, a mutant
whose ``attention`` ignores ``causal``, one whose ``attention`` raises); every
test reads those cards. The browser tests load a page in headless Chromium:
skipped where none is installed, failed under ``CI=true`` (``.ci/run``
installs it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import api, cli, figures
from grader import session
from grader.batch import intake, reports, run
from grader.batch.layout import Layout
from grader.batch.run import BatchOptions
from grader.export import views
from grader.export import html
from grader.export.gradebook import exercise_scores
from grader.sandbox.client import WorkerServer
from grader.sandbox.errors import StudentTimeout
from grader.sandbox.proxy import CallResult
from grader.scorecard import Diagnosis, MistakeName, Scorecard, validate
from tests.conftest import ROOT

REFERENCE = (ROOT / "solutions/attention.py").read_text()
IGNORES_CAUSAL = REFERENCE + '''

_reference_attention = attention


def attention(q, k, v, causal=True, scale=True):
    return _reference_attention(q, k, v, causal=False, scale=scale)
'''
RAISES = REFERENCE + '''

def attention(q, k, v, causal=True, scale=True):
    raise RuntimeError("attention is broken on purpose")
'''
PICTURES = ("worked_example", "long_sequence", "head_entropy", "break_it")


@pytest.fixture(scope="module")
def cards(server: WorkerServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Scorecard]:
    """Each submission graded once; ``raises_no_figures`` is the raising one graded with figures turned off."""
    folder = tmp_path_factory.mktemp("html_report")
    graded: dict[str, Scorecard] = {}
    with api.Grader("attention", server=server) as grader:
        for name, source in (("reference", REFERENCE), ("ignores_causal", IGNORES_CAUSAL), ("raises", RAISES)):
            path = folder / name / "attention.py"
            path.parent.mkdir()
            path.write_text(source)
            graded[name] = grader.grade(path)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(figures, "collect", lambda *args: None)
            graded["raises_no_figures"] = grader.grade(folder / "raises" / "attention.py")
    return graded


def _failed_visible(card: Scorecard) -> list:
    return [c for c in card.checks if c.status in ("failed", "error", "timeout") and c.visibility == "visible"]


def _with_hidden_secret(card: Scorecard) -> tuple[Scorecard, str]:
    """The card with one failed check made hidden, its message holding a secret and a diagnosis."""
    secret = "SECRET hidden input 3.14159 expected 2.71828"
    target = next(i for i, c in enumerate(card.checks) if c.status == "failed")
    checks = list(card.checks)
    checks[target] = dataclasses.replace(checks[target], visibility="after_published", message=secret,
                                         diagnosis=Diagnosis("secret_mistake", "SECRET diagnosis title"))
    return dataclasses.replace(card, checks=tuple(checks), diagnoses=()), secret  # the injected diagnosis alone


# ------------------------------------------------------------------ figures


def test_every_card_with_figures_matches_the_schema(cards):
    for card in cards.values():
        validate(json.loads(card.to_json()))


def test_the_reference_draws_what_the_reference_draws(cards):
    figs = cards["reference"].figures
    assert figs is not None and set(figs) == set(PICTURES)
    for name in ("worked_example", "long_sequence"):
        assert figs[name]["student"] == figs[name]["reference"]
    worked = figs["worked_example"]
    assert worked["tokens"] == ["fluffy", "blue", "cat"]
    assert worked["student"][2] == [0.4458, 0.4458, 0.1084]  # the lesson's numbers
    assert worked["student_out"] == worked["reference_out"]
    assert figs["head_entropy"]["student"] == figs["head_entropy"]["reference"]
    assert len(figs["head_entropy"]["student"]) == 4
    broken = figs["break_it"]
    assert broken["scaled"]["mean_entropy"] == broken["reference_mean_entropy"]["scaled"]
    assert broken["unscaled"]["mean_entropy"] < broken["scaled"]["mean_entropy"] / 3  # rows collapse
    assert len(json.dumps(figs)) < 8000  # small: a few T x T matrices


def test_a_missing_mask_shows_weight_above_the_diagonal(cards):
    weights = cards["ignores_causal"].figures["worked_example"]["student"]
    above = [weights[r][c] for r in range(3) for c in range(r + 1, 3)]
    assert max(above) > 0.1
    assert cards["ignores_causal"].figures["worked_example"]["reference"][0] == [1.0, 0.0, 0.0]


def test_a_raising_attention_gives_figure_errors_and_the_same_score(cards):
    figs = cards["raises"].figures
    for name in PICTURES:  # multi_head_attention calls the raising attention too
        assert set(figs[name]) == {"error"}
        assert "RuntimeError" in figs[name]["error"] and "broken on purpose" in figs[name]["error"]
    plain = cards["raises_no_figures"]
    assert plain.figures is None
    assert cards["raises"].score == plain.score and cards["raises"].max_score == plain.max_score
    assert [(c.id, c.status, c.score, c.message) for c in cards["raises"].checks] == \
        [(c.id, c.status, c.score, c.message) for c in plain.checks]


class _FakeStudent:
    """Stands in for the proxy: answers every call with ``answer(name, args, kwargs)``."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.calls: list[str] = []

    def call(self, name, *args, **kwargs):
        self.calls.append(name)
        return CallResult(self.answer(name, args, kwargs))


@pytest.fixture(scope="module")
def reference_module():
    return session.load_reference(ROOT / "solutions/attention.py")


def test_unusable_answers_become_short_reasons(reference_module):
    import torch

    def answer(name, args, kwargs):
        if name == "multi_head_attention":
            return torch.zeros(3)
        q = args[0]
        if name != "attention":
            return None  # attention_scores, scale_scores: nothing the break-it panel can measure
        return (torch.zeros(q.shape[-2], args[2].shape[-1]), torch.zeros(q.shape[-2], q.shape[-2] + 1))

    figs = figures.collect(_FakeStudent(answer), reference_module, "attention")
    assert figs["worked_example"] == {"error": "`attention` (weights) has shape (3, 4); expected (3, 3)"}
    assert "returned a float32 tensor of shape (3,); expected a tuple (out, weights)" in figs["head_entropy"]["error"]
    # NaN and inf are drawn, not refused: tests/test_figures_student.py


def test_a_crash_or_hang_stops_the_later_figures(reference_module):
    def answer(name, args, kwargs):
        if name == "attention":
            raise StudentTimeout("`attention`", "10 s of CPU time")
        raise AssertionError("no call may follow a timeout")

    student = _FakeStudent(answer)
    figs = figures.collect(student, reference_module, "attention")
    assert "still running after 10 s" in figs["worked_example"]["error"]
    assert all(figs[name]["error"].startswith("not drawn") for name in PICTURES[1:])
    assert student.calls == ["attention"]


def test_other_assignments_have_no_figures():
    assert figures.collect(None, None, "attention-modules") is None  # type: ignore[arg-type]


def test_mean_entropy_counts_zero_weights_as_zero():
    import torch

    weights = torch.tensor([[1.0, 0.0], [0.5, 0.5]])
    assert figures.mean_entropy(weights, dims=(0,)).item() == pytest.approx(0.5 * 0.6931471805599453)


# ------------------------------------------------------------------ the student's view


def test_student_view_masks_hidden_checks_only(cards):
    card, secret = _with_hidden_secret(cards["ignores_causal"])
    seen = views.student_view(card)
    assert (seen.score, seen.max_score, seen.figures) == (card.score, card.max_score, card.figures)
    hidden_names = {c.id for c in card.checks if c.visibility != "visible"}
    for before, after in zip(card.checks, seen.checks):
        assert (after.exercise, after.status, after.score, after.max_score) == \
            (before.exercise, before.status, before.score, before.max_score)
        if before.visibility == "visible":
            assert after == before
        else:
            assert after.message == views.HIDDEN_MESSAGE and after.diagnosis is None
            assert after.id.startswith("hidden check ")
    shown = json.dumps(seen.to_dict())
    assert secret not in shown and not [name for name in hidden_names if name in shown]
    assert views.student_view(card) == seen  # pure: the same card in, the same card out


# ------------------------------------------------------------------ the page


def test_page_shows_scores_failures_and_pictures(cards):
    card = cards["ignores_causal"]
    page = html.render(card)
    assert f"{card.score:g}" in page and f"{card.max_score:g}" in page
    scores = page[page.index('id="scores"'):page.index('id="problems"')]
    for exercise, got in exercise_scores(card):
        assert f"<code>{exercise}</code>" in scores
    for check in _failed_visible(card):
        for part in check.message.split("\nLikely mistake: "):  # a diagnosis sentence has a box of its own
            assert str(html.prose(part)) in page  # escaped, `spans` as code
    for token in ("fluffy", "blue", "cat"):
        assert f">{token}</text>" in page
    worked = page[page.index('id="fig-worked_example"'):page.index('id="fig-long_sequence"')]
    assert worked.count('class="leak"') == 3 and worked.count('class="future"') == 6  # 3 future cells x 2 maps
    assert "above the diagonal" in worked
    reference_page = html.render(cards["reference"])
    assert 'class="leak"' not in reference_page and "match the reference" in reference_page
    for name in PICTURES:
        assert f'id="fig-{name}"' in reference_page


def test_a_figure_error_shows_its_reason_instead_of_a_picture(cards):
    page = html.render(cards["raises"])
    worked = page[page.index('id="fig-worked_example"'):page.index('id="fig-long_sequence"')]
    assert "Picture not drawn" in worked and "broken on purpose" in worked and "<svg" not in worked


def test_hidden_details_show_in_the_instructor_view_only(cards):
    card, secret = _with_hidden_secret(cards["ignores_causal"])
    student = html.render(card)
    instructor = html.render(card, view="instructor")
    assert secret not in student and "SECRET diagnosis" not in student
    assert views.HIDDEN_MESSAGE in student
    assert secret in instructor and "SECRET diagnosis title" in instructor
    assert html.page_view_text(student) == "student" and html.page_view_text(instructor) == "instructor"


def test_a_diagnosis_title_is_shown_with_its_failed_check(cards):
    card = cards["ignores_causal"]
    target = next(i for i, c in enumerate(card.checks) if c.status == "failed" and c.visibility == "visible")
    checks = list(card.checks)
    checks[target] = dataclasses.replace(checks[target], diagnosis=Diagnosis(
        "mask_missing", "The causal mask is never applied", (MistakeName("mask_after_softmax", "Mask after the softmax"),)))
    page = html.render(dataclasses.replace(card, checks=tuple(checks), diagnoses=()))  # no per-exercise sentence
    assert "The causal mask is never applied" in page and "Mask after the softmax" in page


def test_page_is_self_contained_and_escapes_what_it_quotes(cards):
    card = cards["ignores_causal"]
    target = next(i for i, c in enumerate(card.checks) if c.visibility == "visible")
    checks = list(card.checks)
    checks[target] = dataclasses.replace(checks[target], status="failed", message="<script>alert('owned')</script>")
    hostile = dataclasses.replace(card, checks=tuple(checks), output="<img src=x onerror=alert(1)>")
    for view in html.VIEWS:
        page = html.render(hostile, view=view)
        assert "<script" not in page.lower()
        assert "&lt;script&gt;alert(" in page
        assert "<img" not in page
        assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.IGNORECASE)
        assert not re.search(r"@import|<link\b|url\(\s*['\"]?(https?:)?//", page, re.IGNORECASE)


def test_unknown_view_is_refused(cards):
    with pytest.raises(ValueError, match="unknown view"):
        html.render(cards["reference"], view="teacher")


# ------------------------------------------------------------------ the command line and the batch


def test_grade_report_html_writes_the_page_beside_the_card(tmp_path):
    out = tmp_path / "card.json"
    code = cli.main(["grade", str(ROOT / "solutions/attention.py"), "--assignment", "attention", "--out", str(out),
                     "--format", "none", "--report", "html"])
    assert code == 0
    page = (tmp_path / "card.html").read_text()
    card = Scorecard.from_dict(json.loads(out.read_text()))
    assert card.figures is not None and html.page_view_text(page) == "student"
    assert "fig-worked_example" in page


def test_the_command_line_offers_what_the_page_knows():
    assert cli.REPORT_VIEWS == html.VIEWS and cli.REPORT_FORMATS == html.REPORT_FORMATS


@pytest.mark.parametrize("args, fragment", [
    (["--report", "pdf"], "argument --report: invalid choice: 'pdf'"),
    (["--report", "html", "--view", "x"], "argument --view: invalid choice: 'x'"),
    (["--view", "instructor"], "--view applies to HTML pages only"),
])
def test_bad_report_options_exit_2_with_one_line(args, fragment):
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade", "examples/attention.py", "--assignment",
                           "attention", "--out", "x.json", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert fragment in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_export_html_renders_existing_cards(cards, tmp_path):
    paths = []
    for name in ("reference", "raises"):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(cards[name].to_json())
    code = cli.main(["export", "html", *map(str, paths), "--out", str(tmp_path / "pages"), "--view", "instructor"])
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "pages").iterdir()) == ["raises.html", "reference.html"]
    assert html.page_view(tmp_path / "pages" / "reference.html") == "instructor"


def test_batch_writes_a_page_with_each_card_and_keeps_unchanged_ones(cards, tmp_path):
    layout = Layout(tmp_path / "out")
    layout.prepare()
    options = BatchOptions(tmp_path, "attention", layout.root, ROOT / "assignments.yaml", report="html")
    entry = intake.Handin("ada", tmp_path / "attention.py", "ada/attention.py", "")
    text = cards["reference"].to_json()
    row = run.result_row("card", ("ada", text, False), entry, "", layout, options)
    page = layout.report("ada")
    assert row.status == "graded" and html.page_view(page) == "student"
    stamp = page.stat().st_mtime_ns
    reports.keep_report(layout, row, options)  # unchanged, same view: the page stays as it is
    assert page.stat().st_mtime_ns == stamp
    reports.keep_report(layout, row, dataclasses.replace(options, view="instructor"))  # another view: redrawn
    assert html.page_view(page) == "instructor"
    page.unlink()
    reports.keep_report(layout, row, options)  # lost: drawn again from the card
    assert html.page_view(page) == "student"
    no_report = dataclasses.replace(options, report=None)
    run.result_row("card", ("bob", text, False), dataclasses.replace(entry, student="bob"), "", layout, no_report)
    assert not layout.report("bob").exists()


# ------------------------------------------------------------------ in a real browser


@pytest.fixture(scope="module")
def chromium() -> str:
    """The Chromium binary; the test is skipped without one, except under CI=true, where it must exist.

    A fixture, and listed first, so a skip comes before the module's grading."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but no chromium binary on PATH: .ci/run installs it (apt-get install chromium)")
    pytest.skip("no chromium binary on PATH (apt-get install chromium) to load the page in a browser")


def _load(chromium: str, page: Path, shot: Path) -> list[str]:
    """Screenshot ``page`` headless; returns the console messages Chromium logged while loading it."""
    proc = subprocess.run(
        [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
         f"--user-data-dir={shot.parent / 'profile'}", "--enable-logging=stderr", "--v=0",
         f"--screenshot={shot}", "--window-size=1200,5000", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert shot.is_file(), f"chromium wrote no screenshot (exit {proc.returncode}): {proc.stderr[-800:]}"
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def test_the_browser_catches_a_console_error(chromium, tmp_path):
    """The detector itself: a page whose script fails is caught (so a silent page means something)."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p><script>missing_function();</script></body></html>")
    assert any("missing_function" in line for line in _load(chromium, page, tmp_path / "broken.png"))


def test_the_page_loads_in_a_browser_and_draws(chromium, cards, tmp_path):
    from PIL import Image

    page = tmp_path / "report.html"
    html.write(cards["ignores_causal"], page)
    shot = tmp_path / "report.png"
    assert _load(chromium, page, shot) == []
    keep = os.environ.get("GRADER_SCREENSHOTS")  # a folder to keep the screenshot in, for a human to look at
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report_ignores_causal.png")
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 5000)
    colours = image.getcolors(maxcolors=1 << 24)  # (count, (r, g, b)) for every colour on the page
    assert len(colours) > 500, "the screenshot has too few colours: is the page blank?"
    background = sum(n for n, rgb in colours if rgb in {(255, 255, 255), (244, 246, 249)})
    assert background < 0.9 * image.width * image.height
    drawn = {rgb: n for n, rgb in colours}
    assert drawn.get((215, 25, 28), 0) > 200  # the red outline of the cells leaking into the future
    assert drawn.get((8, 29, 88), 0) > 200  # the darkest weight (the reference's 1.0 cells)


def test_rendering_a_graded_card_loads_neither_torch_nor_the_grader(cards, tmp_path):
    """``grader export html`` of cards graded earlier only reads and writes text: no ``import torch`` (~1.5 s),
    no judge. The entropy hint, the one piece of the figures' code a page needs, lives with the page."""
    card = tmp_path / "card.json"
    card.write_text(cards["reference"].to_json(), encoding="utf-8")
    script = ("import json, sys\nfrom grader import cli\n"
              f"code = cli.main(['export', 'html', {str(card)!r}, '--out', {str(tmp_path / 'pages')!r}])\n"
              "print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'pytest'})]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []], done.stderr[-2000:]
    assert "figure" in next((tmp_path / "pages").glob("*.html")).read_text(encoding="utf-8")
