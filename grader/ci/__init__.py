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

One module per step: ``context`` (where it runs, the options), ``targets`` (which files),
``grading`` (every check or the visible ones, integrity, the outcome), ``commands`` / ``workflow`` /
``classroom`` (what each platform reads). The logic is functions a test can call (``run`` takes the environment, the
output streams and the hidden-check unlocker as arguments); ``grader.cli``
only parses arguments and maps exceptions to exit codes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

from grader.ci.classroom import (  # noqa: F401 - re-exported: `grader.ci.<name>`
    classroom_payload, classroom_result,
)
from grader.ci.commands import (  # noqa: F401 - re-exported: `grader.ci.<name>`
    command, escape_data, escape_property, inert,
)
from grader.ci.context import (  # noqa: F401 - re-exported: `grader.ci.<name>`
    BUNDLE, CIError, CIInternalError, DEFAULT_JUNIT, DEFAULT_OUT, Environment, GRADER_ERROR_SHOWN,
    KEY_VARIABLE, KIT_CONFIG, NO_BUNDLE_NOTE, NO_KEY_NOTE, NO_UNLOCK_NOTE, Options, Unlock, Unlocker, detect,
)
from grader.ci.grading import (  # noqa: F401 - re-exported: `grader.ci.<name>`
    Graded, HiddenPlan, Outcome, check_integrity, definition_lines, evaluate, grade_hidden, installed_unlock,
    plan_hidden, shown, with_late,
)
from grader.ci.targets import (  # noqa: F401 - re-exported: `grader.ci.<name>`
    Target, candidates, changed_files, select,
)
from grader.ci.workflow import (  # noqa: F401 - re-exported: `grader.ci.<name>`
    annotations, console, fenced, github_outputs, md, output_file_text, step_summary,
)

if TYPE_CHECKING:
    from grader.sandbox.client import WorkerServer


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
