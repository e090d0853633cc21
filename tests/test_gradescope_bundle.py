"""`grader gradescope`: the autograder zip, and its run_autograder run for real.

run_autograder runs against a temporary folder laid out like Gradescope's
/autograder (AUTOGRADER_ROOT), without setup.sh (no network here): GRADER_BIN
points at this project's own `grader` command, and the bundled grader package
is the one it imports. Each real grading costs about 4 s; the other cases
never start the grader.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from grader import cli
from grader.session import cuda_available
from grader.config import load_config
from grader.export import gradescope as results_format
from grader.release import gradescope, gradescope_run
from tests.corpus_cases import CORPUS, CorpusCase, read_header

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
GRADER = Path(sys.executable).with_name("grader")  # this project's own command (.venv/bin/grader)


@pytest.fixture(scope="module")
def autograder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gradescope.build_autograder(tmp_path_factory.mktemp("gradescope") / "autograder.zip", ["attention"])


def unpack(archive: Path, folder: Path) -> None:
    """As unzip does: the files, with the modes the zip records."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            z.extract(info, folder)
            os.chmod(folder / info.filename, (info.external_attr >> 16) & 0o777)


def layout(archive: Path, root: Path, submission: dict[str, str | bytes]) -> Path:
    """``root`` as Gradescope lays out /autograder: source/ unpacked, run_autograder copied up, submission/."""
    unpack(archive, root / "source")
    runner = root / "run_autograder"
    runner.write_bytes((root / "source" / "run_autograder").read_bytes())
    runner.chmod(0o755)
    (root / "submission").mkdir()
    for rel, content in submission.items():
        path = root / "submission" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def run_autograder(root: Path, grader: Path | str = GRADER) -> dict[str, Any]:
    """Run ``root/run_autograder`` as Gradescope does (in the root); the results.json it wrote, checked."""
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_BIN": str(grader)}
    proc = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr
    raw = (root / "results" / "results.json").read_bytes()
    assert raw.endswith(b"\n") and b"\r" not in raw
    data = json.loads(raw.decode("utf-8"))
    jsonschema.validate(data, json.loads((DATA / "gradescope_results.schema.json").read_text()))
    return data


def reference_source() -> str:
    return (ROOT / "solutions" / "attention.py").read_text(encoding="utf-8")


# ---------------------------------------------------------------- the zip

def test_zip_has_gradescope_layout_hidden_checks_and_reference(autograder: Path) -> None:
    with zipfile.ZipFile(autograder) as z:
        infos = {i.filename: i for i in z.infolist()}
        read = {name: z.read(name) for name in infos}
    for name in ("setup.sh", "run_autograder"):
        assert stat.S_IMODE(infos[name].external_attr >> 16) == 0o755, name
        assert read[name].startswith(b"#!/usr/bin/env bash\n")
    assert stat.S_IMODE(infos["gradescope_run.py"].external_attr >> 16) == 0o644
    assert read["solutions/attention.py"] == (ROOT / "solutions/attention.py").read_bytes()
    for check in sorted((ROOT / "grader/checks/attention").glob("*.py")):
        assert read[f"grader/checks/attention/{check.name}"] == check.read_bytes()  # hidden checks and all
    assert b"def test_gradients_match_reference" in read["grader/checks/attention/test_common.py"]
    assert not any(n.startswith(("grader/release/", "grader/checks/attention_modules/", "exercises/"))
                   or "__pycache__" in n for n in infos)
    setup = read["setup.sh"].decode()
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in setup
    assert 'pip install -e "$SOURCE"' in setup
    manifest = json.loads(read[gradescope.MANIFEST])
    assert manifest["assignment"] == "attention" and set(manifest["files"]) == set(infos) - {gradescope.MANIFEST}


def test_two_builds_are_byte_identical(autograder: Path, tmp_path: Path) -> None:
    again = gradescope.build_autograder(tmp_path / "again.zip", ["attention"])
    assert again.read_bytes() == autograder.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["again.zip"]  # no temporary file left beside it


def test_bundled_config_is_the_course_assignment_with_the_bundled_reference(autograder: Path, tmp_path: Path) -> None:
    unpack(autograder, tmp_path)
    bundled = load_config(tmp_path / "assignments.yaml")
    course = load_config(ROOT / "assignments.yaml").assignment("attention")
    assert list(bundled.assignments) == ["attention"]
    a = bundled.assignment("attention")
    assert a.reference == (tmp_path / "solutions/attention.py").resolve()
    assert (a.exercises, a.limits, a.flagged_calls, a.file) == (course.exercises, course.limits, course.flagged_calls,
                                                                 course.file)


def test_scripts_parse_and_pyproject_installs_the_grader_command(autograder: Path) -> None:
    with zipfile.ZipFile(autograder) as z:
        scripts = {name: z.read(name) for name in gradescope.EXECUTABLE}
        project = tomllib.loads(z.read("pyproject.toml").decode())
    for text in scripts.values():
        subprocess.run(["bash", "-n"], input=text, check=True, timeout=30)  # syntax only: setup.sh needs a network
    assert project["project"]["scripts"] == {"grader": "grader.cli:run"}
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["grader*"]
    assert not any(d.startswith("copydetect") for d in project["project"]["dependencies"])


def test_torch_pin_is_the_one_the_project_tests_with() -> None:
    pins = re.findall(r"^torch==(\S+)", (ROOT / "requirements.txt").read_text(), re.MULTILINE)
    assert pins == [gradescope.TORCH_VERSION]
    assert f'"torch=={gradescope.TORCH_VERSION}"' in gradescope.pyproject().decode()


# ---------------------------------------------------------------- the command

def test_cli_builds_one_assignment_and_says_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "build" / "autograder.zip"
    assert cli.main(["gradescope", "--out", str(out), "--assignment", "attention-modules"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("\n") == 1 and str(out) in captured.out and captured.err == ""
    with zipfile.ZipFile(out) as z:
        assert "solutions/attention_modules.py" in z.namelist()
        assert b"--file attention_modules.py" in z.read("run_autograder")


@pytest.mark.parametrize("args, fragment", [
    ([], "has 2 assignments (attention, attention-modules): choose one with --assignment"),
    (["--assignment", "nope"], "unknown assignment 'nope'"),
    (["--assignment", "attention", "--config", "missing.yaml"], "missing.yaml: cannot read"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               args: list[str], fragment: str) -> None:
    assert cli.main(["gradescope", "--out", str(tmp_path / "a.zip"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grader: ") and err.count("\n") == 1 and fragment in err
    assert not (tmp_path / "a.zip").exists()


def test_cli_refuses_a_folder_for_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["gradescope", "--out", str(tmp_path), "--assignment", "attention"]) == 2
    assert "is a folder" in capsys.readouterr().err


# ---------------------------------------------------------------- run_autograder, for real

def test_reference_gets_full_marks_with_hidden_checks_after_published(autograder: Path, tmp_path: Path) -> None:
    log = tmp_path / "pythonpath.log"
    wrapper = tmp_path / "grader-wrapper"  # records what the grader imports from, then is the real grader
    wrapper.write_text(f'#!/usr/bin/env bash\necho "$PYTHONPATH" >> "{log}"\nexec "{GRADER}" "$@"\n')
    wrapper.chmod(0o755)
    root = layout(autograder, tmp_path / "autograder", {"attention.py": reference_source()})
    data = run_autograder(root, wrapper)
    maximum = sum(t["max_score"] for t in data["tests"])
    course = load_config(ROOT / "assignments.yaml").assignment("attention")
    gpu_only = 0 if cuda_available() else sum(c.points for ex in course.exercises for c in ex.checks if c.requires_cuda)
    assert data["score"] == maximum == course.max_points - gpu_only  # skipped GPU checks dropped, as configured
    assert all(t["status"] == "passed" for t in data["tests"] if t["max_score"] > 0)
    visibility = {t["name"].split(": ", 1)[1].split("[")[0]: t["visibility"] for t in data["tests"]}
    assert "test_gradients_match_reference" not in visibility  # hidden in assignments.yaml: its name is masked
    hidden = [t for t in data["tests"] if ": hidden check " in t["name"]]
    assert hidden and {t["visibility"] for t in hidden} == {"after_published"}
    assert visibility["test_rows_sum_to_one"] == "visible"
    assert set(visibility.values()) == {"visible", "after_published"}
    assert [line.split(os.pathsep)[0] for line in log.read_text().split()] == [str(root / "source")] * 2


def test_mutant_loses_points_and_its_diagnosis_reaches_the_student(autograder: Path, tmp_path: Path) -> None:
    path = CORPUS / "attention/mutants/softmax_dim0.py"
    source = CorpusCase(path, "mutants", read_header(path)).source()
    root = layout(autograder, tmp_path / "autograder", {"work/attention.py": source, "notes.txt": "mine"})
    data = run_autograder(root)
    assert 0 < data["score"] < sum(t["max_score"] for t in data["tests"])
    failed = [t for t in data["tests"] if t["status"] == "failed" and t["max_score"] > 0]
    assert failed and all(t["score"] < t["max_score"] for t in failed)
    assert any("a softmax taken over the first dimension (dim=0)" in t["output"] for t in failed)


LEAK = "LEAKED-ARGUMENTS"  # printed: what the code printed is one stream, hidden checks' calls included
RAISED = "RAISED-WITH-ITS-INPUT"  # in an exception message: shown for a visible check (its inputs are public)
WRAPPED = ("attention_scores", "scale_scores", "causal_mask", "apply_mask", "softmax", "mix_values", "attention",
           "bag_of_past", "split_heads", "merge_heads", "multi_head_attention", "attention_entropy")


def prints_its_arguments() -> str:
    """The reference, with every function printing its arguments (the hidden checks' inputs among them)
    each time a check calls it, and ``attention_entropy`` raising with them in its message."""
    source = reference_source()
    for name in WRAPPED:
        source += (f"\n\n_{name}_original = {name}\n\n\ndef {name}(*args, **kwargs):\n"
                   f"    print({LEAK!r}, {name!r}, repr(args), repr(kwargs))\n"
                   f"    return _{name}_original(*args, **kwargs)\n")
    return source + (f"\n\ndef attention_entropy(weights):\n"
                     f"    raise ValueError({RAISED!r} + repr(weights))\n")


def test_a_submission_printing_its_arguments_shows_no_hidden_input_to_the_student(autograder: Path,
                                                                                     tmp_path: Path) -> None:
    root = layout(autograder, tmp_path / "autograder", {"attention.py": prints_its_arguments()})
    data = run_autograder(root)
    assert LEAK not in json.dumps(data, ensure_ascii=False)  # anywhere: top-level output, names, outputs, tags
    assert results_format.PRINTED_NOT_SHOWN in data["output"]  # it did print; the student is told where to look
    hidden_names = {c.name for ex in load_config(ROOT / "assignments.yaml").assignment("attention").exercises
                    for c in ex.checks if c.visibility != "visible"}
    masked = [t for t in data["tests"] if ": hidden check " in t["name"]]
    assert masked and all("hidden check: its details" in t["output"] for t in masked)
    assert not any(t["name"].split(": ", 1)[1].split("[")[0] in hidden_names for t in data["tests"])
    assert {t["visibility"] for t in masked} == {"after_published"}  # the default mapping
    entropy = [t for t in data["tests"] if t["name"].startswith("attention_entropy: ")]
    shown = [t for t in entropy if RAISED in t["output"]]
    assert shown and all(t["visibility"] == "visible" and ": hidden check " not in t["name"] for t in shown)
    assert all(RAISED not in t["output"] for t in masked)  # a hidden check's message, the same error: masked


# ---------------------------------------------------------------- run_autograder, no grade: never a crash

@pytest.mark.parametrize("submission, fragments", [
    ({"my_attention.py": "x = 1\n", "notes.txt": "hi"},
     ["Expected attention.py (or attention.ipynb)", "my_attention.py, notes.txt"]),
    ({}, ["Expected attention.py (or attention.ipynb)", "it is empty"]),
    ({"attention.py": "x = 1\n", "v2/attention.ipynb": "{}"},
     ["more than one file to grade: attention.py, v2/attention.ipynb"]),
])
def test_no_single_file_gives_score_0_and_says_what_was_expected(autograder: Path, tmp_path: Path,
                                                                 submission: dict[str, str], fragments: list[str]) -> None:
    data = run_autograder(layout(autograder, tmp_path / "autograder", submission))
    assert data["score"] == 0 and data["output_format"] == "text"
    for fragment in fragments:
        assert fragment in data["output"]


def test_a_link_to_the_reference_is_never_graded(autograder: Path, tmp_path: Path) -> None:
    root = layout(autograder, tmp_path / "autograder", {})
    (root / "submission" / "attention.py").symlink_to(root / "source" / "solutions" / "attention.py")
    data = run_autograder(root)
    assert data["score"] == 0 and "Expected attention.py" in data["output"]


def test_a_broken_bundle_still_leaves_a_results_json(autograder: Path, tmp_path: Path) -> None:
    root = layout(autograder, tmp_path / "autograder", {"attention.py": "x = 1\n"})
    (root / "source" / "gradescope_run.py").unlink()  # run_autograder's own last resort
    data = run_autograder(root)
    assert data["score"] == 0 and "No grade was given" in data["output"]


@pytest.mark.parametrize("grader, fragment", [
    ("/nonexistent/grader", "cannot run /nonexistent/grader"),
    ("false", "it stopped without saying why"),
])
def test_a_grader_that_cannot_grade_gives_score_0_and_no_grade(autograder: Path, tmp_path: Path,
                                                               grader: str, fragment: str) -> None:
    data = run_autograder(layout(autograder, tmp_path / "autograder", {"attention.py": "x = 1\n"}), grader)
    assert data["score"] == 0 and fragment in data["output"] and "please tell course staff" in data["output"]


# ---------------------------------------------------------------- pieces

def test_pick_skips_hidden_and_underscore_folders(tmp_path: Path) -> None:
    for rel in ("__MACOSX/attention.py", ".ipynb_checkpoints/attention.ipynb", "hw/attention.ipynb", "README.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert gradescope_run.pick(tmp_path, "attention.py") == tmp_path / "hw/attention.ipynb"


def test_the_runner_exports_with_the_bundled_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gradescope_run passes the bundle's assignments.yaml, so its gradescope_visibility decides."""
    calls = []

    def fake_call(command: list[str], env: dict, timeout: float) -> tuple[int, str]:
        calls.append(command)
        if command[1] == "grade":
            Path(command[command.index("--out") + 1]).write_text("{}")
        return 0, ""

    monkeypatch.setattr(gradescope_run, "call", fake_call)
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "attention.py").write_text("x = 1\n")
    (tmp_path / "results").mkdir()
    gradescope_run.run(tmp_path, "grader", "attention", "attention.py", 10)
    export = calls[-1]
    assert export[1:3] == ["export", "gradescope"]
    assert export[export.index("--config") + 1] == str(tmp_path / "source" / "assignments.yaml")


def test_every_configured_visibility_maps_to_gradescope() -> None:
    schema = json.loads((ROOT / "grader/schema/assignments.schema.json").read_text())
    assert set(results_format.VISIBILITY) == set(schema["$defs"]["visibility"]["enum"])
    assert results_format.VISIBILITY == {"visible": "visible", "hidden": "after_published",
                                         "after_due_date": "after_due_date", "after_published": "after_published"}
