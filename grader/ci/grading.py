"""Grading the selected files: with every check when the hidden checks unlock (the instructor's
grader tree, in a subprocess), else with the visible checks only; the protected files verified; and
the ``Outcome`` every report is written from (student views of the cards, never the raw ones)."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from grader import deadlines, integrity
from grader.export import views
from grader.config import Config, ConfigError, load_config
from grader.exits import EXIT_FAILED, EXIT_INTERNAL, EXIT_OK
from grader.scorecard import CheckResult, Integrity, Scorecard
from grader.ci.context import (
    BUNDLE, CIError, CIInternalError, Environment, GRADER_ERROR_SHOWN,
    HIDDEN_GRADE_TIMEOUT_S, KEY_VARIABLE, NO_BUNDLE_NOTE, NO_KEY_NOTE, NO_UNLOCK_NOTE, Options, Unlock,
    Unlocker, kit_config,
)
from grader.ci.targets import Target, select

if TYPE_CHECKING:
    from grader.sandbox.client import WorkerServer


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
    from grader.sandbox.launcher import start_server
    from grader.submission import UnreadableSubmission

    own = server is None
    active = server if server is not None else start_server(fork=False)
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
        """The final score: the checks' points less any late penalty (``Scorecard.final_score``)."""
        return round(sum(g.card.final_score for g in self.counted), 6)

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
        card = with_late(card, config, env.received_at)
        lines, notebook = definition_lines(t.path, (c.exercise for c in card.checks))
        graded.append(Graded(t, shown(card, hidden.run, seal), lines, notebook, _annotation_path(env, t.path),
                             hidden_left=left.get(t.assignment, 0)))
    graded, twice = _count_best(graded)
    return Outcome(env, tuple(graded), hidden, seal, options.threshold, (*selection.notes, *twice))


def with_late(card: Scorecard, config: Config, received_at: str) -> Scorecard:
    """``card`` with the assignment's late policy applied (its ``late`` section), when it has one.

    The submission time is the one the platform recorded (``Environment.received_at``): unknown for
    events that carry none, which the policy grades as on time and says so. Extensions are course
    staff's (``grade-all --extensions``): the kit does not carry them, so a CI run uses the due time.
    """
    policy = config.assignments[card.assignment].deadline if card.assignment in config.assignments else None
    if policy is None:
        return card
    result = deadlines.apply(policy, received_at or None, "", {}, card.score)
    return replace(card, late=result.to_dict(card.score, policy))


def friendly(check: CheckResult) -> str:
    from grader.selfcheck import friendly_name

    return friendly_name(check)
