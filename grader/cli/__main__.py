"""``python -m grader.cli``: the same as the ``grader`` command."""

from grader.cli import run

run()
