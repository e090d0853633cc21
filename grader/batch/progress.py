"""What ``grade-all`` shows while it works: a bar on a terminal, plain lines elsewhere.

A log file or CI console gets one line per student (a bar there is noise);
a person at a terminal gets tqdm's bar. Both go to stderr, so stdout stays
free for what a script might parse.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from tqdm import tqdm

from grader.export.gradebook import Row
from grader.words import count


class Progress:
    def __init__(self, stream: TextIO = sys.stderr, bar: bool | None = None) -> None:
        self._stream = stream
        self._bar_wanted = bar if bar is not None else (stream.isatty() and not os.environ.get("CI"))
        self._bar: tqdm | None = None
        self._total = 0
        self._done = 0

    def start(self, to_grade: int, unchanged: int) -> None:
        self._total = to_grade
        if unchanged:
            self._stream.write(f"{unchanged} unchanged since the last run (skipped; --force re-grades them)\n")
        if self._bar_wanted and to_grade:
            self._bar = tqdm(total=to_grade, file=self._stream, unit="student", dynamic_ncols=True)
        elif to_grade:
            self._stream.write(f"grading {count(to_grade, 'submission')}\n")

    def advance(self, row: Row) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.set_postfix_str(row.student[:24], refresh=False)
            self._bar.update(1)
            return
        result = f"{row.score:g}/{row.max_score:g}" if row.status == "graded" else f"{row.status}: {row.message}"
        width = len(str(self._total))
        self._stream.write(f"[{self._done:>{width}}/{self._total}] {row.student}: {result}\n")
        self._stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
