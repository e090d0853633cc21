"""``grader release``: build what students receive, the same bytes for the same course.

The bundle holds, for each released assignment, the exercise file and the
same exercises as a notebook; the student kit (``kit``) that ``pip install .``
turns into a ``grader check`` command; the visible checks' expected values,
recorded here by grading the reference with the reference replaced by a
``tape.Recorder``; a student README; and ``release.json``, the hash of every
file. Nothing depends on the clock or on the order of a directory listing,
so re-releasing an unchanged course rewrites identical files. Nothing is written
when a file would write out an exercise's answer (``answers``): the release
stops with one line naming the file, the line and the exercise.

Pushed as a template repository (or a GitHub Classroom starter), the bundle
grades itself in GitHub Actions:

* ``.github/workflows/autograde.yml`` (``--classroom``: ``classroom.yml``, the
  one workflow GitHub Classroom's reporter accepts) runs ``grader ci`` on
  each push and pull request, rendered from ``templates/*.yml.j2``.
* ``.grader/hidden.bundle``, only with a key (``--hidden-key-file`` or
  ``--hidden-key-env``): the full grader tree of every released assignment,
  hidden checks and references included, encrypted (``hidden_bundle``), so
  CI holding the organisation secret ``GRADER_HIDDEN_KEY`` grades exactly as
  ``grader grade`` does here, while the repository shows only ciphertext.
* ``.grader/integrity.json``: the sha256 of every file the autograder trusts
  (the workflow, the kit's ``grader/`` package, ``pyproject.toml``, the
  hidden bundle), for ``grader ci`` to report a changed copy.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import jinja2

from grader import api, integrity
from grader.config import DEFAULT_CONFIG, AssignmentConfig, load_config
from grader.files import write_atomically
from grader.release import answers, hidden_bundle, kit
from grader.release.gradescope import TORCH_VERSION
from grader.release.notebooks import LessonError, build_notebook
from grader.session import load_reference
from grader.session.tape import Recorder
from grader.version import __version__

HERE = Path(__file__).resolve().parent
MANIFEST = "release.json"
INTEGRITY = integrity.MANIFEST  # .grader/integrity.json
WORKFLOWS = {False: ".github/workflows/autograde.yml", True: ".github/workflows/classroom.yml"}  # by --classroom
CI_PYTHON = "3.11"  # the Python the workflows set up: the oldest the grader supports


class ReleaseError(Exception):
    """The course cannot be released as it is (one line for the CLI, exit 2)."""


@dataclass(frozen=True)
class Release:
    out: Path
    files: dict[str, str]  # relative path -> sha256


def build_release(out: Path, assignment_ids: Sequence[str] | None = None,
                  config_path: Path = DEFAULT_CONFIG, *, hidden_key: str | None = None,
                  classroom: bool = False) -> Release:
    """Write the bundle for ``assignment_ids`` (default: every assignment) into ``out``.

    ``hidden_key``: a key from ``grader keygen`` (``read_hidden_key``); with one, the release carries
    the encrypted hidden checks. ``classroom``: ship GitHub Classroom's workflow instead of autograde.yml.
    """
    config = load_config(config_path)
    ids = sorted(assignment_ids or config.assignments)
    written_before = _previous_release(out)  # before the minutes of recording: a wrong folder fails at once
    if hidden_key is not None:
        try:
            hidden_key = hidden_bundle.check_key(hidden_key, "the hidden key")
        except hidden_bundle.HiddenKeyError as exc:
            raise ReleaseError(str(exc)) from None
    files: dict[str, bytes] = {}
    assignments = [config.assignment(aid) for aid in ids]
    hidden: dict[str, int] = {}
    for a in assignments:
        files.update(_student_files(a))
        files.update(kit.check_files(a))
        expected, hidden[a.id] = record_expected(a, config_path)
        files[f"grader/course/expected/{a.id}.json"] = expected.encode()
    files.update(kit.package_files({a.checks_package for a in assignments}))
    files["grader/course/assignments.yaml"] = kit.kit_config(config, hidden)
    files["pyproject.toml"] = kit.pyproject(kit.course_packages(assignments))
    files[".gitignore"] = kit.gitignore()
    files["README.md"] = student_readme(assignments, hidden, hidden_key is not None, classroom).encode()
    workflow_path = WORKFLOWS[classroom]
    files[workflow_path] = workflow(assignments, classroom, sealed=hidden_key is not None).encode()
    if hidden_key is not None:
        previous = out / hidden_bundle.BUNDLE
        earlier = previous.read_bytes() if hidden_bundle.BUNDLE in written_before and previous.is_file() else None
        files[hidden_bundle.BUNDLE] = hidden_bundle.hidden_bundle(config, assignments, hidden_key, earlier)
    protected = [workflow_path, "pyproject.toml", *(p for p in files if p.startswith("grader/")),
                 *([hidden_bundle.BUNDLE] if hidden_key is not None else [])]
    files[INTEGRITY] = integrity_manifest(files, protected)
    hashes = {path: hashlib.sha256(data).hexdigest() for path, data in sorted(files.items())}
    files[MANIFEST] = (json.dumps({"grader": __version__, "assignments": ids, "files": hashes},
                                  indent=1, sort_keys=True) + "\n").encode()
    refused = answers.refusal(answers.scan(files))  # before a byte is written: a release with an answer never exists
    if refused is not None:
        raise ReleaseError(refused)
    _write(out, files, written_before)
    return Release(out, hashes)


def _student_files(a: AssignmentConfig) -> dict[str, bytes]:
    if a.stub is None or not a.stub.is_file():
        raise ReleaseError(f"assignment {a.id!r} has no stub file to hand out (`stub:` in assignments.yaml)")
    lesson = HERE / "lesson" / f"{a.checks_package}.yaml"
    if not lesson.is_file():
        raise ReleaseError(f"assignment {a.id!r} has no lesson text for its notebook ({lesson.relative_to(HERE.parent.parent)})")
    try:
        notebook = build_notebook(a.stub, lesson)
    except LessonError as exc:
        raise ReleaseError(str(exc)) from None
    return {a.file: a.stub.read_bytes(), _notebook(a): notebook.encode()}


def record_expected(a: AssignmentConfig, config_path: Path) -> tuple[str, int]:
    """Grade the reference on the visible checks with a recorder in its place: the kit's expected
    values, and how many checks were left out as hidden.

    Every visible check must pass on the reference; one that does not would
    ship a wrong expectation, so the release stops and names it.
    """
    if a.reference is None:
        raise ReleaseError(f"assignment {a.id!r} has no reference: a student kit cannot be released again")
    try:
        recorder = Recorder(load_reference(a.reference))
    except Exception as exc:  # noqa: BLE001 - any error in the reference's own import stops the release
        raise ReleaseError(f"the reference of {a.id!r} cannot be loaded: {type(exc).__name__}: {exc}") from None
    with api.Grader(a.id, config_path=config_path, visible_only=True, reference=recorder.for_check) as grader:
        card = grader.grade(a.reference)
        hidden = grader.hidden_checks
    bad = [c for c in card.checks if c.status not in ("passed", "skipped")]
    if card.grader_error or bad:
        detail = card.grader_error or f"{bad[0].id} ({bad[0].exercise}): {bad[0].status}: {bad[0].message[:300]}"
        raise ReleaseError(f"the reference of {a.id!r} does not pass its visible checks: {detail}")
    return recorder.to_json(), hidden


def student_readme(assignments: list[AssignmentConfig], hidden: dict[str, int], sealed: bool = False,
                   classroom: bool = False) -> str:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=False,
                                     keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    rows = [{"id": a.id, "title": a.title, "file": a.file, "notebook": _notebook(a), "hidden": hidden[a.id]}
            for a in assignments]
    return environment.get_template("README.md.j2").render(assignments=rows, version=__version__, sealed=sealed,
                                                           classroom=classroom, workflow=WORKFLOWS[classroom])


def workflow(assignments: list[AssignmentConfig], classroom: bool = False, sealed: bool = False) -> str:
    """The repository's autograding workflow, ``templates/autograde.yml.j2`` (``classroom.yml.j2``).

    ``sealed`` (a release with the hidden bundle) is the only rendering whose Grade step receives the
    secret ``GRADER_HIDDEN_KEY``: a student who can push can rewrite this workflow and print whatever
    it receives, so a release without the bundle asks for no secret at all and grades the visible
    checks only. Its own delimiters (``<@ @>``, ``<% %>``): GitHub's expressions are ``${{ }}``, Jinja's default.
    """
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=False,
                                     keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
                                     trim_blocks=True, lstrip_blocks=True, variable_start_string="<@", variable_end_string="@>",
                                     block_start_string="<%", block_end_string="%>",
                                     comment_start_string="<#", comment_end_string="#>")
    submissions = [p for a in assignments for p in (a.file, _notebook(a))]
    protected = [WORKFLOWS[classroom], ".grader/**", "grader/**", "pyproject.toml"]
    template = "classroom.yml.j2" if classroom else "autograde.yml.j2"
    return environment.get_template(template).render(paths=submissions + protected, version=__version__,
                                                     torch=TORCH_VERSION, python=CI_PYTHON, sealed=sealed)


def integrity_manifest(files: dict[str, bytes], protected: Sequence[str]) -> bytes:
    """``.grader/integrity.json``: ``{"version": 1, "files": {path: sha256}}`` for the protected files.

    Made from the release's bytes in memory, before anything is written, so that release.json lists
    it like every other file; encoded by ``grader.integrity.manifest_bytes``, as ``write_manifest`` does
    from a folder, and what ``grader.integrity.verify`` reads in CI.
    """
    return integrity.manifest_bytes({path: hashlib.sha256(files[path]).hexdigest() for path in set(protected)})


def read_hidden_key(out: Path, key_file: Path | None, key_env: str | None) -> str | None:
    """The key ``--hidden-key-file`` or ``--hidden-key-env`` names (None: neither, no hidden bundle).

    A key file inside ``out`` is refused: the release folder becomes the student repository, and a
    key pushed with it would open the hidden checks to everyone who can read it.
    """
    try:
        if key_file is not None:
            inside = out.resolve()
            if key_file.resolve() == inside or inside in key_file.resolve().parents:
                raise ReleaseError(f"the key file {key_file} lies inside the release folder {out}, which students "
                                   "receive: keep the key outside it")
            return hidden_bundle.key_from_file(key_file)
        if key_env is not None:
            return hidden_bundle.key_from_env(key_env)
    except hidden_bundle.HiddenKeyError as exc:
        raise ReleaseError(str(exc)) from None
    return None


def _notebook(a: AssignmentConfig) -> str:
    return f"{Path(a.file).stem}.ipynb"


def _previous_release(out: Path) -> set[str]:
    """The files an earlier release wrote into ``out``; ``out`` must be missing, empty or a release."""
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out} exists and is not a folder")
    previous = out / MANIFEST
    if not previous.is_file():
        if out.is_dir() and any(out.iterdir()):
            raise ReleaseError(f"{out} is not empty and holds no earlier release ({MANIFEST}); choose an empty folder")
        return set()
    try:
        return set(json.loads(previous.read_text(encoding="utf-8"))["files"])
    except (ValueError, KeyError, TypeError):
        raise ReleaseError(f"{previous} is not a release manifest; choose an empty folder") from None


def _write(out: Path, files: dict[str, bytes], written_before: set[str]) -> None:
    """Write what changed; remove what an earlier release wrote that this one does not."""
    for stale in sorted(written_before - set(files)):
        (out / stale).unlink(missing_ok=True)
    for rel, data in sorted(files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_bytes() != data:
            write_atomically(path, data.decode("utf-8"))
