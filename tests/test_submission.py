"""Reading a submission: bytes to text as Python reads them, stubs, defined names, and forbidden calls
found by reading the AST."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

import base64
import csv
import os
from pathlib import Path

import nbformat

from grader import submission
from grader.submission import (MAX_SUBMISSION_BYTES, SubmissionTooLarge, decode_python_source, defined_names,
                               forbidden_in, load_submission)
from tests.conftest import ROOT

FORBIDDEN = frozenset({"softmax", "log_softmax", "Softmax", "LogSoftmax"})
FLAGGED = frozenset({"getattr", "eval", "exec", "__import__", "importlib"})


def test_stub_bodies_are_recognised():
    tree = ast.parse('def a():\n    """doc"""\n    raise NotImplementedError\n\ndef b():\n    return 1\n'
                     'class C:\n    def __init__(self):\n        raise NotImplementedError("todo")\n')
    defined, stubs = defined_names(tree)
    assert {"a", "b", "C"} <= defined and stubs == {"a", "C"}


@pytest.mark.parametrize("source", [
    "import torch\ndef softmax(x, dim=-1):\n    return torch.softmax(x, dim)\n",
    "def softmax(x, dim=-1):\n    return x.softmax(dim)\n",
    "import torch.nn.functional as F\ndef softmax(x, dim=-1):\n    return F.log_softmax(x, dim).exp()\n",
    "from torch.nn.functional import softmax as sm\ndef softmax(x, dim=-1):\n    return sm(x, dim)\n",
    "import torch\nS = torch.nn.Softmax\ndef softmax(x, dim=-1):\n    return S(dim)(x)\n",
    "import torch\ndef helper(x):\n    return torch.special.softmax(x, -1)\ndef softmax(x, dim=-1):\n    return helper(x)\n",
    "import torch\ndef softmax(x, dim=-1):\n    return getattr(torch, 'soft' + 'max')(x, dim)\n",
    "def softmax(x, dim=-1):\n    import torch\n    return eval('torch.softmax')(x, dim)\n",
])
def test_forbidden_softmax_is_found(source):
    assert forbidden_in(ast.parse(source), "softmax", FORBIDDEN, FLAGGED)


@pytest.mark.parametrize("source", [
    "import torch\ndef softmax(x, dim=-1):\n    e = (x - x.amax(dim, keepdim=True)).exp()\n    return e / e.sum(dim, keepdim=True)\n",
    "import torch\ndef softmax(x, dim=-1):\n    return (x - torch.logsumexp(x, dim, keepdim=True)).exp()\n",
    "import torch\ndef softmax(x, dim=-1):\n    return x\ndef attention(q):\n    return torch.softmax(q, -1)\n",
])
def test_hand_written_softmax_is_accepted(source):
    assert forbidden_in(ast.parse(source), "softmax", FORBIDDEN, FLAGGED) == []


@pytest.mark.parametrize("source", [
    "import torch.nn.functional as F\ndef softmax(x, dim=-1):\n    return F.__dict__['soft' + 'max'](x, dim)\n",
    "import operator, torch\ndef softmax(x, dim=-1):\n    return operator.attrgetter('softmax')(torch)(x, dim)\n",
])
def test_string_lookups_are_caught(source):
    flagged = FLAGGED | {"__dict__", "attrgetter"}
    assert forbidden_in(ast.parse(source), "softmax", FORBIDDEN, flagged)


def test_a_docstring_mentioning_softmax_is_fine():
    source = 'def softmax(x, dim=-1):\n    """Stable softmax, not torch.softmax."""\n    raise ValueError("softmax needs a dim")\n'
    assert forbidden_in(ast.parse(source), "softmax", FORBIDDEN, FLAGGED) == []


# --------------------------------------------------------------------------- reading bytes as Python does (PEP 263)

CODING_LINE = "# -*- coding: latin-1 -*-\n"
LATIN1_HEADER = CODING_LINE + "# café crème: this comment is Latin-1 bytes\n"
# The module checks its own string at import, so a wrong decoding fails loading, not just a comment.
LATIN1_PROBE = '\nGREETING = "café"\nassert GREETING == "caf\\xe9", GREETING\n'


def _latin1_reference() -> bytes:
    """The reference solution saved as Latin-1 with a coding line (its few non-Latin-1 characters as '?')."""
    source = LATIN1_HEADER + (ROOT / "solutions/attention.py").read_text(encoding="utf-8") + LATIN1_PROBE
    return source.encode("latin-1", errors="replace")


@pytest.mark.parametrize("raw, text", [
    (b"# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n", "x = 'café'"),
    (b"#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-15 :\nx = '\xa4'\n", "x = '€'"),
    (b"\xef\xbb\xbf# coding: utf-8\nx = 'caf\xc3\xa9'\n", "x = 'café'"),
    (b"x = 'caf\xc3\xa9'\n", "x = 'café'"),
])
def test_a_coding_line_is_honoured(raw, text):
    source, problem = decode_python_source(raw)
    assert problem is None and text in source


@pytest.mark.parametrize("raw, fragments", [
    (b"import torch\n# caf\xe9\n", ["not UTF-8", "offset 18", "no coding line"]),
    (b"x = '\xff'\n", ["not UTF-8"]),  # a bad byte in line 1: tokenize's own complaint is about the declaration
    (b"x = 1\n# coding: latin-1\ny = '\xe9'\n", ["not UTF-8"]),  # a coding line counts only in line 1 or 2
    (b"# -*- coding: klingon -*-\nx = 1\n", ["line 1", "'klingon'", "not an encoding Python knows"]),
    (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", ["byte-order mark", "'latin-1'"]),
    (b"# coding: ascii\nx = '\xe9'\n", ["'ascii'", "cannot be read in that encoding"]),
    (b"# coding: rot13\nx = 1\n", ["'rot13'", "cannot be read in that encoding"]),
])
def test_undecodable_sources_say_why(raw, fragments):
    source, problem = decode_python_source(raw)
    assert source is None and problem and all(f in problem for f in fragments), problem


def test_a_notebook_is_still_read_as_utf8(tmp_path):
    nb = tmp_path / "attention.ipynb"
    nb.write_bytes(b'{"cells": [], "note": "caf\xe9"}')
    assert "not UTF-8" in (load_submission(nb).problem or "")


def test_a_latin1_file_with_a_coding_line_gets_full_marks(grade):
    card = grade(_latin1_reference(), "attention")
    failing = [(c.id, c.message[:120]) for c in card.checks if c.status not in ("passed", "skipped")]
    assert card.grader_error is None and not failing and card.score == card.max_score, failing[:3]


def test_a_non_utf8_file_without_a_coding_line_is_graded_with_a_message(grade):
    card = grade(_latin1_reference().replace(CODING_LINE.encode(), b"", 1), "attention")
    graded = [c for c in card.checks if c.status != "skipped"]
    assert card.score == 0 and card.max_score > 0 and card.grader_error is None
    assert card.problem and "not UTF-8" in card.problem  # said once; every check refers to it
    assert graded and all(c.status == "failed" and "could not be loaded (see the problem above)" in c.message for c in graded)


def test_an_unknown_codec_is_graded_with_a_message_and_exit_0(tmp_path):
    sub = tmp_path / "attention.py"
    sub.write_bytes(b"# -*- coding: klingon -*-\n" + (ROOT / "solutions/attention.py").read_bytes())
    out = tmp_path / "card.json"
    command = [sys.executable, "-m", "grader.cli", "grade", str(sub), "--assignment", "attention", "--out", str(out),
               "--format", "none"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    card = json.loads(out.read_text())
    graded = [c for c in card["checks"] if c["status"] != "skipped"]
    assert card["score"] == 0 and card["max_score"] > 0
    assert "'klingon'" in card["problem"]  # said once; every check refers to it
    assert graded and all(c["status"] == "failed" and "could not be loaded (see the problem above)" in c["message"] for c in graded)


# ------------------------------------------------------------------ size limits: the code, not the outputs


REFERENCE = (ROOT / "solutions/attention.py").read_text(encoding="utf-8")


def _notebook_with_outputs(path: Path, output_bytes: int, extra_code: str = "") -> Path:
    """The reference as a notebook with ``output_bytes`` of saved plots (base64 PNG in display_data)."""
    cells = [nbformat.v4.new_code_cell(REFERENCE)]
    png = base64.b64encode(os.urandom(output_bytes)).decode("ascii")
    cells.append(nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.show()" + extra_code, outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})]))
    path.write_text(nbformat.writes(nbformat.v4.new_notebook(cells=cells)), encoding="utf-8")
    return path


def test_saved_outputs_do_not_count_towards_the_size_limit(tmp_path: Path) -> None:
    path = _notebook_with_outputs(tmp_path / "attention.ipynb", 6 * 1024 * 1024)
    assert path.stat().st_size > MAX_SUBMISSION_BYTES
    sub = load_submission(path)
    assert sub.problem is None and "def attention(" in sub.source


def test_a_notebook_with_too_much_code_is_refused_with_its_reason(tmp_path: Path) -> None:
    pasted = "\n# " + "x" * (MAX_SUBMISSION_BYTES + 10)  # data pasted into a code cell counts
    path = _notebook_with_outputs(tmp_path / "attention.ipynb", 1024, extra_code=pasted)
    with pytest.raises(SubmissionTooLarge, match=r"the code cells of attention.ipynb hold 5.0 MiB of code; "
                                                 r"the limit is 5.0 MiB \(saved outputs do not count\)"):
        load_submission(path)


def test_a_python_file_over_the_limit_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "attention.py"
    path.write_text(REFERENCE + "\n# " + "x" * MAX_SUBMISSION_BYTES, encoding="utf-8")
    with pytest.raises(SubmissionTooLarge, match="attention.py is over 5.0 MiB, the limit for a submission's code"):
        load_submission(path)


def test_a_giant_notebook_file_is_refused_before_it_is_parsed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(submission, "MAX_NOTEBOOK_FILE_BYTES", 1024 * 1024)
    path = _notebook_with_outputs(tmp_path / "attention.ipynb", 2 * 1024 * 1024)
    with pytest.raises(SubmissionTooLarge, match=r"clear its outputs \(Kernel > Restart & Clear Output\)"):
        load_submission(path)


def test_grader_grade_reports_a_file_over_the_limit_in_one_line_and_exits_2(tmp_path: Path) -> None:
    sub = tmp_path / "attention.py"
    sub.write_text(REFERENCE + "\n# " + "x" * MAX_SUBMISSION_BYTES, encoding="utf-8")
    out = tmp_path / "card.json"
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade", str(sub), "--assignment", "attention",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "grader: attention.py is over 5.0 MiB, the limit for a submission's code; "
        "submit only your own code, without data pasted into it"]
    assert not out.exists()  # no card: it was not graded, not even as 0


def test_grade_all_gives_a_file_over_the_limit_an_error_row_and_grades_big_outputs(tmp_path: Path) -> None:
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "huge.py").write_text(REFERENCE + "\n# " + "x" * MAX_SUBMISSION_BYTES, encoding="utf-8")
    _notebook_with_outputs(klass / "plots.ipynb", 6 * 1024 * 1024)
    out = tmp_path / "graded"
    proc = subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(klass), "--assignment", "attention",
                           "--out", str(out), "--jobs", "1", "--progress", "lines"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    with (out / "gradebook.csv").open(newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert rows["huge"]["status"] == "error" and rows["huge"]["score"] == ""
    assert rows["huge"]["message"].startswith("huge.py is over 5.0 MiB, the limit for a submission's code")
    assert not (out / "cards" / "huge.json").exists()
    assert rows["plots"]["status"] == "graded" and float(rows["plots"]["score"]) == float(rows["plots"]["max_score"]) > 0
    assert "error: huge: huge.py is over 5.0 MiB" in proc.stderr
