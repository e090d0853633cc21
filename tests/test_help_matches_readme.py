"""Every command's help and stderr advice says what the docs' recommended set-up says (issue 38, item 8).

The text these tests read moved from the README to the documentation site (issue 40): the recommended key
set-up and the in-repository workflow to docs/platforms.md, the defaults and columns to the pages that
explain them; the tests read every page of docs/ and name the page a section comes from.

Help is read from the argparse parser itself, defaults from the code constants the commands use, the
extensions columns from the code that reads the file, so a change on either side that the other does
not follow fails here: `grader keygen` once told staff to store the key as an organisation secret (the
README's opt-in, which gives every student the key), and `grade-all --help` said "one per 4
submissions" after the code and the README had moved to 2.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from grader import deadlines
from grader.batch import run as batch_run
from grader.batch import similarity
from grader.cli import course, parser

DOCS_DIR = Path(__file__).resolve().parents[1] / "docs"
PAGES = {p.name: p.read_text(encoding="utf-8") for p in sorted(DOCS_DIR.glob("*.md"))}
DOCS = "\n\n".join(PAGES.values())  # every page: a default or a column is said on the page that explains it
RECOMMENDED_HEADING = "### Grading where students cannot reach the key (recommended)"


def _section(heading: str) -> str:
    """The text from ``heading`` to the next heading of the same or a higher level, on the one page that has it."""
    [page] = [text for text in PAGES.values() if heading in text]
    start = page.index(heading)
    level = heading.split(" ", 1)[0]
    rest = page[start + len(heading):]
    ends = [m.start() for m in re.finditer(r"^#{1,%d} " % len(level), rest, re.MULTILINE)]
    return rest[: ends[0]] if ends else rest


def _flat(text: str) -> str:
    return " ".join(text.split())


def _helps() -> list[tuple[str, str]]:
    """(where, text) for the top-level help of every command and the help of each of its options."""
    found: list[tuple[str, str]] = []
    for action in parser.build_parser()._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for choice in action._choices_actions:
            found.append((f"grader --help: {choice.dest}", choice.help or ""))
        for name, sub in action.choices.items():
            found += [(f"grader {name} {'/'.join(a.option_strings) or a.dest}", a.help or "")
                      for a in sub._actions if a.help and a.help is not argparse.SUPPRESS]
    return found


def _option_help(command: str, option: str) -> str:
    sub = next(a for a in parser.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return _flat(next(a.help for a in sub.choices[command]._actions if option in a.option_strings))


# ------------------------------------------------------------------ the key set-up


def test_keygen_advice_gives_the_recommended_set_up_in_the_readmes_own_commands():
    recommended = _section(RECOMMENDED_HEADING)
    commands = [line.strip() for line in course.KEY_ADVICE.splitlines() if line.startswith("  ")]
    assert commands, "the advice quotes no command"
    for command in commands:
        assert command in recommended, f"keygen advises `{command}`, which the docs' recommended set-up lacks"
    assert "--env grading" in " ".join(commands) and "--org" not in course.KEY_ADVICE


@pytest.mark.parametrize("where, text", _helps() + [("grader keygen stderr", course.KEY_ADVICE)])
def test_no_help_recommends_the_organisation_secret(where, text):
    """The organisation secret is the docs' opt-in: any help that names it says it is one."""
    for sentence in re.split(r"(?<=[.;])\s", _flat(text)):
        if re.search(r"organi[sz]ation secret", sentence, re.IGNORECASE):
            assert "opt-in" in sentence and "read" in sentence, f"{where} recommends the organisation secret"
    assert "opt-in" in _section("### The in-repository workflow").lower()


def test_keygen_help_names_the_secret_the_readme_recommends():
    keygen = next(text for where, text in _helps() if where == "grader --help: keygen")
    assert "GRADER_HIDDEN_KEY" in keygen and "environment secret" in _flat(keygen)
    assert "environment secrets" in _flat(_section(RECOMMENDED_HEADING))
    pointers = re.findall(r'(docs/[a-z-]+\.md): "([^"]+)"', course.KEY_ADVICE)
    assert pointers, "keygen's advice points at no page"
    for page, quoted in pointers:
        assert page[len("docs/"):] in PAGES, f"keygen's advice points at {page}, which is not a page"
        assert quoted in PAGES[page[len("docs/"):]], f"keygen's advice points at a section of {page}, {quoted!r}, that is not there"
    assert "README" not in course.KEY_ADVICE


# ------------------------------------------------------------------ defaults


def test_jobs_default_is_the_codes_in_the_help_and_the_docs():
    per = batch_run.SUBMISSIONS_PER_PROCESS
    assert parser.SUBMISSIONS_PER_PROCESS == per
    assert f"one per {per} submissions" in _option_help("grade-all", "--jobs")
    assert f"one per {per} submissions" in _flat(PAGES["instructors.md"])
    for other in range(1, 9):
        if other != per:
            assert f"one per {other} submissions" not in _option_help("grade-all", "--jobs")
            assert f"one per {other} submissions" not in _flat(DOCS)
    assert batch_run.default_jobs(per * 3, 64) == 3 and batch_run.default_jobs(per * 3 - 1, 64) == 2


@pytest.mark.parametrize("command", ["grade-all", "merge"])
def test_similarity_threshold_default_is_the_codes_in_the_help_and_the_docs(command):
    value = f"{similarity.DEFAULT_THRESHOLD:g}"
    assert f"(default {value})" in _option_help(command, "--similarity-threshold")
    assert f"(default {value}, also on `grader merge`)" in _flat(PAGES["formats.md"])


def test_every_argparse_default_a_help_mentions_is_the_real_one():
    sub = next(a for a in parser.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    said = 0
    for name, command in sub.choices.items():
        for action in command._actions:
            if action.default in (None, False, argparse.SUPPRESS) or not action.help or not action.option_strings:
                continue
            shown = {str(action.default), f"({action.default})"} | ({"here"} if str(action.default) == "." else set())
            assert any(s in action.help for s in shown), f"grader {name} {action.option_strings[0]}: help omits its default"
            said += 1
    assert said >= 3


# ------------------------------------------------------------------ the extensions columns


def test_extensions_help_and_docs_name_every_column_the_reader_reads(tmp_path):
    columns = ",".join(deadlines.EXTENSION_COLUMNS)
    assert f"a CSV of {columns} " in _option_help("grade-all", "--extensions")
    assert f"`{columns}`" in PAGES["configuration.md"]
    for move in deadlines.EXTENSION_MOVES:  # each column the help names is one the reader acts on
        assert move in _option_help("grade-all", "--extensions")
        value = {"new_due": "2026-03-03T12:00", "extra_days": "2", "extra_hours": "5"}[move]
        path = tmp_path / f"{move}.csv"
        path.write_text(f"student,{move},reason\nana,{value},flu\n", encoding="utf-8")
        assert deadlines.load_extensions(path, "UTC")["ana"].reason == "flu"


# ------------------------------------------------------------------ every command the docs show


def _grader_calls(text: str) -> list[list[str]]:
    """Each `grader ...` call in a command line as its words, up to the next shell operator or redirection
    (read as the shell reads quotes: a `;` inside a quoted reason ends nothing)."""
    import shlex

    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    calls: list[list[str]] = []
    current: list[str] | None = None
    at_start = True  # the next word names the program (after an operator, or after VAR=value words)
    for token in lexer:
        if token and set(token) <= set(";&|()<>"):
            current, at_start = None, True
        elif current is not None:
            current.append(token)
        elif at_start and re.fullmatch(r"[A-Za-z_]\w*=.*", token):
            continue
        else:
            if at_start and token == "grader":
                current = [token]
                calls.append(current)
            at_start = False
    return calls


def test_the_call_reader_splits_at_shell_operators():
    assert _grader_calls("(umask 077; grader keygen > key.txt)") == [["grader", "keygen"]]
    assert _grader_calls("mkdir -p x && cp a x/ && grader check x/a.py --out x/c.json") == [
        ["grader", "check", "x/a.py", "--out", "x/c.json"]]
    assert _grader_calls('grader override a --reason "one; two" --by "TA Kim"') == [
        ["grader", "override", "a", "--reason", "one; two", "--by", "TA Kim"]]
    assert _grader_calls("echo grader; true") == [] and _grader_calls("python -m compileall -q grader") == []
    assert _grader_calls("X=1 grader check a.py") == [["grader", "check", "a.py"]]


def _parses(call: list[str]) -> bool:
    """Whether ``grader --help``'s parser takes the call (``--help`` itself prints and exits 0)."""
    try:
        parser.build_parser().parse_args(call[1:])
    except SystemExit as stop:  # argparse refusing the line, or --help having printed
        return stop.code == 0 and "--help" in call
    return True


@pytest.mark.parametrize("line", ["grader no-such-verb", "grader grade-all class --assignment attention --no-such-flag",
                                  "grader grade a.py", "grader export nosuchformat a.json --out x",
                                  "grader grade-all class --assignment attention --jobs two"])
def test_a_call_the_parser_refuses_is_caught(line, capsys):
    assert not _parses(line.split())
    assert _parses(["grader", "ci", "--help"]) and _parses(["grader", "keygen"])


def test_every_grader_command_the_docs_and_readme_show_parses_with_the_real_parser(capsys):
    """A verb or flag the docs show that --help no longer has (renamed, removed) fails here, shown or run."""
    from tests.doc_commands import page_commands

    calls = [(c.page, c.line, call) for found in page_commands(DOCS_DIR.parent).values() for c in found
             for call in _grader_calls(c.text.replace(".venv/bin/grader", "grader"))]
    assert len(calls) >= 25, calls
    refused = [f"{page}:{line}: `{' '.join(call)}`" for page, line, call in calls if not _parses(call)]
    assert not refused, "not commands `grader --help` knows:\n" + "\n".join(refused)
