"""The per-student reports grade-all writes beside the cards (``--report html`` / ``pytest-json``), drawn
from the final card (``grader.batch.final``) once, whenever it changes (a re-grade, an override, a late
penalty)."""

from __future__ import annotations

from typing import Protocol

from grader.export.gradebook import Row
from grader.scorecard import Scorecard
from grader.batch.layout import Layout


class ReportChoice(Protocol):
    """Which reports a run draws (``BatchOptions`` and ``final.Stage`` both say): ``report`` "html",
    "pytest-json" or None, in ``view``."""

    @property
    def report(self) -> str | None: ...

    @property
    def view(self) -> str: ...


def write_report(layout: Layout, student: str, card: Scorecard, view: str, fmt: str = "html") -> None:
    """The student's feedback page (``grader.export.html``) or pytest-json-report file
    (``grader.export.pytest_json``, ``reports/<student>.report.json``), written whenever their card is."""
    layout.reports.mkdir(parents=True, exist_ok=True)
    if fmt == "pytest-json":
        from grader.export import pytest_json

        pytest_json.write(card, layout.pytest_report(student), view=view)
        return
    from grader.export import html  # only for --report html: Jinja and the template load on first use

    html.write(card, layout.report(student), view=view)


def keep_report(layout: Layout, row: Row, options: ReportChoice) -> None:
    """An unchanged student keeps their page; one with no page yet, or a page drawn for another
    ``--view`` (an instructor page must never stay where student pages are expected), gets one
    from the card already there. A card that cannot be read leaves the page as it is. A pytest-json
    report is always written again from the card (milliseconds), so its view is always the one asked."""
    if options.report is None:
        return
    if options.report == "html":
        from grader.export import html

        if html.page_view(layout.report(row.student)) == options.view:
            return
    card = layout.read_card(row.student)
    if card is None:
        return
    write_report(layout, row.student, card, options.view, options.report)


def redraw_reports(layout: Layout, student: str, card: Scorecard, skip: str | None = None) -> None:
    """The student's existing HTML page and pytest-json report drawn again from ``card``, each in the
    view it was drawn with: an override or a late penalty shows on every report that exists. ``skip``:
    the format this run has just drawn (``write_report``), not drawn twice."""
    page = layout.report(student)
    if page.is_file() and skip != "html":
        from grader.export import html

        html.write(card, page, view=html.page_view(page) or "student")
    report = layout.pytest_report(student)
    if report.is_file() and skip != "pytest-json":
        from grader.export import pytest_json

        pytest_json.write(card, report, view=pytest_json.report_view(report) or "student")
