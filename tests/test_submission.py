"""Reading a submission: bytes to text as Python reads them, stubs, defined names, and forbidden calls
found by reading the AST."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from grader.submission import decode_python_source, defined_names, forbidden_in, load_submission
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
    assert graded and all(c.status == "failed" and "not UTF-8" in c.message for c in graded)


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
    assert graded and all(c["status"] == "failed" and "'klingon'" in c["message"] for c in graded)
