"""The docs' totals and check catalogue say what assignments.yaml says (``grader.authoring.readme``).

The statements moved from the README to the doc pages (docs/grading.md: the credit section and the
check catalogue; docs/platforms.md: the Gradescope walk-through). A point value changed, a check or an
exercise added: the failure names each stale line of those pages."""

import shutil

from grader.authoring.readme import DOC_PAGES, stale_doc_lines
from grader.config import load_config
from tests.conftest import ROOT


def test_docs_totals_and_check_catalogue_match_the_config():
    stale = stale_doc_lines(ROOT, load_config())
    assert not stale, "the doc pages disagree with assignments.yaml:\n" + "\n".join(stale)


def test_a_stale_page_is_named_line_by_line(tmp_path):
    attention = load_config().assignment("attention")
    total = f"{sum(c.points for ex in attention.exercises for c in ex.checks if not c.requires_cuda):g}"
    wrong = f"{float(total) - 2:g}"
    for page in DOC_PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, tmp_path / page)
    grading = tmp_path / "docs/grading.md"
    text = grading.read_text()
    row = "| bag_of_past | row_t_is_mean_of_first_t_plus_1 (2) |\n"
    assert row in text and "unscaled_weights_saturate (2, hidden)" in text
    grading.write_text(text.replace(row, "").replace("unscaled_weights_saturate (2, hidden)", "unscaled_weights_saturate (3)")
                       .replace(total, wrong, 1))
    stale = stale_doc_lines(tmp_path, load_config())
    assert any("no row for `bag_of_past`" in s for s in stale)
    assert any("unscaled_weights_saturate (3) but assignments.yaml: 2 points, hidden" in s for s in stale)
    assert any(s.startswith("docs/grading.md:") and f"says {wrong}, assignments.yaml gives {total}" in s for s in stale)


def test_a_statement_gone_from_every_page_is_named(tmp_path):
    """The Gradescope total lives on docs/platforms.md: removed there, the failure says no page states it."""
    for page in DOC_PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, tmp_path / page)
    platforms = tmp_path / "docs/platforms.md"
    text = platforms.read_text()
    assert "the reference scores" in text
    platforms.write_text(text.replace("the reference scores", "the reference gets"))
    stale = stale_doc_lines(tmp_path, load_config())
    assert any("no line says" in s and "the reference scores" in s for s in stale), stale
