"""`grader ci`: a student repository graded where it is pushed.

The environments are simulated the way the platforms set them up: GitHub
Actions (GITHUB_ACTIONS, an event payload file, GITHUB_STEP_SUMMARY and
GITHUB_OUTPUT files, a git repository with a base branch and a pull-request
commit), GitLab CI (GITLAB_CI, CI_PROJECT_DIR, the JUnit report) and a plain
shell. The student repository is a copy of a real `grader release`; this
project's `grader ci` grades it with the release's kit config, as the
installed kit would. Each real grading costs seconds, so each scenario is
run once (module-scoped) and several tests read it; everything that needs
no grading (escaping, Markdown, the Classroom payload, integrity) is tested
on synthetic cards.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from io import StringIO
from pathlib import Path
from typing import Iterator

import jsonschema
import pytest
from junitparser import JUnitXml

from grader import ci, cli, integrity, scorecard
from grader.export import views
from grader.session import cuda_available
from grader.config import load_config
from grader.scorecard import CheckResult, Integrity, Scorecard, SubmissionInfo
from tests.corpus_cases import corpus

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions" / "attention.py").read_text()
MUTANT = next(c for c in corpus("mutants") if c.id == "attention/mutants/softmax_dim0").source()
WORKFLOW = ".github/workflows/autograde.yml"
CHECK_FILE = "grader/checks/attention/test_softmax.py"
CLASSROOM_SCHEMA = json.loads((ROOT / "grader/schema/classroom_result.schema.json").read_text())
# The runner's command names (actions/runner): a line that parses as one of these is a command.
RUNNER_COMMANDS = {"error", "warning", "notice", "debug", "set-output", "set-env", "add-path", "add-mask",
                   "save-state", "group", "endgroup", "echo", "add-matcher", "remove-matcher", "stop-commands",
                   "internal-set-repo-path"}
FORGED = [
    "::set-output name=x::y",
    "::add-mask::s3cret",
    "::error::forged",
    "   ::warning file=attention.py,line=1::forged indented",
    "text before ##[set-output name=x;]forged v1",
    "::stop-commands::guess",
]
INJECTING = REFERENCE + "\n\n# printed at import and from a check's call\n" + "".join(
    f"print({line!r})\n" for line in FORGED) + '''

def bag_of_past(v):
    print("::error title=forged::from inside a call")
    raise ValueError("\\n::error::forged in a message\\n##[add-mask]m\\n```\\n<script>alert(1)</script>")
'''


# ------------------------------------------------------------------ helpers


def student_repo(release: Path, where: Path, submission: str | None = None) -> Path:
    """A student repository as a release makes it (one assignment, to grade less), with an integrity
    manifest written here so the tests do not depend on which files the release protects."""
    repo = where / "repo"
    shutil.copytree(release, repo)
    for name in ("attention_modules.py", "attention_modules.ipynb"):
        (repo / name).unlink()
    workflow = repo / WORKFLOW
    if not workflow.is_file():
        workflow.parent.mkdir(parents=True, exist_ok=True)
        workflow.write_text("name: autograde\n")
    bundle = repo / ci.BUNDLE
    if not bundle.is_file():
        bundle.parent.mkdir(parents=True, exist_ok=True)
        bundle.write_bytes(b"not a real bundle: the tests unlock with a fake")
    protected = [WORKFLOW, ci.BUNDLE, ci.KIT_CONFIG, "grader/course/expected/attention.json", "pyproject.toml",
                 *(p.relative_to(repo).as_posix() for p in sorted((repo / "grader/checks").rglob("*.py")))]
    integrity.write_manifest(repo, protected)
    if submission is not None:
        (repo / "attention.py").write_text(submission)
    return repo


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org",
                           "-c", "commit.gpgsign=false", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def base_environ() -> dict[str, str]:
    """This process's environment without anything that would tell a CI platform or carry a key."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "GITLAB", "CI_", "RUNNER_")) and k not in ("CI", ci.KEY_VARIABLE)}


def github_environ(repo: Path, files: Path, event_name: str = "push", event: dict | None = None,
                   base_ref: str = "", key: str | None = None) -> dict[str, str]:
    files.mkdir(parents=True, exist_ok=True)
    (files / "event.json").write_text(json.dumps(event or {"ref": "refs/heads/main"}))
    for name in ("summary.md", "output.txt"):
        (files / name).write_text("")
    environ = {**base_environ(), "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(repo),
               "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(files / "event.json"),
               "GITHUB_STEP_SUMMARY": str(files / "summary.md"), "GITHUB_OUTPUT": str(files / "output.txt"),
               "GITHUB_BASE_REF": base_ref}
    if key is not None:
        environ[ci.KEY_VARIABLE] = key
    return environ


@contextmanager
def fds_to(path: Path) -> Iterator[None]:
    """Everything written to file descriptors 1 and 2 (by us or any child process) goes to ``path``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with path.open("wb") as fh:
        os.dup2(fh.fileno(), 1)
        os.dup2(fh.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


@dataclass
class CIRun:
    code: int
    log: str  # what grader ci printed, then whatever else reached fds 1 and 2 while it ran
    summary: str
    outputs: dict[str, str]
    repo: Path
    out: Path


def run_ci(repo: Path, environ: dict[str, str], files: Path, server, options: ci.Options | None = None,
           unlock: ci.Unlock | None = None, cwd: Path | None = None) -> CIRun:
    """One `grader ci` run, in process; ``unlock`` stands in for grader.hidden.unlock."""
    options = options or ci.Options()
    stdout = StringIO()
    with fds_to(files / "fds.txt"):
        code = ci.run(options, environ, cwd or repo, stdout, unlocker=lambda: unlock, server=server)
    summary = files / "summary.md"
    output = files / "output.txt"
    return CIRun(code, stdout.getvalue() + (files / "fds.txt").read_text(errors="replace"),
                 summary.read_text() if summary.is_file() else "",
                 parse_outputs(output.read_text()) if output.is_file() else {},
                 repo, options.out or repo / ci.DEFAULT_OUT)


def parse_outputs(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: name=value lines and name<<DELIMITER heredocs."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            assert name not in values, f"{name} set twice"
            values[name] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        if line:
            name, value = line.split("=", 1)
            assert name not in values, f"{name} set twice"
            values[name] = value
        i += 1
    return values


def runner_commands(log: str) -> list[tuple[str, dict[str, str], str]]:
    """The workflow commands GitHub's runner would process in ``log``, by its own rules
    (ActionCommandManager): `::name props::data` after leading spaces, else `##[name props]data`
    anywhere in the line; after `::stop-commands::TOKEN` nothing but `::TOKEN::` counts."""
    found = []
    stop_token: str | None = None
    for raw in log.split("\n"):
        parsed = _parse_v2(raw.lstrip()) or _parse_v1(raw)
        if parsed is None:
            continue
        name, props, data = parsed
        if stop_token is not None:
            if name.lower() == stop_token.lower():
                found.append((name, props, data))
                stop_token = None
            continue
        if name not in RUNNER_COMMANDS:
            continue
        found.append((name, props, data))
        if name == "stop-commands":
            stop_token = data
    return found


def _parse_v2(line: str) -> tuple[str, dict[str, str], str] | None:
    if not line.startswith("::"):
        return None
    end = line.find("::", 2)
    if end < 0:
        return None
    info = line[2:end]
    name, _, rest = info.partition(" ")
    props = {k: _unescape(v) for k, v in (p.split("=", 1) for p in rest.split(",") if "=" in p)}
    return name, props, _unescape(line[end + 2:], data=True)


def _parse_v1(line: str) -> tuple[str, dict[str, str], str] | None:
    start = line.find("##[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    name, _, rest = line[start + 3:end].partition(" ")
    if name not in RUNNER_COMMANDS:
        return None
    return name, dict(p.split("=", 1) for p in rest.split(";") if "=" in p), line[end + 1:]


def _unescape(text: str, data: bool = False) -> str:
    """The runner's UnescapeProperty / UnescapeData (data leaves %3A and %2C alone)."""
    text = text.replace("%0D", "\r").replace("%0A", "\n")
    if not data:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%25", "%")


def unescape_md(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def def_line(source: str, name: str) -> int:
    """The line of the last top-level `def name(` in ``source``: the definition Python keeps."""
    return [i for i, line in enumerate(source.splitlines(), 1) if line.startswith(f"def {name}(")][-1]


def errors_by_exercise(log: str) -> dict[str, tuple[dict[str, str], str]]:
    return {props["title"].split(":")[0]: (props, data) for name, props, data in runner_commands(log)
            if name == "error" and "checks failed" in props.get("title", "")}


# ------------------------------------------------------------------ GitHub: a push, the visible checks only (no key)


@pytest.fixture(scope="module")
def pushed(release, server, tmp_path_factory) -> CIRun:
    where = tmp_path_factory.mktemp("pushed")
    repo = student_repo(release, where, REFERENCE)
    environ = github_environ(repo, where / "github")
    return run_ci(repo, environ, where / "github", server, ci.Options(threshold=50, classroom=True))


def test_a_push_without_the_key_grades_the_visible_checks_and_says_so_plainly(pushed):
    assert pushed.code == 0, pushed.log[-3000:]
    summary = unescape_md(pushed.summary)
    assert "Hidden checks not run" in summary
    assert "this run has no GRADER_HIDDEN_KEY (pull requests from forks get no secrets)" in summary
    assert "your work is graded with every check when" in summary
    assert "more checks run only when your work is graded with every check" in summary
    assert "::warning title=hidden checks not run::hidden checks not run: this run has no GRADER_HIDDEN_KEY" \
        in pushed.log
    assert pushed.outputs["hidden_checks"] == "not-run"
    card = json.loads((pushed.out / "attention.py.json").read_text())
    assert {c["visibility"] for c in card["checks"]} == {"visible"}


def test_a_passing_push_reports_full_marks_in_every_output(pushed):
    out = pushed.outputs
    assert out["score"] == out["max_score"] and float(out["max_score"]) > 0
    assert (out["percent"], out["passed"], out["integrity"], out["files"]) == ("100", "true", "verified",
                                                                               "attention.py")
    summary = unescape_md(pushed.summary)
    assert f"Total: {out['score']} / {out['max_score']} points (100%)" in summary
    assert "Threshold 50%: ✅ met" in summary
    assert "Integrity**: ✅ verified" in summary
    assert "| ✅ softmax |" in summary and "Failed checks" not in summary
    assert "attention.ipynb is the released stub, unchanged: not graded" in summary
    notices = [(p, d) for n, p, d in runner_commands(pushed.log) if n == "notice"]
    assert notices == [({"title": "grader: total"}, f"{out['score']} / {out['max_score']} points (100%), "
                                                    "meets the 50% threshold")]
    assert not [n for n, _, _ in runner_commands(pushed.log) if n == "error"]


def test_the_artifacts_are_the_student_view_card_and_page(pushed):
    data = json.loads((pushed.out / "attention.py.json").read_text())
    scorecard.validate(data)
    assert data["schema_version"] == scorecard.SCHEMA_VERSION and data["integrity"] == {"status": "verified"}
    assert "flags" not in data or data["flags"] == []
    page = (pushed.out / "attention.py.html").read_text()
    assert '<meta name="grader-view" content="student">' in page
    assert not (pushed.out / "attention.ipynb.json").exists()


def test_the_classroom_result_is_valid_with_per_check_partial_credit(pushed):
    payload = json.loads(base64.b64decode(pushed.outputs["result"]))
    jsonschema.Draft202012Validator(CLASSROOM_SCHEMA).validate(payload)
    assert payload["status"] == "pass"
    assert payload["max_score"] == float(pushed.outputs["max_score"])
    assert sum(t["score"] for t in payload["tests"]) == pytest.approx(float(pushed.outputs["score"]))
    card = json.loads((pushed.out / "attention.py.json").read_text())
    assert len(payload["tests"]) == len(card["checks"])
    assert any(t["score"] == 0.5 for t in payload["tests"])  # a check worth half a point keeps its half
    softmax = [t for t in payload["tests"] if t["name"].startswith("softmax: ")]
    assert softmax and {t["line_no"] for t in softmax} == {def_line(REFERENCE, "softmax")}
    assert {t["filename"] for t in payload["tests"]} == {"attention.py"}
    assert all(t["test_code"].startswith("grader check ") and "::test_" in t["test_code"] for t in payload["tests"])


# ------------------------------------------------------------------ GitHub: every check (the key and the bundle)


@dataclass
class FakeUnlock:
    """Stands in for grader.hidden.unlock: records where it was asked to unlock, returns this project's tree
    (the course's full config and every check)."""

    calls: list[tuple[Path, str, Path, int]]

    def __call__(self, bundle: Path, key: str, into: Path) -> Path:
        self.calls.append((bundle, key, into, stat.S_IMODE(into.stat().st_mode)))
        assert into.is_dir() and not any(into.iterdir())
        return ROOT


@pytest.fixture(scope="module")
def hidden(release, server, tmp_path_factory) -> tuple[CIRun, FakeUnlock]:
    where = tmp_path_factory.mktemp("hidden")
    repo = student_repo(release, where, MUTANT)
    environ = github_environ(repo, where / "github", key="test-key")
    unlock = FakeUnlock([])
    done = run_ci(repo, environ, where / "github", server, ci.Options(threshold=90, classroom=True), unlock=unlock)
    return done, unlock


def test_with_the_key_every_check_runs_from_a_private_folder_that_is_removed(hidden):
    done, unlock = hidden
    assert done.outputs["hidden_checks"] == "run", done.log[-3000:]
    [(bundle, key, into, mode)] = unlock.calls
    assert bundle == done.repo / ".grader/hidden.bundle" and key == "test-key"
    assert mode == 0o700 and not into.exists() and not into.parent.exists()
    assert done.repo.resolve() not in into.resolve().parents
    card = json.loads((done.out / "attention.py.json").read_text())
    assert {c["visibility"] for c in card["checks"]} > {"visible"}  # the hidden checks ran
    assert "Hidden checks not run" not in done.summary and "**Hidden checks**: run" in done.summary


def test_hidden_checks_show_only_status_and_points_everywhere(hidden):
    done, _ = hidden
    card = json.loads((done.out / "attention.py.json").read_text())
    masked = [c for c in card["checks"] if c["visibility"] != "visible"]
    assert any(c["status"] == "failed" for c in masked)
    assert all(c["message"] == views.HIDDEN_MESSAGE and "diagnosis" not in c for c in masked)
    assert card["output"] == ""  # printed while hidden checks called it: may show their inputs
    shown_ids = {c["id"] for c in card["checks"] if c["visibility"] == "visible" and c["status"] == "failed"}
    hidden_ids = {c["id"] for c in masked if c["status"] == "failed"} - shown_ids
    summary = unescape_md(done.summary)
    assert "hidden checks failed (their details are shown to course staff only)" in summary
    log = done.log.splitlines()
    for check_id in hidden_ids:
        assert check_id not in summary  # the summary only counts them
        at = [i for i, line in enumerate(log) if line.endswith(f" {check_id}")]  # the table: id, then its message
        assert at and all(log[i + 1].strip() == views.HIDDEN_MESSAGE for i in at)
    payload = json.loads(base64.b64decode(done.outputs["result"]))
    jsonschema.Draft202012Validator(CLASSROOM_SCHEMA).validate(payload)
    by_code = {t["test_code"].split("::", 1)[1]: t for t in payload["tests"]}
    for c in masked:
        test = by_code[c["id"]]
        assert test["message"] in ("", views.HIDDEN_MESSAGE) and test["duration"] == 0


def test_a_failing_submission_fails_the_threshold_with_annotations_at_its_functions(hidden):
    done, _ = hidden
    assert done.code == 1
    out = done.outputs
    assert out["passed"] == "false" and float(out["percent"]) < 90 and out["integrity"] == "verified"
    errors = errors_by_exercise(done.log)
    props, message = errors["softmax"]
    assert props["file"] == "attention.py" and props["line"] == str(def_line(MUTANT, "softmax"))
    assert def_line(MUTANT, "softmax") > def_line(REFERENCE, "softmax")  # the mutant's own def, not the reference's
    assert message.startswith("softmax: ") and "checks failed" in message
    summary = unescape_md(done.summary)
    assert "| ❌ softmax |" in summary and "Threshold 90%: ❌ not met" in summary
    payload = json.loads(base64.b64decode(out["result"]))
    assert payload["status"] == "fail"
    assert any(t["status"] == "fail" and t["name"].startswith("softmax") for t in payload["tests"])


# ------------------------------------------------------------------ GitHub: a pull request, tampered, and hostile


@pytest.fixture(scope="module")
def pull_request(release, server, tmp_path_factory) -> CIRun:
    """main: the release as handed out; the pull request: attention.py replaced by a submission that prints
    workflow commands, and one of the visible checks edited."""
    where = tmp_path_factory.mktemp("pr")
    repo = student_repo(release, where)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the release")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/remotes/origin/main", base)  # as `actions/checkout` with fetch-depth 0 leaves it
    git(repo, "checkout", "-q", "-b", "work")
    (repo / "attention.py").write_text(INJECTING)
    with (repo / CHECK_FILE).open("a") as fh:
        fh.write("\n# made easier\n")
    git(repo, "commit", "-q", "-am", "my work")
    environ = github_environ(repo, where / "github", "pull_request",
                             {"pull_request": {"base": {"sha": base, "ref": "main"}}}, base_ref="main")
    return run_ci(repo, environ, where / "github", server, ci.Options(classroom=True))


def test_a_pull_request_grades_only_the_submission_files_it_changes(pull_request):
    assert pull_request.outputs["files"] == "attention.py"
    assert "pull request: grading the submission files it changes (compared with origin/main)" \
        in unescape_md(pull_request.summary)
    assert not (pull_request.out / "attention.ipynb.json").exists()


def test_a_tampered_repository_cannot_pass(pull_request):
    assert pull_request.code == 1  # threshold 0: only the edited check fails the job
    assert pull_request.outputs["integrity"] == "modified" and pull_request.outputs["passed"] == "false"
    card = json.loads((pull_request.out / "attention.py.json").read_text())
    assert card["integrity"] == {"status": "modified", "files": [CHECK_FILE]}
    assert f"Integrity**: ❌ modified: {CHECK_FILE}" in unescape_md(pull_request.summary)
    tampered = [(p, d) for n, p, d in runner_commands(pull_request.log) if p.get("title") == "protected file changed"]
    assert [p["file"] for p, _ in tampered] == [CHECK_FILE]
    payload = json.loads(base64.b64decode(pull_request.outputs["result"]))
    jsonschema.Draft202012Validator(CLASSROOM_SCHEMA).validate(payload)
    assert payload["status"] == "fail" and all(t["score"] == 0 for t in payload["tests"])


def test_nothing_a_submission_prints_or_raises_becomes_a_workflow_command(pull_request):
    log = pull_request.log
    for line in FORGED:
        assert line in log  # echoed for the student to read...
    commands = runner_commands(log)
    names = [n for n, _, _ in commands]
    # ...but the only commands are ours: the stop, its resume, our annotations.
    assert names[0] == "stop-commands" and len(commands[0][2]) == 32
    assert names[1] == commands[0][2]
    assert set(names[2:]) <= {"error", "warning", "notice"}
    assert "stop-commands" not in names[2:] and "set-output" not in names and "add-mask" not in names
    ours = {"protected file changed", "hidden checks not run", "grader: total", "more problems"}
    for _, props, _ in commands[2:]:
        assert props["title"] in ours or props["title"].endswith("checks failed"), props
    # our annotations carry the message as data: it is escaped onto one line, never a command of its own
    _, message = errors_by_exercise(log)["bag_of_past"]
    assert "::error::forged in a message" in message and "\n" in message
    assert set(pull_request.outputs) == {"score", "max_score", "percent", "passed", "hidden_checks",
                                                     "integrity", "files", "result"}


def test_a_message_cannot_render_markdown_or_html_in_the_summary(pull_request):
    summary = pull_request.summary
    assert "<script>" in summary  # inside a fence, where it is text
    fences = re.findall(r"^(`{3,})text\n(.*?)^\1$", summary, flags=re.M | re.S)
    inside = "".join(body for _, body in fences)
    assert "<script>alert(1)</script>" in inside
    outside = re.sub(r"^(`{3,})text\n.*?^\1$", "", summary, flags=re.M | re.S)
    assert "<script>" not in outside and "::error" not in outside


# ------------------------------------------------------------------ GitLab CI and a plain shell


@pytest.fixture(scope="module")
def gitlab(release, server, tmp_path_factory) -> CIRun:
    where = tmp_path_factory.mktemp("gitlab")
    repo = student_repo(release, where, MUTANT)
    environ = {**base_environ(), "GITLAB_CI": "true", "CI": "true", "CI_PROJECT_DIR": str(repo)}
    (where / "files").mkdir()
    return run_ci(repo, environ, where / "files", server, cwd=where)


def test_gitlab_gets_a_junit_report_and_the_exit_status(gitlab):
    assert gitlab.code == 0  # threshold 0: a low score alone never fails the job
    report = JUnitXml.fromfile(str(gitlab.repo / ci.DEFAULT_JUNIT))
    [suite] = list(report)
    assert suite.name == "attention.py" and suite.failures > 0
    failing = [case.name for case in suite if case.result and case.classname == "attention.softmax"]
    assert failing
    assert "::stop-commands::" not in gitlab.log and not runner_commands(gitlab.log)
    assert "softmax" in gitlab.log and "grader ci: " in gitlab.log
    assert not (gitlab.repo / "summary.md").exists()


def test_a_plain_shell_prints_the_table_and_exits_by_threshold(release, server, tmp_path):
    repo = student_repo(release, tmp_path, MUTANT)
    (tmp_path / "files").mkdir()
    done = run_ci(repo, base_environ(), tmp_path / "files", server, ci.Options(threshold=99))
    assert done.code == 1
    assert "FAIL" in done.log and "below the 99% threshold" in done.log
    assert "hidden checks not run: this run has no GRADER_HIDDEN_KEY" in done.log
    assert "::stop-commands::" not in done.log and not runner_commands(done.log)


# ------------------------------------------------------------------ nothing to grade; which files


def test_a_pull_request_that_changes_no_submission_file_grades_nothing_and_passes(release, tmp_path):
    repo = student_repo(release, tmp_path)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the release")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/remotes/origin/main", base)
    (repo / "NOTES.md").write_text("thoughts\n")
    git(repo, "add", "NOTES.md")
    git(repo, "commit", "-q", "-m", "notes")
    environ = github_environ(repo, tmp_path / "github", "pull_request",
                             {"pull_request": {"base": {"sha": base}}}, base_ref="main")
    done = run_ci(repo, environ, tmp_path / "github", server=None)
    assert done.code == 0
    assert "**Nothing was graded**" in done.summary
    assert "this pull request changes no submission file" in unescape_md(done.summary)
    assert done.outputs["files"] == "" and done.outputs["passed"] == "true"
    assert done.outputs["hidden_checks"] == "not-run" and done.outputs["integrity"] == "verified"
    assert not (repo / ci.DEFAULT_OUT).exists()


def test_a_repository_without_submission_files_is_not_a_failure(tmp_path):
    (tmp_path / "README.md").write_text("hello\n")
    out = StringIO()
    assert ci.run(ci.Options(), base_environ(), tmp_path, out, unlocker=lambda: None) == 0
    assert "nothing graded: no submission file in this repository (looked for attention.py" in out.getvalue()


def test_changed_files_fall_back_to_the_base_commit_and_then_to_every_file(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "attention.py").write_text("x = 1\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "attention.py").write_text("x = 2\n")
    git(repo, "commit", "-q", "-am", "change")
    env = ci.Environment("github", repo, repo, "pull_request", {"pull_request": {"base": {"sha": base}}}, "gone")
    changed, how = ci.changed_files(env)
    assert changed == {"attention.py"} and how == f"compared with {base}"
    lost = replace(env, event={"pull_request": {"base": {"sha": "f" * 40}}})
    changed, how = ci.changed_files(lost)
    assert changed is None and "origin/gone" in how and "f" * 40 in how
    assert ci.changed_files(replace(env, base_ref="--output=/tmp/x", event={}))[0] is None  # never an option
    not_git = replace(env, root=tmp_path)
    assert ci.changed_files(not_git)[0] is None


def test_files_are_found_by_the_configs_names_and_an_untouched_stub_is_left_out(release, tmp_path):
    repo = student_repo(release, tmp_path, REFERENCE)
    config = load_config(repo / ci.KIT_CONFIG)
    env = ci.detect(base_environ(), repo, tmp_path)
    assert [t.rel for t in ci.candidates(repo, config)] == ["attention.py", "attention.ipynb"]
    chosen = ci.select(env, config, all_files=False)
    assert [t.rel for t in chosen.targets] == ["attention.py"]
    (repo / "attention.py").write_text((release / "attention.py").read_text())  # both untouched: grade one
    assert [t.rel for t in ci.select(env, config, all_files=False).targets] == ["attention.py"]


# ------------------------------------------------------------------ escaping, Markdown, outputs: no grading


def test_workflow_command_escaping_follows_githubs_rules():
    assert ci.escape_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert ci.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    line = ci.command("error", "x\n::add-mask::y", file="a,b.py", line=3, title="t: u")
    assert line == "::error file=a%2Cb.py,line=3,title=t%3A u::x%0A::add-mask::y"
    assert runner_commands(line) == [("error", {"file": "a,b.py", "line": "3", "title": "t: u"}, "x\n::add-mask::y")]
    assert "\n" not in line
    assert ci.inert("ok\n  ::set-output name=a::b\r##[add-mask]c") == "ok\n  : :set-output name=a: :b\n## [add-mask]c"
    assert runner_commands(ci.inert("::error::x\n##[error]y")) == []


def test_multi_line_outputs_use_a_random_heredoc_delimiter():
    text = ci.output_file_text({"one": "1", "many": "a\nb"})
    first, second = ci.output_file_text({"many": "a\nb"}), ci.output_file_text({"many": "a\nb"})
    assert first != second  # the delimiter is drawn each time
    assert re.fullmatch(r"one=1\nmany<<(ghadelimiter_[0-9a-f]{32})\na\nb\n\1\n", text)
    assert parse_outputs(text) == {"one": "1", "many": "a\nb"}


def test_markdown_escapes_and_fences_hold_anything():
    assert ci.md("a|b <i>x</i> [l](http://e) *s* `c`\nnext") == \
        r"a\|b \<i\>x\<\/i\> \[l\]\(http\:\/\/e\) \*s\* \`c\` next"
    block = ci.fenced("``` \n````\nend")
    assert block[0] == "`````text" and block[-1] == "`````"


def _synthetic(messages: dict[str, str], seal: Integrity = Integrity("verified"), hidden_run: bool = False,
               threshold: float = 0.0) -> ci.Outcome:
    checks = tuple(CheckResult(f"test_{name}", "softmax", "failed" if msg else "passed", 0 if msg else 1, 1, msg,
                               "hidden" if name.startswith("secret") else "visible", duration_s=0.25)
                   for name, msg in messages.items())
    card = Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), sum(c.score for c in checks),
                     len(checks), checks)
    target = ci.Target("attention", Path("/r/attention.py"), "attention.py")
    graded = ci.Graded(target, ci.shown(card, hidden_run, seal), {"softmax": 12}, False, "attention.py")
    env = ci.Environment("github", Path("/r"), Path("/r"))
    plan = ci.HiddenPlan(None, ci.NO_KEY_NOTE, Path("/r/.grader/hidden.bundle"))
    return ci.Outcome(env, (graded,), plan, seal, threshold)


def test_the_summary_shows_failed_visible_checks_fenced_and_counts_hidden_ones():
    o = _synthetic({"ok": "", "bad": "got <b>|</b>\n```\n| a |", "secret_one": "hidden inputs: [1, 2]"})
    text = ci.step_summary(o)
    assert "hidden inputs" not in text and "secret\\_one" not in text
    assert "**softmax**: 1 hidden checks failed" in text
    fence = re.search(r"^(`{4,})text\ngot <b>\|</b>\n```\n\| a \|\n\1$", text, flags=re.M)
    assert fence, text
    assert "| ❌ softmax | 1 / 3 | 1 / 3 |" in text


def test_the_classroom_payload_is_inert_and_follows_the_schema():
    jsonschema.Draft202012Validator.check_schema(CLASSROOM_SCHEMA)
    o = _synthetic({"ok": "", "bad": "::error::x\n##[add-mask]y"})
    payload = ci.classroom_payload(o)
    jsonschema.Draft202012Validator(CLASSROOM_SCHEMA).validate(payload)
    bad = next(t for t in payload["tests"] if t["status"] == "fail")
    assert runner_commands("Error: " + bad["message"]) == []
    assert (bad["filename"], bad["line_no"], bad["duration"], bad["score"]) == ("attention.py", 12, 250, 0)
    assert payload["status"] == "pass" and payload["max_score"] == 2  # threshold 0
    failing = ci.classroom_payload(_synthetic({"ok": ""}, Integrity("modified", ("grader/x.py",))))
    assert failing["status"] == "fail" and failing["tests"][0]["score"] == 0
    assert "not counted: protected files were changed (grader/x.py)" in failing["tests"][0]["message"]
    assert base64.b64decode(ci.classroom_result(o)).decode() == json.dumps(payload, separators=(",", ":"),
                                                                            ensure_ascii=False)


def test_exit_status_by_threshold_integrity_and_grader_error():
    assert _synthetic({"a": "", "b": "x"}, threshold=50).exit_code == 0
    assert _synthetic({"a": "", "b": "x"}, threshold=50.01).exit_code == 1
    assert _synthetic({"a": ""}, Integrity("modified", ("f",))).exit_code == 1
    assert _synthetic({"a": ""}, Integrity("unverified")).exit_code == 0
    broken = _synthetic({"a": ""})
    g = replace(broken.graded[0], card=replace(broken.graded[0].card, grader_error="boom"))
    assert replace(broken, graded=(g,)).exit_code == 3


def test_definition_lines_find_the_def_python_keeps_and_say_when_it_is_a_notebook(tmp_path):
    py = tmp_path / "attention.py"
    py.write_text("def softmax(x):\n    pass\n\nclass Head:\n    def inner(self): ...\n\n"
                  "def softmax(x):\n    return x\n")
    assert ci.definition_lines(py, ["softmax", "Head", "inner", "missing"]) == (
        {"softmax": 7, "Head": 4, "inner": 5, "missing": 1}, False)
    py.write_text("def softmax(:\n")
    assert ci.definition_lines(py, ["softmax"]) == ({"softmax": 1}, False)
    nb = tmp_path / "attention.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "source": ["import torch\n", "def softmax(x):\n",
                                                                         "    return x\n"]}]}, indent=1))
    lines, notebook = ci.definition_lines(nb, ["softmax"])
    assert notebook and nb.read_text().splitlines()[lines["softmax"] - 1].strip().startswith('"def softmax(')


# ------------------------------------------------------------------ which checks; the hidden grading subprocess


def test_the_hidden_checks_need_the_bundle_the_key_and_an_unlocker(tmp_path):
    fake = FakeUnlock([])
    assert ci.plan_hidden(tmp_path, {ci.KEY_VARIABLE: "s3cr3t"}, lambda: fake).note == ci.NO_BUNDLE_NOTE
    (tmp_path / ".grader").mkdir()
    (tmp_path / ci.BUNDLE).write_bytes(b"x")
    assert ci.plan_hidden(tmp_path, {}, lambda: fake).note == ci.NO_KEY_NOTE
    assert ci.plan_hidden(tmp_path, {ci.KEY_VARIABLE: "s3cr3t"}, lambda: None).note == ci.NO_UNLOCK_NOTE
    plan = ci.plan_hidden(tmp_path, {ci.KEY_VARIABLE: "s3cr3t"}, lambda: fake)
    assert plan.run and plan.key == "s3cr3t" and "s3cr3t" not in repr(plan)


def test_the_instructors_grader_runs_without_the_key_and_first_on_the_path(tmp_path, monkeypatch):
    seen = {}

    def fake_run(command, **kwargs):
        seen.update(command=command, **kwargs)
        return subprocess.CompletedProcess(command, 2, "", "grader: unknown assignment 'attention'\n")

    monkeypatch.setattr(ci.subprocess, "run", fake_run)
    target = ci.Target("attention", tmp_path / "attention.py", "attention.py")
    with pytest.raises(ci.CIInternalError, match="unknown assignment"):
        ci.grade_hidden([target], ROOT, tmp_path, {ci.KEY_VARIABLE: "secret", "PATH": "/bin"})
    assert ci.KEY_VARIABLE not in seen["env"] and seen["env"]["PYTHONPATH"] == str(ROOT)
    assert seen["cwd"] == ROOT and seen["command"][1:4] == ["-P", "-m", "grader.cli"]
    assert seen["command"][seen["command"].index("--config") + 1] == str(ROOT / "assignments.yaml")


def test_an_unlock_that_fails_stops_the_run_and_leaves_nothing_behind(release, tmp_path):
    repo = student_repo(release, tmp_path, REFERENCE)
    environ = github_environ(repo, tmp_path / "github", key="wrong")
    made: list[Path] = []

    def refuse(bundle: Path, key: str, into: Path) -> Path:
        made.append(into)
        (into / "partial").write_text("half a tree")
        raise ValueError("the key does not open this bundle")

    with pytest.raises(ci.CIInternalError, match="cannot unlock the hidden checks"):
        ci.run(ci.Options(), environ, repo, StringIO(), unlocker=lambda: refuse)
    assert made and not made[0].exists()
    assert "could not grade" in (tmp_path / "github" / "summary.md").read_text()


# ------------------------------------------------------------------ integrity and the scorecard


def test_integrity_lists_changed_and_missing_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a/one.py").write_text("1")
    (tmp_path / "two.yml").write_text("2")
    integrity.write_manifest(tmp_path, ["two.yml", "a/one.py"])
    manifest = tmp_path / integrity.MANIFEST
    data = json.loads(manifest.read_text())
    assert data["version"] == 1 and sorted(data["files"]) == ["a/one.py", "two.yml"]
    assert integrity.verify(tmp_path, manifest) == []
    (tmp_path / "two.yml").write_text("changed")
    (tmp_path / "a/one.py").unlink()
    assert integrity.verify(tmp_path, manifest) == ["a/one.py", "two.yml"]
    assert ci.check_integrity(tmp_path) == Integrity("modified", ("a/one.py", "two.yml"))


def test_integrity_without_a_trustworthy_manifest_verifies_nothing(tmp_path):
    manifest = tmp_path / integrity.MANIFEST
    assert integrity.verify(tmp_path, manifest) == [integrity.MANIFEST]
    assert ci.check_integrity(tmp_path) == Integrity("unverified")  # a repository released without one
    manifest.parent.mkdir()
    assert ci.check_integrity(tmp_path) == Integrity("modified", (integrity.MANIFEST,))  # deleted from .grader/
    for bad in ("not json", json.dumps({"version": 2, "files": {}}),
                json.dumps({"version": 1, "files": {"../outside": "0" * 64}})):
        manifest.write_text(bad)
        assert integrity.verify(tmp_path, manifest) == [integrity.MANIFEST]
    with pytest.raises(integrity.IntegrityError):
        integrity.write_manifest(tmp_path, ["../escape"])
    with pytest.raises(integrity.IntegrityError):
        integrity.write_manifest(tmp_path, ["missing.txt"])


def test_scorecards_before_1_3_still_validate_and_integrity_round_trips():
    card = Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 1, 1,
                     (CheckResult("test_x", "softmax", "passed", 1, 1, "", "visible"),))
    old = {**card.to_dict(), "schema_version": "1.2"}
    assert "integrity" not in old
    scorecard.validate(old)
    sealed = replace(card, integrity=Integrity("modified", ("grader/x.py",)))
    data = json.loads(scorecard.to_valid_json(sealed))
    assert data["integrity"] == {"status": "modified", "files": ["grader/x.py"]}
    assert Scorecard.from_dict(data) == sealed
    assert "files" not in replace(card, integrity=Integrity("verified")).to_dict()["integrity"]
    with pytest.raises(scorecard.InvalidScorecard):
        scorecard.validate({**data, "integrity": {"status": "fine"}})
    assert tuple(scorecard.schema()["properties"]["integrity"]["properties"]["status"]["enum"]) == \
        scorecard.INTEGRITY_STATUSES


# ------------------------------------------------------------------ the command line


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    for key in [k for k in os.environ if k.startswith(("GITHUB_", "GITLAB"))]:
        monkeypatch.delenv(key)
    assert cli.main(["ci", "--root", str(tmp_path / "missing")]) == 2
    with pytest.raises(SystemExit) as stopped:
        cli.main(["ci", "--threshold", "150"])
    assert stopped.value.code == 2
    (tmp_path / "grader/course").mkdir(parents=True)
    (tmp_path / ci.KIT_CONFIG).write_text("assignments: [")
    assert cli.main(["ci", "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("grader: ") for line in err), err
    assert "no such folder" in err[0] and "between 0 and 100" in err[1] and "not valid YAML" in err[2]


def test_the_cli_runs_ci_where_there_is_nothing_to_grade(tmp_path, capsys, monkeypatch):
    for key in [k for k in os.environ if k.startswith(("GITHUB_", "GITLAB"))]:
        monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["ci", "--threshold", "60%"]) == 0
    assert "nothing graded: no submission file" in capsys.readouterr().out


def test_with_hidden_checks_run_a_grader_error_and_the_printed_output_stay_with_course_staff():
    card = Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 0, 1,
                     (CheckResult("test_x", "softmax", "error", 0, 1, "not graded", "hidden"),),
                     output="q = tensor([[0.1, 0.2]])\n", grader_error="AssertionError: hidden input [0.1, 0.2]")
    seal = Integrity("verified")
    everything = ci.shown(card, hidden_ran=True, seal=seal)
    assert everything.output == "" and everything.grader_error == ci.GRADER_ERROR_SHOWN
    assert everything.checks[0].message == views.HIDDEN_MESSAGE and everything.integrity == seal
    visible_only = ci.shown(card, hidden_ran=False, seal=seal)
    assert visible_only.output == card.output and visible_only.grader_error == card.grader_error


# ------------------------------------------------------------------ the real thing: a sealed release, its key


def test_a_sealed_release_unlocks_with_its_key_and_grades_with_every_check(hidden_release, hidden_key, tmp_path,
                                                                          monkeypatch):
    """grader.hidden.unlock for real: the release's own bundle and manifest, the key as the secret. The temp
    folder is this test's own, so another run on the same machine cannot put a tree where it looks."""
    private = tmp_path / "tmp"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    repo = tmp_path / "repo"
    shutil.copytree(hidden_release, repo)
    for name in ("attention_modules.py", "attention_modules.ipynb"):
        (repo / name).unlink()
    (repo / "attention.py").write_text(REFERENCE)
    environ = github_environ(repo, tmp_path / "github", key=hidden_key)
    stdout = StringIO()
    temp = Path(tempfile.gettempdir())
    assert temp == private
    before = set(temp.glob("grader-hidden-*"))
    code = ci.run(ci.Options(threshold=100), environ, repo, stdout)
    outputs = parse_outputs((tmp_path / "github" / "output.txt").read_text())
    assert code == 0, stdout.getvalue()[-3000:]
    assert (outputs["hidden_checks"], outputs["integrity"], outputs["percent"]) == ("run", "verified", "100")
    card = json.loads((repo / ci.DEFAULT_OUT / "attention.py.json").read_text())
    assert {c["visibility"] for c in card["checks"]} > {"visible"}
    assert set(temp.glob("grader-hidden-*")) <= before  # the decrypted tree is gone


# ------------------------------------------------------------------ Classroom's reporter, as it parses the result

# classroom-resources/autograding-grading-reporter@d13b5912daf5042ac1b71bc38bdb4a6bcd61d8ca (v1),
# dist/main.js (reproduced, not vendored):
#   runnerResults = runners.map(r => JSON.parse(Buffer.from(process.env[`${r.toUpperCase()}_RESULTS`],
#                                                            "base64").toString("utf-8")))
#   NotifyClassroom: if (!results.max_score) skip; totalPoints += each tests[].score -> "Points t/m" (recorded)
#   ConsoleResults (the log): passed = tests with status === "pass";
#                             "Total points for <runner>: (passed / tests.length * max_score).toFixed(2)/<max>"
ENV_STRING_MAX = 128 * 1024  # Linux MAX_ARG_STRLEN: one "NAME=value" environment string, its NUL included


def reporter_reads(result: str) -> dict:
    """The reporter's decoding of ``GRADER_RESULTS``."""
    return json.loads(base64.b64decode(result).decode("utf-8"))


def classroom_records(results: dict) -> tuple[float, float]:
    """``NotifyClassroom``: the points Classroom records."""
    if not results.get("max_score"):
        return 0.0, 0.0
    return sum(t["score"] for t in results["tests"]), results["max_score"]


def log_points(results: dict) -> tuple[int, float]:
    """``ConsoleResults`` / ``getTestScore``: (tests counted as passed, the points the log prints)."""
    passed = sum(t["status"] == "pass" for t in results["tests"])
    return passed, passed / len(results["tests"]) * (results.get("max_score") or 0)


def _outcome_of(card: Scorecard, hidden_run: bool = True) -> ci.Outcome:
    seal = Integrity("verified")
    target = ci.Target("attention", Path("/r/attention.py"), "attention.py")
    graded = ci.Graded(target, ci.shown(card, hidden_run, seal), {c.exercise: 12 for c in card.checks}, False,
                       "attention.py")
    plan = ci.HiddenPlan(None, ci.NO_KEY_NOTE, Path("/r/.grader/hidden.bundle"))
    return ci.Outcome(ci.Environment("github", Path("/r"), Path("/r")), (graded,), plan, seal, 0.0)


def _card(n: int, message: str) -> Scorecard:
    checks = tuple(CheckResult(f"test_check_number_{i:03d}[softmax-float16]", f"exercise_{i % 9}",
                               ("failed", "error", "timeout", "passed", "skipped")[i % 5], 0.5 if i % 5 == 3 else 0,
                               1, message, "hidden" if i % 4 == 0 else "visible", duration_s=0.5) for i in range(n))
    return Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), sum(c.score for c in checks), n, checks)


def test_the_classroom_result_stays_far_below_the_environment_limit_and_keeps_every_check():
    card = _card(133, "x = tensor([1.0, 2.0]) <y> & \u00e9 " * 160)  # ~5 KB each
    o = _outcome_of(card, hidden_run=False)
    result = ci.classroom_result(o)
    assert len(result) <= ci.classroom.RESULT_MAX_CHARS == 64 * 1024
    results = reporter_reads(result)
    jsonschema.Draft202012Validator(CLASSROOM_SCHEMA).validate(results)
    assert [t["test_code"].split("::", 1)[1] for t in results["tests"]] == [c.id for c in o.graded[0].card.checks]
    assert classroom_records(results) == (pytest.approx(card.score), card.max_score)
    cut = [t["message"] for t in results["tests"] if t["status"] != "pass"]
    assert all(0 < len(m) <= ci.classroom.MESSAGE_CHARS for m in cut) and all(m.endswith("…") for m in cut
                                                                               if views.HIDDEN_MESSAGE not in m)
    # The real limit: a program starts with it in its environment, as the reporter's node does.
    subprocess.run(["true"], env={"GRADER_RESULTS": result}, check=True)
    assert len("GRADER_RESULTS=") + len(result) + 1 <= ENV_STRING_MAX // 2


def test_an_uncut_result_is_what_linux_would_refuse():
    """Without the cut (every message whole), 133 checks of 5 KB are refused by exec: the reporter never starts."""
    payload = ci.classroom_payload(_outcome_of(_card(133, "y" * 5000), hidden_run=False))
    whole = ci.classroom.encode({**payload, "tests": [{**t, "message": "y" * 5000} for t in payload["tests"]]})
    assert len(whole) > ENV_STRING_MAX
    with pytest.raises(OSError) as info:
        subprocess.run(["true"], env={"GRADER_RESULTS": whole})
    assert info.value.errno == 7  # E2BIG: Argument list too long


def test_when_checks_alone_are_too_many_the_test_code_goes_before_any_check():
    card = _card(400, "m" * 200)
    results = reporter_reads(ci.classroom_result(_outcome_of(card, hidden_run=False)))
    assert len(results["tests"]) == 400 and all(t["message"] == "" and t["test_code"] == ""
                                                for t in results["tests"])
    small = _outcome_of(_card(5, "short"), hidden_run=False)
    assert reporter_reads(ci.classroom_result(small)) == ci.classroom_payload(small)  # nothing cut when it fits


def test_a_skipped_check_is_never_reported_as_passed():
    checks = (CheckResult("test_a", "softmax", "passed", 1, 1, "", "visible"),
              CheckResult("test_cuda_matches_cpu[softmax]", "softmax", "skipped", 0, 0, "no CUDA", "visible"),
              CheckResult("test_b", "softmax", "failed", 0, 1, "wrong", "visible"))
    card = Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 1, 2, checks)
    results = reporter_reads(ci.classroom_result(_outcome_of(card)))
    skipped = results["tests"][1]
    assert skipped["status"] == "fail" and "skipped, not graded" in skipped["name"]
    assert skipped["message"].startswith("Skipped, not graded: no CUDA")
    assert log_points(results)[0] == 1 and classroom_records(results) == (1, 2)


@pytest.fixture(scope="module")
def stub_graded(release, server, tmp_path_factory) -> CIRun:
    """The released stub, untouched, graded with every check (the key), for GitHub Classroom."""
    where = tmp_path_factory.mktemp("stub")
    repo = student_repo(release, where)
    environ = github_environ(repo, where / "github", key="test-key")
    return run_ci(repo, environ, where / "github", server, ci.Options(classroom=True), unlock=FakeUnlock([]))


def test_the_stub_scores_0_in_classroom_and_in_the_reporters_log(stub_graded):
    assert stub_graded.outputs["hidden_checks"] == "run", stub_graded.log[-3000:]
    results = reporter_reads(stub_graded.outputs["result"])
    jsonschema.Draft202012Validator(CLASSROOM_SCHEMA).validate(results)
    card = json.loads((stub_graded.out / "attention.py.json").read_text())
    skipped = [c for c in card["checks"] if c["status"] == "skipped"]
    assert len(results["tests"]) == len(card["checks"]) and (skipped or cuda_available())
    assert float(stub_graded.outputs["score"]) == 0
    assert classroom_records(results) == (0, float(stub_graded.outputs["max_score"]))
    passed, printed = log_points(results)
    assert passed == 0 and f"{printed:.2f}" == "0.00"  # was 4.55/137.5: the 4 skipped GPU checks as "pass"
    assert len(stub_graded.outputs["result"]) <= ci.classroom.RESULT_MAX_CHARS
