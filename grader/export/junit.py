"""Scorecards as JUnit XML, for the test reports of Jenkins, GitLab and GitHub.

One ``<testsuite name=STUDENT>`` per card, one ``<testcase
classname=ASSIGNMENT.EXERCISE name=CHECK_ID>`` per check, inside a
``<testsuites>`` root carrying the totals (tests, failures, errors, time:
the Jenkins xunit plugin's ``junit-10.xsd``, which the tests validate every
report against, allows no ``skipped`` there; each suite carries its own). Our statuses map onto the JUnit
children every reader knows: ``failed`` -> ``<failure>``, ``error`` and
``timeout`` -> ``<error type="error"|"timeout">``, ``skipped`` ->
``<skipped>``, ``passed`` -> no child. Points are not a JUnit notion: a
suite's ``score``/``max_score`` go into its ``<properties>``, which the
readers show or ignore; testcases carry none (the common JUnit schema has no
testcase properties and several readers reject them).

A card with ``grader_error`` gets one more testcase, ``<ASSIGNMENT>.grader``
named ``grader_error``, with an ``<error type="grader_error">``: that card is
not a grade and a CI view must show it red.

Messages quote student output, which may hold anything: characters XML 1.0
cannot carry (control characters other than tab, LF, CR; lone surrogates;
U+FFFE/U+FFFF) are removed, and ElementTree escapes the rest.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.export.gradebook_csv import format_number
from grader.files import write_atomically
from grader.scorecard import CheckResult, Scorecard

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ERROR_TYPES = {"error": "error", "timeout": "timeout"}


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids."""
    return _NOT_XML.sub("", text)


@dataclass
class _Counts:
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    time: float = 0.0

    def add(self, other: _Counts) -> None:
        self.tests += other.tests
        self.failures += other.failures
        self.errors += other.errors
        self.skipped += other.skipped
        self.time += other.time

    def attributes(self) -> dict[str, str]:
        """A ``<testsuite>``'s counts."""
        return {"tests": str(self.tests), "failures": str(self.failures), "errors": str(self.errors),
                "skipped": str(self.skipped), "time": _seconds(self.time)}

    def root_attributes(self) -> dict[str, str]:
        """The ``<testsuites>`` totals: junit-10.xsd allows no ``skipped`` on the root."""
        return {k: v for k, v in self.attributes().items() if k != "skipped"}


def to_element(cards: Sequence[tuple[str, Scorecard]]) -> ET.Element:
    """The ``<testsuites>`` tree for (student, card) pairs, in the order given."""
    assignments = sorted({card.assignment for _, card in cards})
    root = ET.Element("testsuites", name=xml_text(assignments[0] if len(assignments) == 1 else "grader"))
    total = _Counts()
    for student, card in cards:
        suite, counts = _suite(student, card)
        root.append(suite)
        total.add(counts)
    root.attrib.update(total.root_attributes())
    return root


def write(cards: Sequence[tuple[str, Scorecard]], path: Path) -> None:
    """Write the report atomically, UTF-8 with an XML declaration."""
    root = to_element(cards)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    write_atomically(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n")


def _suite(student: str, card: Scorecard) -> tuple[ET.Element, _Counts]:
    suite = ET.Element("testsuite", name=xml_text(student))
    if card.graded_at:
        suite.set("timestamp", xml_text(card.graded_at))
    properties = ET.SubElement(suite, "properties")
    for name, value in (("assignment", card.assignment), ("file", card.submission.file),
                        ("sha256", card.submission.sha256), ("score", format_number(card.final_score)),
                        ("max_score", format_number(card.max_score))):
        ET.SubElement(properties, "property", name=name, value=xml_text(value))
    counts = _Counts(time=card.duration_s)
    if card.grader_error:
        case = ET.SubElement(suite, "testcase", classname=xml_text(f"{card.assignment}.grader"),
                             name="grader_error", time=_seconds(0.0))
        message = xml_text(f"the grader itself failed; this card is not a grade: {card.grader_error}")
        ET.SubElement(case, "error", type="grader_error", message=message).text = message
        counts.tests += 1
        counts.errors += 1
    for check in card.checks:
        suite.append(_case(card.assignment, check))
        counts.tests += 1
        counts.failures += check.status == "failed"
        counts.errors += check.status in _ERROR_TYPES
        counts.skipped += check.status == "skipped"
    suite.attrib.update(counts.attributes())
    return suite, counts


def _case(assignment: str, check: CheckResult) -> ET.Element:
    case = ET.Element("testcase", classname=xml_text(f"{assignment}.{check.exercise}"), name=xml_text(check.id),
                      time=_seconds(check.duration_s))
    message = xml_text(check.message)
    if check.status == "failed":
        ET.SubElement(case, "failure", type="failed", message=message).text = message
    elif check.status in _ERROR_TYPES:
        ET.SubElement(case, "error", type=_ERROR_TYPES[check.status], message=message).text = message
    elif check.status == "skipped":
        ET.SubElement(case, "skipped", message=message)
    return case


def _seconds(x: float) -> str:
    return f"{x:.3f}"
