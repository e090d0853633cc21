"""Run the ``grader`` command in this process with SIGINT as asked, and send this process a SIGINT the moment
a named module starts to import: a Ctrl-C at a chosen moment of start-up, with no clock involved.

Usage: python tests/interrupt_at.py default|ignored MODULE|- GRADER-ARGS...
(``-``: no signal; ``ignored``: the process starts with SIGINT ignored, as a shell's background job does).
"""

from __future__ import annotations

import os
import runpy
import signal
import sys


class InterruptOnImport:
    """A meta path finder that finds nothing: it only notices the first import of ``module`` and sends the
    SIGINT then (Python runs the handler at the next instruction, inside that import)."""

    def __init__(self, module: str) -> None:
        self.module = module

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == self.module:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)


def main() -> None:
    disposition, module, *argv = sys.argv[1:]
    signal.signal(signal.SIGINT, signal.SIG_IGN if disposition == "ignored" else signal.default_int_handler)
    if module != "-":
        sys.meta_path.insert(0, InterruptOnImport(module))
    sys.argv = ["grader", *argv]
    runpy.run_module("grader.cli", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
