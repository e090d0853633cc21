"""The README opens with the two commands, and CI runs exactly the second one."""

from tests.conftest import ROOT


def test_ci_runs_the_readme_test_command():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[0] == "```bash" and "grader grade examples/attention.py" in lines[1]
    assert lines[2].endswith("-m pytest -q")
    assert (ROOT / ".ci/run").read_text().strip().splitlines()[-1] == lines[2]
