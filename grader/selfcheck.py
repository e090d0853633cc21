"""``grader check``: a student runs the visible checks on their own file, before submitting.

The same pipeline as grading (the sandbox, the checks, the scorecard), with
only the checks students may see: in the course repository they are judged
by the reference, in a student kit by the values the release recorded. The
table is written for students: ✓ or ✗ per check, each failure's message,
and, always, how many hidden checks will run at grading time, so nobody
reads "all passed" as "full marks".
"""

from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from grader.config import AssignmentConfig, Config
from grader.exits import EXIT_FAILED, EXIT_OK
from grader.export.text import stopped_by_problem
from grader.notebook import matters
from grader.scorecard import CheckResult, NotebookReport, Scorecard, by_exercise
from grader.words import count, plural

MARK = {"passed": "✓", "failed": "✗", "error": "✗", "timeout": "✗", "skipped": "–"}
NOT_ATTEMPTED = "not attempted"


class UnknownAssignment(ValueError):
    """The file's name matches no assignment and none was given."""


def assignment_for(path: Path, config: Config, given: str | None) -> AssignmentConfig:
    """``--assignment``, else the assignment whose file has this file's stem (attention.ipynb -> attention.py)."""
    if given:
        return config.assignment(given)
    matches = [a for a in config.assignments.values() if Path(a.file).stem == path.stem]
    if len(matches) == 1:
        return matches[0]
    if len(config.assignments) == 1:
        return next(iter(config.assignments.values()))
    names = ", ".join(f"{a.file} ({a.id})" for a in config.assignments.values())
    raise UnknownAssignment(f"cannot tell which assignment {path.name} is: name it like one of {names}, "
                            "or pass --assignment ID")


def exit_code(card: Scorecard) -> int:
    """0 only when every visible check that ran passed (a skipped check did not run: a GPU check
    without CUDA, or a device check the meta device could not decide)."""
    ok = not card.grader_error and all(c.status in ("passed", "skipped") for c in card.checks)
    return EXIT_OK if ok else EXIT_FAILED


@dataclass(frozen=True)
class Summary:
    passed: int
    failed: int
    skipped_gpu: int
    skipped_other: int
    hidden: int

    def lines(self) -> list[str]:
        total = self.passed + self.failed
        head = f"Visible checks: {self.passed} of {total} passed"
        if self.failed:
            head += f", {self.failed} failed"
        head += _skip_note(self.skipped_gpu, self.skipped_other, "they need a GPU")
        out = [head + "."]
        if self.hidden:
            out.append(f"{self.hidden} more checks run only when your work is graded; they are not shown here, "
                       "so passing every visible check does not guarantee full marks.")
        return out


def summary(card: Scorecard, hidden: int) -> Summary:
    statuses = [c.status for c in card.checks]
    gpu, other = _skips(list(card.checks))
    return Summary(statuses.count("passed"), sum(s not in ("passed", "skipped") for s in statuses), gpu, other, hidden)


def _skips(checks: list[CheckResult]) -> tuple[int, int]:
    """Skipped checks: (GPU checks where there is no CUDA, others, e.g. inconclusive on the meta device)."""
    skipped = [c for c in checks if c.status == "skipped"]
    gpu = sum(c.message.startswith("no CUDA") for c in skipped)
    return gpu, len(skipped) - gpu


def _skip_note(gpu: int, other: int, gpu_words: str) -> str:
    parts = ([f"{gpu} not run here: {gpu_words}"] if gpu else []) + ([f"{other} inconclusive here"] if other else [])
    return f" ({'; '.join(parts)})" if parts else ""


def render(card: Scorecard, hidden: int, width: int = 100, verbose: bool = False) -> str:
    """The student's table: exercise by exercise, ✓/✗ per check, what went wrong and a hint.

    ``verbose``: list every demo statement of a notebook that grading leaves out (else one line counts
    them; cells that failed and statements the student's definitions need are always listed).
    """
    lines = [f"grader check: {card.submission.file} (assignment {card.assignment})"]
    if card.grader_error:
        lines.append(f"The checks could not run (not your fault): {card.grader_error}")
    if card.problem:  # a file that cannot load: said first, once; the checks it stopped only refer to it
        lines.append("")
        lines += textwrap.wrap(f"✗ {card.problem}", width, subsequent_indent="  ")
    stopped = stopped_by_problem(card)
    if stopped is not None and stopped[0] == NOT_ATTEMPTED:
        stopped = None  # nothing written yet: the exercises still to do are the useful list
    if stopped is not None:
        lines.append(f"  ({count(stopped[1], 'check')} could not run because of it.)")
    for exercise, checks in by_exercise(card.checks) if stopped is None else ():
        ran = [c for c in checks if c.status != "skipped"]
        if ran and all(c.message == NOT_ATTEMPTED for c in ran):
            lines.append(f"\n✗ {exercise}: not attempted yet (it still raises NotImplementedError; "
                         f"{count(len(ran), 'check')} {plural(len(ran), 'waits', 'wait')} for it)")
            continue
        passed = sum(c.status == "passed" for c in ran)
        gpu = _skip_note(*_skips(checks), "no GPU")
        lines.append(f"\n{'✓' if passed == len(ran) else '✗'} {exercise}: {passed}/{len(ran)} checks passed{gpu}")
        for c in checks:
            lines.append(f"    {MARK[c.status]} {friendly_name(c)}")
            if c.status != "passed" and c.message:
                lines += textwrap.wrap(c.message, width - 8, initial_indent="        ", subsequent_indent="        ")
    if card.notebook is not None:
        lines += notebook_lines(card.notebook, width, verbose)
    lines.append("")
    lines += summary(card, hidden).lines()
    return "\n".join(lines) + "\n"


def notebook_lines(nb: NotebookReport, width: int, verbose: bool = False) -> list[str]:
    """What of the notebook did not run: each failed cell and each statement the definitions need, one by
    one (they cost points); the demo statements, which cost nothing, in one line unless ``verbose``."""
    lines = [f"\nNotebook: {count(nb.cells, 'cell')}, {nb.code_cells} with code."]
    for note in nb.failed:
        lines += textwrap.wrap(f"cell {note.cell}, line {note.line}: {note.reason} ({note.code})", width - 4,
                               initial_indent="  ✗ ", subsequent_indent="    ")
    important = [n for n in nb.dropped if matters(n)]
    demos = [n for n in nb.dropped if not matters(n)]
    for note in important + (demos if verbose else []):
        mark = "✗" if matters(note) else "-"
        lines += textwrap.wrap(f"cell {note.cell}, line {note.line}: `{note.code}` - {note.reason}", width - 4,
                               initial_indent=f"  {mark} ", subsequent_indent="    ")
    if demos and not verbose:
        cells = len({n.cell for n in demos})
        lines.append(f"  {count(len(demos), 'demo statement')} in {count(cells, 'cell')} "
                     f"{plural(len(demos), 'is')} not run when grading; `grader check -v` lists them.")
    return lines


def friendly_name(check: CheckResult) -> str:
    """test_low_precision_inputs_work[softmax-float16] -> "low precision inputs work (float16)"."""
    name, _, params = check.id.partition("[")
    words = name.removeprefix("test_").replace("_", " ")
    extra = [p for p in params.rstrip("]").split("-") if p and p != check.exercise]
    return f"{words} ({', '.join(extra)})" if extra else words


def watch(path: Path, run_once: Callable[[], int], interval: float = 0.3,
          sleep: Callable[[float], None] = time.sleep) -> int:
    """Run, then run again each time ``path`` is saved, until Ctrl-C; the last run's exit code.

    The file's stamp is taken before each run, so a save made while a run is going (a spawned worker
    on macOS or Windows takes seconds to start) is checked again, never taken for the checked version."""
    seen = _stamp(path)
    code = run_once()
    try:
        while True:
            sleep(interval)
            now = _stamp(path)
            if now == seen or now is None:
                continue
            while (settled := _stamp(path)) != now:  # an editor still writing: wait until it stops
                now = settled
                sleep(interval)
            if now is not None:
                seen = now
                print(f"\n--- {path.name} changed: checking again ---", flush=True)
                code = run_once()
    except KeyboardInterrupt:
        return code


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None  # an editor replacing the file: wait for the new one
    return st.st_mtime_ns, st.st_size
