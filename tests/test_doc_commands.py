"""Every shell command the docs show as runnable is run here (issue 40): a command that stops working
fails the suite.

``tests/doc_commands.py`` reads the commands: ```bash blocks are run, in page order, each page in a fresh
working folder of its own (the course's checkout is ``$COURSE``, ``HOME`` is inside the folder, so
``~/.config/grader/course-secret`` is made anew, and the virtual environment's ``bin`` is first on
``PATH``, as with it active). ```sh blocks are shown, not run; each of their lines is listed in NOT_RUN
with why, and a line listed nowhere, or listed but gone, fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.doc_commands import RUN, SHELL_FENCES, SHOWN, Command, commands, fences, page_commands

GITHUB = "pushes to GitHub (gh, a remote repository): not reachable from a test"
NOT_RUN: dict[str, str] = {
    # docs/adding-an-exercise.md
    ".venv/bin/grader new-exercise sliding_window_mask --assignment attention --like causal_mask "
    '--signature "T: int, window: int, device: torch.device | str | None = None -> torch.Tensor"':
        "writes into the checkout itself; tests/test_authoring.py runs new-exercise in a copy of the course",
    ".venv/bin/python -m pytest -q tests/test_authoring.py -k real_project": "the suite itself",
    ".venv/bin/python -m pytest -q --affected-by sliding_window_mask":
        "the suite itself, for an exercise the guide adds (tests/test_affected.py tests the selection)",
    # docs/contributing.md
    ".venv/bin/python -m pytest -q": "the suite itself (.ci/run runs it)",
    '.venv/bin/python -m pytest -q -m "not slow"': "the suite itself",
    ".venv/bin/python -m pytest -q -n 0 tests/test_readme.py": "the suite itself",
    ".venv/bin/python -m pytest -q -n 0 tests/test_help_matches_readme.py -k keygen": "the suite itself",
    ".venv/bin/mkdocs build --strict --site-dir /tmp/site": "tests/test_docs_site.py runs the same build into a temp folder",
    ".venv/bin/mkdocs serve": "a server that runs until Ctrl-C",
    ".venv/bin/python bench/diagnosis.py --corpus project unseen fresh": "a benchmark: minutes of grading",
    ".venv/bin/python bench/credit.py": "a benchmark: minutes of grading",
    ".venv/bin/python bench/blame.py": "a benchmark: minutes of grading",
    ".venv/bin/python bench/jobs.py": "a benchmark: minutes of grading",
    # docs/instructors.md
    "git clone URL-OF-THIS-REPOSITORY attention-autograder && cd attention-autograder": "needs the network and a URL",
    "python3 -m venv .venv && .venv/bin/pip install -q -r requirements.txt && .venv/bin/pip install -q --no-deps -e . "
    "&& .venv/bin/python -m compileall -q grader": "a fresh virtual environment: .ci/run runs the same set-up (the README's second line)",
    "export COURSE=$HOME/attention-autograder": "the test sets COURSE to the checkout it runs in",
    '. "$COURSE/.venv/bin/activate"': "the test puts the environment's bin first on PATH, as activating does",
    "mkdir -p ~/attention-2026 && cd ~/attention-2026": "the test runs each page in a fresh folder of its own",
    "grader release --out release/ --hidden-key-file key.txt":
        "the same release with the key is run on docs/platforms.md (--out attention-grading); a release takes a minute",
    "grader grade alice.py --assignment attention --out alice.json --strict":
        "refuses (exit 2) wherever a layer is missing, which depends on the machine; tests/test_cli.py covers --strict",
    "grader export moodle graded/ --worksheet worksheet.csv --out upload.csv":
        "needs Moodle's own worksheet; tests/test_moodle_export.py runs it on worksheets in tests/data/moodle/",
    'grader export canvas graded/ --roster students.csv --title "Attention (5501)" --out canvas.csv':
        "needs Canvas's gradebook export as the roster; tests/test_export_formats.py covers the Canvas export",
    # docs/platforms.md
    'cd student-template && git init -q -b main && git add -A && git commit -qm "Attention from scratch"': GITHUB,
    "gh repo create YOUR-ORG/attention-template --private --source . --push": GITHUB,
    "gh repo edit YOUR-ORG/attention-template --template": GITHUB,
    "cd attention-grading && mkdir -p .github/workflows": GITHUB,
    'cp "$COURSE/recipes/github-actions/central-grading.yml" .github/workflows/': GITHUB,
    "printf '%s\\n' YOUR-ORG/attention-alice YOUR-ORG/attention-bob > students.txt": GITHUB,
    'git init -q -b main && git add -A && git commit -qm "Grading" && gh repo create YOUR-ORG/attention-grading '
    "--private --source . --push": GITHUB,
    # docs/students.md
    "python3 -m venv .venv": "the student kit's install: tests/test_round_trip.py installs a release into a fresh environment",
    ". .venv/bin/activate": "the student kit's install (as above)",
    "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu": "the student kit's install (as above)",
    "pip install .": "the student kit's install (as above)",
    "grader check attention.ipynb": "needs a release's notebook; the .py line after it is run here",
    "grader check --watch attention.py": "runs until Ctrl-C",
}
# A command the page says exits with another status, and why.
EXIT: dict[str, tuple[int, str]] = {
    "mkdir -p tour && cp exercises/attention.py tour/ && grader check tour/attention.py --out tour/card.json":
        (1, "the README says it exits 1 while a visible check fails: the stub fails them"),
    "grader check attention.py --out card.json": (1, "the course's stub fails its visible checks (exit 1, as the page says)"),
}
PAGES = page_commands(ROOT)
RUN_PAGES = sorted(page for page, found in PAGES.items() if any(c.fence == RUN for c in found))
VENV_BIN = str(Path(sys.executable).parent)


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRADER_") and k != "VIRTUAL_ENV"}
    env.update(HOME=str(home), COURSE=str(ROOT), PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return env


def run_commands(found: list[Command], folder: Path, exits: dict[str, tuple[int, str]]) -> list[str]:
    """Run the ```bash commands of ``found`` in order in ``folder``; one line per command that did not end as
    the page says (0, or its ``exits`` entry). Every command runs, so one failure hides no other."""
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    failures = []
    for command in (c for c in found if c.fence == RUN):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command.text], cwd=folder, env=_environment(home),
                              capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        want = exits.get(command.text, (0, ""))[0]
        if done.returncode != want:
            failures.append(f"{command.page}:{command.line}: `{command.text}` exited {done.returncode}, not {want}:\n"
                            f"{(done.stdout + done.stderr)[-1500:]}")
    return failures


def _folder_for(page: str, tmp_path: Path) -> Path:
    """A fresh working folder: the README's tour runs in a checkout, so it gets the checkout's files it reads."""
    folder = tmp_path / "work"
    folder.mkdir()
    if page == "README.md":
        for name in ("examples", "exercises"):
            shutil.copytree(ROOT / name, folder / name)
    return folder


# ------------------------------------------------------------------ what is run and what is not


def test_every_shown_only_command_is_listed_with_why_and_every_listed_one_is_shown():
    shown = {c.text for found in PAGES.values() for c in found if c.fence == SHOWN}
    assert not shown - NOT_RUN.keys(), f"```sh lines not listed in NOT_RUN with why: {sorted(shown - NOT_RUN.keys())}"
    assert not NOT_RUN.keys() - shown, f"NOT_RUN lists lines no page shows any more: {sorted(NOT_RUN.keys() - shown)}"
    assert all(why.strip() for why in NOT_RUN.values())
    ran = {c.text for found in PAGES.values() for c in found if c.fence == RUN}
    assert not ran & NOT_RUN.keys(), "a ```bash line is listed as not run"
    assert EXIT.keys() <= ran, f"EXIT lists lines no ```bash block shows: {sorted(EXIT.keys() - ran)}"


def test_the_docs_use_no_other_shell_fence():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        used = set(fences(path.read_text(encoding="utf-8")))
        assert not used & set(SHELL_FENCES), f"{path.name}: use ```bash (run) or ```sh (shown only), not {used & set(SHELL_FENCES)}"


def test_the_pages_show_commands_to_run():
    count = sum(1 for found in PAGES.values() for c in found if c.fence == RUN)
    assert count >= 25, count


@pytest.mark.parametrize("text, expected", [
    ("```bash\na   # note\nb \\\n  c\n```\n", [("bash", "a"), ("bash", "b c")]),
    ("1. step\n\n   ```sh\n   x\n   ```\n\n   ```bash\n   y\n   ```\n", [("sh", "x"), ("bash", "y")]),
    ("```python\nimport os\n```\n```yaml\nk: v\n```\n```\nplain\n```\n", []),
    ("```bash\n\nfirst\n\nsecond\n```\n", [("bash", "first"), ("bash", "second")]),
])
def test_the_reader_takes_each_command_of_bash_and_sh_blocks_only(text, expected):
    assert [(c.fence, c.text) for c in commands("p.md", text)] == expected


@pytest.mark.parametrize("failing", ["false", "exit 3", "no-such-program-here --help", "false | cat",
                                     "cat no-such-file", "grader no-such-verb"])
def test_a_command_that_stops_working_is_reported(tmp_path, failing):
    page = f"```bash\ntrue\n{failing}\necho after > after.txt\n```\n"
    failures = run_commands(commands("p.md", page), tmp_path, {})
    assert len(failures) == 1 and f"`{failing}`" in failures[0] and failures[0].startswith("p.md:3:"), failures
    assert (tmp_path / "after.txt").is_file()  # the commands after it still ran
    assert run_commands(commands("p.md", page), tmp_path, {failing: (run_status(failing, tmp_path), "")}) == []


def run_status(command: str, folder: Path) -> int:
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=folder, env=_environment(folder),
                          capture_output=True, timeout=120).returncode


# ------------------------------------------------------------------ the commands themselves


def _run_page(page: str, tmp_path: Path) -> None:
    failures = run_commands(PAGES[page], _folder_for(page, tmp_path), EXIT)
    assert not failures, "\n\n".join(failures)


# One class per page: pyproject's `--dist loadscope` sends each class to a worker of its own, so the pages
# run side by side rather than one after another on one worker.
@pytest.mark.slow
class TestReadmeCommands:
    def test_every_command_works(self, tmp_path):
        _run_page("README.md", tmp_path)


@pytest.mark.slow
class TestInstructorsCommands:
    def test_every_command_works(self, tmp_path):
        _run_page("docs/instructors.md", tmp_path)


@pytest.mark.slow
class TestPlatformsCommands:
    def test_every_command_works(self, tmp_path):
        _run_page("docs/platforms.md", tmp_path)


@pytest.mark.slow
class TestStudentsCommands:
    def test_every_command_works(self, tmp_path):
        _run_page("docs/students.md", tmp_path)


RUN_BY_A_CLASS = ("README.md", "docs/instructors.md", "docs/platforms.md", "docs/students.md")


def test_every_page_with_commands_to_run_has_its_class():
    """A page that starts showing ```bash commands needs a class above, or its commands would run nowhere."""
    assert sorted(RUN_BY_A_CLASS) == RUN_PAGES
