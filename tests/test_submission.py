"""Reading a submission: stubs, defined names, and forbidden calls found by reading the AST."""

from __future__ import annotations

import ast

import pytest

from grader.submission import defined_names, forbidden_in

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
