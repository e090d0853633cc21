"""Deadlines and the late policy (grader.deadlines): the pure rules, the config, the extensions file,
the CI's submission time, the gradebook columns, and one grade-all of a tiny class."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from grader import deadlines
from grader.ci import context
from grader.config import ConfigError, load_config
from grader.deadlines import DeadlineError, Extension, Penalty, Policy, apply, parse_time
from grader.export import gradebook_csv, text
from grader.export.gradebook import Row
from tests.conftest import ROOT

UTC = timezone.utc
DUE = datetime(2026, 3, 1, 23, 59, tzinfo=UTC)


def policy(**kw) -> Policy:
    values = {"due": DUE, "timezone": "UTC", "grace_minutes": 10.0, "penalty": Penalty("hour", 5, 50),
              "cutoff": DUE + timedelta(days=7)}
    return Policy(**{**values, **kw})


# ------------------------------------------------------------------ the pure policy


def test_on_time_and_exactly_at_the_due_time() -> None:
    for when in (DUE - timedelta(days=1), DUE):
        r = apply(policy(), when, "a", {}, 80)
        assert (r.status, r.penalty_percent, r.penalty_points, r.final) == ("on_time", 0, 0, 80)
        assert "on time" in r.rule_text


def test_within_grace_costs_nothing() -> None:
    r = apply(policy(), DUE + timedelta(minutes=10), "a", {}, 80)
    assert (r.status, r.final) == ("grace", 80) and "10 min grace" in r.rule_text


def test_one_hour_late_and_a_started_hour_counts() -> None:
    r = apply(policy(grace_minutes=0), DUE + timedelta(hours=1), "a", {}, 80)
    assert (r.status, r.penalty_percent, r.penalty_points, r.final) == ("late", 5, 4, 76)
    r = apply(policy(grace_minutes=0), DUE + timedelta(hours=1, seconds=1), "a", {}, 80)
    assert r.penalty_percent == 10  # a second into the second hour: two started hours
    # lateness counts from the due time, not from the end of the grace
    r = apply(policy(grace_minutes=30), DUE + timedelta(minutes=31), "a", {}, 80)
    assert r.penalty_percent == 5 and r.lateness == timedelta(minutes=31) and r.lateness_hours == 0.52


def test_three_days_late_is_capped() -> None:
    daily = policy(penalty=Penalty("day", 20, 50))
    r = apply(daily, DUE + timedelta(days=2, hours=1), "a", {}, 80)
    assert (r.penalty_percent, r.final) == (50, 40) and "capped" in r.rule_text  # 3 started days: 60% -> 50%
    r = apply(daily, DUE + timedelta(days=1), "a", {}, 80)
    assert (r.penalty_percent, r.final) == (20, 64)


def test_after_the_cutoff_scores_zero_with_the_reason() -> None:
    r = apply(policy(), DUE + timedelta(days=7, seconds=1), "a", {}, 80)
    assert (r.status, r.final, r.penalty_percent, r.penalty_points) == ("cutoff", 0, 100, 80)
    assert "after the cutoff" in r.rule_text and "scored 0" in r.rule_text
    assert apply(policy(), DUE + timedelta(days=7), "a", {}, 80).status == "late"  # at the cutoff: not after


def test_an_extension_moves_the_due_time_and_the_cutoff() -> None:
    ext = {"b": Extension("b", extra_days=2, reason="illness"),
           "c": Extension("c", new_due=DUE + timedelta(hours=5), reason="")}
    r = apply(policy(), DUE + timedelta(days=1), "b", ext, 80)
    assert (r.status, r.final) == ("on_time", 80) and "extension" in r.rule_text and "illness" in r.rule_text
    r = apply(policy(grace_minutes=0), DUE + timedelta(hours=6), "c", ext, 80)
    assert (r.status, r.penalty_percent, r.lateness) == ("late", 5, timedelta(hours=1))
    assert apply(policy(), DUE + timedelta(days=8), "b", ext, 80).status == "late"  # cutoff moved 2 days too
    assert apply(policy(), DUE + timedelta(days=8), "a", ext, 80).status == "cutoff"


def berlin(**kw) -> Policy:
    """Due the Saturday before the spring-forward night (2026-03-29 02:00 CET -> 03:00 CEST), cutoff 5 days on."""
    values = {"due": parse_time("2026-03-28T23:59", "Europe/Berlin"), "timezone": "Europe/Berlin",
              "grace_minutes": 0.0, "penalty": Penalty("hour", 5, 40),
              "cutoff": parse_time("2026-04-02T23:59", "Europe/Berlin")}
    return Policy(**{**values, **kw})


@pytest.mark.parametrize("due", ["2026-03-28T23:59", "2026-03-28T23:59:00+01:00", "2026-03-28T22:59:00Z"])
def test_a_day_of_extension_moves_due_and_cutoff_by_a_calendar_day_across_dst(due: str) -> None:
    """However the due time was written, a 1-day extension is the next day at 23:59 on the course's clock, and
    the cutoff moves by the same calendar day (it used to move 23 real hours: 2026-04-03T22:59+02:00)."""
    p = berlin(due=parse_time(due, "Europe/Berlin"))
    ext = {"ann": Extension("ann", extra_days=1, reason="flu")}
    moved = ext["ann"].move(p.due, p.due, p.timezone).astimezone(deadlines.zone("Europe/Berlin"))
    assert moved.isoformat() == "2026-03-29T23:59:00+02:00"
    cutoff = ext["ann"].move(p.cutoff, p.due, p.timezone).astimezone(deadlines.zone("Europe/Berlin"))
    assert cutoff.isoformat() == "2026-04-03T23:59:00+02:00"
    r = apply(p, "2026-04-03T23:30:00+02:00", "ann", ext, 80)  # before her cutoff: late, capped, not zero
    assert r.status == "late" and "extension to 2026-03-29T23:59:00+02:00: flu" in r.rule_text
    r = apply(p, "2026-04-04T00:00:00+02:00", "ann", ext, 80)
    assert r.status == "cutoff" and "after the cutoff 2026-04-03T23:59:00+02:00" in r.rule_text
    assert apply(p, "2026-03-29T23:59:00+02:00", "ann", ext, 80).status == "on_time"


def test_an_extension_in_hours_moves_due_and_cutoff_by_real_hours() -> None:
    p = berlin()
    ext = {"ann": Extension("ann", extra_hours=24)}
    assert ext["ann"].due(p.due, p.timezone).isoformat() == "2026-03-29T22:59:00+00:00"  # 2026-03-30 00:59 CEST
    assert apply(p, "2026-03-30T00:59:00+02:00", "ann", ext, 80).status == "on_time"
    assert apply(p, "2026-03-30T01:00:00+02:00", "ann", ext, 80).status == "late"
    cutoff = ext["ann"].move(p.cutoff, p.due, p.timezone)
    assert cutoff - p.cutoff == timedelta(hours=24)


def test_a_new_due_time_keeps_the_cutoffs_distance_on_the_wall_clock() -> None:
    p = berlin()
    ext = {"ann": Extension("ann", new_due=parse_time("2026-03-30T12:00", "Europe/Berlin"))}
    cutoff = ext["ann"].move(p.cutoff, p.due, p.timezone).astimezone(deadlines.zone("Europe/Berlin"))
    assert cutoff.isoformat() == "2026-04-04T12:00:00+02:00"  # the class's: 5 days and 0 min after 23:59


def test_lateness_is_shown_to_the_second_where_a_second_decides() -> None:
    """carol: 00:14:01, one second after a 14-minute grace: late, and the line says so to the second."""
    p = berlin(due=parse_time("2026-03-02T00:00", "Europe/Berlin"), grace_minutes=14,
               cutoff=parse_time("2026-03-09T00:00", "Europe/Berlin"))
    r = apply(p, "2026-03-02T00:14:01", "carol", {}, 80)
    assert r.status == "late"
    assert r.rule_text.startswith("submitted 2026-03-02T00:14:01+01:00: 14min 1s late = 1 started hour x 5% = -5%")
    assert "16min" not in r.rule_text and "T00:14+01:00" not in r.rule_text
    r = apply(p, "2026-03-02T00:14:00", "carol", {}, 80)
    assert r.status == "grace" and "submitted 2026-03-02T00:14:00+01:00: 14min late, within the 14 min grace" \
        in r.rule_text
    assert p.text().startswith("due 2026-03-02T00:00:00+01:00; 14 min grace")  # one precision everywhere


def test_a_capped_penalty_shows_the_uncapped_percent_first() -> None:
    r = apply(berlin(), "2026-03-30T00:30:00+02:00", "dan", {}, 80)  # 23h31min after 23:59 CET
    assert "24 started hours x 5% = 120%, capped at 40% -> -40%" in r.rule_text and r.penalty_percent == 40
    assert "(capped)" not in r.rule_text
    assert apply(berlin(), "2026-03-29T02:30:00+01:00", "dan", {}, 80).rule_text.endswith("3 started hours x 5% = -15%")


def test_a_time_after_the_cutoff_never_reads_as_the_cutoff() -> None:
    """eve: 23:59:30 is after a 23:59 cutoff; the line shows both to the second (to the microsecond if need be)."""
    r = apply(berlin(), "2026-04-02T23:59:30", "eve", {}, 80)
    assert r.status == "cutoff"
    assert "submitted 2026-04-02T23:59:30+02:00, after the cutoff 2026-04-02T23:59:00+02:00" in r.rule_text
    r = apply(berlin(), parse_time("2026-04-02T23:59:00.250000", "Europe/Berlin"), "eve", {}, 80)
    assert r.status == "cutoff"
    assert "submitted 2026-04-02T23:59:00.250000+02:00, after the cutoff 2026-04-02T23:59:00.000000+02:00" \
        in r.rule_text


def test_unknown_time_is_graded_on_time_and_says_so() -> None:
    for when in (None, ""):
        r = apply(policy(), when, "a", {}, 80)
        assert (r.status, r.final, r.lateness, r.lateness_hours) == ("unknown", 80, None, None)
        assert "submission time unknown" in r.rule_text


def test_no_penalty_set_only_flags_late_work() -> None:
    r = apply(policy(penalty=None), DUE + timedelta(hours=3), "a", {}, 80)
    assert (r.status, r.final) == ("late", 80) and "no penalty" in r.rule_text


def test_times_without_offset_are_read_in_the_course_zone_never_the_machines() -> None:
    paris = policy(due=parse_time("2026-03-28T12:00", "Europe/Paris"), timezone="Europe/Paris",
                   grace_minutes=0, penalty=Penalty("hour", 1, 100), cutoff=None)
    assert paris.due.utcoffset() == timedelta(hours=1)  # CET
    # across the spring-forward night a day of wall time is 23 real hours
    r = apply(paris, "2026-03-29T12:00", "a", {}, 100)
    assert r.lateness == timedelta(hours=23) and r.penalty_percent == 23
    daily = Policy(paris.due, "Europe/Paris", penalty=Penalty("day", 10, 100))
    assert apply(daily, "2026-03-29T12:00", "a", {}, 100).penalty_percent == 10
    # an offset given wins over the zone
    assert apply(paris, "2026-03-28T12:00+01:00", "a", {}, 100).status == "on_time"
    assert apply(paris, "2026-03-28T12:00Z", "a", {}, 100).lateness == timedelta(hours=1)


def test_a_time_the_dst_gap_skips_is_refused_and_an_ambiguous_one_is_the_first() -> None:
    with pytest.raises(DeadlineError, match="does not exist in America/New_York"):
        parse_time("2026-03-08T02:30", "America/New_York")
    first = parse_time("2026-11-01T01:30", "America/New_York")
    assert first.utcoffset() == timedelta(hours=-4)  # EDT, the first 01:30
    with pytest.raises(DeadlineError, match="not an ISO 8601 time"):
        parse_time("yesterday", "UTC")
    with pytest.raises(DeadlineError, match="unknown time zone"):
        parse_time("2026-03-08T02:30", "Mars/Olympus")


# ------------------------------------------------------------------ config


def write_config(tmp_path: Path, deadline: dict | None, defaults: dict | None = None, **extra) -> Path:
    raw = {"schema_version": 1, "assignments": {"hw": {
        "file": "hw.py", "reference": "ref.py", "checks": "hw", "exercises": {"a": {"checks": {"test_x": 10}}},
        **({"deadline": deadline} if deadline is not None else {}), **extra}}}
    if defaults:
        raw["defaults"] = {"deadline": defaults}
    path = tmp_path / "assignments.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_config_builds_a_policy_from_defaults_and_the_assignment(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"due": "2026-03-01T23:59:00"},
                        {"timezone": "Europe/Paris", "grace_minutes": 15, "penalty": {"per": "day", "percent": 10}})
    p = load_config(path).assignment("hw").deadline
    assert p.due == datetime(2026, 3, 1, 22, 59, tzinfo=UTC)  # read in Europe/Paris (CET)
    assert (p.grace_minutes, p.penalty) == (15, Penalty("day", 10, 100))
    assert load_config(write_config(tmp_path, None)).assignment("hw").deadline is None


def test_config_reads_an_unquoted_yaml_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "assignments.yaml"
    path.write_text("schema_version: 1\nassignments:\n  hw:\n    file: hw.py\n    reference: ref.py\n"
                    "    checks: hw\n    exercises: {a: {checks: {test_x: 1}}}\n"
                    "    deadline: {due: 2026-03-01T23:59:00+01:00, timezone: UTC}\n")
    assert load_config(path).assignment("hw").deadline.due == datetime(2026, 3, 1, 22, 59, tzinfo=UTC)


@pytest.mark.parametrize("deadline, message", [
    ({"due": "2026-03-01T23:59"}, "assignments.hw.deadline.timezone: required"),
    ({"timezone": "UTC"}, "assignments.hw.deadline.due: required"),
    ({"due": "2026-03-01T23:59", "timezone": "Mars/Base"}, "deadline.timezone: unknown time zone 'Mars/Base'"),
    ({"due": "soon", "timezone": "UTC"}, "deadline.due: 'soon' is not an ISO 8601 time"),
    ({"due": "2026-03-08T02:30", "timezone": "America/New_York"}, "deadline.due: .* does not exist"),
    ({"due": "2026-03-01T23:59", "timezone": "UTC", "cutoff": "2026-02-01T00:00"}, "deadline.cutoff: .* before"),
    ({"due": "2026-03-01T23:59", "timezone": "UTC", "penalty": {"per": "week", "percent": 5}},
     "deadline.penalty.per: 'week' is not one of"),
    ({"due": "2026-03-01T23:59", "timezone": "UTC", "penalty": {"per": "day", "percent": 500}},
     "deadline.penalty.percent: 500 is greater than"),
    ({"due": "2026-03-01T23:59", "timezone": "UTC", "grace_minutes": -1}, "deadline.grace_minutes: -1 is less than"),
    ({"due": "2026-03-01T23:59", "timezone": "UTC", "typo": 1}, "deadline: Additional properties"),
])
def test_a_bad_deadline_is_one_clear_line(tmp_path: Path, deadline: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        load_config(write_config(tmp_path, deadline))
    assert "\n" not in str(err.value) and str(tmp_path) in str(err.value)


def test_config_extensions_path_is_relative_to_the_config(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"due": "2026-03-01T23:59", "timezone": "UTC"}, extensions="ext.csv")
    assert load_config(path).assignment("hw").extensions == tmp_path / "ext.csv"


# ------------------------------------------------------------------ files


def test_extensions_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ext.csv"
    path.write_text("student,new_due,extra_days,reason\nana,2026-03-03T12:00,,flu\nben,,1.5,\n")
    ext = deadlines.load_extensions(path, "Europe/Paris")
    assert ext["ana"].new_due == datetime(2026, 3, 3, 11, 0, tzinfo=UTC) and ext["ana"].reason == "flu"
    assert ext["ben"].due(DUE) == DUE + timedelta(days=1, hours=12)


def test_extensions_file_may_give_hours(tmp_path: Path) -> None:
    path = tmp_path / "ext.csv"
    path.write_text("student,new_due,extra_days,extra_hours,reason\nana,,,36,flight\nben,,2,,\n")
    ext = deadlines.load_extensions(path, "Europe/Paris")
    assert (ext["ana"].extra_hours, ext["ana"].extra_days, ext["ben"].extra_days) == (36, None, 2)
    path.write_text("student,extra_days,extra_hours\nana,1,36\n")
    with pytest.raises(DeadlineError, match=r"ext.csv:2: give exactly one of new_due and extra_days \(or extra_hours\)"):
        deadlines.load_extensions(path, "UTC")
    path.write_text("student,extra_hours\nana,-3\n")
    with pytest.raises(DeadlineError, match=r"ext.csv:2: extra_hours must be a number above 0, not '-3'"):
        deadlines.load_extensions(path, "UTC")


@pytest.mark.parametrize("body, message", [
    ("student,new_due,extra_days,reason\nana,2026-03-03T12:00,2,x\n", r"ext.csv:2: give exactly one of new_due"),
    ("student,new_due,extra_days,reason\nana,,,x\n", r"ext.csv:2: give exactly one of new_due"),
    ("student,new_due,extra_days,reason\nana,,-1,x\n", r"ext.csv:2: extra_days must be a number above 0"),
    ("student,new_due,extra_days,reason\nana,,two,x\n", r"ext.csv:2: extra_days must be a number above 0"),
    ("student,new_due,extra_days,reason\nana,,1,\nbob,tomorrow,,x\n", r"ext.csv:3: new_due: 'tomorrow' is not"),
    ("student,new_due,extra_days,reason\nana,,1,\nana,,2,\n", r"ext.csv:3: ana has a second extension"),
    ("student,new_due,extra_days,reason\n,,1,\n", r"ext.csv:2: no student"),
    ("name,new_due\nana,2026-03-03T12:00\n", r"ext.csv: no student column"),
    ("student,reason\nana,x\n", r"ext.csv: needs a new_due or an extra_days column"),
    ("student,new_due,extra_days,reason\nana,,1,x,extra\n", r"ext.csv:2: more cells than columns"),
])
def test_a_bad_extensions_row_is_one_clear_line(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "ext.csv"
    path.write_text(body)
    with pytest.raises(DeadlineError, match=message) as err:
        deadlines.load_extensions(path, "UTC")
    assert "\n" not in str(err.value)
    with pytest.raises(DeadlineError, match="cannot read"):
        deadlines.load_extensions(tmp_path / "none.csv", "UTC")


def test_submission_times_file(tmp_path: Path) -> None:
    path = tmp_path / "times.csv"
    path.write_text("student,submitted_at\nana,2026-03-01T23:00\n")
    assert deadlines.load_submission_times(path, "Europe/Paris")["ana"] == datetime(2026, 3, 1, 22, tzinfo=UTC)
    path.write_text("student,time\nana,later\n")
    with pytest.raises(DeadlineError, match="times.csv:2: 'later' is not an ISO 8601 time"):
        deadlines.load_submission_times(path, "UTC")
    path.write_text("student,when\nana,2026-03-01\n")
    with pytest.raises(DeadlineError, match="needs a submitted_at"):
        deadlines.load_submission_times(path, "UTC")


# ------------------------------------------------------------------ CI: when the push was received


def test_ci_uses_the_push_received_time_never_the_commit_date(tmp_path: Path) -> None:
    event = {"repository": {"pushed_at": 1772409600}, "head_commit": {"timestamp": "2020-01-01T00:00:00Z"}}
    assert context.received_at("github", {}, event, "push") == "2026-03-02T00:00:00+00:00"
    assert context.received_at("github", {}, {"repository": {"pushed_at": "2026-03-02T01:00:00+01:00"}}, "push") \
        == "2026-03-02T00:00:00+00:00"
    assert context.received_at("github", {}, {"repository": {"pushed_at": 1772409600}}, "workflow_dispatch") == ""
    # a pull request: the head repository's push (the one that opened or updated it), else the base's
    pr = {"repository": {"pushed_at": 1772409600}, "pull_request": {"head": {"repo": {"pushed_at": 1772413200}}}}
    assert context.received_at("github", {}, pr, "pull_request") == "2026-03-02T01:00:00+00:00"
    assert context.received_at("github", {}, {"repository": {"pushed_at": 1772409600}}, "pull_request") \
        == "2026-03-02T00:00:00+00:00"
    assert context.received_at("gitlab", {"CI_PIPELINE_CREATED_AT": "2026-03-02T00:00:00Z"}, {}) \
        == "2026-03-02T00:00:00+00:00"
    assert context.received_at("shell", {}, {}) == ""
    event_path = tmp_path / "event.json"
    event_path.write_text('{"repository": {"pushed_at": 1772409600}, "head_commit": {"timestamp": "2020-01-01T00:00:00Z"}}')
    env = context.detect({"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event_path), "GITHUB_EVENT_NAME": "push"},
                         tmp_path, tmp_path)
    assert env.received_at == "2026-03-02T00:00:00+00:00"


# ------------------------------------------------------------------ the gradebook and the card


def test_gradebook_gets_the_late_columns_last_only_with_a_policy(tmp_path: Path) -> None:
    rows = [Row("ana", "graded", "ana.py", "x", 76.0, 100.0, (("a", 80.0),), raw_score=80.0, penalty=4.0,
                lateness=1.0, late_rule="submitted ...: 1h late = 1 started hour x 5% = -5%"),
            Row("bo", "missing", message="nothing submitted")]
    gradebook_csv.write(rows, ["a"], tmp_path / "g.csv")
    with (tmp_path / "g.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        got = list(reader)
    assert reader.fieldnames == [*gradebook_csv.header(["a"]), "raw_score", "penalty", "lateness", "late_rule"]
    assert (got[0]["score"], got[0]["raw_score"], got[0]["penalty"], got[0]["lateness"]) == ("76", "80", "4", "1")
    assert [got[1][c] for c in ("raw_score", "penalty", "lateness", "late_rule")] == ["", "", "", ""]
    gradebook_csv.write(rows[1:], ["a"], tmp_path / "h.csv")
    assert (tmp_path / "h.csv").read_text().splitlines()[0] == ",".join(gradebook_csv.header(["a"]))


# ------------------------------------------------------------------ grade-all of a tiny class

REFERENCE = (ROOT / "solutions/attention.py").read_text()


def test_grade_all_applies_the_policy_from_submitted_at_csv(tmp_path: Path) -> None:
    klass = tmp_path / "submissions"
    klass.mkdir()
    for student in ("alice", "bob", "carol"):
        (klass / f"{student}.py").write_text(REFERENCE)
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\nbob,2026-03-02T03:19:00\ncarol,2026-03-03T12:00:00\n")
    extensions = tmp_path / "ext.csv"
    extensions.write_text("student,new_due,extra_days,reason\ncarol,,3,medical note\n")
    raw = yaml.safe_load((ROOT / "assignments.yaml").read_text())
    raw["assignments"]["attention"]["deadline"] = {
        "due": "2026-03-01T23:59:00", "timezone": "Europe/Paris", "grace_minutes": 10,
        "penalty": {"per": "hour", "percent": 5, "cap_percent": 50}, "cutoff": "2026-03-08T23:59:00"}
    config = ROOT / f".test-config-{os.getpid()}-deadlines.yaml"  # beside the original: its paths are relative to it
    config.write_text(yaml.safe_dump(raw))
    out = tmp_path / "out"
    try:
        proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(klass), "--assignment", "attention",
                               "--out", str(out), "--jobs", "1", "--config", str(config),
                               "--submitted-at-csv", str(times), "--extensions", str(extensions)],
                              capture_output=True, text=True, cwd=ROOT, timeout=600)
        bad = subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(klass), "--assignment", "attention",
                              "--out", str(tmp_path / "bad"), "--config", str(config), "--submitted-at", "noon"],
                             capture_output=True, text=True, cwd=ROOT, timeout=600)
    finally:
        config.unlink()
    assert proc.returncode == 0, proc.stderr
    with (out / "gradebook.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = {r["student"]: r for r in reader}
    assert reader.fieldnames[-4:] == ["raw_score", "penalty", "lateness", "late_rule"]
    top = float(rows["alice"]["max_score"])
    # alice: the folder layout has no time -> on time, and the row says so
    assert float(rows["alice"]["score"]) == float(rows["alice"]["raw_score"]) == top
    assert "submission time unknown" in rows["alice"]["late_rule"] and rows["alice"]["lateness"] == ""
    # bob: 03:19 Paris = 3h20 late -> 4 started hours x 5% = 20%
    bob = rows["bob"]
    assert float(bob["raw_score"]) == top and float(bob["penalty"]) == pytest.approx(top * 0.2)
    assert float(bob["score"]) == pytest.approx(top * 0.8) and float(bob["lateness"]) == 3.33
    assert "4 started hours" in bob["late_rule"]
    # carol: a day and a half after the class's due time, within her 3-day extension
    carol = rows["carol"]
    assert float(carol["score"]) == top and float(carol["penalty"]) == 0
    assert "on time" in carol["late_rule"] and "medical note" in carol["late_rule"]
    card = (out / "cards" / "bob.json").read_text()
    from grader.scorecard import Scorecard
    import json

    late = Scorecard.from_dict(json.loads(card)).late
    assert late["final_score"] == pytest.approx(top * 0.8) and late["status"] == "late"
    assert "late policy" in text.render(Scorecard.from_dict(json.loads(card)))
    from grader.export import html

    page = html.render(Scorecard.from_dict(json.loads(card)))  # the headline is the final score, the raw beside it
    final = f"{top * 0.8:g}"
    assert f'<div class="big">{final} <small>' in page and f"<strong>{final}</strong> points final" in page
    assert bad.returncode == 2 and "--submitted-at: 'noon' is not an ISO 8601 time" in bad.stderr
    print(next(line for line in (out / "gradebook.csv").read_text().splitlines() if line.startswith("bob")))


def test_exports_report_the_score_after_the_late_policy():
    """Gradescope's total and JUnit's score property carry the final score; the checks keep the points earned."""
    import dataclasses

    from grader.export import gradescope, junit
    from grader.scorecard import CheckResult, Scorecard, SubmissionInfo

    checks = (CheckResult("test_a", "softmax", "passed", 2.0, 2.0, "", "visible"),)
    card = Scorecard(assignment="attention", submission=SubmissionInfo("attention.py", "0" * 64), score=2.0,
                     max_score=2.0, checks=checks,
                     late={"raw_score": 2.0, "penalty_points": 0.5, "final_score": 1.5, "rule": "1 h late: -25%"})
    assert card.final_score == 1.5 and dataclasses.replace(card, late=None).final_score == 2.0
    assert gradescope.results(card)["score"] == 1.5
    assert sum(t["score"] for t in gradescope.results(card)["tests"]) == 2.0
    element = junit.to_element([("alice", card)])
    scores = [p.get("value") for p in element.iter("property") if p.get("name") == "score"]
    assert scores == ["1.5"]


def test_the_course_secret_file_is_a_known_config_key(tmp_path: Path):
    raw = yaml.safe_load((ROOT / "assignments.yaml").read_text(encoding="utf-8"))
    for spec in raw["assignments"].values():
        for key in ("reference", "stub"):
            if spec.get(key):
                spec[key] = str(ROOT / spec[key])
    raw["course_secret_file"] = "secret.txt"
    (tmp_path / "assignments.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    load_config(tmp_path / "assignments.yaml")  # validates
    raw["course_secret_file"] = ""
    (tmp_path / "assignments.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(ConfigError, match="course_secret_file"):
        load_config(tmp_path / "assignments.yaml")


# ------------------------------------------------------------------ grader ci applies the policy


def _ci_outcome(received_at: str):
    """A CI run's outcome for one card of 10 points, with a 5%-per-hour policy due 2026-03-01 23:59 UTC."""
    import dataclasses

    from grader import ci
    from grader.scorecard import CheckResult, Integrity, Scorecard, SubmissionInfo

    config = load_config(ROOT / "assignments.yaml")
    config = dataclasses.replace(config, assignments={**config.assignments, "attention": dataclasses.replace(
        config.assignments["attention"], deadline=policy(grace_minutes=0))})
    checks = (CheckResult("test_a", "softmax", "passed", 6.0, 6.0, "", "visible"),
              CheckResult("test_b", "softmax", "passed", 4.0, 4.0, "", "visible"))
    card = ci.with_late(Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 10.0, 10.0, checks),
                        config, received_at)
    seal = Integrity("verified")
    graded = ci.Graded(ci.Target("attention", Path("/r/attention.py"), "attention.py"), ci.shown(card, False, seal),
                       {"softmax": 3}, False, "attention.py")
    plan = ci.HiddenPlan(None, ci.NO_KEY_NOTE, Path("/r/.grader/hidden.bundle"))
    return ci.Outcome(context.Environment("github", Path("/r"), Path("/r"), received_at=received_at), (graded,),
                      plan, seal, 90.0)


def test_grader_ci_applies_the_late_policy_to_every_report() -> None:
    """Pushed 2 h after the due time: -10%; the total, the threshold, Classroom's points and the summary say so."""
    import jsonschema

    from grader import ci

    o = _ci_outcome("2026-03-02T01:59:00+00:00")
    assert (o.score, o.max_score) == (9.0, 10.0) and o.graded[0].card.late["penalty_points"] == 1.0
    assert o.exit_code == 0  # 90% meets the 90% threshold
    payload = ci.classroom_payload(o)
    jsonschema.validate(payload, json.loads((ROOT / "grader/schema/classroom_result.schema.json").read_text()))
    assert sum(t["score"] for t in payload["tests"]) == pytest.approx(9.0)
    late = payload["tests"][-1]
    assert late["name"] == "attention: late policy" and late["status"] == "fail" and late["score"] == 0
    assert "10 - 1 = 9 points" in late["message"] and "2 started hours" in late["message"]
    summary = ci.step_summary(o)
    assert "**Late policy**" in summary and ci.md("2 started hours") in summary
    assert ci.github_outputs(o, False)["score"] == "9"
    assert "9 / 10 points (90%) after a late penalty of 1 point" in ci.console(o)


def test_grader_ci_with_no_known_time_grades_on_time_and_says_so() -> None:
    from grader import ci

    o = _ci_outcome("")
    assert o.score == 10.0 and o.graded[0].card.late["status"] == "unknown"
    assert ci.md("submission time unknown: graded as on time") in ci.step_summary(o)
    assert ci.classroom_payload(o)["tests"][-1]["status"] == "pass"


def test_grader_ci_after_the_cutoff_scores_zero() -> None:
    from grader import ci

    o = _ci_outcome("2026-03-09T00:00:00+00:00")
    assert o.score == 0 and o.exit_code == 1
    assert sum(t["score"] for t in ci.classroom_payload(o)["tests"]) == 0


def test_the_student_kit_never_carries_the_extensions_file(tmp_path: Path) -> None:
    from grader.release import kit

    raw = yaml.safe_load((ROOT / "assignments.yaml").read_text(encoding="utf-8"))
    raw["defaults"] = {**raw.get("defaults", {}), "extensions": "ext.csv"}
    raw["assignments"]["attention"]["extensions"] = "ext.csv"
    raw["assignments"]["attention"]["deadline"] = {"due": "2026-03-01T23:59:00", "timezone": "UTC"}
    path = ROOT / f".test-config-{os.getpid()}-kit.yaml"
    path.write_text(yaml.safe_dump(raw))
    try:
        config = load_config(path)
        out = yaml.safe_load(kit.kit_config(config, {"attention": 3}))
    finally:
        path.unlink()
    assert "extensions" not in out["defaults"] and "extensions" not in out["assignments"]["attention"]
    assert out["assignments"]["attention"]["deadline"]["due"] == "2026-03-01T23:59:00"  # the policy goes along
