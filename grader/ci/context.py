"""Where ``grader ci`` runs and what it was asked: the options, the CI platform read from the
environment (GitHub Actions, GitLab CI, a plain shell) and the notes it prints."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.config import DEFAULT_CONFIG

KIT_CONFIG = "grader/course/assignments.yaml"  # relative to the repository root: what `grader release` writes
BUNDLE = ".grader/hidden.bundle"
KEY_VARIABLE = "GRADER_HIDDEN_KEY"
RELEASE_MANIFEST = "release.json"  # the release's own list of file hashes: tells an untouched stub
DEFAULT_OUT = "grader-results"
DEFAULT_JUNIT = "grader-junit.xml"
PULL_REQUEST_EVENTS = ("pull_request",)  # pull_request_target checks out the base: nothing of the PR to diff
HIDDEN_GRADE_TIMEOUT_S = 1800  # one file with every check; the config's own limits stop a submission long before
HIDDEN_RUN_WHEN = ("your work is graded with every check when this workflow runs with the course's key "
                   "(a push to your own assignment repository) and when course staff grade it")
NO_KEY_NOTE = (f"hidden checks not run: this run has no {KEY_VARIABLE} (pull requests from forks get no secrets); "
               f"{HIDDEN_RUN_WHEN}")
NO_BUNDLE_NOTE = (f"hidden checks not run: this repository has no hidden-check bundle ({BUNDLE}); "
                  "your work is graded with every check when course staff grade it")
NO_UNLOCK_NOTE = ("hidden checks not run: this grader cannot unlock them (it has no grader.hidden); "
                  "your work is graded with every check when course staff grade it")
GRADER_ERROR_SHOWN = "the grader itself failed on this file: the details are shown to course staff only"
Unlock = Callable[[Path, str, Path], Path]  # grader.hidden.unlock(bundle, key, into) -> the grader tree's root
Unlocker = Callable[[], Unlock | None]  # finds the unlock function; called only when a bundle and a key exist


class CIError(Exception):
    """Bad input: a missing --root, an unreadable or invalid kit config (one line, exit 2)."""


class CIInternalError(Exception):
    """The grader could not grade although the input was fine: the hidden checks would not unlock,
    the instructor's grader failed on a file (one line, exit 3)."""

# ------------------------------------------------------------------ where we run


@dataclass(frozen=True)
class Options:
    """The command line's choices (``grader ci --help``)."""

    root: Path | None = None
    threshold: float = 0.0  # percent; 0 never fails on score
    classroom: bool = False
    junit: Path | None = None
    out: Path | None = None
    all_files: bool = False


@dataclass(frozen=True)
class Environment:
    """The CI platform as its environment variables describe it."""

    kind: str  # "github" | "gitlab" | "shell"
    root: Path
    workspace: Path  # what annotation paths are relative to (GITHUB_WORKSPACE, else the root)
    event_name: str = ""
    event: Mapping[str, Any] = field(default_factory=dict)
    base_ref: str = ""
    step_summary: Path | None = None
    output: Path | None = None
    notes: tuple[str, ...] = ()
    # When the platform received the work, ISO 8601 ('' when unknown): the late policy's submission time
    # (``received_at``), never the commit date, which students set themselves.
    received_at: str = ""

    @property
    def pull_request(self) -> bool:
        return self.event_name in PULL_REQUEST_EVENTS


def detect(environ: Mapping[str, str], root: Path | None, cwd: Path) -> Environment:
    """GitHub Actions when ``GITHUB_ACTIONS=true``, GitLab CI when ``GITLAB_CI=true``, else a shell.

    ``root`` (``--root``) defaults to ``GITHUB_WORKSPACE`` / ``CI_PROJECT_DIR`` / ``cwd``.
    A GitHub event payload that cannot be read is a note, not an error: the
    run then grades every submission file, which is never less than the
    pull request's.
    """
    if environ.get("GITHUB_ACTIONS") == "true":
        kind, default = "github", environ.get("GITHUB_WORKSPACE")
    elif environ.get("GITLAB_CI") == "true":
        kind, default = "gitlab", environ.get("CI_PROJECT_DIR")
    else:
        kind, default = "shell", None
    chosen = root if root is not None else Path(default) if default else cwd
    chosen = chosen if chosen.is_absolute() else cwd / chosen
    if not chosen.is_dir():
        raise CIError(f"--root {chosen}: no such folder (the student repository to grade)")
    if kind != "github":
        return Environment(kind, chosen, chosen, received_at=received_at(kind, environ, {}))
    notes: list[str] = []
    event: dict[str, Any] = {}
    if event_path := environ.get("GITHUB_EVENT_PATH"):
        try:
            loaded = json.loads(Path(event_path).read_text(encoding="utf-8"))
            event = loaded if isinstance(loaded, dict) else {}
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            notes.append(f"cannot read the event payload {event_path} ({type(exc).__name__}); "
                         "grading every submission file")
    workspace = Path(environ["GITHUB_WORKSPACE"]) if environ.get("GITHUB_WORKSPACE") else chosen
    return Environment("github", chosen, workspace, environ.get("GITHUB_EVENT_NAME", ""), event,
                       environ.get("GITHUB_BASE_REF", ""), _path(environ.get("GITHUB_STEP_SUMMARY")),
                       _path(environ.get("GITHUB_OUTPUT")), tuple(notes),
                       received_at(kind, environ, event, environ.get("GITHUB_EVENT_NAME", "")))


def received_at(kind: str, environ: Mapping[str, str], event: Mapping[str, Any], event_name: str = "") -> str:
    """When the CI platform received the submission, as ISO 8601 UTC; '' when it does not say.

    Never ``head_commit.timestamp`` or any commit date: a student sets those (``git commit --date``).
    GitHub push: ``repository.pushed_at``, the time GitHub's server took the push (a Unix time in push
    payloads, ISO text in others). GitHub pull request: the head repository's ``pushed_at`` (the push
    that opened or updated it), else the base repository's. GitLab: ``CI_PIPELINE_CREATED_AT``, when the
    server created the pipeline for the push. Any other event or platform: unknown, so the late policy
    grades it as on time and says so (course staff grade with the LMS's or ``--submitted-at`` times).
    """
    if kind == "gitlab":
        return _iso(environ.get("CI_PIPELINE_CREATED_AT"))
    if kind != "github":
        return ""
    repository = event.get("repository")
    pushed = _iso(repository.get("pushed_at")) if isinstance(repository, Mapping) else ""
    if event_name == "push":
        return pushed
    if event_name in PULL_REQUEST_EVENTS:
        head = _dig(event, "pull_request", "head", "repo")
        return (_iso(head.get("pushed_at")) if isinstance(head, Mapping) else "") or pushed
    return ""


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _iso(value: Any) -> str:
    """A Unix time or ISO 8601 text as ISO 8601 UTC; '' for anything else."""
    from datetime import datetime, timezone

    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, timezone.utc).isoformat()
        if isinstance(value, str) and value:
            moment = datetime.fromisoformat(value)
            return moment.astimezone(timezone.utc).isoformat() if moment.tzinfo else ""
    except (ValueError, OverflowError, OSError):
        return ""
    return ""


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def kit_config(root: Path) -> Path:
    """The repository's own kit config when it has one (a student repository), else the installed default.

    The repository's copy is the one its recorded values belong to; it is a
    protected file, so an edited copy fails the integrity check.
    """
    own = root / KIT_CONFIG
    return own if own.is_file() else DEFAULT_CONFIG
