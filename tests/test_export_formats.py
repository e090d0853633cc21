"""Each exporter against the published format it claims: read back, parsed, or schema-checked.

Cards are built from the dataclasses (and checked against the scorecard
schema), never graded, so no sandbox is needed; one test grades the stub
for real, to see ``grade --report pytest-json`` write its file. The
published formats' own checkers: the Jenkins xunit plugin's junit-10.xsd
(tests/data, validated with lxml), Gradescope's results.json specification
(a JSON Schema in tests/data) and the pytest-json-report plugin itself (run
on a small pytest session for the keys it writes).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from grader import batch, cli, scorecard
from grader.export import command as exports, views
from grader.batch.layout import read_folder
from grader.config import ConfigError, load_config
from grader.export import canvas, gradebook_csv, gradescope, junit, pytest_json
from grader.export.gradebook import Row
from grader.coursedata.roster import RosterEntry, RosterError, read_roster
from grader.scorecard import CheckResult, Scorecard, SubmissionInfo

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
SHA = "ab" * 32
HOSTILE = "saw <tensor> & \"quotes\" 'too'\x00\x1b[31mred\x1b[0m\x0b\x7f tab\tend\nnext line \ud800 \ufffe"
HOSTILE_CLEAN = "saw <tensor> & \"quotes\" 'too'[31mred[0m\x7f tab\tend\nnext line  "


def check(id: str, exercise: str, status: str, score: float, max_score: float, visibility: str = "visible",
          message: str = "", duration_s: float = 0.25) -> CheckResult:
    return CheckResult(id, exercise, status, score, max_score, message, visibility, duration_s)


def make_card(checks: list[CheckResult], grader_error: str | None = None, output: str = "",
              assignment: str = "attention") -> Scorecard:
    card = Scorecard(assignment=assignment, submission=SubmissionInfo("alice/attention.py", SHA),
                     score=round(sum(c.score for c in checks), 6), max_score=round(sum(c.max_score for c in checks), 6),
                     checks=tuple(checks), output=output, grader_error=grader_error,
                     graded_at="2025-01-01T00:00:00Z", duration_s=3.5)
    scorecard.validate(card.to_dict())  # the fixtures are cards the grader could have written
    return card


def mixed_card() -> Scorecard:
    return make_card([
        check("test_output_matches_reference[softmax]", "softmax", "passed", 2, 2),
        check("test_rows_sum_to_one", "softmax", "failed", 0, 2, message="rows sum to 2, not 1"),
        check("test_matches_reference_on_random_shapes", "softmax", "timeout", 0, 1, "hidden", "took over 10 s"),
        check("test_cuda_matches_cpu[softmax]", "softmax", "skipped", 0, 0, message="no CUDA on this machine"),
        check("test_row_t_is_mean_of_first_t_plus_1", "bag_of_past", "error", 0, 2, message="ZeroDivisionError"),
        check("test_cuda_matches_cpu[bag_of_past]", "bag_of_past", "skipped", 0, 1, message="no CUDA (kept)"),
        check("test_gradients_match_reference[bag_of_past]", "bag_of_past", "passed", 0.5, 0.5, "hidden"),
    ], output="hello from the student\n")


# ---------------------------------------------------------------- roster

def write_bytes(tmp_path: Path, data: bytes, name: str = "roster.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_roster_reads_known_columns_case_insensitively_and_ignores_the_rest(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, (
        "\ufeff Student ,NAME,Canvas_ID,Extra,section\r\n"
        "\r\n"
        'alice,"Lovelace, Ada",101,x, A \r\n'
        ",,,,\r\n"
        "bob,,,y\r\n"
    ).encode())
    assert read_roster(path) == [
        RosterEntry("alice", name="Lovelace, Ada", canvas_id="101", section="A"),
        RosterEntry("bob"),
    ]


@pytest.mark.parametrize("content, expected", [
    (None, "cannot read"),
    (b"student,name\nalice,\xff\xfe\n", "line 2: not UTF-8"),
    (b"name,phone\nAda,1\n", "unknown roster layout: no 'student' column or other id column (found 'name', 'phone')"),
    (b"student,name\nalice,Ada\n ,Bob\n", "line 3: empty student id"),
    (b"student\nalice\n\nbob\nalice\n", "lines 2 and 5: student 'alice' appears twice"),
    (b"", "empty roster"),
    (b"student,Student\nalice,alice\n", "'student' appears twice"),
])
def test_roster_errors_are_one_line_naming_the_file(tmp_path: Path, content: bytes | None, expected: str) -> None:
    path = tmp_path / "roster.csv" if content is None else write_bytes(tmp_path, content)
    with pytest.raises(RosterError) as info:
        read_roster(path)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message
    assert str(path) in message
    assert expected in message


def test_roster_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RosterError, match="cannot read"):
        read_roster(tmp_path)


def test_roster_error_stays_one_line_for_a_student_id_with_a_newline(tmp_path: Path) -> None:
    path = write_bytes(tmp_path, b'student\n"a\nb"\n"a\nb"\n')
    with pytest.raises(RosterError) as info:
        read_roster(path)
    assert "\n" not in str(info.value) and "appears twice" in str(info.value)


# ---------------------------------------------------------------- gradebook csv

EXERCISES = ["softmax", "bag_of_past"]


def gradebook_rows() -> list[Row]:
    return [
        Row('o"brien, jr', "graded", 'o"brien, jr/attention.py', SHA, 132.5, 136.5,
            (("softmax", 12.0), ("bag_of_past", 0.0))),
        Row("bob", "missing", message="on the roster, nothing submitted"),
        Row("carol", "error", "carol/attention.py", SHA, message="grader error: worker died"),
    ]


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_gradebook_csv_header_rows_and_numbers(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.csv"
    gradebook_csv.write(gradebook_rows(), EXERCISES, path)
    header, rows = read_csv(path)
    assert header == ["student", "file", "sha256", "score", "max_score", "softmax", "bag_of_past", "status", "message"]
    assert [r["student"] for r in rows] == ['o"brien, jr', "bob", "carol"]
    graded = rows[0]
    assert (graded["file"], graded["score"], graded["max_score"]) == ('o"brien, jr/attention.py', "132.5", "136.5")
    assert (graded["softmax"], graded["bag_of_past"], graded["status"]) == ("12", "0", "graded")


@pytest.mark.parametrize("student", ["bob", "carol"])
def test_gradebook_csv_leaves_score_cells_empty_unless_graded(tmp_path: Path, student: str) -> None:
    path = tmp_path / "gradebook.csv"
    gradebook_csv.write(gradebook_rows(), EXERCISES, path)
    row = next(r for r in read_csv(path)[1] if r["student"] == student)
    assert [row[c] for c in ("score", "max_score", *EXERCISES)] == ["", "", "", ""]
    assert row["status"] in ("missing", "error") and row["message"]


def test_gradebook_csv_is_rfc4180_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.csv"
    path.write_text("old content that must be replaced whole\n")
    gradebook_csv.write(gradebook_rows(), EXERCISES, path)
    data = path.read_bytes()
    assert data.count(b"\r\n") == 4 and b"\r\r\n" not in data and not data.startswith(b"\xef\xbb\xbf")
    assert b'"o""brien, jr"' in data
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.csv"]


def test_gradebook_csv_refuses_an_exercise_named_like_a_fixed_column(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unique"):
        gradebook_csv.write(gradebook_rows(), ["score"], tmp_path / "g.csv")


@pytest.mark.parametrize("value, text", [
    (132.5, "132.5"), (0.0, "0"), (-0.0, "0"), (12.0, "12"), (100.0, "100"), (1e-06, "0.000001"),
    (0.1, "0.1"), (None, ""),
])
def test_numbers_use_the_shortest_plain_decimal(value: float | None, text: str) -> None:
    assert gradebook_csv.format_number(value) == text


def test_numbers_refuse_nan() -> None:
    with pytest.raises(ValueError):
        gradebook_csv.format_number(float("nan"))


# ---------------------------------------------------------------- canvas

ROSTER = [
    RosterEntry('o"brien, jr', name="O'Brien, Pat", canvas_id="101", sis_user_id="S1", sis_login_id="pob",
                section="Sec A"),
    RosterEntry("bob", canvas_id="102"),
    RosterEntry("dave", name="No Canvas Account"),
    RosterEntry("carol", name="Carol", canvas_id="103"),
    RosterEntry("erin", name="Erin", canvas_id="104"),  # on the roster, no row at all
]


def read_rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_canvas_layout_is_the_documented_import_format(tmp_path: Path) -> None:
    path = tmp_path / "canvas.csv"
    canvas.write(gradebook_rows(), ROSTER, "Attention (5501)", 132.5, path)
    lines = read_rows(path)
    assert lines[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention (5501)"]
    assert lines[1] == ["Points Possible", "", "", "", "", "132.5"]
    assert lines[2:] == [
        ["O'Brien, Pat", "101", "S1", "pob", "Sec A", "132.5"],
        ["bob", "102", "", "", "", ""],
        # carol's row is an error: no line, so Canvas keeps whatever grade it holds
        ["Erin", "104", "", "", "", ""],
    ]


def test_canvas_without_any_canvas_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        canvas.write(gradebook_rows(), [RosterEntry("bob")], "Attention", 132.5, tmp_path / "c.csv")
    assert "canvas_id" in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "c.csv").exists()


@pytest.mark.parametrize("title", ["", "Section", "Final Score", "Attention Current Grade"])
def test_canvas_refuses_a_title_canvas_would_not_read_as_an_assignment(tmp_path: Path, title: str) -> None:
    with pytest.raises(ValueError):
        canvas.write(gradebook_rows(), ROSTER, title, 10, tmp_path / "c.csv")


def test_canvas_refuses_two_rows_for_one_student(tmp_path: Path) -> None:
    rows = [Row("bob", "missing"), Row("bob", "graded", score=1, max_score=2)]
    with pytest.raises(ValueError, match="bob"):
        canvas.write(rows, ROSTER, "Attention", 2, tmp_path / "c.csv")


# ---------------------------------------------------------------- junit

def parse_junit(path: Path) -> ET.Element:
    return ET.parse(path).getroot()  # expat refuses any character XML 1.0 forbids


def test_junit_counts_match_the_cards(tmp_path: Path) -> None:
    card = mixed_card()
    path = tmp_path / "junit.xml"
    junit.write([("alice", card), ("bob", make_card([check("t", "softmax", "passed", 1, 1)]))], path)
    root = parse_junit(path)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["alice", "bob"]
    alice = suites[0]
    statuses = [c.status for c in card.checks]
    assert alice.get("tests") == str(len(card.checks))
    assert alice.get("failures") == str(statuses.count("failed"))
    assert alice.get("errors") == str(statuses.count("error") + statuses.count("timeout"))
    assert alice.get("skipped") == str(statuses.count("skipped"))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "1", "2")
    assert root.get("skipped") is None  # junit-10.xsd: not on <testsuites>; each suite says its own
    props = {p.get("name"): p.get("value") for p in alice.findall("properties/property")}
    assert (props["score"], props["max_score"]) == ("2.5", "8.5")
    cases = alice.findall("testcase")
    assert [c.get("name") for c in cases] == [c.id for c in card.checks]
    assert cases[0].get("classname") == "attention.softmax" and list(cases[0]) == []
    assert cases[1].find("failure").get("message") == "rows sum to 2, not 1"
    assert cases[2].find("error").get("type") == "timeout"
    assert cases[4].find("error").get("type") == "error"
    assert cases[3].find("skipped").get("message") == "no CUDA on this machine"


def test_junit_survives_hostile_messages(tmp_path: Path) -> None:
    card = make_card([check("t[\x1b]", "softmax", "failed", 0, 1, message=HOSTILE)])
    path = tmp_path / "junit.xml"
    junit.write([("eve\x00<&>", card)], path)
    root = parse_junit(path)
    suite = root.find("testsuite")
    assert suite.get("name") == "eve<&>"
    failure = suite.find("testcase/failure")
    assert failure.get("message") == HOSTILE_CLEAN
    assert failure.text == HOSTILE_CLEAN
    assert suite.find("testcase").get("name") == "t[]"


def test_junit_marks_a_grader_error_card_as_an_error(tmp_path: Path) -> None:
    card = make_card([check("t", "softmax", "error", 0, 1, message="not graded: the grader itself failed")],
                     grader_error="RuntimeError: boom")
    path = tmp_path / "junit.xml"
    junit.write([("alice", card)], path)
    suite = parse_junit(path).find("testsuite")
    assert suite.get("errors") == "2" and suite.get("tests") == "2"
    error = suite.find("testcase[@name='grader_error']/error")
    assert error.get("type") == "grader_error" and "grader itself failed" in error.get("message")
    assert "RuntimeError: boom" in error.get("message")


def test_junitparser_reads_the_report(tmp_path: Path) -> None:
    from junitparser import Error, Failure, JUnitXml, Skipped

    card = mixed_card()
    path = tmp_path / "junit.xml"
    junit.write([("alice", card)], path)
    report = JUnitXml.fromfile(str(path))
    (suite,) = list(report)
    assert (suite.name, suite.tests, suite.failures, suite.errors, suite.skipped) == ("alice", 7, 1, 2, 2)
    kinds = {case.name: [type(r) for r in case.result] for case in suite}
    expected = {"passed": [], "failed": [Failure], "error": [Error], "timeout": [Error], "skipped": [Skipped]}
    assert kinds == {c.id: expected[c.status] for c in card.checks}


# ---------------------------------------------------------------- gradescope

def gradescope_schema() -> dict:
    schema = json.loads((DATA / "gradescope_results.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def test_gradescope_schema_rejects_what_gradescope_does_not_document() -> None:
    schema = gradescope_schema()
    for bad in ({"tests": [{"name": "no score anywhere"}]}, {"score": 1, "tests": [{"score": 1, "status": "skipped"}]},
                {"score": 1, "visibility": "after_publish"}, {"score": 1, "max_score": 2}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


@pytest.mark.parametrize("card", [mixed_card(), make_card([check("t", "softmax", "error", 0, 1)], grader_error="x")])
def test_gradescope_results_validate_against_the_documented_format(tmp_path: Path, card: Scorecard) -> None:
    path = tmp_path / "results.json"
    gradescope.write(card, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, gradescope_schema())
    assert data == gradescope.results(card)


def test_gradescope_totals_equal_the_card_with_skipped_checks_dropped_and_kept() -> None:
    card = mixed_card()
    data = gradescope.results(card)
    assert data["score"] == card.score
    assert sum(t["score"] for t in data["tests"]) == pytest.approx(card.score)
    assert sum(t["max_score"] for t in data["tests"]) == pytest.approx(card.max_score)


def test_gradescope_status_visibility_names_and_numbers() -> None:
    card = mixed_card()
    tests = gradescope.results(card)["tests"]
    assert [t["status"] for t in tests] == ["passed" if c.status == "passed" else "failed" for c in card.checks]
    assert [t["visibility"] for t in tests] == [
        {"visible": "visible", "hidden": "after_published"}[c.visibility] for c in card.checks]
    assert [t["number"] for t in tests] == ["1.1", "1.2", "1.3", "1.4", "2.1", "2.2", "2.3"]
    assert tests[1]["name"] == "softmax: test_rows_sum_to_one" and tests[1]["output"] == "rows sum to 2, not 1"
    assert tests[3]["output"].startswith("Skipped, not graded:") and tests[3]["max_score"] == 0
    assert tests[5]["max_score"] == 1 and tests[5]["score"] == 0


def test_gradescope_top_level_output_and_stdout() -> None:
    data = gradescope.results(mixed_card())
    assert data["output"].startswith("attention: 2.5 / 8.5 points.")
    assert "hello from the student" not in data["output"]  # printed while hidden checks ran
    assert data["output"].endswith(gradescope.PRINTED_NOT_SHOWN)
    assert data["stdout_visibility"] == "hidden" and "visibility" not in data
    visible_only = make_card([check("t", "softmax", "passed", 1, 1)], output="hello from the student\n")
    assert gradescope.results(visible_only)["output"].endswith("What your code printed:\nhello from the student\n")


def test_gradescope_grader_error_gives_no_grade() -> None:
    card = make_card([check("t", "softmax", "passed", 1, 1)], grader_error="RuntimeError: boom")
    data = gradescope.results(card)
    assert data["score"] == 0
    assert all(t["score"] == 0 and t["status"] == "failed" for t in data["tests"])
    assert "grader itself failed" in data["output"] and "no grade was given" in data["output"]
    assert "RuntimeError: boom" in data["output"]  # no hidden check: the detail cannot quote one
    hidden = make_card([check("t", "softmax", "error", 0, 1, "hidden")], grader_error="ValueError: input [7, 7]")
    assert "[7, 7]" not in json.dumps(gradescope.results(hidden))


def test_gradebook_cells_never_start_a_spreadsheet_formula(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.csv"
    gradebook_csv.write([Row('=HYPERLINK("http://x")', "error", "=cmd.py", message="@SUM(1)")], ["softmax"], path)
    row = next(csv.DictReader(path.open(newline="", encoding="utf-8")))
    assert row["student"] == "'=HYPERLINK(\"http://x\")"
    assert row["file"] == "'=cmd.py" and row["message"] == "'@SUM(1)"


# ---------------------------------------------------------------- gradescope: what a student sees

SECRET = "SECRET-INPUT-31337"  # stands for a hidden check's inputs, wherever they could surface


def hostile_card() -> Scorecard:
    """As a submission that prints its arguments in every function leaves it: the printed output and
    the hidden checks' messages quote the hidden inputs; a hidden check's diagnosis names them too."""
    from grader.scorecard import Diagnosis, ExerciseDiagnosis

    checks = [
        check("test_rows_sum_to_one", "softmax", "failed", 0, 2, message="rows sum to 2 for x=[1, 2]"),
        check("test_matches_reference_on_random_shapes", "softmax", "failed", 0, 1, "hidden",
              f"expected softmax({SECRET}) = ..."),
        check("test_gradients_match_reference", "softmax", "error", 0, 1, "after_due_date", f"raised on {SECRET}"),
        check("test_large_inputs", "softmax", "skipped", 0, 0, "after_published", f"skipped for {SECRET}"),
    ]
    diagnosed = CheckResult("test_shape_kept", "softmax", "failed", 0, 1, f"shape of {SECRET}", "hidden",
                            diagnosis=Diagnosis("softmax_dim0", f"dim 0 on {SECRET}"))
    card = make_card([*checks, diagnosed], output=f"called with ({SECRET},)\n" * 3)
    from dataclasses import replace

    named = ExerciseDiagnosis("softmax", "softmax_dim0", f"dim 0 on {SECRET}", f"seen on {SECRET}",
                              ("test_shape_kept",))
    return replace(card, diagnoses=(named,))


@pytest.mark.parametrize("mapping", [None, {"hidden": "visible"}, {"hidden": "hidden", "after_due_date": "visible"}])
def test_gradescope_never_shows_a_hidden_input_whatever_the_visibility(mapping: dict | None) -> None:
    data = gradescope.results(hostile_card(), mapping)
    assert SECRET not in json.dumps(data, ensure_ascii=False)
    jsonschema.validate(data, gradescope_schema())
    masked = [t for t in data["tests"] if t["name"].split(": ", 1)[1].startswith("hidden check")]
    assert len(masked) == 4 and all(views.HIDDEN_MESSAGE in t["output"] for t in masked)
    assert data["tests"][0]["output"] == "rows sum to 2 for x=[1, 2]"  # a visible check keeps its message
    assert gradescope.PRINTED_NOT_SHOWN in data["output"]


@pytest.mark.parametrize("ours, theirs", [(o, t) for o in gradescope.VISIBILITY for t in gradescope.GRADESCOPE_VISIBILITIES])
def test_gradescope_visibility_setting_maps_each_of_ours_to_the_one_named(ours: str, theirs: str) -> None:
    mapping = gradescope.visibility_map({ours: theirs})
    assert mapping[ours] == theirs
    assert {k: v for k, v in mapping.items() if k != ours} == {k: v for k, v in gradescope.VISIBILITY.items()
                                                               if k != ours}
    card = make_card([check("a", "softmax", "passed", 1, 1, v) for v in gradescope.VISIBILITY])
    tests = gradescope.results(card, {ours: theirs})["tests"]
    assert [t["visibility"] for t in tests] == [mapping[v] for v in gradescope.VISIBILITY]


def test_gradescope_default_mapping_is_the_documented_one() -> None:
    assert gradescope.visibility_map() == {"visible": "visible", "hidden": "after_published",
                                           "after_due_date": "after_due_date", "after_published": "after_published"}
    for bad in ({"hidden": "after_publish"}, {"secret": "hidden"}):
        with pytest.raises(ValueError, match="gradescope_visibility"):
            gradescope.visibility_map(bad)


def course_config(tmp_path: Path, extra: str) -> Path:
    """The course's assignments.yaml with ``extra`` under ``defaults:``, references still resolving."""
    text = (ROOT / "assignments.yaml").read_text().replace("defaults:\n", f"defaults:\n{extra}", 1)
    path = ROOT / "tests" / "data" / f".tmp-{tmp_path.name}.yaml"  # beside the course: its relative paths hold
    path.write_text(text)
    return path


def test_gradescope_visibility_setting_in_assignments_yaml_is_validated_and_used(tmp_path: Path) -> None:
    good = course_config(tmp_path, "  gradescope_visibility: {hidden: visible, after_due_date: hidden}\n")
    try:
        assignment = load_config(good).assignment("attention")
        assert dict(assignment.gradescope_visibility) == {"hidden": "visible", "after_due_date": "hidden"}
        card_path = tmp_path / "alice.json"
        card_path.write_text(mixed_card().to_json())
        out = tmp_path / "results.json"
        assert cli.main(["export", "gradescope", str(card_path), "--out", str(out), "--config", str(good)]) == 0
        tests = json.loads(out.read_text())["tests"]
        assert {t["visibility"] for t in tests} == {"visible"}  # hidden -> visible: the total shows at once
        for bad, fragment in (("{hidden: after_publish}", "after_publish"), ("{secret: hidden}", "secret")):
            good.write_text((ROOT / "assignments.yaml").read_text().replace(
                "defaults:\n", f"defaults:\n  gradescope_visibility: {bad}\n", 1))
            with pytest.raises(ConfigError, match=fragment):
                load_config(good)
    finally:
        good.unlink()


def test_gradescope_export_refuses_a_config_without_the_cards_assignment(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    card_path = tmp_path / "alice.json"
    card_path.write_text(make_card([check("t", "softmax", "passed", 1, 1)], assignment="other").to_json())
    out = tmp_path / "results.json"
    assert cli.main(["export", "gradescope", str(card_path), "--out", str(out),
                     "--config", str(ROOT / "assignments.yaml")]) == 2
    assert "has no assignment 'other'" in capsys.readouterr().err and not out.exists()
    assert cli.main(["export", "gradescope", str(card_path), "--out", str(out)]) == 0  # the default: built-in map


# ---------------------------------------------------------------- canvas from a grade-all folder

def batch_folder(tmp_path: Path) -> Path:
    """A grade-all output folder as batch writes it: a record per student, error and missing included."""
    layout = batch.Layout(tmp_path / "graded")
    layout.prepare()
    for row in [*gradebook_rows(), Row("erin", "graded", "erin/attention.py", SHA, 0.0, 132.5,
                                       (("softmax", 0.0),), message="no check passed")]:
        batch.write_record(layout, row, "")
    layout.manifest.write_text(json.dumps({"assignment": "attention"}))
    return layout.root


def test_canvas_from_a_grade_all_folder_treats_error_students_as_the_gradebook_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = batch_folder(tmp_path)
    roster = tmp_path / "roster.csv"
    roster.write_text('student,name,canvas_id\n"o""brien, jr",Pat,101\nbob,,102\ncarol,Carol,103\nerin,Erin,104\n')
    out = tmp_path / "canvas.csv"
    assert cli.main(["export", "canvas", str(folder), "--roster", str(roster), "--out", str(out)]) == 0
    lines = read_rows(out)
    assert lines[0][-1] == "attention" and lines[1][-1] == "136.5"  # title from batch.json, points from the rows
    assert lines[2:] == [["Pat", "101", "", "", "", "132.5"], ["bob", "102", "", "", "", ""],
                         ["Erin", "104", "", "", "", "0"]]  # carol: an error, no line (Canvas keeps her grade)
    err = capsys.readouterr().err
    assert err == "grader: canvas: carol left out (error: grader error: worker died); their Canvas grade is unchanged\n"


def test_a_folder_is_only_for_canvas(tmp_path: Path) -> None:
    folder = batch_folder(tmp_path)
    with pytest.raises(exports.ExportError, match="only canvas and moodle take a grade-all output folder"):
        exports.export("junit", [folder], tmp_path / "j.xml")
    with pytest.raises(exports.ExportError, match="not a grade-all output folder"):
        exports.export("canvas", [tmp_path / "graded" / "cards"], tmp_path / "c.csv", roster=tmp_path / "r.csv",
                       grade_all=read_folder)


@pytest.mark.parametrize("manifest", [None, "", "not json", "[]", '{"assignment": 1}', '{"other": "x"}',
                                      '{"assignment": "attention_modules"}'])
def test_the_batch_reader_gives_every_record_and_the_assignment_else_the_folders_name(tmp_path: Path,
                                                                                   manifest: str | None) -> None:
    """``read_folder`` (what the CLI hands export): every record's row in student order, and batch.json's
    assignment as text when it has one, else the folder's name, never a crash."""
    folder = batch_folder(tmp_path)
    (folder / "batch.json").unlink()
    if manifest is not None:
        (folder / "batch.json").write_text(manifest)
    rows, assignment = read_folder(folder)
    assert [r.student for r in rows] == sorted(r.student for r in rows) and len(rows) == 4
    assert {r.status for r in rows} == {"graded", "missing", "error"}
    expected = json.loads(manifest)["assignment"] if manifest and manifest.startswith("{\"assignment") else "graded"
    assert assignment == str(expected)


@pytest.mark.parametrize("broken", ["", "{", "[]", '{"row": {}}', '{"key": "k"}', '{"row": 3, "key": ""}'])
def test_one_unreadable_record_refuses_the_folder_by_name(tmp_path: Path, broken: str) -> None:
    folder = batch_folder(tmp_path)
    (folder / "records" / "bob.json").write_text(broken)
    with pytest.raises(exports.ExportError, match=r"bob\.json: unreadable record; run grade-all there again"):
        exports.export("canvas", [folder], tmp_path / "c.csv", roster=tmp_path / "r.csv", grade_all=read_folder)
    assert not (tmp_path / "c.csv").exists()


@pytest.mark.parametrize("fmt", ["canvas", "moodle"])
def test_a_folder_without_the_callers_reader_is_refused(tmp_path: Path, fmt: str) -> None:
    """Export imports nothing of the batch: a caller that gives no grade-all reader gets a refusal, never a
    folder read some other way (fail closed)."""
    folder = batch_folder(tmp_path)
    with pytest.raises(exports.ExportError, match="reads no grade-all output folder"):
        exports.export(fmt, [folder], tmp_path / "out.csv", roster=tmp_path / "r.csv", worksheet=tmp_path / "w.csv")
    assert not (tmp_path / "out.csv").exists()


# ---------------------------------------------------------------- junit against the Jenkins xunit plugin's XSD

def junit_xsd():  # type: ignore[no-untyped-def]
    from lxml import etree

    return etree.XMLSchema(etree.parse(str(DATA / "junit-10.xsd")))


@pytest.mark.parametrize("cards", [
    [("alice", mixed_card()), ("bob", make_card([check("t", "softmax", "passed", 1, 1)]))],
    [("eve\x00<&>", make_card([check("t[\x1b]", "softmax", "failed", 0, 1, message=HOSTILE)]))],
    [("carol", make_card([check("t", "softmax", "error", 0, 1)], grader_error="RuntimeError: boom"))],
])
def test_junit_validates_against_the_xunit_plugins_junit_10_xsd(tmp_path: Path, cards: list) -> None:
    from lxml import etree

    path = tmp_path / "junit.xml"
    junit.write(cards, path)
    schema = junit_xsd()
    document = etree.parse(str(path))
    assert schema.validate(document), schema.error_log
    assert "skipped" not in document.getroot().attrib  # the one attribute junit-10.xsd refused


def test_the_xsd_refuses_what_it_should() -> None:
    from lxml import etree

    schema = junit_xsd()
    bad = etree.fromstring(b'<testsuites skipped="1"><testsuite name="a" tests="0" failures="0" errors="0"/>'
                           b"</testsuites>")
    assert not schema.validate(bad)


# ---------------------------------------------------------------- pytest-json-report

REAL_TESTS = """
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("fixture")

def test_passes(json_metadata):
    json_metadata["points"] = 1

def test_fails():
    assert 1 == 2, "rows sum to 2"

@pytest.mark.skip(reason="no CUDA")
def test_skipped():
    pass

def test_errors(broken):
    pass
"""


@pytest.fixture(scope="module")
def real_report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What the installed pytest-json-report plugin itself writes, with its defaults (collectors and
    tracebacks kept), for a passed, a failed, a skipped test and one whose fixture raised (an error)."""
    where = tmp_path_factory.mktemp("real")
    (where / "test_real.py").write_text(REAL_TESTS)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "pytest_jsonreport", "-p", "no:cacheprovider",
                    "-p", "no:xdist", "-o", "addopts=", "--json-report", "--json-report-file", str(where / "report.json"),
                    "test_real.py"], cwd=where, capture_output=True, text=True, timeout=120)
    return json.loads((where / "report.json").read_text())


def shape(value: Any) -> Any:
    """A JSON value's structure: a dict's keys with their values' shapes, a list's distinct item shapes,
    else the type's name (so ``0.25`` and ``1e-4`` agree, ``"x"`` and ``1`` do not)."""
    if isinstance(value, dict):
        return tuple(sorted((key, shape(v)) for key, v in value.items()))
    if isinstance(value, list):
        return frozenset(shape(v) for v in value)
    return type(value).__name__


def test_pytest_json_has_the_plugins_keys_at_every_level(real_report: dict) -> None:
    ours = json.loads(json.dumps(pytest_json.report(mixed_card())))
    assert list(ours) == list(real_report) == list(pytest_json.KEYS)
    real_tests = {t["nodeid"].split("::")[1]: t for t in real_report["tests"]}
    by_outcome = {t["outcome"]: t for t in ours["tests"]}
    assert set(by_outcome) == {"passed", "failed", "skipped", "error"}
    stages = {}
    for name, outcome in (("test_passes", "passed"), ("test_fails", "failed"), ("test_skipped", "skipped"),
                          ("test_errors", "error")):
        real, mine = real_tests[name], by_outcome[outcome]
        assert real["outcome"] == outcome
        # the same keys and value types in the test and in each of its stages, crash and traceback included
        assert shape({k: v for k, v in mine.items() if k != "metadata"}) == \
            shape({k: v for k, v in real.items() if k != "metadata"}), name
        stages[outcome] = {when: real[when]["outcome"] for when in ("setup", "call", "teardown") if when in real}
        assert {when: mine[when]["outcome"] for when in ("setup", "call", "teardown") if when in mine} == stages[outcome]
    assert stages == {"passed": {"setup": "passed", "call": "passed", "teardown": "passed"},
                      "failed": {"setup": "passed", "call": "failed", "teardown": "passed"},
                      "skipped": {"setup": "skipped", "teardown": "passed"},
                      "error": {"setup": "failed", "teardown": "passed"}}  # pytest's error: a failed setup, no call
    for outcome, when in (("failed", "call"), ("error", "setup")):
        assert {"crash", "traceback", "longrepr"} <= set(by_outcome[outcome][when]), outcome
    assert set(real_report["summary"]) <= {"passed", "failed", "skipped", "error", "total", "collected"}
    assert set(ours["summary"]) == {"passed", "failed", "skipped", "error", "total", "collected"}
    assert shape(ours["summary"]) == shape(real_report["summary"])
    assert type(ours["created"]) is type(real_report["created"]) is float
    assert isinstance(ours["exitcode"], int) and isinstance(ours["environment"], dict)


def collector_tree(report: dict) -> tuple[list[str], dict[str, list[str]]]:
    """The session's modules, and each module's items' types, from a report's ``collectors``."""
    (session,) = [c for c in report["collectors"] if c["nodeid"] == ""]
    modules = {c["nodeid"]: [r["type"] for r in c["result"]] for c in report["collectors"] if c["nodeid"]}
    return [r["type"] for r in session["result"]], modules


def test_pytest_json_collectors_have_the_plugins_shape(real_report: dict) -> None:
    """One collector for the session, listing the modules (an exercise, for us), and one per module
    listing its tests as ``Function`` items with their line; each test collected exactly once."""
    for card in (mixed_card(), make_card([check("t", "softmax", "passed", 1, 1)], grader_error="boom")):
        ours = json.loads(json.dumps(pytest_json.report(card)))
        assert shape(ours["collectors"]) == shape(real_report["collectors"])
        for report in (ours, real_report):
            session_types, modules = collector_tree(report)
            assert session_types == ["Module"] * len(modules) and report["collectors"][0]["nodeid"] == ""
            assert all(types and set(types) == {"Function"} for types in modules.values())
            assert {c["outcome"] for c in report["collectors"]} == {"passed"}
            collected = [r["nodeid"] for c in report["collectors"][1:] for r in c["result"]]
            assert collected == [t["nodeid"] for t in report["tests"]]
    _, modules = collector_tree(json.loads(json.dumps(pytest_json.report(mixed_card()))))
    assert list(modules) == ["attention/softmax", "attention/bag_of_past"]


def test_pytest_json_one_test_per_check_with_outcomes_mapped() -> None:
    card = mixed_card()
    data = json.loads(json.dumps(pytest_json.report(card, view="instructor")))  # parses as JSON
    assert [t["nodeid"] for t in data["tests"]] == [f"attention/{c.exercise}::{c.id}" for c in card.checks]
    mapped = {"passed": "passed", "failed": "failed", "error": "error", "timeout": "error", "skipped": "skipped"}
    assert [t["outcome"] for t in data["tests"]] == [mapped[c.status] for c in card.checks]
    assert data["summary"] == {"passed": 2, "failed": 1, "error": 2, "skipped": 2, "total": 7, "collected": 7}
    assert data["exitcode"] == 1 and data["duration"] == 3.5 and data["root"] == "alice/attention.py"
    assert data["created"] == 1735689600.0  # graded_at 2025-01-01T00:00:00Z
    failed = data["tests"][1]
    assert failed["call"]["longrepr"] == "rows sum to 2, not 1" and failed["call"]["crash"]["message"] == failed[
        "call"]["longrepr"]
    skipped = data["tests"][3]
    assert "call" not in skipped and skipped["setup"]["longrepr"] == "Skipped: no CUDA on this machine"
    for errored in (data["tests"][2], data["tests"][4]):  # timeout and error: a failed setup, never called
        assert "call" not in errored and errored["setup"]["outcome"] == "failed"
        assert errored["setup"]["crash"]["message"] == errored["setup"]["longrepr"]
        assert errored["setup"]["traceback"] == [errored["setup"]["crash"]]
    assert data["tests"][4]["setup"]["longrepr"] == "ZeroDivisionError"
    assert [t["metadata"]["score"] for t in data["tests"]] == [c.score for c in card.checks]
    assert data["tests"][0]["call"]["stdout"] == "hello from the student\n"  # instructor: the printed output
    assert pytest_json.report(make_card([check("t", "softmax", "skipped", 0, 0)]))["exitcode"] == 0
    errored = pytest_json.report(make_card([check("t", "softmax", "passed", 1, 1)], grader_error="boom"))
    assert errored["exitcode"] == 3 and errored["tests"][-1]["nodeid"] == "attention::grader_error"
    assert "call" not in errored["tests"][-1] and errored["tests"][-1]["setup"]["outcome"] == "failed"
    # the printed output of a card whose first check errored goes where pytest keeps it: that setup stage
    first_errs = pytest_json.report(make_card([check("t", "softmax", "error", 0, 1, message="boom")], output="hi\n"),
                                    view="instructor")["tests"][0]
    assert "call" not in first_errs and first_errs["setup"]["stdout"] == "hi\n"


def test_pytest_json_student_view_hides_hidden_checks_details() -> None:
    text = json.dumps(pytest_json.report(hostile_card()))
    assert SECRET not in text and "called with" not in text
    data = json.loads(text)
    hidden = [t for t in data["tests"] if t["metadata"]["visibility"] != "visible"]
    assert len(hidden) == 4 and all("hidden check" in t["nodeid"] for t in hidden)
    assert all(views.HIDDEN_MESSAGE in t.get("call", t["setup"]).get("longrepr", "") for t in hidden)
    assert data["environment"]["grader_view"] == "student"
    assert SECRET in json.dumps(pytest_json.report(hostile_card(), view="instructor"))


def test_pytest_json_export_and_batch_report(tmp_path: Path) -> None:
    from grader.batch import intake, reports, run

    card_path = tmp_path / "alice.json"
    card_path.write_text(mixed_card().to_json())
    assert cli.main(["export", "pytest-json", str(card_path), "--out", str(tmp_path / "reports")]) == 0
    written = json.loads((tmp_path / "reports" / "alice.report.json").read_text())
    assert written == json.loads(json.dumps(pytest_json.report(mixed_card())))
    layout = batch.Layout(tmp_path / "out")
    layout.prepare()
    options = batch.BatchOptions(tmp_path, "attention", layout.root, ROOT / "assignments.yaml", report="pytest-json")
    entry = intake.Handin("ada", tmp_path / "attention.py", "ada/attention.py", "")
    row = run.result_row("card", ("ada", mixed_card().to_json(), False), entry, "", layout, options)
    report = layout.reports / "ada.report.json"
    assert row.status == "graded" and json.loads(report.read_text())["summary"]["total"] == 7
    report.unlink()
    reports.keep_report(layout, row, options)  # unchanged student: written again from the card
    assert report.is_file()


def test_grade_report_pytest_json_writes_it_beside_the_card(tmp_path: Path) -> None:
    out = tmp_path / "stub.json"
    code = cli.main(["grade", str(ROOT / "exercises/attention.py"), "--assignment", "attention", "--out", str(out),
                     "--format", "none", "--report", "pytest-json"])
    assert code == 0
    card = json.loads(out.read_text())
    report = json.loads((tmp_path / "stub.report.json").read_text())
    assert len(report["tests"]) == len(card["checks"]) and report["summary"]["total"] == len(card["checks"])
    assert {t["outcome"] for t in report["tests"]} <= {"failed", "skipped"}
