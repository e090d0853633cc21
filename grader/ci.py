"""``grader ci``: grade a student repository where it is pushed.

A student repository made from a release (``grader release``) holds the
exercise files at its root, the student kit (``grader/``, with the visible
checks and ``grader/course/assignments.yaml``), and, when the course uses
them, ``.grader/hidden.bundle`` (the hidden checks, encrypted) and
``.grader/integrity.json`` (the protected files' hashes). ``grader ci`` runs
in that repository on GitHub Actions (GitHub Classroom included), GitLab CI
or a plain shell, and:

1. finds the submission files: every ``attention.py`` / ``attention.ipynb``
   (names from the config's ``file:``) at the root, or on a pull request
   only those the pull request changes;
2. grades them with every check when the hidden checks can be unlocked
   (``GRADER_HIDDEN_KEY`` and the bundle; the instructor's own package, in a
   subprocess), else with the visible checks only, and says so;
3. verifies the protected files (``grader.integrity``): a changed one fails
   the job, whatever the score;
4. reports through what the platform reads: the step summary, annotations,
   step outputs and Classroom's ``result`` on GitHub; a JUnit report on
   GitLab; the text table everywhere; cards and HTML pages under ``--out``.

Everything it writes comes from ``views.student_view``: a hidden check
shows its status and points, never its message, inputs or diagnosis. Text
that a submission controls (what it printed, exception messages quoted in
check messages) never becomes a GitHub workflow command: the console text
goes out between ``::stop-commands::`` and an unguessable resume token, our
own commands escape their data and properties, Markdown escapes or fences
it, and Classroom's payload has it neutralised because its reporter prints
messages raw.

The logic is functions a test can call (``run`` takes the environment, the
output streams and the hidden-check unlocker as arguments); ``grader.cli``
only parses arguments and maps exceptions to exit codes.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from grader import integrity, views
from grader.config import DEFAULT_CONFIG, Config, ConfigError, load_config
from grader.export.gradebook_csv import format_number
from grader.scorecard import CheckResult, Integrity, Scorecard

if TYPE_CHECKING:
    from grader.sandbox.client import WorkerServer

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
KIT_CONFIG = "grader/course/assignments.yaml"  # relative to the repository root: what `grader release` writes
BUNDLE = ".grader/hidden.bundle"
KEY_VARIABLE = "GRADER_HIDDEN_KEY"
RELEASE_MANIFEST = "release.json"  # the release's own list of file hashes: tells an untouched stub
DEFAULT_OUT = "grader-results"
DEFAULT_JUNIT = "grader-junit.xml"
PULL_REQUEST_EVENTS = ("pull_request",)  # pull_request_target checks out the base: nothing of the PR to diff
HIDDEN_GRADE_TIMEOUT_S = 1800  # one file with every check; the config's own limits stop a submission long before
MAX_ERROR_ANNOTATIONS = 10  # GitHub shows 10 error annotations per step; the rest are in the summary
MESSAGE_CLIP = 400  # characters of one check's message in an annotation
MESSAGES_PER_ANNOTATION = 3  # distinct messages quoted in one exercise's annotation; the summary has them all
STATUS_CLASSROOM = {"passed": "pass", "skipped": "pass", "failed": "fail", "error": "error", "timeout": "error"}
PROBLEMS = ("failed", "error", "timeout")
HIDDEN_RUN_WHEN = ("your work is graded with every check when this workflow runs with the course's key "
                   "(a push to your own assignment repository) and when course staff grade it")
NO_KEY_NOTE = (f"hidden checks not run: this run has no {KEY_VARIABLE} (pull requests from forks get no secrets); "
               f"{HIDDEN_RUN_WHEN}")
NO_BUNDLE_NOTE = (f"hidden checks not run: this repository has no hidden-check bundle ({BUNDLE}); "
                  "your work is graded with every check when course staff grade it")
NO_UNLOCK_NOTE = ("hidden checks not run: this grader cannot unlock them (it has no grader.hidden); "
                  "your work is graded with every check when course staff grade it")
GRADER_ERROR_SHOWN = "the grader itself failed on this file: the details are shown to course staff only"
_SAFE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]*")
_SHA = re.compile(r"[0-9a-f]{7,64}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MD_PUNCTUATION = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")

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
        return Environment(kind, chosen, chosen)
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
                       _path(environ.get("GITHUB_OUTPUT")), tuple(notes))


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def kit_config(root: Path) -> Path:
    """The repository's own kit config when it has one (a student repository), else the installed default.

    The repository's copy is the one its recorded values belong to; it is a
    protected file, so an edited copy fails the integrity check.
    """
    own = root / KIT_CONFIG
    return own if own.is_file() else DEFAULT_CONFIG


# ------------------------------------------------------------------ which files


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
    (the config's ``file:`` suffix first), the names ``selfcheck.assignment_for`` maps back."""
    found = []
    for a in config.assignments.values():
        name = Path(a.file)
        for suffix in dict.fromkeys((name.suffix, ".py", ".ipynb")):
            path = root / f"{name.stem}{suffix}"
            if path.is_file():
                found.append(Target(a.id, path, path.name))
    return found


def expected_names(config: Config) -> list[str]:
    return [f"{Path(a.file).stem}{s}" for a in config.assignments.values() for s in (".py", ".ipynb")]


def select(env: Environment, config: Config, all_files: bool,
           git: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run) -> Selection:
    """The files to grade: on a pull request (unless ``all_files``) those it changes, else all present.

    Where an assignment has several files (the release hands out both
    ``attention.py`` and ``attention.ipynb``), a file that is still the
    released stub byte for byte is left out as long as another one is
    changed: grading the untouched stub only adds a zero to the total.
    """
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
        untouched = [t for t in group if len(group) > 1 and released.get(t.rel) == _sha256(t.path)]
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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------ which checks


@dataclass(frozen=True)
class HiddenPlan:
    """Whether every check runs; when not, the sentence that says why (shown to the student)."""

    unlock: Unlock | None
    note: str
    bundle: Path
    key: str = field(default="", repr=False)

    @property
    def run(self) -> bool:
        return self.unlock is not None


def installed_unlock() -> Unlock | None:
    """``grader.hidden.unlock`` when this grader has it (the course package does; an old kit may not)."""
    try:
        from grader import hidden  # the release side's module; an older kit may lack it
    except ModuleNotFoundError as exc:
        if exc.name != "grader.hidden":
            raise  # grader.hidden is there but broken (e.g. its crypto library is missing): an internal error
        return None
    unlock: Unlock = hidden.unlock
    return unlock


def plan_hidden(root: Path, environ: Mapping[str, str], unlocker: Unlocker = installed_unlock) -> HiddenPlan:
    """Every check when the bundle, the key and an unlock function are all there; else the visible ones,
    and why. ``unlocker`` is asked only then, so a repository without hidden checks never needs
    ``grader.hidden`` (nor its crypto library) to work."""
    bundle = root / BUNDLE
    if not bundle.is_file():
        return HiddenPlan(None, NO_BUNDLE_NOTE, bundle)
    key = environ.get(KEY_VARIABLE, "")
    if not key:
        return HiddenPlan(None, NO_KEY_NOTE, bundle)
    unlock = unlocker()
    if unlock is None:
        return HiddenPlan(None, NO_UNLOCK_NOTE, bundle)
    return HiddenPlan(unlock, "", bundle, key)


@contextmanager
def unlocked(plan: HiddenPlan, root: Path, environ: Mapping[str, str]) -> Iterator[tuple[Path, Path]]:
    """(the instructor's grader tree, a private scratch folder), both removed afterwards.

    The bundle is decrypted into a fresh folder of mode 0700 outside the
    repository (a repository is uploaded, cached and listed; a temp folder is
    not), and that folder is removed even when grading fails. A folder that
    cannot be removed is an error: a decrypted copy must not stay behind.
    """
    if plan.unlock is None:
        raise ValueError("unlocked() needs a plan that runs the hidden checks")
    scratch = Path(tempfile.mkdtemp(prefix="grader-hidden-", dir=_private_parent(root, environ)))
    try:
        scratch.chmod(0o700)
        into = scratch / "tree"
        into.mkdir(mode=0o700)
        try:
            tree = Path(plan.unlock(plan.bundle, plan.key, into))
        except Exception as exc:  # noqa: BLE001 - whatever the unlocker raises, the run stops and says so
            raise CIInternalError(f"cannot unlock the hidden checks ({BUNDLE}): {type(exc).__name__}: {exc}; "
                                  f"course staff: check that {KEY_VARIABLE} belongs to this release") from None
        if not (tree / "assignments.yaml").is_file():
            raise CIInternalError(f"the unlocked hidden checks have no assignments.yaml ({BUNDLE})")
        cards = scratch / "cards"
        cards.mkdir(mode=0o700)
        yield tree, cards
    finally:
        shutil.rmtree(scratch)


def _private_parent(root: Path, environ: Mapping[str, str]) -> str:
    """A temp folder outside the repository: $RUNNER_TEMP (GitHub's per-job one), else the system's."""
    resolved = root.resolve()
    for option in (environ.get("RUNNER_TEMP"), tempfile.gettempdir()):
        if option and Path(option).is_dir():
            where = Path(option).resolve()
            if where != resolved and resolved not in where.parents:
                return str(where)
    raise CIError(f"no temporary folder outside {root} to unlock the hidden checks into (set TMPDIR)")


# ------------------------------------------------------------------ grading


def grade_visible(targets: Sequence[Target], config_path: Path,
                  server: WorkerServer | None = None) -> tuple[list[Scorecard], dict[str, int]]:
    """The visible checks only, as ``grader check`` runs them: (cards, hidden checks left out per assignment)."""
    from grader import api
    from grader.sandbox.client import WorkerServer
    from grader.submission import UnreadableSubmission

    own = server is None
    active = server if server is not None else WorkerServer()
    graders: dict[str, api.Grader] = {}
    try:
        cards = []
        for t in targets:
            if t.assignment not in graders:
                graders[t.assignment] = api.Grader(t.assignment, config_path=config_path, server=active,
                                                   visible_only=True)
            cards.append(graders[t.assignment].grade(t.path))
        return cards, {aid: g.hidden_checks for aid, g in graders.items()}
    except (ConfigError, api.SecretsExposed, UnreadableSubmission) as exc:
        raise CIError(str(exc)) from None
    finally:
        for g in graders.values():
            g.close()
        if own:
            active.close()


def grade_hidden(targets: Sequence[Target], tree: Path, cards: Path, environ: Mapping[str, str]) -> list[Scorecard]:
    """Every check: ``python -m grader.cli grade`` from the unlocked tree, one subprocess per file.

    ``PYTHONPATH=<tree>``, ``-P`` and the tree as working folder make the
    instructor's package the one imported (never the repository's kit,
    which a working folder inside the repository would put first). The key
    is not passed on: nothing after the unlock needs it.
    """
    env = {k: v for k, v in environ.items() if k != KEY_VARIABLE}
    env["PYTHONPATH"] = str(tree)
    env.pop("PYTHONSAFEPATH", None)
    out = []
    for i, t in enumerate(targets):
        card = cards / f"card-{i}.json"
        command = [sys.executable, "-P", "-m", "grader.cli", "grade", str(t.path), "--assignment", t.assignment,
                   "--out", str(card), "--config", str(tree / "assignments.yaml"), "--format", "none"]
        try:
            done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True,
                                  timeout=HIDDEN_GRADE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise CIInternalError(f"grading {t.rel} with every check took over {HIDDEN_GRADE_TIMEOUT_S} s") from None
        if done.returncode not in (EXIT_OK, EXIT_INTERNAL) or not card.is_file():
            said = done.stderr.strip().splitlines()
            raise CIInternalError(f"grading {t.rel} with every check failed (exit {done.returncode}): "
                                  f"{said[-1] if said else 'no message'}")
        try:
            out.append(Scorecard.from_dict(json.loads(card.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CIInternalError(f"the card graded for {t.rel} cannot be read: {exc}") from None
    return out


# ------------------------------------------------------------------ what students see


@dataclass(frozen=True)
class Graded:
    """One graded file as students may see it."""

    target: Target
    card: Scorecard  # views.student_view of the graded card, with ``integrity`` set
    lines: dict[str, int]  # exercise -> the line its def/class starts on (1 when not found)
    notebook: bool  # lines are lines of the .ipynb file's JSON text
    path: str  # the file as annotations name it: relative to the workspace
    counted: bool = True  # False: another file of the same assignment scored better and counts
    hidden_left: int = 0  # checks not run here (visible-only)


@dataclass(frozen=True)
class Outcome:
    """The whole run: what was graded and how, what every report is made from."""

    env: Environment
    graded: tuple[Graded, ...]
    hidden: HiddenPlan
    integrity: Integrity
    threshold: float
    notes: tuple[str, ...] = ()
    nothing: str = ""

    @property
    def counted(self) -> list[Graded]:
        return [g for g in self.graded if g.counted]

    @property
    def score(self) -> float:
        return round(sum(g.card.score for g in self.counted), 6)

    @property
    def max_score(self) -> float:
        return round(sum(g.card.max_score for g in self.counted), 6)

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score > 0 else 0.0

    @property
    def grader_error(self) -> bool:
        return any(g.card.grader_error for g in self.graded)

    @property
    def meets_threshold(self) -> bool:
        return not self.counted or self.percent >= self.threshold - 1e-9

    @property
    def exit_code(self) -> int:
        """3 the grader failed; 1 protected files changed, or the score is under the threshold; else 0."""
        if self.grader_error:
            return EXIT_INTERNAL
        if self.integrity.status == "modified" or not self.meets_threshold:
            return EXIT_FAILED
        return EXIT_OK


def shown(card: Scorecard, hidden_ran: bool, seal: Integrity) -> Scorecard:
    """The student's view of ``card``, sealed with the integrity result.

    With the hidden checks run, what the submission printed goes too: it
    printed it while the hidden checks called it, so it may show their
    inputs (the HTML report's student view never shows printed output
    either), and so does the detail of a grader error, which may quote a
    hidden check (the card still says that the grader failed).
    """
    view = replace(views.student_view(card), integrity=seal)
    if not hidden_ran:
        return view
    error = GRADER_ERROR_SHOWN if view.grader_error else None
    return replace(view, output="", grader_error=error)


def definition_lines(path: Path, names: Iterable[str]) -> tuple[dict[str, int], bool]:
    """Where each exercise's ``def``/``class`` starts in the submitted file: ({name: line}, is_notebook).

    In a .py file, the last top-level definition of the name (the one Python
    keeps), else any nested one, found with ``ast``. A notebook has no lines
    of its own: the line is that of the definition's source line inside the
    .ipynb file's JSON, found by text, which an editor can jump to; 1 when
    nothing is found (and for a file that does not parse).
    """
    wanted = list(dict.fromkeys(names))
    if path.suffix == ".ipynb":
        try:
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return {n: 1 for n in wanted}, True
        found = {}
        for name in wanted:
            pattern = re.compile(r'(?:"|\\n)\s*(?:async\s+)?(?:def|class)\s+' + re.escape(name) + r"\b")
            hits = [i + 1 for i, line in enumerate(text) if pattern.search(line)]
            found[name] = hits[-1] if hits else 1
        return found, True
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {n: 1 for n in wanted}, False
    top: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top[node.name] = node.lineno
    nested: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            nested.setdefault(node.name, node.lineno)
    return {n: top.get(n, nested.get(n, 1)) for n in wanted}, False


def _annotation_path(env: Environment, path: Path) -> str:
    try:
        return path.resolve().relative_to(env.workspace.resolve()).as_posix()
    except ValueError:
        return path.name


def _count_best(graded: list[Graded]) -> tuple[list[Graded], list[str]]:
    """Per assignment, the best-scoring file counts; a note for each assignment graded twice."""
    notes = []
    out = list(graded)
    for assignment in dict.fromkeys(g.target.assignment for g in graded):
        group = [i for i, g in enumerate(out) if g.target.assignment == assignment]
        if len(group) < 2:
            continue
        best = max(group, key=lambda i: (out[i].card.score, -i))
        for i in group:
            out[i] = replace(out[i], counted=i == best)
        files = " and ".join(out[i].target.rel for i in group)
        notes.append(f"{files} are both changed: both are graded and {out[best].target.rel} (the better) counts "
                     f"here; course staff grade one file per assignment, so delete or restore the one you do "
                     "not hand in")
    return out, notes


# ------------------------------------------------------------------ the run


def check_integrity(root: Path) -> Integrity:
    """``verified``, ``modified`` (with the files) or ``unverified`` (a repository released without a manifest).

    A missing manifest in a repository that has a ``.grader/`` folder is
    ``modified``: the release writes the manifest there, so deleting it must
    not turn a tampered repository into an unverified (passing) one.
    """
    manifest = root / integrity.MANIFEST
    if not manifest.exists() and not manifest.is_symlink():
        if (root / ".grader").exists():
            return Integrity("modified", (integrity.MANIFEST,))
        return Integrity("unverified")
    changed = integrity.verify(root, manifest)
    return Integrity("modified", tuple(changed)) if changed else Integrity("verified")


def evaluate(options: Options, env: Environment, environ: Mapping[str, str], *,
             unlocker: Unlocker = installed_unlock, server: WorkerServer | None = None,
             git: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run) -> Outcome:
    """Select, grade and seal: everything but the writing. Raises CIError / CIInternalError."""
    config_path = kit_config(env.root)
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise CIError(str(exc)) from None
    seal = check_integrity(env.root)
    selection = select(env, config, options.all_files, git)
    hidden = plan_hidden(env.root, environ, unlocker)
    if not selection.targets:
        return Outcome(env, (), hidden, seal, options.threshold, selection.notes, selection.nothing)
    left: dict[str, int] = {}
    if hidden.run:
        with unlocked(hidden, env.root, environ) as (tree, cards_dir):
            cards = grade_hidden(selection.targets, tree, cards_dir, environ)
    else:
        cards, left = grade_visible(selection.targets, config_path, server)
    graded = []
    for t, card in zip(selection.targets, cards):
        lines, notebook = definition_lines(t.path, (c.exercise for c in card.checks))
        graded.append(Graded(t, shown(card, hidden.run, seal), lines, notebook, _annotation_path(env, t.path),
                             hidden_left=left.get(t.assignment, 0)))
    graded, twice = _count_best(graded)
    return Outcome(env, tuple(graded), hidden, seal, options.threshold, (*selection.notes, *twice))


def run(options: Options, environ: Mapping[str, str], cwd: Path, stdout: IO[str], *,
        unlocker: Unlocker = installed_unlock, server: WorkerServer | None = None,
        git: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run) -> int:
    """``grader ci``: grade, then write every report the platform reads; the exit status.

    ``unlocker`` finds ``grader.hidden.unlock`` (``installed_unlock``); tests
    pass their own. Raises CIError (exit 2) and CIInternalError (exit 3).
    """
    env = detect(environ, options.root, cwd)
    try:
        outcome = evaluate(options, env, environ, unlocker=unlocker, server=server, git=git)
    except CIInternalError as exc:
        if env.step_summary is not None:  # the student reads the summary, not the log: say it there too
            _append(env.step_summary, "## Grading\n\n❌ **The grader could not grade** (not your fault; tell "
                                      f"course staff): {md(str(exc))}\n")
        raise
    write_reports(outcome, options, cwd, stdout)
    return outcome.exit_code


def write_reports(o: Outcome, options: Options, cwd: Path, stdout: IO[str]) -> None:
    """Cards and pages under --out, JUnit (GitLab, or --junit), the step summary and outputs, the console."""
    out = _resolve(options.out, cwd, o.env.root / DEFAULT_OUT)
    try:
        if not write_cards(o, out) and o.graded:
            o = replace(o, notes=(*o.notes, "no HTML pages: this grader has no report template"))
        if o.env.kind == "gitlab" or options.junit is not None:
            write_junit(o, _resolve(options.junit, cwd, o.env.root / DEFAULT_JUNIT))
        if o.env.step_summary is not None:
            _append(o.env.step_summary, step_summary(o))
        if o.env.output is not None:
            _append(o.env.output, output_file_text(github_outputs(o, options.classroom)))
    except OSError as exc:
        raise CIError(f"cannot write {exc.filename or 'a report'}: {exc.strerror or exc}") from None
    stdout.write(console(o))
    stdout.flush()


def _resolve(given: Path | None, cwd: Path, default: Path) -> Path:
    if given is None:
        return default
    return given if given.is_absolute() else cwd / given


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def write_cards(o: Outcome, out: Path) -> bool:
    """``<out>/<file>.json`` (the student's card) and ``<out>/<file>.html`` (their page) per graded file.

    The pages need the report template, which a student kit installed from
    a release may not carry; then only the cards are written (False).
    """
    from grader import scorecard
    from grader.export import html

    pages = (html.TEMPLATES / "report.html.j2").is_file()
    if o.graded:
        out.mkdir(parents=True, exist_ok=True)
    for g in o.graded:
        name = g.target.rel.replace("/", "_")
        scorecard.write(g.card, out / f"{name}.json")
        if pages:
            html.write(g.card, out / f"{name}.html", view="student")
    return pages


def write_junit(o: Outcome, path: Path) -> None:
    """GitLab's test report: a testsuite per graded file (``grader.export.junit``), student view."""
    from grader.export import junit

    path.parent.mkdir(parents=True, exist_ok=True)
    junit.write([(g.target.rel, g.card) for g in o.graded], path)


# ------------------------------------------------------------------ GitHub's workflow commands and outputs


def escape_data(text: str) -> str:
    """A workflow command's message: GitHub's own escaping (``%``, CR, LF), so it stays on its line."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: the data escapes plus ``:`` and ``,``, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """``::name k=v,...::message`` with every value escaped."""
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def inert(text: str) -> str:
    """``text`` that GitHub's runner cannot read as a command when something prints it raw.

    Classroom's reporter ``console.log``s each test's message, so a line of a
    message that starts with ``::`` (after spaces), or holds ``##[`` anywhere
    (the runner's older command form), would be run as a workflow command.
    Both are broken with a space; carriage returns become newlines.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("::", ": :").replace("##[", "## [")


def annotations(o: Outcome) -> list[str]:
    """Our workflow commands: errors at each failing exercise's definition, integrity and grader errors,
    a warning when hidden checks did not run, a notice with the total."""
    errors: list[str] = []
    if o.integrity.status == "modified":
        for f in o.integrity.files:
            errors.append(command("error", f"{f} is not the file the course released: protected files (the workflow, "
                                           "the checks, the course config and values) may not be changed, so this "
                                           "run cannot pass. Restore it from the release.",
                                  file=f, title="protected file changed"))
    for g in o.graded:
        if g.card.grader_error:
            errors.append(command("error", "the grader itself failed on this file (not your fault): this is not a "
                                           "grade; tell course staff", file=g.path, line=1, title="grader error"))
        for exercise, checks in _by_exercise(g.card.checks):
            bad = [c for c in checks if c.status in PROBLEMS]
            if bad:
                errors.append(_exercise_annotation(g, exercise, checks, bad))
    if len(errors) > MAX_ERROR_ANNOTATIONS:
        rest = len(errors) - (MAX_ERROR_ANNOTATIONS - 1)
        errors = errors[:MAX_ERROR_ANNOTATIONS - 1] + [
            command("error", f"{rest} more problems: see the job summary", title="more problems")]
    out = list(errors)
    if not o.hidden.run and o.graded:
        out.append(command("warning", o.hidden.note, title="hidden checks not run"))
    out.append(command("notice", _total_sentence(o), title="grader: total"))
    return out


def _exercise_annotation(g: Graded, exercise: str, checks: list[CheckResult], bad: list[CheckResult]) -> str:
    got = sum(c.score for c in checks)
    top = sum(c.max_score for c in checks)
    ran = [c for c in checks if c.status != "skipped"]
    lines = [f"{exercise}: {len(bad)} of {len(ran)} checks failed ({format_number(got)}/{format_number(top)} points)"]
    groups = _same_message([c for c in bad if not views.is_hidden(c)])
    for i, (message, same) in enumerate(groups):
        if i == MESSAGES_PER_ANNOTATION:
            lines.append(f"- {sum(len(g) for _, g in groups[i:])} more failed checks: see the job summary")
            break
        clipped = message if len(message) <= MESSAGE_CLIP else message[:MESSAGE_CLIP] + " [...]"
        lines.append(f"- {', '.join(_friendly(c) for c in same)}: {clipped}")
    hidden = sum(views.is_hidden(c) for c in bad)
    if hidden:
        lines.append(f"- {hidden} hidden checks failed (their details are shown to course staff only)")
    if g.notebook:
        lines.append("(notebook: the line is that of the definition inside the .ipynb file)")
    return command("error", "\n".join(lines), file=g.path, line=g.lines.get(exercise, 1),
                   title=f"{exercise}: {len(bad)} checks failed")


def _total_sentence(o: Outcome) -> str:
    if not o.graded:
        return f"nothing graded: {o.nothing}"
    head = f"{format_number(o.score)} / {format_number(o.max_score)} points ({_pct(o.percent)}%)"
    if o.threshold > 0:
        head += f", {'meets' if o.meets_threshold else 'below'} the {_pct(o.threshold)}% threshold"
    if o.integrity.status == "modified":
        head += "; protected files changed: this run fails"
    return head


def _pct(x: float) -> str:
    return format_number(round(x, 2))


def github_outputs(o: Outcome, classroom: bool) -> dict[str, str]:
    """The step's outputs: score, max_score, percent, passed, hidden_checks, integrity, files; Classroom's result.

    ``passed`` is the exit status being 0: the score meets the threshold and
    the protected files are as released (a tampered repository never passes).
    """
    values = {
        "score": format_number(o.score),
        "max_score": format_number(o.max_score),
        "percent": _pct(o.percent),
        "passed": "true" if o.exit_code == EXIT_OK else "false",
        "hidden_checks": "run" if o.hidden.run and o.graded else "not-run",
        "integrity": o.integrity.status,
        "files": "\n".join(g.target.rel for g in o.graded),
    }
    if classroom:
        values["result"] = classroom_result(o)
    return values


def output_file_text(values: Mapping[str, str]) -> str:
    """``$GITHUB_OUTPUT`` lines: ``name=value``, or the heredoc form with a random delimiter for a
    multi-line value (a delimiter that occurs in the value is drawn again)."""
    lines = []
    for name, value in values.items():
        if "\n" in value or "\r" in value:
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            while delimiter in value:
                delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            lines.append(f"{name}={value}\n")
    return "".join(lines)


# ------------------------------------------------------------------ GitHub Classroom


def classroom_payload(o: Outcome) -> dict[str, Any]:
    """What Classroom's autograding reporter reads (schema: ``grader/schema/classroom_result.schema.json``).

    One test per check of the student view, each with its own points (partial
    credit); the reporter adds the scores up against ``max_score``. The
    overall status follows the exit status. When protected files changed,
    every score is 0: the points of a tampered repository are not reported.
    """
    tampered = o.integrity.status == "modified"
    tests = []
    for g in o.counted:
        for c in g.card.checks:
            message = c.message if c.status != "passed" else ""
            if tampered:
                message = f"not counted: protected files were changed ({', '.join(o.integrity.files)}). {message}"
            tests.append({
                "name": inert(f"{c.exercise}: {_friendly(c)}"),
                "status": STATUS_CLASSROOM[c.status],
                "score": 0 if tampered else round(c.score, 4),
                "message": inert(message.strip()),
                "test_code": f"grader check {c.exercise}::{c.id}",
                "filename": g.path,
                "line_no": g.lines.get(c.exercise, 1),
                "duration": int(round(c.duration_s * 1000)),
            })
    status = {EXIT_OK: "pass", EXIT_FAILED: "fail"}.get(o.exit_code, "error")
    return {"version": 1, "status": status, "max_score": round(o.max_score, 4), "tests": tests}


def classroom_result(o: Outcome) -> str:
    """The ``result`` output: base64 of the compact JSON payload (one line)."""
    text = json.dumps(classroom_payload(o), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


# ------------------------------------------------------------------ the step summary (Markdown)


def md(text: str) -> str:
    """One line of plain text that renders as itself in GitHub Markdown, inside a table cell too:
    whitespace runs (newlines included) become one space, every ASCII punctuation mark is backslash-escaped
    (CommonMark allows it for all of them), so no HTML, link, emphasis or cell break can form."""
    return _MD_PUNCTUATION.sub(r"\\\1", " ".join(text.split()))


def fenced(text: str) -> list[str]:
    """``text`` as a fenced code block whose fence is longer than any run of backticks in it, so
    nothing inside can close it; Markdown and HTML in a code block render as text."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *(text.splitlines() or [""]), fence]


def step_summary(o: Outcome) -> str:
    """``$GITHUB_STEP_SUMMARY``: per file a table by exercise and the failed visible checks, then the total,
    the threshold, the hidden-check note and the integrity status."""
    lines = ["## Grading", ""]
    if not o.graded:
        lines += [f"**Nothing was graded**: {md(o.nothing)}.", ""]
    for g in o.graded:
        lines += _file_section(g, o)
    lines += ["### Result", ""]
    if o.graded:
        lines.append(f"**Total: {md(format_number(o.score))} / {md(format_number(o.max_score))} points "
                     f"\\({md(_pct(o.percent))}%\\)**")
        lines.append("")
        if o.threshold > 0:
            verdict = "✅ met" if o.meets_threshold else "❌ not met"
            lines += [f"Threshold {md(_pct(o.threshold))}%: {verdict}", ""]
    lines += [_hidden_line(o), "", _integrity_line(o.integrity), ""]
    if o.grader_error:
        lines += ["❌ **The grader itself failed** on a file (not your fault): this run is not a grade; "
                  "tell course staff.", ""]
    for note in o.notes:
        lines.append(f"- {md(note)}")
    if o.notes:
        lines.append("")
    return "\n".join(lines) + "\n"


def _hidden_line(o: Outcome) -> str:
    if o.hidden.run and o.graded:
        return "**Hidden checks**: run \\(their details are shown to course staff only\\)"
    if not o.graded:
        return "**Hidden checks**: not run \\(nothing was graded\\)"
    return f"> ⚠️ **Hidden checks not run**: {md(o.hidden.note.removeprefix('hidden checks not run: '))}"


def _integrity_line(seal: Integrity) -> str:
    if seal.status == "verified":
        return "**Integrity**: ✅ verified: the workflow, the checks and the course files are as released"
    if seal.status == "unverified":
        return f"**Integrity**: unverified: this repository has no {md(integrity.MANIFEST)}"
    files = ", ".join(md(f) for f in seal.files)
    return (f"**Integrity**: ❌ modified: {files}. Protected files may not be changed; "
            "this run fails until they are restored.")


def _file_section(g: Graded, o: Outcome) -> list[str]:
    card = g.card
    lines = [f"### {md(g.target.rel)} \\(assignment {md(card.assignment)}\\)", ""]
    if not g.counted:
        lines += ["_Not counted: another file of this assignment scored better._", ""]
    if card.grader_error:
        lines += ["❌ **The grader itself failed on this file** (not your fault): this is not a grade.", ""]
        if not o.hidden.run:
            lines += fenced(card.grader_error) + [""]
    lines += ["| exercise | points | checks passed |", "|:--|--:|--:|"]
    for exercise, checks in _by_exercise(card.checks):
        ran = [c for c in checks if c.status != "skipped"]
        passed = sum(c.status == "passed" for c in ran)
        mark = "✅" if passed == len(ran) else "❌"
        lines.append(f"| {mark} {md(exercise)} | {md(format_number(sum(c.score for c in checks)))} / "
                     f"{md(format_number(sum(c.max_score for c in checks)))} | {passed} / {len(ran)} |")
    lines.append(f"| **total** | **{md(format_number(card.score))} / {md(format_number(card.max_score))}** | |")
    lines.append("")
    if g.hidden_left:
        lines += [f"{g.hidden_left} more checks run only when your work is graded with every check; passing "
                  "every check here does not guarantee full marks.", ""]
    failed = [c for c in card.checks if c.status in PROBLEMS]
    if failed:
        lines += ["#### Failed checks", ""]
    for exercise, checks in _by_exercise(tuple(failed)):
        for message, same in _same_message([c for c in checks if not views.is_hidden(c)]):
            names = "; ".join(f"{md(_friendly(c))} \\({md(c.status)}, {md(format_number(c.score))} / "
                              f"{md(format_number(c.max_score))}\\)" for c in same)
            lines += [f"**{md(exercise)}**: {names}", ""] + fenced(message) + [""]
        hidden = sum(views.is_hidden(c) for c in checks)
        if hidden:
            lines += [f"**{md(exercise)}**: {hidden} hidden checks failed \\(their details are shown to "
                      "course staff only\\)", ""]
    if card.notebook is not None:
        from grader.export.text import notebook_lines

        lines += ["#### Notebook", ""] + fenced("\n".join(notebook_lines(card.notebook, 100)).strip()) + [""]
    return lines


def _same_message(checks: list[CheckResult]) -> list[tuple[str, list[CheckResult]]]:
    """Failed checks grouped by their message, in order: a function that raises fails every check
    with the same words, which a student needs to read once."""
    groups: dict[str, list[CheckResult]] = {}
    for c in checks:
        groups.setdefault(c.message or c.status, []).append(c)
    return list(groups.items())


def _by_exercise(checks: tuple[CheckResult, ...]) -> list[tuple[str, list[CheckResult]]]:
    groups: dict[str, list[CheckResult]] = {}
    for c in checks:
        groups.setdefault(c.exercise, []).append(c)
    return list(groups.items())


def _friendly(check: CheckResult) -> str:
    from grader.selfcheck import friendly_name

    return friendly_name(check)


# ------------------------------------------------------------------ the console


def printable(text: str) -> str:
    """What a submission printed, safe for a terminal and a CI log: control characters other than
    newline and tab (escape sequences, carriage returns that overwrite a line) shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def console(o: Outcome) -> str:
    """The log: the text table per file and the result; on GitHub, all of it inside ``::stop-commands::``
    with an unguessable token, then our own (escaped) commands."""
    from grader.export import text

    body: list[str] = []
    for g in o.graded:
        body.append(text.render(g.card).rstrip("\n"))
        if g.hidden_left:
            body.append(f"({g.hidden_left} more checks run only when your work is graded with every check)")
        if g.card.output:
            body += [f"--- what {g.target.rel} printed ---", g.card.output.rstrip("\n"), "--- end ---"]
        elif o.hidden.run:
            body.append(f"(what {g.target.rel} printed is not shown: it may hold the hidden checks' inputs)")
        body.append("")
    body.append(f"grader ci: {_total_sentence(o)}")
    if o.graded and not o.hidden.run:
        body.append(o.hidden.note)
    body.append(f"integrity: {o.integrity.status}" + (f" ({', '.join(o.integrity.files)})" if o.integrity.files
                                                       else ""))
    body += [f"note: {n}" for n in o.notes]
    text = printable("\n".join(body))
    if o.env.kind != "github":
        return text + "\n"
    token = secrets.token_hex(16)
    return "\n".join([f"::stop-commands::{token}", text, f"::{token}::", *annotations(o)]) + "\n"
