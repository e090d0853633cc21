"""The readers, one per layout: which file in a download is whose, and when it came in.

download itself, in this order:

``gradescope``
    "Export Submissions" of a programming assignment: a zip of
    ``assignment_<id>_export/`` holding ``submission_metadata.yml`` and a
    folder ``submission_<id>/`` per submission with the files as uploaded.
    The metadata is YAML written by Ruby, keys are symbols
    (``submission_<id>: {:submitters: [{:name:, :sid:, :email:}], :created_at:,
    :score:, :status:, :results:, :history:}``). Each submitter of a group
    submission gets the group's file. ``:created_at:`` is the submission time;
    the export has no late flag. Format as public readers of it take it:
    Otter-Grader's ``GradescopeParser`` (github.com/ucbds-infra/otter-grader,
    ``otter/grade/metadata.py``), github.com/djhuffman/gradescope_renaming_files,
    and scripts that read ``:submitters`` / ``:sid`` / ``:created_at`` /
    ``:history`` from ``assignment_<id>_export/submission_metadata.yml``.
``moodle``
    "Download all submissions": a folder per student and plugin,
    ``<Full name>_<participant id>_assignsubmission_file_/`` holding the files
    (``..._assignsubmission_onlinetext_/`` and other plugins are ignored), or,
    with "Download submissions in folders" off, flat files
    ``<Full name>_<participant id>_assignsubmission_file_<file name>``. The
    name is ``fullname()`` (``Participant`` under blind marking, ``<group>-``
    in front for team submissions), the id ``get_uniqueid_for_user()``: the
    assignment's *participant id* (table ``assign_user_mapping``), not the
    user id. It is the number in the grading worksheet's ``Identifier``
    (``Participant 1234567``), so a worksheet roster maps exactly; a
    participants-list roster maps by full name (``First Last``), refused when
    two students share it. Taken from Moodle's ``mod/assign/locallib.php``
    ``assign::download_submissions`` (github.com/moodle/moodle). No times or
    late flags are in the download.
``canvas``
    "Download Submissions": flat files
    ``<sortable name>_[LATE_]<user id>_<submission id>_<original name>``, the
    name lower-cased with spaces and punctuation dropped (``doejane``), and
    ``-N`` added to the original name's stem when a student uploads a file of
    the same name again (``attention-1.py``; the highest N is the latest).
    The user id is the ``ID`` column of a Canvas gradebook export. ``LATE`` is
    Canvas' late flag; there are no submission times. Format as described by
    github.com/TimHanneman/Canvas_submission_sort (README and sub_name.awk)
    and Canvas' "Download Submissions" help.
``classroom``
    GitHub Classroom repositories cloned one folder per student,
    ``<assignment slug>-<github username>/`` (``gh classroom clone
    student-repos`` clones into ``<slug>-submissions/<repository name>``:
    github.com/github/gh-classroom ``cmd/gh-classroom/clone/student-repos``).
    Mapped to the roster's GitHub username; where the folder has a ``.git``
    and git is installed, the commit time of HEAD (``git log -1
    --format=%cI``, no hooks, no pager, no signature checks) is the
    submission time. No late flag.
``folders``
    Anything else: each top-level ``alice.py`` / ``alice.ipynb`` / ``alice/``
    is student ``alice`` (the rule in ``grader.batch.intake``).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import yaml

from grader.coursedata.lms_files import (
    SUFFIXES,
    Download,
    Found,
    LayoutError,
    NotGraded,
    Refused,
    _flat_found,
    _found_in_folder,
    _pick_flat,
    _tops,
    pick,
    pick_all,
)
from grader.words import count, plural

GRADESCOPE_METADATA = "submission_metadata.yml"
CANVAS_FILE = re.compile(r"^(?P<name>[^_]*)_(?P<late>LATE_)?(?P<user>\d+)_(?:(?P<submission>\d+)_)?(?P<original>.+)$")
MOODLE_ENTRY = re.compile(r"^(?P<name>.+)_(?P<id>\d+)_(?P<plugin>assignsubmission_[a-z0-9]+)_(?P<rest>.*)$", re.S)
MOODLE_FILES = "assignsubmission_file"
GIT_SECONDS = 10.0


# ------------------------------------------------------------------ folders (no LMS)


def _folders(root: Path, stem: str, refused: Refused) -> Download:
    found = []
    for child in _tops(root, refused):
        if child.name in refused:  # a link at the top (``bob.py``) is the student its name would be
            file, why = refused[child.name]
            student = child.stem if file == child.name and child.suffix in SUFFIXES else child.name
            found.append(Found((("student", student),), student, student, None, file, why))
        elif child.is_file() and child.suffix in SUFFIXES:
            found.append(Found((("student", child.stem),), child.stem, child.stem, child, child.name))
        elif child.is_dir():
            picked = pick_all(child, stem)
            found.append(_found_in_folder((("student", child.name),), child.name, child.name, root, child, picked))
    return Download("folders", tuple(found))


# ------------------------------------------------------------------ Canvas


def _canvas(root: Path, stem: str, refused: Refused) -> Download:
    by_user: dict[str, list[tuple[Path, re.Match[str]]]] = defaultdict(list)
    unknown = []
    for child in _tops(root, refused):
        m = CANVAS_FILE.match(child.name) if child.name in refused or child.is_file() else None
        if m is None:
            unknown.append(child.name + ("/" if child.is_dir() else ""))
            continue
        by_user[m["user"]].append((child, m))
    found = []
    for user, files in sorted(by_user.items()):
        name = files[0][1]["name"]
        late = any(m["late"] for _, m in files)
        label = f"Canvas user {user} ({name})" if name else f"Canvas user {user}"
        fallback = f"{name}_{user}" if name else user
        links = [refused[p.name] for p, _ in files if p.name in refused]
        if links:
            found.append(Found((("canvas_id", user),), label, fallback, None, links[0][0], links[0][1], "", late))
            continue
        picked = _pick_flat([(p, m["original"]) for p, m in files], stem, resubmissions=True)
        found.append(_flat_found((("canvas_id", user),), label, fallback, root, files[0][0], picked, late=late))
    notes = ("a Canvas download has no submission times: submitted_at is left empty",) if found else ()
    return Download("canvas", tuple(found), tuple(unknown), notes)


# ------------------------------------------------------------------ Gradescope


class _RubyYaml(yaml.SafeLoader):
    """Safe loading, with Ruby's own tags (``!ruby/hash:...``, ``!ruby/object:...``) read as plain data."""


def _plain_node(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_RubyYaml.add_multi_constructor("!ruby/", _plain_node)


def _gradescope(root: Path, stem: str, refused: Refused) -> Download:
    if GRADESCOPE_METADATA in refused:
        raise LayoutError(f"{refused[GRADESCOPE_METADATA][1]} (the export's {GRADESCOPE_METADATA})")
    metadata = _gradescope_metadata(root / GRADESCOPE_METADATA)
    found = []
    for key in sorted(metadata):
        record = metadata[key]
        folder = root / key
        picked: tuple[Path | str, tuple[NotGraded, ...]] = pick_all(folder, stem) if key not in refused and folder.is_dir() else (
            f"no folder {key}/ in the export", ())
        submitted_at = iso_time(record.get(":created_at"))
        submitters = record.get(":submitters") or []
        if not isinstance(submitters, list):
            raise LayoutError(f"{GRADESCOPE_METADATA}: {key}: ':submitters' is not a list")
        if not submitters:
            found.append(_found_in_folder((), f"Gradescope {key}", key, root, folder,
                                          f"{key} has no submitter in {GRADESCOPE_METADATA}", submitted_at))
        for person in submitters:
            person = person if isinstance(person, dict) else {}
            sid, email, name = (_text(person.get(k)) for k in (":sid", ":email", ":name"))
            who = tuple((k, v) for k, v in (("sid", sid), ("email", email), ("name", name)) if v)
            label = f"Gradescope {key} ({name or email or sid or 'no name'})"
            if key in refused:  # a link in the submission's folder: nothing of it is read
                found.append(Found(who, label, sid or email or key, None, *refused[key], submitted_at))
            else:
                found.append(_found_in_folder(who, label, sid or email or key, root, folder, picked, submitted_at))
    unknown = tuple(c.name + ("/" if c.is_dir() else "") for c in _tops(root, refused)
                    if c.name != GRADESCOPE_METADATA and c.name not in metadata)
    notes = ("a Gradescope export has no late flag: late is left empty",) if found else ()
    return Download("gradescope", tuple(found), unknown, notes)


def _gradescope_metadata(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_RubyYaml)  # noqa: S506 - a SafeLoader subclass
    except FileNotFoundError:
        raise LayoutError(f"no {GRADESCOPE_METADATA} at its top: not a Gradescope export") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise LayoutError(f"{GRADESCOPE_METADATA}: cannot read it: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise LayoutError(f"{GRADESCOPE_METADATA}: expected a mapping of submission_<id> to its metadata")
    return {str(k): v for k, v in data.items()}


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def iso_time(value: Any) -> str:
    """ISO 8601 from what YAML gave: a datetime (Ruby's ``2023-09-10 14:23:45.123456000 -07:00`` loads as
    one), a date, or a string in that form; '' when there is none or it is not a time."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if not isinstance(value, str) or not value.strip():
        return ""
    text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip())  # Ruby writes nanoseconds
    text = re.sub(r"\s+([+-]\d\d:?\d\d|Z)$", r"\1", text)
    try:
        return dt.datetime.fromisoformat(text).isoformat()
    except ValueError:
        return ""


# ------------------------------------------------------------------ Moodle


def _moodle_entry(name: str) -> re.Match[str] | None:
    return MOODLE_ENTRY.match(name)


def _moodle(root: Path, stem: str, refused: Refused) -> Download:
    folders: dict[str, list[tuple[Path, str]]] = defaultdict(list)  # participant id -> (folder, full name)
    flat: dict[str, list[tuple[Path, str, str]]] = defaultdict(list)  # participant id -> (file, original, name)
    unknown, other_plugins = [], 0
    for child in _tops(root, refused):
        m = _moodle_entry(child.name)
        if m is None:
            unknown.append(child.name + ("/" if child.is_dir() else ""))
        elif m["plugin"] != MOODLE_FILES:
            other_plugins += 1  # online text, comments...: nothing to grade
        elif not m["rest"] and (child.name in refused or child.is_dir()):
            folders[m["id"]].append((child, m["name"]))
        elif m["rest"] and (child.name in refused or child.is_file()):
            flat[m["id"]].append((child, m["rest"], m["name"]))
        else:
            unknown.append(child.name + ("/" if child.is_dir() else ""))
    found = []
    for pid, entries in sorted(folders.items()):
        for folder, name in entries:
            who = (("participant", pid), ("name", name))
            label = f"Moodle participant {pid} ({name})"
            if folder.name in refused:
                found.append(Found(who, label, f"{name}_{pid}", None, *refused[folder.name]))
            else:
                found.append(_found_in_folder(who, label, f"{name}_{pid}", root, folder, pick_all(folder, stem)))
    for pid, files in sorted(flat.items()):
        name = files[0][2]
        who, label = (("participant", pid), ("name", name)), f"Moodle participant {pid} ({name})"
        links = [refused[p.name] for p, _, _ in files if p.name in refused]
        if links:
            found.append(Found(who, label, f"{name}_{pid}", None, *links[0]))
            continue
        picked = _pick_flat([(p, original) for p, original, _ in files], stem, resubmissions=False)
        found.append(_flat_found(who, label, f"{name}_{pid}", root, files[0][0], picked))
    notes = ["a Moodle download has no submission times or late flags: both are left empty"] if found else []
    if other_plugins:
        notes.append(f"{other_plugins} Moodle entries of other submission types (online text...) ignored")
    return Download("moodle", tuple(found), tuple(unknown), tuple(notes))


# ------------------------------------------------------------------ GitHub Classroom


def _classroom(root: Path, stem: str, refused: Refused) -> Download:
    tops = _tops(root, refused)
    dirs = [c for c in tops if c.name in refused or c.is_dir()]
    unknown = tuple(c.name for c in tops if c not in dirs)
    prefix = _slug([d.name for d in dirs])
    git = shutil.which("git")
    found, timed = [], 0
    for repo in dirs:
        user = repo.name[len(prefix):] or repo.name
        who, label = (("repo", repo.name), ("github", user)), f"GitHub repository {repo.name}"
        if repo.name in refused:
            found.append(Found(who, label, user, None, *refused[repo.name]))
            continue
        when = head_time(repo, git) if git and (repo / ".git").exists() else ""
        timed += bool(when)
        found.append(_found_in_folder(who, label, user, root, repo, pick(repo, stem), when))
    notes = []
    if found and timed < len(found):
        why = "git is not installed" if git is None else "no .git in the folder or no commit"
        untimed = len(found) - timed
        notes.append(f"{untimed} of {count(len(found), 'repository', 'repositories')} {plural(untimed, 'has')} "
                     f"no HEAD commit time ({why}): "
                     "submitted_at left empty there")
    if found:
        notes.append("GitHub Classroom has no late flag: late is left empty")
    return Download("classroom", tuple(found), unknown, tuple(notes))


def _slug(names: list[str]) -> str:
    """The ``<assignment slug>-`` every repository's name starts with ('' unless two or more share one)."""
    if len(names) < 2:
        return ""
    common = os.path.commonprefix(names)
    cut = common.rfind("-")
    return common[: cut + 1] if cut > 0 else ""


def head_time(repo: Path, git: str) -> str:
    """The commit time of HEAD, ISO 8601, or '' when git cannot say.

    ``git log`` runs no hooks; the repository's own config could still ask for
    a pager, signature checks (running gpg.program) or an fsmonitor command,
    so each is switched off, and no system or global config is read.
    """
    command = [git, "-C", str(repo), "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
               "-c", "log.showSignature=false", "-c", "gpg.program=false", "log", "-1", "--format=%cI"]
    env = {"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "HOME": os.devnull}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=GIT_SECONDS, env=env,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return iso_time(done.stdout.strip()) if done.returncode == 0 else ""


READERS: dict[str, Callable[[Path, str, Refused], Download]] = {
    "canvas": _canvas, "gradescope": _gradescope, "moodle": _moodle, "classroom": _classroom, "folders": _folders}
