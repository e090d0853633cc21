"""``grader gradescope``: the autograder zip a Gradescope programming assignment takes.

Gradescope's layout (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
the zip is unpacked into ``/autograder/source``; ``setup.sh`` runs once, as
root on Ubuntu, when Gradescope builds the image; ``run_autograder`` (copied
to ``/autograder/run_autograder``) runs once per submission, with the files in
``/autograder/submission`` and the result expected in
``/autograder/results/results.json``.

What goes in, and why:

* The grader package as the course runs it, WITH the hidden checks, the
  reference and a config trimmed to the one assignment: this zip is uploaded
  by staff and never reaches students (the student kit is ``grader release``).
  ``grader/release`` stays out (nothing there grades), and so do the other
  assignments' checks and mistake catalogues. That tree is ``tree.source_tree``,
  the same one ``grader release --hidden-key-file`` encrypts for every
  released assignment.
* One zip per assignment: a Gradescope assignment has one autograder, and a
  zip that picked the assignment by the file it finds would grade an
  ``attention_modules.py`` handed in to the ``attention`` assignment against
  the wrong checks. ``--assignment`` is needed when the config has several.
* ``setup.sh`` makes a virtual environment outside ``/autograder/source``
  with a CPU build of torch, then installs the bundled grader in editable
  mode: the checks and the reference stay in ``/autograder/source``, outside
  the Python installation the sandbox may read (``api.assert_secrets_unreadable``
  refuses to grade otherwise). It ends by grading the reference, so a broken
  image fails Gradescope's build, not the first student.
* ``run_autograder`` is a few lines of bash around ``gradescope_run.py``
  (``grader/release/gradescope_run.py``), which picks the file, runs
  ``grader grade`` and ``grader export gradescope``, and always leaves a
  ``results.json``. ``AUTOGRADER_ROOT`` (default ``/autograder``) and
  ``GRADER_BIN`` (a ``grader`` command to use instead of setup.sh's) let
  tests and staff run it against a temporary folder without setup.sh.
* ``autograder.json``: the assignment, versions and every file's sha256, to
  tell later which autograder a Gradescope assignment holds.

The zip is the same bytes for the same course (``tree.zip_bytes``): entries
sorted, one fixed timestamp, fixed permissions, fixed compression.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Sequence

from grader.config import DEFAULT_CONFIG, AssignmentConfig, Config, load_config
from grader.release import tree
from grader.release.kit import INSTRUCTOR_ONLY_DEPENDENCIES, course_project, package_pyproject, with_packages
from grader.version import __version__
from grader.words import count

TORCH_VERSION = "2.13.0"  # the CPU wheel setup.sh installs; requirements.txt pins the same (a test checks)
VENV = "/opt/attention-grader"  # setup.sh's virtual environment: outside /autograder/source, which holds the secrets
RUNNER = Path(__file__).resolve().with_name("gradescope_run.py")
MANIFEST = "autograder.json"
# What a submission may import beyond the grader's own dependencies (README, "What a submission may
# import"): matplotlib reaches the course environment through copydetect, which stays out of the bundle.
SUBMISSION_DEPENDENCIES = ("matplotlib>=3.7",)
EXECUTABLE = ("setup.sh", "run_autograder")


class GradescopeError(Exception):
    """The autograder cannot be built as asked (one line for the CLI, exit 2)."""


def build_autograder(out: Path, assignment_ids: Sequence[str] | None = None,
                     config_path: Path = DEFAULT_CONFIG) -> Path:
    """Write the autograder zip of one assignment to ``out``; returns ``out``.

    ``assignment_ids``: the assignment (one id; may be left out when the
    config has only one). Raises ConfigError or GradescopeError.
    """
    config = load_config(config_path)
    assignment = _one_assignment(config, assignment_ids)
    if out.is_dir():
        raise GradescopeError(f"{out} is a folder; --out names the zip to write (e.g. autograder.zip)")
    files = autograder_files(config, assignment)
    out.parent.mkdir(parents=True, exist_ok=True)
    tree.write_file_atomically(out, tree.zip_bytes(files, EXECUTABLE))
    return out


def _one_assignment(config: Config, assignment_ids: Sequence[str] | None) -> AssignmentConfig:
    ids = sorted(set(assignment_ids or ()))
    if len(ids) > 1:
        raise GradescopeError(f"one autograder zip per assignment (a Gradescope assignment has one autograder); "
                              f"build {', '.join(ids)} one at a time")
    if not ids:
        if len(config.assignments) != 1:
            raise GradescopeError(f"{config.path} has {count(len(config.assignments), 'assignment')} "
                                  f"({', '.join(sorted(config.assignments))}): choose one with --assignment "
                                  "(one autograder zip per Gradescope assignment)")
        ids = list(config.assignments)
    assignment = config.assignment(ids[0])
    if assignment.is_kit or assignment.reference is None:
        raise GradescopeError(f"assignment {assignment.id!r} has no reference (a student kit's config?): build the "
                              "autograder from the course repository")
    if not assignment.reference.is_file():
        raise GradescopeError(f"the reference of {assignment.id!r}, {assignment.reference}, is not a file")
    if not assignment.checks_dir.is_dir():
        raise GradescopeError(f"the checks of {assignment.id!r}, {assignment.checks_dir}, are not a folder")
    return assignment


def autograder_files(config: Config, assignment: AssignmentConfig) -> dict[str, bytes]:
    """Every file of the zip, by path inside it (``/autograder/source/<path>`` on Gradescope)."""
    reference = tree.reference_paths([assignment])[assignment.id]
    files = tree.source_tree(config, [assignment], "grader gradescope")
    files["pyproject.toml"] = pyproject(assignment.packages)
    files["setup.sh"] = setup_script(assignment, reference).encode()
    files["run_autograder"] = run_script(assignment).encode()
    files["gradescope_run.py"] = RUNNER.read_bytes()
    hashes = {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())}
    files[MANIFEST] = (json.dumps({"assignment": assignment.id, "file": assignment.file, "grader": __version__,
                                   "torch": TORCH_VERSION, "files": hashes}, indent=1, sort_keys=True) + "\n").encode()
    return files


def pyproject(packages: Sequence[str] = ()) -> bytes:
    """The bundle's pyproject: the course grader's dependencies with torch pinned, a `grader` command.

    grade-all's similarity report (copydetect) never runs on Gradescope, so it is left out, and
    matplotlib, which it brought, is listed itself (``SUBMISSION_DEPENDENCIES``). ``packages``: the
    assignment's extra packages (``packages:`` in assignments.yaml), which setup.sh's ``pip install -e``
    then installs where submissions run.
    """
    deps = [f"torch=={TORCH_VERSION}" if _name(d) == "torch" else d for d in course_project()["dependencies"]
            if not d.startswith(INSTRUCTOR_ONLY_DEPENDENCIES)]
    return package_pyproject("attention-autograder-gradescope",
                             "The 'attention from scratch' autograder as Gradescope runs it (staff only: hidden checks)",
                             with_packages([*deps, *SUBMISSION_DEPENDENCIES], packages))


def _name(requirement: str) -> str:
    for i, ch in enumerate(requirement):
        if not (ch.isalnum() or ch in "-_."):
            return requirement[:i].lower()
    return requirement.lower()


def setup_script(assignment: AssignmentConfig, reference: str) -> str:
    """``setup.sh``: Python 3.11+, a venv with CPU torch and the bundled grader, then the reference graded."""
    q = shlex.quote
    return f"""#!/usr/bin/env bash
# Gradescope runs this once, as root on Ubuntu, when it builds the autograder image.
# Written by `grader gradescope` (grader {__version__}) for assignment {assignment.id!r}.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SOURCE="${{AUTOGRADER_ROOT:-/autograder}}/source"
VENV={q(VENV)}

# Python 3.11 or newer (Ubuntu 22.04's python3 is 3.10; 24.04's is 3.12), with venv.
python=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 \\
      && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python="$(command -v "$candidate")"
    break
  fi
done
if [ -z "$python" ]; then
  apt-get update
  apt-get install -y --no-install-recommends python3.11 python3.11-venv
  python="$(command -v python3.11)"
fi
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  apt-get update
  apt-get install -y --no-install-recommends "$(basename "$python")-venv"
fi
# pyseccomp loads libseccomp; without it the seccomp layer is off (the card says so).
if ! ldconfig -p | grep 'libseccomp\\.so\\.2' >/dev/null; then
  apt-get update
  apt-get install -y --no-install-recommends libseccomp2
fi

# A venv outside $SOURCE: the sandbox may read the Python installation, never $SOURCE (checks, reference).
"$python" -m venv "$VENV"
export PATH="$VENV/bin:$PATH"  # pip below is the venv's
pip install --upgrade pip
pip install torch=={TORCH_VERSION} --index-url https://download.pytorch.org/whl/cpu
# Editable: the grader runs from $SOURCE, so the hidden checks are not copied into site-packages.
pip install -e "$SOURCE"
ln -sf "$VENV/bin/grader" /usr/local/bin/grader

# Grade the reference now: a broken image fails this build, not the first student's submission.
card="$(mktemp -d)/reference.json"
"$VENV/bin/grader" grade "$SOURCE"/{q(reference)} --assignment {q(assignment.id)} \\
  --config "$SOURCE/assignments.yaml" --out "$card" --format text
"$VENV/bin/python" - "$card" <<'EOF'
import json, sys
card = json.load(open(sys.argv[1], encoding="utf-8"))
if card.get("grader_error") or card["score"] != card["max_score"]:
    sys.exit(f"setup.sh: the reference scores {{card['score']}} of {{card['max_score']}} here: "
             f"{{card.get('grader_error') or 'see the table above'}}")
print(f"setup.sh: the reference scores {{card['score']}} of {{card['max_score']}}; "
      f"isolation: {{card['environment'].get('isolation')}}")
EOF
"""


def run_script(assignment: AssignmentConfig) -> str:
    """``run_autograder``: find the grader and Python, hand over to ``gradescope_run.py``; a last-resort result."""
    q = shlex.quote
    last_resort = json.dumps({"score": 0, "output": "The autograder failed before it could grade this submission. "
                              "No grade was given (the 0 is not your score); please tell course staff.",
                              "output_format": "text"})
    return f"""#!/usr/bin/env bash
# Gradescope runs this once per submission (from /autograder/run_autograder, in /autograder).
# Written by `grader gradescope` (grader {__version__}) for assignment {assignment.id!r}: grades
# {assignment.file} (or its .ipynb) from submission/ and writes results/results.json, always.
#
# Test hooks: AUTOGRADER_ROOT is the folder laid out as /autograder (default /autograder);
# GRADER_BIN is the `grader` command to use instead of the one setup.sh installed.
set -u
root="${{AUTOGRADER_ROOT:-/autograder}}"
venv={q(VENV)}
grader="${{GRADER_BIN:-}}"
if [ -z "$grader" ]; then
  if [ -x "$venv/bin/grader" ]; then grader="$venv/bin/grader"; else grader="$(command -v grader || true)"; fi
fi
python="$venv/bin/python"
[ -x "$python" ] || python="$(command -v python3 || echo python3)"
"$python" "$root/source/gradescope_run.py" --root "$root" --grader "$grader" \\
  --assignment {q(assignment.id)} --file {q(assignment.file)}
if [ ! -s "$root/results/results.json" ]; then
  mkdir -p "$root/results"
  printf '%s\\n' {q(last_resort)} > "$root/results/results.json"
fi
exit 0
"""
