"""Gradescope's per-submission step: find the file, grade it, write ``results/results.json``.

``grader gradescope`` copies this file into the autograder zip as
``gradescope_run.py``; the zip's ``run_autograder`` runs it once per
submission. It only drives the grader's own commands - ``grader grade`` (the
same sandbox and checks as everywhere else) and ``grader export gradescope``
(the same ``results.json`` as by hand) - and adds what those cannot do:

* Pick the file. Gradescope keeps the names students upload, so the rule is
  strict: the assignment's file (``attention.py``) or its notebook
  (``attention.ipynb``), at any depth (a zip or a GitHub submission puts it in
  a folder), skipping ``.``/``_`` folders (``__MACOSX``, checkpoints). grade-all
  also takes a lone file of another name, because LMS downloads rename files;
  here a wrong name is one resubmission away, and grading the wrong file
  would say nothing useful. Links are never followed, and a submission
  that holds one (outside ``.``/``_`` folders) is not graded: score 0 and a
  message naming the link. A link named ``attention.py`` to the reference
  would otherwise be graded as the student's work, and one to any other file
  would be read (grader/links.py is the same rule for grade-all and CI).
* Always leave a ``results.json``. No file, two files, a grader that is not
  installed or that could not grade: score 0 and a message saying why and
  what was expected. Without it Gradescope shows the student only "The
  autograder failed to execute correctly".

Standard library only, and no syntax newer than Python 3.8: ``run_autograder``
may start it with the image's own ``python3`` (Ubuntu 22.04's is 3.10), apart
from the grader's environment.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

SUFFIXES = (".py", ".ipynb")
GRADE_TIMEOUT_S = 540  # under Gradescope's default 10 minutes, far over the grader's own per-submission limits
SHOWN = 20  # at most this many file names in a message

NO_GRADE = "No grade was given (the 0 is not your score); please tell course staff."


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Grade the submission under ``--root``; exit 0 whenever a ``results.json`` was written."""
    parser = argparse.ArgumentParser(description="Gradescope's per-submission step (run by run_autograder)")
    parser.add_argument("--root", type=Path, required=True, help="the folder laid out as /autograder")
    parser.add_argument("--grader", default="", help="the `grader` command ('' when none was found)")
    parser.add_argument("--assignment", required=True)
    parser.add_argument("--file", required=True, help="the assignment's file name, e.g. attention.py")
    parser.add_argument("--timeout", type=float, default=GRADE_TIMEOUT_S, help="seconds for `grader grade`")
    args = parser.parse_args(argv)
    results = args.root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    try:
        run(args.root, args.grader, args.assignment, args.file, args.timeout)
    finally:
        if not results.is_file():  # also on an exception of our own: its traceback goes to the staff's stdout
            write_message(results, "The autograder stopped before it could grade this submission. " + NO_GRADE)
    return 0


def run(root: Path, grader: str, assignment: str, file: str, timeout: float) -> None:
    """Pick the file, grade it, export the card; a problem becomes a score-0 ``results.json``."""
    results = root / "results" / "results.json"
    picked = pick(root / "submission", file)
    if isinstance(picked, str):
        print(f"gradescope: not graded: {picked}")
        write_message(results, picked)
        return
    if not grader:
        write_message(results, "The autograder is not installed correctly (no `grader` command: did setup.sh "
                               "fail?). " + NO_GRADE)
        return
    source = root / "source"
    env = dict(os.environ)
    # The bundle's own grader package is the one imported, whichever `grader` command starts it.
    env["PYTHONPATH"] = os.pathsep.join([str(source)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    print(f"gradescope: grading {picked.relative_to(root)} as assignment {assignment!r}", flush=True)
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        card = Path(tmp) / "card.json"
        code, err = call([grader, "grade", str(picked), "--assignment", assignment,
                          "--config", str(source / "assignments.yaml"), "--out", str(card), "--format", "text"],
                         env, timeout)
        if code is None:
            write_message(results, f"Grading took longer than {timeout:g} s and was stopped. " + NO_GRADE)
            return
        if code not in (0, 3) or not card.is_file():  # 3: the grader's own error, and its card says so
            write_message(results, f"The autograder could not grade {picked.name}: {last_line(err)}. " + NO_GRADE)
            return
        # --config: the bundle's assignments.yaml, whose gradescope_visibility says what students see when.
        code, err = call([grader, "export", "gradescope", str(card), "--out", str(results),
                          "--config", str(source / "assignments.yaml")], env, timeout)
        if code != 0:
            write_message(results, f"The autograder graded {picked.name} but could not write the result: "
                                   f"{last_line(err)}. " + NO_GRADE)


def pick(folder: Path, file: str) -> Union[Path, str]:
    """The one submission file under ``folder``, or the message that says why there is not exactly one."""
    other = Path(file).stem + (".ipynb" if Path(file).suffix == ".py" else ".py")
    wanted = (file, other)
    expected = f"{file} (or {other})"
    linked = _links(folder)
    if linked:
        more = f", and {len(linked) - 1} more" if len(linked) > 1 else ""
        return (f"Expected {expected} in your submission as a file, but it holds a symbolic link: "
                f"{_describe(linked[0], folder)}{more}. Submissions are never read through links: upload "
                f"{file} itself, with no links, and submit again.")
    everything = _files(folder)
    found = [p for p in everything if p.name in wanted]
    if len(found) == 1:
        return found[0]
    if found:
        return (f"Your submission holds more than one file to grade: {_listed(found, folder)}. "
                f"Keep only one {expected} and submit again.")
    holds = f"it holds {_listed(everything, folder)}" if everything else "it is empty"
    return f"Expected {expected} in your submission, but {holds}. Upload {expected} and submit again."


def _files(folder: Path) -> List[Path]:
    """Regular files only, never through a link: a link named attention.py could point at the reference."""
    found = []
    for top, folders, names in os.walk(folder):  # os.walk does not enter linked folders
        folders[:] = [name for name in folders if not name.startswith((".", "_"))]
        for name in names:
            path = Path(top) / name
            if not name.startswith((".", "_")) and not path.is_symlink() and path.is_file():
                found.append(path)
    return sorted(found)


def _links(folder: Path) -> List[Path]:
    """Every symbolic link under ``folder`` outside ``.``/``_`` folders (to a file, a folder or nothing),
    found with lstat and never entered: the submission holding one is refused, not graded without it."""
    found = []
    for top, folders, names in os.walk(folder):  # os.walk lists a linked folder but does not enter it
        folders[:] = [name for name in folders if not name.startswith((".", "_"))]
        found += [Path(top) / name for name in folders + names
                  if not name.startswith((".", "_")) and (Path(top) / name).is_symlink()]
    return sorted(found)


def _describe(link: Path, folder: Path) -> str:
    """``name (to target)`` on one line: both are the student's text, newlines and all."""
    try:
        target = os.readlink(link)
    except OSError:  # gone since it was listed
        target = "?"
    shown = "".join(c if c.isprintable() else "?" for c in f"{link.relative_to(folder).as_posix()} (to {target})")
    return shown if len(shown) <= 300 else shown[:297] + "..."


def _listed(paths: Sequence[Path], folder: Path) -> str:
    names = [p.relative_to(folder).as_posix() for p in paths[:SHOWN]]
    more = f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else ""
    return ", ".join(names) + more


def call(command: List[str], env: Dict[str, str], timeout: float) -> Tuple[Optional[int], str]:
    """Run ``command`` with its stdout passed on (Gradescope keeps it for staff); ``(exit code or None on
    timeout, its stderr)``. Its own session, so a timeout stops the grader and everything it started."""
    try:
        process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)
    except OSError as exc:  # no such file, not executable: said like the grader's own one-line complaints
        return 127, f"grader: cannot run {command[0]}: {exc.strerror or exc}\n"
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
        sys.stderr.write(err)
        return None, err
    sys.stderr.write(err)
    return process.returncode, err


def last_line(stderr: str) -> str:
    """The grader's one-line complaint (``grader: ...``), without the prefix."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "it stopped without saying why"
    line = lines[-1]
    return line[len("grader:"):].strip() if line.startswith("grader:") else line


def write_message(results: Path, message: str) -> None:
    """A ``results.json`` with score 0 and ``message`` for the student (Gradescope's documented keys only)."""
    data = {"score": 0, "output": message, "output_format": "text", "stdout_visibility": "hidden", "tests": []}
    tmp = results.with_name(f".tmp-{os.getpid()}-{results.name}")
    tmp.write_bytes((json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))  # "\n" only
    os.replace(tmp, results)


if __name__ == "__main__":
    sys.exit(main())
