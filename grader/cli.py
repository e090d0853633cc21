"""Command line: a thin layer over ``grader.api``, and the only place that exits.

Exit codes: 0 graded (however badly the submission did); 2 the grader could
not grade (bad arguments, unknown assignment, unreadable file, bad config,
``--strict`` refused); 3 the grader's own internal error (a card with
``grader_error`` is still written when possible).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.sandbox.launcher import WorkerServer

EXIT_OK, EXIT_CANNOT_GRADE, EXIT_INTERNAL = 0, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, no usage dump
        sys.stderr.write(f"grader: {message}\n")
        sys.exit(EXIT_CANNOT_GRADE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="grader", description="Grade 'attention from scratch' submissions.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    g = sub.add_parser("grade", help="grade one .py or .ipynb file and write a JSON scorecard")
    g.add_argument("submission", type=Path)
    g.add_argument("--assignment", required=True, help="assignment id from assignments.yaml")
    g.add_argument("--out", type=Path, required=True, help="where to write the JSON scorecard")
    g.add_argument("--format", choices=("text", "json", "none"), default="text", help="what to print on stdout")
    g.add_argument("--config", type=Path, help="assignments.yaml to use (default: the course's own)")
    g.add_argument("--strict", action="store_true", help="refuse to grade unless every isolation layer is active")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return cmd_grade(args)


def cmd_grade(args: argparse.Namespace) -> int:
    if not args.submission.is_file():
        return _fail(f"cannot read {args.submission}: no such file")
    try:
        server = WorkerServer()  # first: its `import torch` overlaps ours below
    except OSError as exc:
        return _fail(f"internal error: cannot start the worker server: {exc}", EXIT_INTERNAL)
    try:
        from grader import api, scorecard
        from grader.config import DEFAULT_CONFIG, ConfigError
        from grader.export import text
        from grader.submission import UnreadableSubmission

        try:
            with api.Grader(args.assignment, config_path=args.config or DEFAULT_CONFIG, server=server,
                            strict=args.strict) as grader:
                card = grader.grade(args.submission)
        except (ConfigError, UnreadableSubmission, api.StrictModeRefused, api.SecretsExposed) as exc:
            return _fail(str(exc))
        except Exception as exc:  # noqa: BLE001 - last resort: one line, never a traceback
            return _fail(f"internal error: {type(exc).__name__}: {exc}", EXIT_INTERNAL)
    finally:
        server.close()
    try:
        scorecard.write(card, args.out)
    except OSError as exc:
        return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
    if args.format == "text":
        sys.stdout.write(text.render(card))
    elif args.format == "json":
        sys.stdout.write(card.to_json())
    if card.grader_error:
        return _fail(f"internal error: {card.grader_error} (card written to {args.out})", EXIT_INTERNAL)
    return EXIT_OK


def _fail(message: str, code: int = EXIT_CANNOT_GRADE) -> int:
    sys.stderr.write(f"grader: {message}\n")
    return code


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":
    run()
