"""The README's totals and check catalogue say what assignments.yaml says (``grader.authoring.readme``).

A point value changed, a check or an exercise added: the failure names each stale line of README.md."""

from grader.authoring.readme import stale_lines
from grader.config import load_config
from tests.conftest import ROOT


def test_readme_totals_and_check_catalogue_match_the_config():
    stale = stale_lines(ROOT / "README.md", load_config())
    assert not stale, "README.md disagrees with assignments.yaml:\n" + "\n".join(stale)


def test_a_stale_readme_is_named_line_by_line(tmp_path):
    attention = load_config().assignment("attention")
    total = f"{sum(c.points for ex in attention.exercises for c in ex.checks if not c.requires_cuda):g}"
    wrong = f"{float(total) - 2:g}"
    text = (ROOT / "README.md").read_text()
    row = "| bag_of_past | row_t_is_mean_of_first_t_plus_1 (2) |\n"
    assert row in text and "unscaled_weights_saturate (2, hidden)" in text
    (tmp_path / "README.md").write_text(text.replace(row, "").replace("unscaled_weights_saturate (2, hidden)",
                                                                      "unscaled_weights_saturate (3)")
                                        .replace(total, wrong, 1))
    stale = stale_lines(tmp_path / "README.md", load_config())
    assert any("no row for `bag_of_past`" in s for s in stale)
    assert any("unscaled_weights_saturate (3) but assignments.yaml: 2 points, hidden" in s for s in stale)
    assert any(s.startswith("README.md:") and f"says {wrong}, assignments.yaml gives {total}" in s for s in stale)
