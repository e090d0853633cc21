"""What GitHub Actions reads, and the console: workflow commands whose data and properties are
escaped, text a submission controls made inert, annotations at the failing definitions, step
outputs, the step summary's Markdown and the plain-text table."""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping

from grader import integrity
from grader.export import views
from grader.export.gradebook_csv import format_number
from grader.scorecard import CheckResult, Integrity, by_exercise
from grader.ci.classroom import classroom_result
from grader.ci.commands import command, printable
from grader.exits import EXIT_OK
from grader.ci.grading import Graded, Outcome, friendly
from grader.words import count, plural


MAX_ERROR_ANNOTATIONS = 10  # GitHub shows 10 error annotations per step; the rest are in the summary
MESSAGE_CLIP = 400  # characters of one check's message in an annotation
MESSAGES_PER_ANNOTATION = 3  # distinct messages quoted in one exercise's annotation; the summary has them all
PROBLEMS = ("failed", "error", "timeout")
_MD_PUNCTUATION = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")


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
        for exercise, checks in by_exercise(g.card.checks):
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
    lines = [f"{exercise}: {len(bad)} of {count(len(ran), 'check')} failed "
             f"({format_number(got)}/{format_number(top)} {plural(top, 'point')})"]
    groups = _same_message([c for c in bad if not views.is_hidden(c)])
    for i, (message, same) in enumerate(groups):
        if i == MESSAGES_PER_ANNOTATION:
            lines.append(f"- {sum(len(g) for _, g in groups[i:])} more failed checks: see the job summary")
            break
        clipped = message if len(message) <= MESSAGE_CLIP else message[:MESSAGE_CLIP] + " [...]"
        lines.append(f"- {', '.join(friendly(c) for c in same)}: {clipped}")
    hidden = sum(views.is_hidden(c) for c in bad)
    if hidden:
        lines.append(f"- {hidden} hidden checks failed (their details are shown to course staff only)")
    if g.notebook:
        lines.append("(notebook: the line is that of the definition inside the .ipynb file)")
    return command("error", "\n".join(lines), file=g.path, line=g.lines.get(exercise, 1),
                   title=f"{exercise}: {count(len(bad), 'check')} failed")


def _total_sentence(o: Outcome) -> str:
    if not o.graded:
        return f"nothing graded: {o.nothing}"
    head = f"{format_number(o.score)} / {format_number(o.max_score)} {plural(o.max_score, 'point')} ({_pct(o.percent)}%)"
    penalty = round(sum(float(g.card.late.get("penalty_points", 0)) for g in o.counted if g.card.late), 6)
    if penalty:
        head += f" after a late penalty of {format_number(penalty)} {plural(penalty, 'point')}"
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
        lines.append(f"**Total: {md(format_number(o.score))} / {md(format_number(o.max_score))} "
                     f"{plural(o.max_score, 'point')} "
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
    if card.problem:  # said once here; each check's message refers to it
        lines += [f"❌ **Your file**: {md(card.problem)}", ""]
    lines += ["| exercise | points | checks passed |", "|:--|--:|--:|"]
    for exercise, checks in by_exercise(card.checks):
        ran = [c for c in checks if c.status != "skipped"]
        passed = sum(c.status == "passed" for c in ran)
        mark = "✅" if passed == len(ran) else "❌"
        lines.append(f"| {mark} {md(exercise)} | {md(format_number(sum(c.score for c in checks)))} / "
                     f"{md(format_number(sum(c.max_score for c in checks)))} | {passed} / {len(ran)} |")
    lines.append(f"| **total** | **{md(format_number(card.score))} / {md(format_number(card.max_score))}** | |")
    lines.append("")
    if card.late:
        late = card.late
        lines += [f"**Late policy**: {md(format_number(late['raw_score']))} − {md(format_number(late['penalty_points']))} "
                  f"= **{md(format_number(late['final_score']))}** points final: {md(late['rule'])} "
                  f"\\({md(late['policy'])}\\)", ""]
    if g.hidden_left:
        lines += [f"{g.hidden_left} more checks run only when your work is graded with every check; passing "
                  "every check here does not guarantee full marks.", ""]
    failed = [c for c in card.checks if c.status in PROBLEMS]
    if failed:
        lines += ["#### Failed checks", ""]
    named = views.student_view(card).diagnoses  # a mistake only hidden checks showed is not named
    for exercise, checks in by_exercise(tuple(failed)):
        lines += [f"**{md(exercise)}**: {md(d.text)}" for d in named if d.exercise == exercise]
        lines += [""] if any(d.exercise == exercise for d in named) else []
        for message, same in _same_message([c for c in checks if not views.is_hidden(c)]):
            names = "; ".join(f"{md(friendly(c))} \\({md(c.status)}, {md(format_number(c.score))} / "
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
