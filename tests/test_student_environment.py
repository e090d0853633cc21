"""Student code runs in an ordinary Python environment inside the sandbox.

A correct submission that plots, uses temporary files, a tqdm loop or writes
under ``~`` gets full marks: the child has a private home, temporary and
cache folder inside its scratch folder (``grader.sandbox.workspace``), while
every isolation layer stays on and writes anywhere else stay denied (also
``tests/corpus/attention/hostile/write_outside_scratch.py``). The course's
extra packages (``packages:`` in assignments.yaml) reach the student kit's
and the Gradescope bundle's dependencies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any, Callable, Iterator

import nbformat
import pytest
import yaml

from grader.config import COURSE_ROOT, ConfigError, load_config
from grader.release import gradescope, kit
from grader.sandbox import workspace
from grader.sandbox.client import SubmissionWorker, WorkerServer
from grader.sandbox.layers import LAYER_ORDER, probe_layers
from grader.sandbox.limits import Limits
from grader.scorecard import Scorecard

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "solutions" / "attention.py").read_text(encoding="utf-8")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")

# Appended to the reference: what students do at module level besides defining the exercises.
EVERYDAY_CODE = '''
import json as _json
import os as _os
import tempfile as _tempfile

import matplotlib
import matplotlib.pyplot as plt
from tqdm import tqdm


def _draw(path):
    plt.figure()
    plt.imshow(attention(torch.randn(1, 4, 8), torch.randn(1, 4, 8), torch.randn(1, 4, 8))[1][0])
    plt.colorbar()
    plt.title("attention weights")
    plt.savefig(path)
    plt.close("all")
    return _os.path.getsize(path)


_fd, _temp_file = _tempfile.mkstemp(suffix=".txt")
_os.write(_fd, b"scratch")
_os.close(_fd)
with _tempfile.TemporaryDirectory() as _folder:
    with open(_os.path.join(_folder, "f.txt"), "w") as _fh:
        _fh.write("x")
_total = 0
for _i in tqdm(range(5), desc="warm-up"):
    _total += _i
_os.makedirs(_os.path.expanduser("~/.cache/my-course"), exist_ok=True)
with open(_os.path.expanduser("~/.cache/my-course/notes.txt"), "w") as _fh:
    _fh.write("cached")
print("EVIDENCE " + _json.dumps({
    "cwd": _os.getcwd(), "home": _os.path.expanduser("~"), "tempdir": _tempfile.gettempdir(),
    "temp_file": _temp_file, "png": _draw("weights.png"), "home_png": _draw(_os.path.expanduser("~/weights.png")),
    "backend": matplotlib.get_backend(), "total": _total,
}), flush=True)
'''

# Functions the direct tests call in the child: the environment it sees, and whether a write works.
PROBE_SOURCE = '''
import os
import tempfile


def environment():
    seen = {name: os.environ.get(name) for name in NAMES}
    seen["tempfile.gettempdir"] = tempfile.gettempdir()
    seen["expanduser"] = os.path.expanduser("~")
    seen["cwd"] = os.getcwd()
    return seen


def can_write(path):
    try:
        with open(path, "w") as fh:
            fh.write("written from the sandbox")
    except OSError:
        return False
    return True
'''


@pytest.fixture(scope="module")
def active_here() -> set[str]:
    """Layers this machine can apply (a forked probe); the cards must show each of them active."""
    return {name for name, state in probe_layers().items() if state == "active"}


def assert_layers_active(layers: dict[str, str], active_here: set[str]) -> None:
    assert set(layers) == set(LAYER_ORDER), layers
    inactive = {k: v for k, v in layers.items() if k in active_here and v != "active"}
    assert not inactive, f"isolation layers not active: {inactive}"


def evidence(card: Scorecard) -> dict[str, Any]:
    line = next((l for l in card.output.splitlines() if l.startswith("EVIDENCE ")), None)
    assert line is not None, f"the submission's module-level code did not finish: {card.output[-500:]!r}"
    return json.loads(line.removeprefix("EVIDENCE "))


def inside(path: str, folder: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == os.path.realpath(folder)


# ---------------------------------------------------------------- whole submissions, full marks


def test_plots_temp_files_tqdm_and_home_writes_get_full_marks(grade: Callable[..., Scorecard],
                                                               active_here: set[str]) -> None:
    card = grade(REFERENCE + "\n" + EVERYDAY_CODE)
    failed = [(c.id, c.message) for c in card.checks if c.status not in ("passed", "skipped")]
    assert card.score == card.max_score > 0, failed[:3]
    assert_layers_active(card.environment["isolation"], active_here)
    seen = evidence(card)
    assert seen["backend"].lower() == "agg" and seen["total"] == 10
    assert seen["png"] > 1000 and seen["home_png"] > 1000  # real pictures, not empty files
    scratch = seen["cwd"]
    for key in ("home", "tempdir", "temp_file"):
        assert inside(seen[key], scratch), (key, seen)
    assert "warm-up" in card.output  # tqdm's bar went to the captured stderr


def test_a_notebook_that_plots_gets_full_marks(grade: Callable[..., Scorecard], tmp_path: Path,
                                               active_here: set[str]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%matplotlib inline\nimport matplotlib.pyplot as plt\nfrom tqdm.auto import tqdm"),
        nbformat.v4.new_code_cell(REFERENCE),
        nbformat.v4.new_code_cell("w = attention(*(torch.randn(1, 4, 8) for _ in range(3)))[1]\n"
                                  "plt.imshow(w[0]); plt.show()"),
    ]
    path = tmp_path / "attention.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    card = grade(path)
    failed = [(c.id, c.message) for c in card.checks if c.status not in ("passed", "skipped")]
    assert card.score == card.max_score > 0, failed[:3]
    assert_layers_active(card.environment["isolation"], active_here)


def test_the_scratch_is_removed_after_grading(grade: Callable[..., Scorecard], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    temp_root = tmp_path / "temp-root"
    temp_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))  # where api.Grader makes the scratch folder
    card = grade(REFERENCE + "\n" + EVERYDAY_CODE)
    assert card.score == card.max_score
    assert inside(evidence(card)["cwd"], str(temp_root))  # the scratch was made there...
    assert not [p.name for p in temp_root.iterdir() if p.name.startswith("grader-scratch-")]  # ...and is gone


# ---------------------------------------------------------------- the child's environment, directly


@pytest.fixture
def probe_worker(server: WorkerServer, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[SubmissionWorker]:
    """A child loaded with PROBE_SOURCE; ``request.param``: layers to disable."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    names = sorted({*workspace.FOLDERS, *workspace.ALIASES, *workspace.FIXED})
    source = f"NAMES = {names!r}\n" + PROBE_SOURCE
    worker = SubmissionWorker(server, source, "attention.py", Limits(disabled_layers=tuple(request.param)), scratch)
    worker.ensure_started()
    assert worker.load_error is None, worker.load_error
    yield worker
    worker.close()


def call(worker: SubmissionWorker, fn: str, *args: Any) -> Any:
    reply = worker.request({"op": "call", "fn": fn, "args": list(args), "kwargs": {}}, fn)
    assert reply.get("ok"), reply
    return reply["value"]


@pytest.mark.parametrize("probe_worker", [(), ("mountns_scratch",)], ids=["all-layers", "scratch-on-disk"],
                         indirect=True)
def test_home_tmp_and_caches_are_private_and_writable_and_nothing_else_is(
        probe_worker: SubmissionWorker, tmp_path: Path, active_here: set[str]) -> None:
    worker = probe_worker
    disabled = set(worker.limits.disabled_layers)
    assert set(worker.layers) == set(LAYER_ORDER), worker.layers
    for name, state in worker.layers.items():
        assert state == ("disabled" if name in disabled else "active") or name not in active_here, (name, state)
    seen = call(worker, "environment")
    scratch = seen["cwd"]
    assert inside(scratch, str(tmp_path / "scratch"))
    assert seen["MPLBACKEND"] == "Agg"
    assert seen["tempfile.gettempdir"] == seen["TMPDIR"] == seen["TEMP"] == seen["TMP"]
    assert seen["expanduser"] == seen["HOME"]
    for name in workspace.FOLDERS:
        assert inside(seen[name], scratch) and seen[name] != scratch, (name, seen[name])
        assert call(worker, "can_write", os.path.join(seen[name], "probe.txt")) is True, name
    outside = [
        str(tmp_path / "beside-the-scratch.txt"),  # the scratch's own parent
        str(ROOT / "written-from-the-sandbox.txt"),  # the course folder
        os.path.join(tempfile.gettempdir(), f"written-from-the-sandbox-{os.getpid()}.txt"),
        os.path.join(os.path.expanduser("~"), f"written-from-the-sandbox-{os.getpid()}.txt"),  # the real home
    ]
    for path in outside:
        assert call(worker, "can_write", path) is False, path
        assert not os.path.exists(path), path


def test_the_environment_points_only_inside_the_scratch(tmp_path: Path) -> None:
    env = workspace.environment(str(tmp_path))
    assert env["MPLBACKEND"] == "Agg"
    paths = {k: v for k, v in env.items() if k not in workspace.FIXED}
    assert all(inside(v, str(tmp_path)) and os.path.isabs(v) for v in paths.values()), paths
    assert env["TMPDIR"] == env["TEMP"] == env["TMP"]


MATPLOTLIB_UNDER_THE_LAYERS = r'''
import json, os, sys
from grader.sandbox import layers, workspace
scratch = sys.argv[1]
os.chdir(scratch)
status = layers.apply_layers(layers.ChildPolicy(scratch_dir=scratch))
env = workspace.enter(scratch)
assert "matplotlib" not in sys.modules
import matplotlib.pyplot as plt
plt.figure(); plt.plot([0, 1], [1, 0]); plt.title("t"); plt.savefig("x.png")
print(json.dumps({"layers": status, "config": sorted(os.listdir(env["MPLCONFIGDIR"])),
                  "png": os.path.getsize("x.png"), "backend": plt.get_backend(),
                  "cachedir": __import__("matplotlib").get_cachedir(), "mplconfigdir": env["MPLCONFIGDIR"]}))
'''


def test_matplotlib_imports_under_the_layers_without_the_servers_preload(tmp_path: Path,
                                                                         active_here: set[str]) -> None:
    """A fresh interpreter (nothing preloaded): matplotlib builds its font cache in the private config folder."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-c", MATPLOTLIB_UNDER_THE_LAYERS, str(scratch)], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert_layers_active(report["layers"], active_here)
    assert report["backend"].lower() == "agg" and report["png"] > 1000
    assert report["cachedir"] == report["mplconfigdir"]
    assert any(name.startswith("fontlist-") for name in report["config"]), report["config"]
    if "mountns_scratch" in active_here:
        assert list(scratch.iterdir()) == []  # it was all on the child's tmpfs, gone with it


# ---------------------------------------------------------------- the course's extra packages


def _config_with(tmp_path: Path, defaults: Any = None, attention: Any = None) -> Path:
    raw = yaml.safe_load((COURSE_ROOT / "assignments.yaml").read_text(encoding="utf-8"))
    for spec in raw["assignments"].values():
        for key in ("reference", "stub"):
            if spec.get(key):
                spec[key] = str(COURSE_ROOT / spec[key])
    if defaults is not None:
        raw["defaults"]["packages"] = defaults
    if attention is not None:
        raw["assignments"]["attention"]["packages"] = attention
    path = tmp_path / "assignments.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def test_packages_merge_the_defaults_and_the_assignments(tmp_path: Path) -> None:
    config = load_config(_config_with(tmp_path, defaults=["einops"], attention=["einx>=0.1", "einops"]))
    assert config.assignment("attention").packages == ("einops", "einx>=0.1")
    assert config.assignment("attention-modules").packages == ("einops",)
    assert load_config(COURSE_ROOT / "assignments.yaml").assignment("attention").packages == ()


@pytest.mark.parametrize("bad, where", [
    ("einops", "defaults.packages"),
    ([1], "defaults.packages.0"),
    ([["einops"]], "defaults.packages.0"),
    ({"einops": "0.7"}, "defaults.packages"),
    (["--index-url=https://example.org"], "defaults.packages.0"),
    (["einops\n"], "defaults.packages.0"),
])
def test_a_bad_packages_value_is_one_clear_line(tmp_path: Path, bad: Any, where: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_config_with(tmp_path, defaults=bad))
    message = str(info.value)
    assert "\n" not in message, message
    assert f": {where}: " in message, message
    assert "not of type" in message or "not a pip requirement" in message, message


def dependencies(pyproject: bytes) -> list[str]:
    return tomllib.loads(pyproject.decode())["project"]["dependencies"]


def test_packages_are_the_kits_dependencies(tmp_path: Path) -> None:
    config = load_config(_config_with(tmp_path, defaults=["einops"], attention=["einx>=0.1"]))
    packages = kit.course_packages(config.assignments.values())
    assert packages == ["einops", "einx>=0.1"]
    deps = dependencies(kit.pyproject(packages))
    assert deps[-2:] == ["einops", "einx>=0.1"] and any(d.startswith("matplotlib") for d in deps)
    assert dependencies(kit.pyproject()) == deps[:-2]  # nothing configured: the kit as before


def test_packages_are_the_gradescope_bundles_dependencies(tmp_path: Path) -> None:
    config = load_config(_config_with(tmp_path, attention=["einops"]))
    files = gradescope.autograder_files(config, config.assignment("attention"))
    deps = dependencies(files["pyproject.toml"])
    assert "einops" in deps
    assert any(d.startswith("matplotlib") for d in deps)  # a submission may import it on Gradescope too
    assert 'pip install -e "$SOURCE"' in files["setup.sh"].decode()  # which installs those dependencies
    bundled = yaml.safe_load(files["assignments.yaml"])
    assert bundled["assignments"]["attention"]["packages"] == ["einops"]


@pytest.mark.parametrize("classroom", [False, True], ids=["autograde", "classroom"])
def test_the_ci_workflows_install_the_kits_dependencies(classroom: bool) -> None:
    """The workflows run ``pip install .`` on the kit, whose pyproject lists the course's packages."""
    from grader.release import bundle

    config = load_config(COURSE_ROOT / "assignments.yaml")
    steps = yaml.safe_load(bundle.workflow([config.assignment("attention")], classroom))
    commands = [line.strip() for job in steps["jobs"].values() for step in job["steps"]
                for line in str(step.get("run", "")).splitlines()]
    assert "pip install ." in commands, commands


def test_a_release_kit_lists_the_course_packages(tmp_path: Path) -> None:
    from grader.release import bundle

    config_path = _config_with(tmp_path, attention=["einops"])
    bundle.build_release(tmp_path / "release", ["attention"], config_path)
    deps = dependencies((tmp_path / "release" / "pyproject.toml").read_bytes())
    assert deps[-1] == "einops" and any(d.startswith("torch") for d in deps)
