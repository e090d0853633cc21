"""Indented JSON text, fast: what every scorecard is written as.

``json.dumps`` with ``indent`` falls back to the json module's pure-Python encoder (the C one cannot
indent), which was most of the cost of writing a 133-check card. ``dumps_indented`` gives the same text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

_SCALARS = (str, int, float, type(None))  # bool is an int
_scalar = json.JSONEncoder(allow_nan=False).encode


class _NotPlainKeys(Exception):
    """A dict key that is not a string: ``dumps_indented`` leaves such data to ``json.dumps``."""


def dumps_indented(data: Any) -> str:
    """``json.dumps(data, indent=2, allow_nan=False)``, the same text, in a fraction of the time.

    With ``indent``, the json module falls back to its pure-Python encoder (the C one cannot indent):
    ~1.7 ms for a 133-check card, most of the cost of writing one. Here each container whose items are
    all scalars (a check, a row of numbers) is written by the C encoder in one call, its item separator
    carrying the newline and the indent; only the containers above those are walked in Python.
    ``tests/test_scoring.py`` checks the text against ``json.dumps``'. Data with a non-string dict key
    is left to ``json.dumps`` (which writes the key as a string): it is never a card's.
    """
    try:
        return _indented(data, "\n")
    except _NotPlainKeys:
        return json.dumps(data, indent=2, allow_nan=False)


@functools.cache
def _flat_encoder(inner: str) -> Callable[[Any], str]:
    """The C encoder whose item separator starts each item on a new line indented by ``inner``."""
    return json.JSONEncoder(allow_nan=False, separators=("," + inner, ": ")).encode


def _indented(value: Any, newline: str) -> str:
    """``value`` as ``json.dumps`` with ``indent=2`` writes it at the depth whose line break is ``newline``."""
    if isinstance(value, dict):
        opening, closing, items = "{", "}", value.values()
    elif isinstance(value, (list, tuple)):
        opening, closing, items = "[", "]", value
    else:
        return _scalar(value)
    if not value:
        return opening + closing
    inner = newline + "  "
    if all(isinstance(item, _SCALARS) for item in items):
        if isinstance(value, dict) and not all(isinstance(key, str) for key in value):
            raise _NotPlainKeys
        text = _flat_encoder(inner)(value)
        return opening + inner + text[1:-1] + newline + closing
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise _NotPlainKeys
        parts = [f"{_scalar(key)}: {_indented(item, inner)}" for key, item in value.items()]
    else:
        parts = [_indented(item, inner) for item in value]
    return opening + inner + ("," + inner).join(parts) + newline + closing
