"""The class as a whole: summary.json's cohort fields, the plots, the index page, the similarity report.

Most tests build their cards and rows by hand (no grading); one runs
``grade-all`` on a class of three and ``merge`` on that output split in two.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import io
import json
import re
import shutil
import string
import subprocess
import sys
import tokenize
from urllib.parse import unquote
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from grader import batch
from grader.batch.merge import merge as merge_shards
from grader.batch import cohort, fallbacks, similarity, summary
from grader.config import load_config
from grader.export.gradebook import Row, row_from_card
from grader.scorecard import CheckResult, Diagnosis, Scorecard, SubmissionInfo
from tests.conftest import ROOT
from tests.corpus_cases import corpus

REFERENCE = (ROOT / "solutions/attention.py").read_text()
STUB = ROOT / "exercises/attention.py"
SOFTMAX_DIM0 = Diagnosis("softmax_dim0", "a softmax over dim 0")


# ------------------------------------------------------------------ cards and rows made by hand


def check(name: str, exercise: str, status: str = "passed", message: str = "", points: float = 1.0,
          diagnosis: Diagnosis | None = None) -> CheckResult:
    return CheckResult(name, exercise, status, points if status == "passed" else 0.0, points, message, "visible",
                       diagnosis=diagnosis)


def make_card(checks: list[CheckResult]) -> Scorecard:
    return Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), sum(c.score for c in checks),
                     sum(c.max_score for c in checks), tuple(checks))


def a_class(folder: Path, cards: dict[str, Scorecard],
            others: tuple[Row, ...] = ()) -> tuple[list[Row], dict[str, Path]]:
    """Rows (graded ones from ``cards``, plus ``others``) and the card files, as ``grade-all`` leaves them."""
    (folder / "cards").mkdir(parents=True, exist_ok=True)
    rows, paths = list(others), {}
    for student, card in cards.items():
        paths[student] = folder / "cards" / f"{student}.json"
        paths[student].write_text(card.to_json())
        rows.append(row_from_card(student, card, f"{student}.py", f"cards/{student}.json"))
    return sorted(rows, key=lambda r: r.student), paths


def full_marks() -> list[CheckResult]:
    return [check("test_rows_sum_to_one", "softmax", points=2),
            check("test_output_matches_reference[softmax]", "softmax"),
            check("test_scores_are_raw_dot_products", "attention_scores", points=2)]


def wrong_softmax(largest: str) -> list[CheckResult]:
    return [check("test_rows_sum_to_one", "softmax", "failed", f"row (1, 1) sums to {largest}; must sum to 1", 2,
                  SOFTMAX_DIM0),
            check("test_output_matches_reference[softmax]", "softmax", "failed", f"differs in {largest} entries",
                  diagnosis=SOFTMAX_DIM0),
            check("test_scores_are_raw_dot_products", "attention_scores", points=2)]


@pytest.fixture
def cohort_class(tmp_path: Path) -> tuple[list[Row], dict[str, Path]]:
    cards = {
        "ann": make_card(full_marks()),
        "ben": make_card(wrong_softmax("5.451")),
        "cat": make_card(wrong_softmax("3.2")),
        "dan": make_card([*wrong_softmax("12.0")[:2],
                          check("test_scores_are_raw_dot_products", "attention_scores", "failed", "not attempted", 2,
                                Diagnosis("scores_transposed", "k not transposed"))]),
        "eve": make_card([check(c.id, c.exercise, "failed", "your file could not be graded: syntax error at line 7",
                                c.max_score) for c in full_marks()]),
    }
    return a_class(tmp_path, cards, (Row("fay", "missing", message="nothing submitted"),
                                     Row("gus", "error", "gus.py", message="more than one submission")))


# ------------------------------------------------------------------ summary.json


def test_the_histogram_counts_every_graded_student_once(cohort_class) -> None:
    rows, cards = cohort_class
    data = summary.summarise("attention", rows, cards)
    hist = data["histogram"]
    assert sum(hist["counts"]) == data["counts"]["graded"] == 5
    assert len(hist["counts"]) == summary.HISTOGRAM_BINS and len(hist["edges"]) == summary.HISTOGRAM_BINS + 1
    assert hist["edges"][0] == 0 and hist["edges"][-1] == data["score"]["max_score"] == 5
    assert hist["counts"][-1] == 1  # ann's full marks fall in the last bin
    assert hist["counts"][0] == 2  # eve's 0 and dan's 0
    for old in ("assignment", "counts", "score", "exercises", "checks"):  # the keys from before stay
        assert old in data
    assert data["checks"]["softmax::test_rows_sum_to_one"] == {"passed": 1, "graded": 5, "pass_rate": 0.2}


def test_histogram_bins_edges_and_an_empty_class() -> None:
    assert summary.histogram([0, 4.99, 5, 9.99, 10], 10, bins=2) == {"edges": [0.0, 5.0, 10.0], "counts": [2, 3]}
    assert summary.histogram([], None) == {"edges": [0.0, 0.0], "counts": []}


def test_diagnoses_are_counted_in_students_most_common_first(cohort_class) -> None:
    data = summary.summarise("attention", *cohort_class)
    assert data["diagnoses"] == [
        {"id": "softmax_dim0", "title": "a softmax over dim 0", "exercise": "softmax", "count": 3},  # 2 checks each
        {"id": "scores_transposed", "title": "k not transposed", "exercise": "attention_scores", "count": 1},
    ]


def test_a_mistake_seen_in_several_exercises_counts_once_under_the_first(tmp_path: Path) -> None:
    downstream = [*wrong_softmax("2.5")[:2], check("test_weights_rows_sum_to_one", "attention", "failed", "sums to 2",
                                                  diagnosis=SOFTMAX_DIM0)]
    only_attention = [check("test_weights_rows_sum_to_one", "attention", "failed", "sums to 3", diagnosis=SOFTMAX_DIM0)]
    cards = {"amy": make_card(downstream), "bob": make_card(downstream), "cal": make_card(only_attention)}
    data = summary.summarise("attention", *a_class(tmp_path, cards))
    assert data["diagnoses"] == [{"id": "softmax_dim0", "title": "a softmax over dim 0", "exercise": "softmax",
                                  "count": 3}]


def test_failures_group_the_same_message_with_other_numbers(cohort_class) -> None:
    data = summary.summarise("attention", *cohort_class)
    failures = {(f["exercise"], f["check"], f["pattern"]): f for f in data["failures"]}
    rows_sum = failures[("softmax", "test_rows_sum_to_one", "row (N, N) sums to N.N; must sum to N")]
    assert rows_sum["count"] == 3  # ben 5.451, cat 3.2, dan 12.0
    assert rows_sum["message"] == "row (1, 1) sums to 5.451; must sum to 1"  # an original, the first student's
    params = failures[("softmax", "test_output_matches_reference", "differs in N.N entries")]
    assert params["count"] == 3  # the check's id without its parameters
    # eve's file could not run: every check failed with one message, counted once for the whole card
    assert failures[("*", "*", "your file could not be graded: syntax error at line N")]["count"] == 1
    assert data["failures"][0]["count"] == 3 and [f["count"] for f in data["failures"]] == sorted(
        (f["count"] for f in data["failures"]), reverse=True)
    assert set(data["failures"][0]) == {"exercise", "check", "message", "pattern", "count"}


def test_a_message_every_check_of_an_exercise_failed_with_counts_once(tmp_path: Path) -> None:
    checks = [check(f"test_{i}", "softmax", "failed", "not attempted") for i in range(4)]
    checks.append(check("test_scores_are_raw_dot_products", "attention_scores"))
    data = summary.summarise("attention", *a_class(tmp_path, {"amy": make_card(checks)}))
    assert [(f["exercise"], f["check"], f["count"]) for f in data["failures"]] == [("softmax", "*", 1)]


def test_only_the_top_failures_are_kept(tmp_path: Path) -> None:
    checks = [check(f"test_{i:02d}", f"ex{i:02d}", "failed", f"wrong in part {string.ascii_letters[i]}")
              for i in range(30)]
    data = summary.summarise("attention", *a_class(tmp_path, {"amy": make_card(checks), "bob": make_card(checks)}))
    assert len(data["failures"]) == summary.TOP_FAILURES == 20
    assert all(f["count"] == 2 for f in data["failures"])
    assert (summary.normalise_message("at index (0, 12) got 1e-05,\n expected 0.5")
            == "at index (N, N) got Ne-N, expected N.N")


# ------------------------------------------------------------------ plots and the index page


def _out_with_no_tokens(tmp_path: Path) -> Path:
    """A grade-all output folder whose similarity store is empty."""
    out = tmp_path / "out"
    (out / "cohort").mkdir(parents=True)
    (out / "cohort" / "tokens.json").write_text(json.dumps(similarity.empty_store()))
    return out


def png_pixels(path: Path):
    from matplotlib import image

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return image.imread(path)


def test_the_plots_are_pngs_with_something_drawn(cohort_class, tmp_path: Path) -> None:
    rows, cards = cohort_class
    out = tmp_path / "out"
    warnings: list[str] = []
    cohort.write(out, summary.summarise("attention", rows, cards), rows, warn=warnings.append)
    assert warnings == []
    for name in ("scores", "checks", "diagnoses"):
        pixels = png_pixels(out / "cohort" / f"{name}.png")
        assert pixels.shape[0] >= 150 and pixels.shape[1] >= 600
        assert pixels.std() > 0.05, f"{name}.png is blank"
        colours = {tuple(p) for p in pixels[::7, ::7].reshape(-1, pixels.shape[2]).round(2).tolist()}
        assert len(colours) > 10, f"{name}.png has almost nothing on it"


# Drawn in a fresh process: the pass-rates plot goes to a fork only where the drawing process has one thread,
# and a test worker has more. ``forks`` counts them; with ``dies``, the fork ends before it sends its PNG.
DRAW_BESIDE = r"""
import json, os, sys, threading
from grader.batch import cohort
summary = json.loads(open(sys.argv[1]).read())
forks = []
real_fork = os.fork
os.fork = lambda: (forks.append(1), real_fork())[1]
if sys.argv[2] == "dies":
    cohort._draw_into = lambda conn, make: os._exit(3)
beside = cohort.draw(summary, beside=True)
os.fork = real_fork
alone = cohort.draw(summary, beside=False)
print(json.dumps({"same": beside == alone, "names": list(beside), "forks": len(forks),
                  "threads": threading.active_count()}))
"""


@pytest.mark.parametrize("fork", ["answers", "dies"])
def test_the_pass_rates_plot_drawn_in_a_fork_is_the_same_png(cohort_class, tmp_path: Path, fork: str) -> None:
    """The plots are the batch's last wait: the pass rates per check (the slowest) are drawn in a fork while the
    batch draws the others (``cohort.draw``). The PNGs are byte for byte those drawn in one process, in the same
    order; a fork that dies before it answers costs only time (the plot is drawn in the batch instead)."""
    rows, cards = cohort_class
    data = tmp_path / "summary.json"
    data.write_text(json.dumps(summary.summarise("attention", rows, cards)))
    done = subprocess.run([sys.executable, "-c", DRAW_BESIDE, str(data), fork], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    result = json.loads(done.stdout)
    assert result == {"same": True, "names": ["scores", "checks", "diagnoses"], "forks": 1, "threads": 1}, done.stderr


def test_no_diagnoses_no_diagnoses_plot_and_a_stale_one_goes(tmp_path: Path) -> None:
    rows, cards = a_class(tmp_path, {"amy": make_card(full_marks())})
    out = tmp_path / "out"
    (out / "cohort").mkdir(parents=True)
    (out / "cohort" / "diagnoses.png").write_bytes(b"from an earlier run")
    cohort.write(out, summary.summarise("attention", rows, cards), rows, warn=pytest.fail)
    assert (out / "cohort" / "scores.png").is_file() and not (out / "cohort" / "diagnoses.png").exists()


def test_a_plotting_problem_is_one_line_and_everything_else_is_written(cohort_class, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rows, cards = cohort_class
    out = _out_with_no_tokens(tmp_path)

    def broken(_):
        raise RuntimeError("no fonts\nsecond line")

    monkeypatch.setattr(cohort, "draw", broken)
    warnings: list[str] = []
    cohort.write(out, summary.summarise("attention", rows, cards), rows, warn=warnings.append)
    assert len(warnings) == 1 and "no fonts" in warnings[0] and "\n" not in warnings[0]
    assert not list((out / "cohort").glob("*.png"))
    assert (out / "similarity.json").is_file()
    assert "the cohort plots could not be drawn: RuntimeError: no fonts" in (out / "reports" / "_index.html").read_text()


def test_a_similarity_problem_is_one_line_and_the_plots_and_index_are_written(cohort_class, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    rows, cards = cohort_class
    out = _out_with_no_tokens(tmp_path)
    (out / "similarity.json").write_text("{}")  # from an earlier run: must not survive as if current

    def broken(*_):
        raise MemoryError("too many pairs")

    monkeypatch.setattr(similarity, "report", broken)
    warnings: list[str] = []
    cohort.write(out, summary.summarise("attention", rows, cards), rows, warn=warnings.append)
    assert warnings == ["the similarity report could not be made: MemoryError: too many pairs"]
    assert not (out / "similarity.json").exists() and (out / "cohort" / "scores.png").is_file()
    assert "No similarity report" in (out / "reports" / "_index.html").read_text()


class Page(HTMLParser):
    """Every tag's attributes and the page's text, to check what a browser would load and show."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_the_index_links_existing_reports_escapes_names_and_loads_nothing(cohort_class, tmp_path: Path) -> None:
    rows, cards = cohort_class
    hostile = '<img src=x onerror="alert(1)">&q'
    rows = sorted([*rows, Row(hostile, "missing", message="nothing submitted"),
                   Row("has space#?", "missing", message="nothing <b>submitted</b>")], key=lambda r: r.student)
    out = tmp_path / "out"
    (out / "reports").mkdir(parents=True)
    for student in ("ann", "cat", "has space#?"):
        (out / "reports" / f"{student}.html").write_text("<p>report</p>")
    cohort.write(out, summary.summarise("attention", rows, cards), rows, warn=pytest.fail)
    html = (out / "reports" / "_index.html").read_text()
    page = Page(html)
    links = [a["href"] for tag, a in page.tags if tag == "a" and not a["href"].startswith("#")]
    assert sorted(links) == ["./ann.html", "./cat.html", "./has%20space%23%3F.html"]
    assert all((out / "reports" / unquote(href[2:])).is_file() for href in links)
    assert hostile in "".join(page.text) and "nothing <b>submitted</b>" in "".join(page.text)  # shown as text
    assert not any(tag == "img" and a.get("src") == "x" for tag, a in page.tags)  # ...never as markup
    images = [a["src"] for tag, a in page.tags if tag == "img"]
    assert len(images) == 3 and all(src.startswith("data:image/png;base64,") for src in images)
    assert not [tag for tag, _ in page.tags if tag in ("script", "link", "iframe", "object", "embed")]
    assert "http://" not in html and "https://" not in html and "url(" not in html
    cells = [text.strip() for text in page.text]
    for student in ("ben", "dan", "eve", "fay", "gus"):  # no report: the name (and score), without a link
        assert student in cells
    assert "2 / 5" in cells and "—" in cells  # ben's score; fay (missing) has none
    assert "a softmax over dim 0" in html and "row (1, 1) sums to 5.451; must sum to 1" in html


# ------------------------------------------------------------------ similarity


def renamed(source: str, names: dict[str, str]) -> str:
    """``source`` with its own names replaced (never an attribute after a dot), then reformatted by ast."""
    out, previous = [], None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string in names and previous != ".":
            tok = tok._replace(string=names[tok.string])
        out.append(tok)
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok.string
    text = tokenize.untokenize(out)
    tree = ast.parse(text)
    for node in ast.walk(tree):  # new docstrings, as a student retyping it would write
        if isinstance(node, ast.FunctionDef) and ast.get_docstring(node) is not None:
            node.body[0] = ast.Expr(ast.Constant(f"My {node.name}."))
    return "# copied, then tidied up\n" + ast.unparse(tree).replace("    ", "  ") + "\n"


RENAMES = {"scores": "logits", "weights": "probs", "row_max": "biggest", "counts": "denominators", "d_head": "hs",
           "log_p": "logp", "mask": "allowed", "e": "ex", "p": "w", "q": "queries", "k": "keys", "v": "values"}


def all_alternatives() -> str:
    """The reference with every function swapped for a corpus alternative: correct, and written differently.

    Per exercise of assignments.yaml, of the alternatives that define its function and nothing else, the one
    least like the reference's function (difflib's ratio); an exercise with none keeps no function here."""
    reference = {n.name: ast.get_source_segment(REFERENCE, n) for n in ast.parse(REFERENCE).body
                 if isinstance(n, ast.FunctionDef)}
    candidates: dict[str, list[tuple[float, str, str]]] = {}
    for case in corpus("alternatives"):
        if case.assignment != "attention":
            continue
        text = case.path.read_text()
        functions = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
        if len(functions) == 1 and functions[0].name in reference:
            own = ast.get_source_segment(text, functions[0])
            ratio = difflib.SequenceMatcher(None, reference[functions[0].name], own).ratio()
            candidates.setdefault(functions[0].name, []).append((ratio, case.path.stem, text))
    parts = ["import math\nimport torch\n"]
    for ex in load_config().assignment("attention").exercises:
        if ex.name not in candidates:
            continue
        _, _, text = min(candidates[ex.name])
        tree = ast.parse(text)
        parts += [ast.get_source_segment(text, node) for node in tree.body
                  if not isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n\n".join(parts) + "\n"


def as_notebook(source: str) -> str:
    cells = [nbformat.v4.new_markdown_cell("# Attention, my way")]
    cells += [nbformat.v4.new_code_cell(chunk) for chunk in re.split(r"\n(?=def )", source)]
    cells.append(nbformat.v4.new_code_cell("print(softmax(torch.randn(3, 3)))"))  # a demo: not graded
    return nbformat.writes(nbformat.v4.new_notebook(cells=cells))


@pytest.fixture(scope="module")
def alternatives_file() -> str:
    return all_alternatives()


def test_renamed_and_reformatted_copies_score_high_and_a_different_solution_does_not(tmp_path: Path,
                                                                                     alternatives_file: str) -> None:
    copy = renamed(REFERENCE, RENAMES)
    assert "logits" in copy and not re.search(r"\bscores\b", copy) and copy.count("\n") != REFERENCE.count("\n")
    files = {"ref.py": REFERENCE, "copy.py": copy, "alt.py": alternatives_file,
             "nb.ipynb": as_notebook(renamed(REFERENCE, {"weights": "attn", "v": "val"})),
             "stub.py": STUB.read_text(), "stub2.py": STUB.read_text()}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    store = similarity.build_store({Path(n).stem: tmp_path / n for n in files}, STUB, {})
    assert "softmax" not in json.dumps(store)  # names are gone: tokens, never source text
    report = similarity.report(store, threshold=0.8)
    pairs = {(p["a"], p["b"]): p for p in report["pairs"]}
    assert pairs[("copy", "ref")]["score"] >= 0.9  # ast.unparse drops trailing commas, adds parentheses...
    assert pairs[("nb", "ref")]["score"] >= 0.9  # a notebook is compared on the code the grader extracts
    assert not [pair for pair in pairs if "alt" in pair]
    assert {s["student"] for s in report["not_compared"]} == {"stub", "stub2"}  # the starter code does not count
    low, _ = similarity.compare({n: e["tokens"] for n, e in store["students"].items() if n in ("ref", "alt")},
                                store["boilerplate"], threshold=0.0)
    assert low[0].score < 0.3
    assert report["note"].startswith("A review aid") and "No score changes" in report["note"]
    nothing_shared = {"x": "V=" + "0123456789" * 20, "y": "W+" + "abcdefghij" * 20}
    assert similarity.compare(nothing_shared, "", threshold=0.0) == ([similarity.Pair("x", "y", 0.0, 0.0, 0.0)], {})


def release_notebook(solution: str | None = None) -> str:
    """The notebook `grader release` hands out for the stub, as a student saves it: untouched, or with
    every exercise cell replaced by ``solution``'s definition of that function."""
    from grader.release.notebooks import LESSON_DIR, build_notebook

    nb = nbformat.reads(build_notebook(STUB, LESSON_DIR / "attention.yaml"), as_version=4)
    if solution is not None:
        tree = ast.parse(solution)
        defs = {n.name: ast.get_source_segment(solution, n) for n in tree.body if isinstance(n, ast.FunctionDef)}
        for cell in nb.cells:
            if "exercise" in cell.metadata.get("tags", []):
                cell.source = defs[ast.parse(cell.source).body[0].name]
    return nbformat.writes(nb)


def test_the_same_code_as_py_and_as_the_release_notebook_is_listed(tmp_path: Path) -> None:
    """A notebook is compared on the code the grader extracts, less the release notebook's own code
    (its imports, the lesson's worked example and helpers): the .py and the filled notebook are one file."""
    (tmp_path / "py.py").write_text(REFERENCE)
    (tmp_path / "nb.ipynb").write_text(release_notebook(REFERENCE))
    (tmp_path / "alt.py").write_text(all_alternatives())
    store = similarity.build_store({"py": tmp_path / "py.py", "nb": tmp_path / "nb.ipynb",
                                    "alt": tmp_path / "alt.py"}, STUB, {})
    report = similarity.report(store, threshold=0.8)
    pairs = {(p["a"], p["b"]): p["score"] for p in report["pairs"]}
    assert pairs.get(("nb", "py"), 0.0) >= 0.95, report["pairs"]
    assert list(pairs) == [("nb", "py")]


def test_students_who_only_ran_the_release_notebook_are_not_similar(tmp_path: Path) -> None:
    """The stub's code in the release notebook is starter code: two untouched notebooks have no code
    of their own to compare (run or not: saved outputs are not code)."""
    untouched = release_notebook()
    ran = nbformat.reads(untouched, as_version=4)
    for cell in ran.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="NotImplementedError\n")]
    (tmp_path / "a.ipynb").write_text(untouched)
    (tmp_path / "b.ipynb").write_text(nbformat.writes(ran))
    report = similarity.report(similarity.build_store({"a": tmp_path / "a.ipynb", "b": tmp_path / "b.ipynb"},
                                                      STUB, {}), threshold=0.8)
    assert report["pairs"] == []
    assert {s["student"] for s in report["not_compared"]} == {"a", "b"}


def test_the_fast_matrix_equals_copydetects_compare_files() -> None:
    from copydetect import compare_files

    mutants, alternatives = ([c.source() for c in corpus(kind) if c.assignment == "attention"][:6]
                             for kind in ("mutants", "alternatives"))
    sources = mutants + alternatives
    texts = {f"s{i}": similarity.tokens(s) for i, s in enumerate(sources + [all_alternatives(), REFERENCE])}
    prints, _ = similarity._fingerprints(texts, similarity.tokens(STUB.read_text()), similarity.NOISE)
    names = list(prints)
    shares = similarity.similarity_matrix(prints, similarity.NOISE)
    for i, a in enumerate(names):
        for j, b in enumerate(names[i + 1:], start=i + 1):
            _, (share_a, share_b), _ = compare_files(prints[a].fingerprint, prints[b].fingerprint)
            assert (shares[i, j], shares[j, i]) == pytest.approx((share_a, share_b), abs=1e-12), (a, b)


def test_a_class_of_200_near_identical_files_lists_every_pair() -> None:
    """The worst case for the pair matrix (its speed is measured in bench/similarity.py)."""
    base = [similarity.tokens(c.source()) for c in corpus("mutants") + corpus("alternatives")
            if c.assignment == "attention"]
    texts = {f"s{i:03d}": base[i % len(base)] + "V=V" * (i // len(base)) for i in range(200)}  # all near-identical
    pairs, _ = similarity.compare(texts, similarity.tokens(STUB.read_text()), threshold=0.8)
    assert len(pairs) > 19_000


def test_a_rerun_retokenises_only_changed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text(REFERENCE)
    (tmp_path / "b.py").write_text(REFERENCE)
    first = similarity.build_store({"a": tmp_path / "a.py", "b": tmp_path / "b.py"}, STUB, {})
    (tmp_path / "b.py").write_text(REFERENCE + "\nX = 1\n")
    seen: list[str] = []
    real = similarity.tokens
    monkeypatch.setattr(similarity, "tokens", lambda source: seen.append(source) or real(source))
    second = similarity.build_store({"b": tmp_path / "b.py"}, STUB, first)
    assert list(second["students"]) == ["b"]  # a is not in this run's plan (another shard)
    assert len(seen) == 3 and "X = 1" in seen[0]  # b, then the starter code: the stub, the release notebook's
    merged = similarity.merge_stores([{"students": {"a": first["students"]["a"]}, "boilerplate": ""}, second])
    assert list(merged["students"]) == ["a", "b"] and merged["boilerplate"] == second["boilerplate"]


def test_each_distinct_file_is_tokenised_once_with_the_same_tokens(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies (the same bytes, the same suffix) share one tokenisation; every student still gets the
    entry their own file would give, as a dict of their own."""
    alternative = all_alternatives()
    files = {"a": ("a.py", REFERENCE), "b": ("b.py", REFERENCE), "c": ("c.py", alternative), "d": ("d.py", REFERENCE),
             "e": ("e.ipynb", release_notebook(REFERENCE)), "f": ("f.ipynb", release_notebook(REFERENCE))}
    for name, text in files.values():
        (tmp_path / name).write_text(text)
    seen: list[str] = []
    real = similarity.tokens
    monkeypatch.setattr(similarity, "tokens", lambda source: seen.append(source) or real(source))
    store = similarity.build_store({s: tmp_path / name for s, (name, _) in files.items()}, None, {})
    assert len(seen) == 3  # the reference, the alternative, the notebook's code; no stub: no starter code
    for student, (name, _) in files.items():
        path = tmp_path / name
        own = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "tokens": real(similarity.source_of(path))}
        assert store["students"][student] == own, student
    assert store["students"]["a"] is not store["students"]["b"]


def test_students_with_the_same_tokens_share_a_print_and_get_the_same_shares() -> None:
    """Students with the same token stream share one fingerprint, made once: the pair matrix's
    numbers are those of every student compared as a file of their own."""
    import copy

    import numpy as np

    sources = [c.source() for c in corpus("mutants") + corpus("alternatives") if c.assignment == "attention"][:5]
    streams = [similarity.tokens(s) for s in sources]
    texts = {f"s{i:02d}": streams[i % len(streams)] for i in range(12)}  # each stream two or three times
    texts["s99"] = streams[0] + "V=V"  # one of its own, near the first
    boilerplate = similarity.tokens(STUB.read_text())
    prints, skipped = similarity._fingerprints(texts, boilerplate, similarity.NOISE)
    assert not skipped and prints["s00"] is prints["s05"] and len({id(p) for p in prints.values()}) == 6
    alone = {name: copy.copy(p) for name, p in prints.items()}  # one print per student, as before the memo
    shared = similarity.similarity_matrix(prints, similarity.NOISE)
    assert np.array_equal(shared, similarity.similarity_matrix(alone, similarity.NOISE))
    assert shared[0, 5] == shared[5, 0] == 1.0 and shared[0, 0] == 0.0  # copies: all of each; never itself
    pairs, _ = similarity.compare(texts, boilerplate, threshold=0.0)
    assert len(pairs) == len(texts) * (len(texts) - 1) // 2


def test_a_huge_file_is_not_tokenised_and_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a", "b", "huge"):
        (tmp_path / f"{name}.py").write_text(REFERENCE)
    huge = REFERENCE + "DATA = [" + "1, " * 3000 + "]\n"
    (tmp_path / "huge.py").write_text(huge)
    monkeypatch.setattr(similarity, "MAX_SOURCE_CHARS", 8000)
    store = similarity.build_store({n: tmp_path / f"{n}.py" for n in ("a", "b", "huge")}, STUB, {})
    report = similarity.report(store)
    assert report["not_compared"] == [{"student": "huge", "why": f"too long to compare ({len(huge)} characters)"}]
    assert report["compared"] == 2 and [(p["a"], p["b"]) for p in report["pairs"]] == [("a", "b")]


# ------------------------------------------------------------------ grade-all and merge, end to end


def test_grade_all_writes_the_cohort_views_and_merge_writes_the_same(tmp_path: Path) -> None:
    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_text(REFERENCE)
    (submissions / "bob.ipynb").write_text(as_notebook(renamed(REFERENCE, RENAMES)))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(submissions), "--assignment",
                           "attention", "--out", str(out), "--jobs", "1", "--similarity-threshold", "0.9"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    problems = [line for line in proc.stderr.splitlines()  # a fallback warning (no course secret) is no view's
                if line.startswith("grader:") and not line.startswith(fallbacks.PREFIX)]
    assert problems == [], proc.stderr  # no view reported a problem
    data = json.loads((out / "summary.json").read_text())
    assert sum(data["histogram"]["counts"]) == data["counts"]["graded"] == 2
    assert {"histogram", "diagnoses", "failures", "checks"} <= set(data)
    for name in ("scores", "checks"):
        assert png_pixels(out / "cohort" / f"{name}.png").std() > 0.05
    similar = json.loads((out / "similarity.json").read_text())
    assert similar["threshold"] == 0.9
    assert ("alice", "bob") in {(p["a"], p["b"]) for p in similar["pairs"]}
    index = (out / "reports" / "_index.html").read_text()
    assert "alice" in index and "bob" in index and "data:image/png;base64," in index
    gradebook = (out / "gradebook.csv").read_text()
    assert "similar" not in gradebook.lower()  # a review aid: no score, card or gradebook column changes

    # merge: the same output split into two "shards" joins back into the same cohort views
    shards = [tmp_path / "shard-0", tmp_path / "shard-1"]
    for shard, keep in zip(shards, (["alice"], ["bob"])):
        shutil.copytree(out, shard)
        for folder in ("cards", "records"):
            for path in (shard / folder).glob("*.json"):
                if path.stem not in keep:
                    path.unlink()
        tokens = json.loads((shard / "cohort" / "tokens.json").read_text())
        tokens["students"] = {s: e for s, e in tokens["students"].items() if s in keep}
        (shard / "cohort" / "tokens.json").write_text(json.dumps(tokens))
    merged = tmp_path / "merged"
    merge_shards(shards, merged, similarity_threshold=0.9)
    assert json.loads((merged / "summary.json").read_text()) == data
    assert json.loads((merged / "similarity.json").read_text()) == similar
    assert (merged / "reports" / "_index.html").is_file() and (merged / "cohort" / "checks.png").is_file()


def test_an_interrupted_run_leaves_no_stale_views(cohort_class, tmp_path: Path) -> None:
    rows, cards = cohort_class
    out = _out_with_no_tokens(tmp_path)
    cohort.write(out, summary.summarise("attention", rows, cards), rows, warn=pytest.fail)
    (out / "reports" / "ann.html").write_text("<p>report</p>")
    cohort.clear(out)
    left = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.parent != out / "cards")
    assert left == ["cohort/tokens.json", "reports/ann.html"]
