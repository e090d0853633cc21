"""Which submission files ``grader ci`` grades: every exercise file at the repository's root, or on a
pull request only those it changes (``git diff`` against the base); a file still identical to the
released stub is left out when another file of its assignment changed."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader import files, links
from grader.config import Config
from grader.ci.context import CIError, Environment, RELEASE_MANIFEST


_SAFE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]*")
_SHA = re.compile(r"[0-9a-f]{7,64}")
LINK_ADVICE = ("submissions are never read through links: commit the file itself in place of the link "
               "(git rm the link, copy the file in, commit) and push again; nothing was graded")


@dataclass(frozen=True)
class Target:
    """One submission file to grade."""

    assignment: str
    path: Path
    rel: str  # relative to the root, '/'-separated: what every report names


@dataclass(frozen=True)
class Selection:
    targets: tuple[Target, ...]
    notes: tuple[str, ...] = ()
    nothing: str = ""  # why nothing is graded, when ``targets`` is empty


def candidates(root: Path, config: Config) -> list[Target]:
    """Every submission file at the root: for each assignment, ``<stem>.py`` and ``<stem>.ipynb``
    (the config's ``file:`` suffix first), the names ``selfcheck.assignment_for`` maps back.
    A symbolic link is never one (``linked_candidates`` finds those, and ``select`` refuses them)."""
    found = []
    for a in config.assignments.values():
        name = Path(a.file)
        for suffix in dict.fromkeys((name.suffix, ".py", ".ipynb")):
            path = root / f"{name.stem}{suffix}"
            if path.is_file() and not links.links_on_path(root, Path(path.name)):
                found.append(Target(a.id, path, path.name))
    return found


def linked_candidates(root: Path, config: Config) -> list[links.Link]:
    """The submission file names at the root that are symbolic links (to a file, a folder or nothing).

    A link named ``attention.py`` could point at a reference the runner can
    read, or at any file outside the repository: it is never graded, and
    ``select`` stops the whole run over it (it fails closed) rather than
    grade the other files and pass.
    """
    return [link for n in expected_names(config) for link in links.links_on_path(root, Path(n))]


def expected_names(config: Config) -> list[str]:
    return [f"{Path(a.file).stem}{s}" for a in config.assignments.values() for s in (".py", ".ipynb")]


def select(env: Environment, config: Config, all_files: bool,
           git: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run) -> Selection:
    """The files to grade: on a pull request (unless ``all_files``) those it changes, else all present.

    Where an assignment has several files (the release hands out both
    ``attention.py`` and ``attention.ipynb``), a file that is still the
    released stub byte for byte is left out as long as another one is
    changed: grading the untouched stub only adds a zero to the total.

    Raises CIError (exit 2, the job fails) when a submission file name at the
    root is a symbolic link: it is refused, never read through, and the run
    does not grade the other files to pass without it.
    """
    linked = linked_candidates(env.root, config)
    if linked:
        raise CIError(links.message(linked, LINK_ADVICE))
    present = candidates(env.root, config)
    names = ", ".join(expected_names(config))
    notes: list[str] = list(env.notes)
    if not present:
        return Selection((), tuple(notes), f"no submission file in this repository (looked for {names})")
    if env.pull_request and not all_files:
        changed, how = changed_files(env, git)
        if changed is None:
            notes.append(f"could not tell which files this pull request changes ({how}); "
                         "grading every submission file")
        else:
            present = [t for t in present if t.rel in changed]
            if not present:
                return Selection((), tuple(notes), f"this pull request changes no submission file ({names}); "
                                                   "nothing to grade")
            notes.append(f"pull request: grading the submission files it changes ({how})")
    targets, dropped = _without_untouched_stubs(env.root, present)
    notes += [f"{t.rel} is the released stub, unchanged: not graded" for t in dropped]
    return Selection(tuple(targets), tuple(notes))


def changed_files(env: Environment, git: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run
                  ) -> tuple[set[str] | None, str]:
    """The files a pull request changes, relative to the root, and how that was found; or None and why not.

    ``git diff --name-only <base>...HEAD`` against ``origin/$GITHUB_BASE_REF``
    (the workflow checks out with ``fetch-depth: 0``), else against the event
    payload's ``pull_request.base.sha``. A base that could pass for an option
    or holds odd characters is not used.
    """
    bases = []
    if env.base_ref and _SAFE_REF.fullmatch(env.base_ref):
        bases.append(f"origin/{env.base_ref}")
    pull = env.event.get("pull_request")
    base = pull.get("base") if isinstance(pull, dict) else None
    sha = base.get("sha") if isinstance(base, dict) else None
    if isinstance(sha, str) and _SHA.fullmatch(sha):
        bases.append(sha)
    if not bases:
        return None, "no base branch (GITHUB_BASE_REF) or base commit (pull_request.base.sha) is known"
    problems = []
    for ref in bases:
        command = ["git", "-C", str(env.root), "diff", "--name-only", "-z", "--relative", f"{ref}...HEAD", "--"]
        try:
            done = git(command, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            problems.append(f"git diff {ref}...HEAD: {exc}")
            continue
        if done.returncode == 0:
            listed = done.stdout.decode("utf-8", "surrogateescape").split("\0")
            return {p for p in listed if p}, f"compared with {ref}"
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        problems.append(f"git diff {ref}...HEAD: {err[0] if err else f'exit {done.returncode}'}")
    return None, "; ".join(problems)


def _without_untouched_stubs(root: Path, targets: list[Target]) -> tuple[list[Target], list[Target]]:
    released = _released_hashes(root)
    keep: list[Target] = []
    dropped: list[Target] = []
    for assignment in dict.fromkeys(t.assignment for t in targets):
        group = [t for t in targets if t.assignment == assignment]
        untouched = [t for t in group if len(group) > 1 and released.get(t.rel) == files.sha256(t.path)]
        changed = [t for t in group if t not in untouched]
        kept = changed or group[:1]
        keep += kept
        dropped += [t for t in group if t not in kept]
    return keep, dropped


def _released_hashes(root: Path) -> dict[str, str]:
    """``release.json``'s file hashes, or {} when the repository has none (or it is not ours)."""
    try:
        files = json.loads((root / RELEASE_MANIFEST).read_text(encoding="utf-8")).get("files")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return {}
    return {k: v for k, v in files.items() if isinstance(v, str)} if isinstance(files, dict) else {}


