"""The class as a whole, for the instructor: plots, the similarity report and one index page.

``grade-all`` and ``merge`` call ``write`` after ``summary.json``:

* ``cohort/scores.png`` (the score histogram), ``cohort/checks.png`` (pass
  rate per check, the worst at the top), ``cohort/diagnoses.png`` (the most
  common known mistakes, when there are any);
* ``similarity.json`` (``grader.batch.similarity``: near-identical pairs for a
  human to review; it changes no score);
* ``reports/_index.html``: every student's score, linked to their report
  where ``reports/<student>.html`` exists, the plots, the top diagnoses and
  failures, and the similar pairs. One file: plots are embedded as base64
  PNG, no script, nothing fetched, so it can be mailed or opened offline.

These are views: each is drawn from ``summary.json``'s data, the rows and the
stored token streams, and none of them can fail the batch. A problem costs
that view one line on stderr; the grades, cards and the other views are still
written.
"""

from __future__ import annotations

import base64
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from grader import files, words
from grader.batch import similarity
from grader.batch.layout import Layout
from grader.export.gradebook import Row
from grader.version import __version__
from grader.words import count

PLOTS = ("scores", "checks", "diagnoses")
TOP_DIAGNOSES_PLOTTED = 15
CHECKS_PLOTTED = 40  # the lowest pass rates; more bars are unreadable (and slow: matplotlib's text)
LABEL_CHARS = 64
CHANGED_CHECKS_SHOWN = 5  # a changed student's checks on the page; changes.csv has them all

Warn = Callable[[str], None]
T = TypeVar("T")


def _stderr(line: str) -> None:
    sys.stderr.write(f"grader: {line}\n")



# ------------------------------------------------------------------ token streams, kept for similarity


def keep_sources(out: Path, submissions: Mapping[str, Path], stub: Path | None, warn: Warn = _stderr) -> None:
    """Store the token streams of this run's submissions (student -> file) while the files exist.

    Called by ``grade-all`` while its grader processes start: a zip's files are gone by the
    time the views are written, and ``merge`` has only the shards' folders.
    """
    paths = Layout(out)
    try:
        store = similarity.build_store(submissions, stub, similarity.read_store(paths.tokens))
        paths.cohort.mkdir(parents=True, exist_ok=True)
        files.write_atomically(paths.tokens, _json(store))
    except Exception as exc:  # noqa: BLE001 - a review aid: one line, grading goes on
        paths.tokens.unlink(missing_ok=True)
        warn(f"similarity: cannot read the submissions' code ({type(exc).__name__}: {_first_line(exc)}); "
             "no similarity report")


def merge_sources(out: Path, dirs: Sequence[Path], warn: Warn = _stderr) -> None:
    """``merge``: the shards' token streams as one store, so pairs across shards are compared too."""
    paths = Layout(out)
    stores = [similarity.read_store(Layout(d).tokens) for d in dirs if Layout(d).tokens.is_file()]
    if len(stores) < len(dirs):
        warn("similarity: some shards have no cohort/tokens.json; their students are not compared")
    if not stores:
        paths.tokens.unlink(missing_ok=True)
        return
    paths.cohort.mkdir(parents=True, exist_ok=True)
    files.write_atomically(paths.tokens, _json(similarity.merge_stores(stores)))


# ------------------------------------------------------------------ the views


def write(out: Path, summary: Mapping[str, Any], rows: Sequence[Row],
          threshold: float = similarity.DEFAULT_THRESHOLD, warn: Warn = _stderr) -> None:
    """Plots, ``similarity.json`` and ``reports/_index.html``; each problem is one line to ``warn``
    (and a note on the index page), and the other views are still written."""
    paths = Layout(out)
    notes: list[str] = []

    def attempt(what: str, step: Callable[[], T]) -> T | None:
        try:
            return step()
        except Exception as exc:  # noqa: BLE001 - a view: one line, every other output is still written
            why = f"{what}: {type(exc).__name__}: {_first_line(exc)}"
            notes.append(why)
            warn(why)
            return None

    plots = attempt("the cohort plots could not be drawn", lambda: _write_plots(paths, summary)) or {}
    similar = attempt("the similarity report could not be made", lambda: _write_similarity(paths, threshold))
    attempt("the index page could not be written", lambda: _write_index(paths, summary, rows, plots, similar, notes))


def _write_plots(paths: Layout, summary: Mapping[str, Any]) -> dict[str, bytes]:
    for name in PLOTS:  # first: a stale plot from an earlier run would mislead
        paths.plot(name).unlink(missing_ok=True)
    plots = draw(summary)
    paths.cohort.mkdir(parents=True, exist_ok=True)
    for name, png in plots.items():
        _write_bytes(paths.plot(name), png)
    return plots


def _write_similarity(paths: Layout, threshold: float) -> dict[str, Any] | None:
    """``similarity.json`` from the stored token streams; None when this batch kept none."""
    paths.similarity.unlink(missing_ok=True)
    if not paths.tokens.is_file():
        return None
    similar = similarity.report(similarity.read_store(paths.tokens), threshold)
    files.write_atomically(paths.similarity, _json(similar))
    return similar


def _write_index(paths: Layout, summary: Mapping[str, Any], rows: Sequence[Row], plots: Mapping[str, bytes],
                 similar: Mapping[str, Any] | None, notes: Sequence[str]) -> None:
    paths.reports.mkdir(parents=True, exist_ok=True)
    reports = {r.student for r in rows if (paths.reports / f"{r.student}.html").is_file()}
    from grader.batch import changes  # changes.csv, written by grade-all just before: "What the last re-grade changed"

    found = changes.read_csv(paths.root / changes.FILE_NAME)
    files.write_atomically(paths.index, index_html(summary, rows, reports, plots, similar, notes, found))


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else ""


def clear(out: Path) -> None:
    """Remove the cohort views (not the token streams, not the students' reports).

    An interrupted ``grade-all`` calls this instead of ``write``: it stops
    within seconds, and views of an earlier run beside this run's partial
    summary would mislead; the run that finishes the batch draws them again.
    """
    paths = Layout(out)
    for path in (*(paths.plot(name) for name in PLOTS), paths.similarity, paths.index):
        path.unlink(missing_ok=True)


# Glyphs drawn as the font gives them, without hinting: matplotlib's default hinting costs about a
# quarter of the plots' time, on the batch's last stretch, for a difference a bar chart's labels do not show.
TEXT_RENDERING = {"text.hinting": "none"}


def draw(summary: Mapping[str, Any], beside: bool = True) -> dict[str, bytes]:
    """The plots as PNG bytes by name: ``scores``, ``checks`` and, when any were found, ``diagnoses``.

    They are the batch's last wait (the grader processes are gone by then, so a core is free), and the
    pass rates per check take longest (~60 % of the three: one bar and one label per check). With
    ``beside``, that one is drawn in a fork of this process while this one draws the others
    (``_drawn_beside``); the bytes are the same either way."""
    makers: dict[str, Callable[[], Any]] = {"scores": lambda: _scores_figure(summary)}
    if summary.get("checks"):
        makers["checks"] = lambda: _checks_figure(summary["checks"])
    if summary.get("diagnoses"):
        makers["diagnoses"] = lambda: _diagnoses_figure(summary["diagnoses"][:TOP_DIAGNOSES_PLOTTED])
    first = "checks" if beside and "checks" in makers and len(makers) > 1 else None
    later = _drawn_beside(makers[first]) if first else None
    plots = {name: _png_of(make) for name, make in makers.items() if name != first}
    if first and later:
        plots[first] = later()
    return {name: plots[name] for name in makers}


def _png_of(make: Callable[[], Any]) -> bytes:
    import matplotlib

    with matplotlib.rc_context(TEXT_RENDERING):
        return _png(make())


BESIDE_SECONDS = 60.0  # far more than a plot takes; a fork that has not answered by then is drawn here instead


def _drawn_beside(make: Callable[[], Any]) -> Callable[[], bytes]:
    """Start drawing ``make``'s figure in a fork of this process; returns the function that waits for its PNG.

    Only where this process has one thread (a fork of a threaded process may deadlock on a lock another
    thread held) and more than one core: otherwise the figure is drawn when its bytes are asked for. A fork
    that fails, dies or stays silent costs nothing but time: the figure is then drawn here."""
    if threading.active_count() > 1 or len(os.sched_getaffinity(0)) < 2:
        return lambda: _png_of(make)
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    mine, theirs = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_draw_into, args=(theirs, make), daemon=True)
    try:
        process.start()
    except OSError:
        return lambda: _png_of(make)
    finally:
        theirs.close()

    def wait() -> bytes:
        try:
            if mine.poll(BESIDE_SECONDS):
                return mine.recv_bytes()
        except (EOFError, OSError):
            pass  # it died before it sent anything
        finally:
            mine.close()
            if process.is_alive():
                process.kill()
            process.join()
        return _png_of(make)

    return wait


def _draw_into(conn: Any, make: Callable[[], Any]) -> None:
    """In the fork: the figure's PNG down the pipe, then out without this process's clean-up (``os._exit``)."""
    try:
        conn.send_bytes(_png_of(make))
        conn.close()
    finally:
        os._exit(0)


def _figure(width: float, height: float, layout: str | None = "constrained") -> Any:
    """A figure on the Agg backend, outside pyplot: no window, no display, no figure kept alive."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout=layout)


def _png(figure: Any) -> bytes:
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _scores_figure(summary: Mapping[str, Any]) -> Any:
    figure = _figure(8, 4, layout=None)
    figure.subplots_adjust(left=0.08, right=0.98, top=0.92, bottom=0.13)
    ax = figure.subplots()
    hist, score = summary.get("histogram") or {}, summary.get("score") or {}
    edges, counts = hist.get("edges", []), hist.get("counts", [])
    graded = sum(counts)
    if counts and len(edges) == len(counts) + 1:
        widths = [b - a for a, b in zip(edges, edges[1:])]
        ax.bar(edges[:-1], counts, width=[w or 1.0 for w in widths], align="edge", color="#4c78a8",
               edgecolor="white")
        for x, w, c in zip(edges, widths, counts):
            if c:
                ax.annotate(str(c), (x + (w or 1.0) / 2, c), ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, max(counts, default=0) * 1.25 + 0.5)  # room for the counts and the legend
    for key, style in (("mean", "--"), ("median", ":")):
        if score.get(key) is not None:
            ax.axvline(score[key], color="#333333", linestyle=style, label=f"{key} {score[key]:g}")
    if score.get("mean") is not None:
        ax.legend(loc="upper center", ncols=2, framealpha=1.0)
    if score.get("max_score"):
        ax.set_xlim(0, score["max_score"])
    ax.set_xlabel(f"score (out of {score.get('max_score') or 0:g})")
    ax.set_ylabel("students")
    ax.set_title(f"{summary.get('assignment', '')}: scores of {graded} graded students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    return figure


def _checks_figure(checks: Mapping[str, Mapping[str, Any]]) -> Any:
    """The ``CHECKS_PLOTTED`` lowest pass rates, one bar a check, the worst at the top.

    The rate and counts sit in the label: one text a bar, as text is what
    takes matplotlib the time; every rate is in ``summary.json``.
    """
    ordered = sorted(checks.items(), key=lambda item: (item[1]["pass_rate"], item[0]))[:CHECKS_PLOTTED]
    height = max(2.0, 0.8 + 0.22 * len(ordered))
    figure = _figure(10, height, layout=None)
    figure.subplots_adjust(left=0.5, right=0.97, top=1 - 0.4 / height, bottom=0.45 / height)
    ax = figure.subplots()
    rates = [100 * c["pass_rate"] for _, c in ordered]
    from matplotlib import colormaps

    ax.barh(range(len(ordered)), rates, color=[colormaps["RdYlGn"](0.1 + 0.8 * r / 100) for r in rates])
    labels = [f"{_clip(name.replace('::test_', ': '))}  {rate:.0f}% ({c['passed']}/{c['graded']})"
              for rate, (name, c) in zip(rates, ordered)]
    ax.set_yticks(range(len(ordered)), labels, fontsize=8)
    ax.set_ylim(len(ordered) - 0.5, -0.5)  # the first (worst) check at the top
    ax.set_xlim(0, 100)
    ax.grid(axis="x", color="#dddddd")
    ax.set_axisbelow(True)
    ax.set_xlabel("graded students who passed (%)")
    shown = f"the {len(ordered)} lowest of {count(len(checks), 'check')}" if len(ordered) < len(checks) else "every check"
    figure.suptitle(f"Pass rate per check, the worst at the top ({shown})", y=1 - 0.08 / height, va="top")
    return figure


def _diagnoses_figure(diagnoses: Sequence[Mapping[str, Any]]) -> Any:
    figure = _figure(10, max(2.2, 1.2 + 0.32 * len(diagnoses)))
    ax = figure.subplots()
    counts = [d["count"] for d in diagnoses]
    ax.barh(range(len(diagnoses)), counts, color="#e45756")
    ax.set_yticks(range(len(diagnoses)), [_clip(f"{d['exercise']}: {d['title']}") for d in diagnoses], fontsize=8)
    ax.invert_yaxis()
    for y, count in enumerate(counts):
        ax.annotate(str(count), (count, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xlim(0, max(counts) * 1.15)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("students")
    ax.set_title("Most common known mistakes")
    return figure


def _clip(text: str, limit: int = LABEL_CHARS) -> str:
    return words.clip(text, limit)


# ------------------------------------------------------------------ the index page


def index_html(summary: Mapping[str, Any], rows: Sequence[Row], reports: set[str], plots: Mapping[str, bytes],
               similar: Mapping[str, Any] | None, notes: Sequence[str] = (),
               changes: Sequence[Mapping[str, str]] | None = None) -> str:
    """The instructor's page: one self-contained HTML file (autoescaped; plots as data: URIs).

    ``reports``: the students whose ``<student>.html`` sits beside the page;
    only they get a link, the others show their score without one. ``changes``: the rows of
    ``changes.csv`` (``grader.batch.changes``), whose score the last re-grade changed; None: no such file.
    """
    import jinja2

    from grader.export.html import prose

    environment = jinja2.Environment(loader=jinja2.PackageLoader("grader.export", "templates"), autoescape=True,
                                     undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    environment.filters["counted"] = count  # `n | counted("student")`: "1 student", "2 students"
    environment.filters["prose"] = prose  # a message's `code` as code, as on each student's page
    students = [{"name": r.student, "href": _href(r.student) if r.student in reports else None, "status": r.status,
                 "score": r.score, "max_score": r.max_score, "message": r.message} for r in rows]
    hrefs = {r.student: _href(r.student) for r in rows if r.student in reports}
    return environment.get_template("cohort_index.html.j2").render(
        summary=summary, students=students, hrefs=hrefs, notes=list(notes), version=__version__,
        plots={name: base64.b64encode(png).decode("ascii") for name, png in plots.items()},
        similarity=similar, changes=None if changes is None else list(changes), checks_shown=CHANGED_CHECKS_SHOWN)


def _href(student: str) -> str:
    """A relative link to ``<student>.html`` that no student id can turn into another URL."""
    return "./" + quote(f"{student}.html", safe="")


def _json(data: Any) -> str:
    import json

    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _write_bytes(path: Path, data: bytes) -> None:
    """``files.write_atomically`` for bytes: beside the target first, then renamed into place."""
    tmp = path.with_name(f"{files.TMP_PREFIX}{os.getpid()}-{path.name}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
