"""The README opens with the two commands, and CI runs exactly the second one; the instructors' page
shows every class grading with a course secret made as the warning says (it moved there from the README)."""

from tests.conftest import ROOT

INSTRUCTORS = ROOT / "docs" / "instructors.md"


def test_ci_runs_the_readme_test_command():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[0] == "```bash" and "grader grade examples/attention.py" in lines[1]
    assert lines[2].endswith("-m pytest -q")
    assert (ROOT / ".ci/run").read_text().strip().splitlines()[-1] == lines[2]


def _bash_lines(text: str) -> list[str]:
    """The command lines of the ```bash blocks (indented ones in list items too), trailing comments dropped."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            inside = line.strip() == "```bash"
            continue
        if inside and line.strip():
            lines.append(line.split("   #", 1)[0].strip())
    return lines


def test_the_bash_reader_takes_indented_blocks_and_no_other_language():
    text = "```bash\na   # note\n```\n1. step\n\n   ```bash\n   b\n   ```\n```sh\nc\n```\n```python\nd\n```\n"
    assert _bash_lines(text) == ["a", "b"]


def test_every_class_grading_example_uses_a_course_secret_made_as_the_warning_says():
    """Issue 37: the README's grade-all examples graded every student on the same hidden inputs."""
    import shlex

    from grader import seeds
    from grader.cli.parser import build_parser

    text = INSTRUCTORS.read_text()
    shown = _bash_lines(text) + _bash_lines((ROOT / "README.md").read_text())
    examples = [line for line in shown if line.split(" && ")[-1].startswith("grader grade-all ")]
    assert len(examples) >= 3, examples
    for line in examples:
        args = build_parser().parse_args(shlex.split(line.split(" && ")[-1])[1:])  # every flag shown is a real one
        assert args.course_secret_file is not None, line
        assert str(args.course_secret_file) == seeds.SECRET_FILE_EXAMPLE, line
    assert seeds.MAKE_SECRET_FILE in _bash_lines(text), "the instructors' page must show the command the warning gives"
    section = text.split("**The course secret.**", 1)[1].split("\n\n", 1)[0]
    for promise in ("umask 077", "outside every repository", "never commit it", "same file to every `grade-all`",
                    "A new secret", "re-grades the whole class"):
        assert promise in section, promise
