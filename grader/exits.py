"""Every exit status of the ``grader`` command, in one place (README: each command's "Exit codes").

The CLI is the only place that exits; the functions under it return these.
"""

EXIT_OK = 0  # graded (however badly the submission did), or every visible check passed
EXIT_FAILED = 1  # `grader check`: a check failed; `grader ci`: under the threshold, or protected files changed
EXIT_BAD_INPUT = 2  # nothing could be graded as asked: one line on stderr says why (a bad flag, file, config)
EXIT_INTERNAL = 3  # the grader itself failed: a bug or a broken install, never the student's doing
EXIT_STOPPED = 130  # stopped by Ctrl-C or SIGTERM, whole files left behind (128 + SIGINT)
