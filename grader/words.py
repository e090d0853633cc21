"""Text helpers every stage shares: one way to cut a message and one way to count a noun, so cards,
pages and exports say "1 cell" and "2 cells" alike (a count written by hand in an f-string is how
"1 cells" and "grading 1 submissions" reached students and staff)."""

from __future__ import annotations

import re
from collections.abc import Sequence

ELLIPSIS = "…"

# Nouns whose plural is not the noun plus "s"; every other noun counted in grader/ takes "s".
_IRREGULAR = {"entry": "entries", "is": "are", "was": "were", "has": "have", "does": "do", "this": "these"}
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def clip(text: str, chars: int) -> str:
    """``text`` in at most ``chars`` characters, the last an ellipsis when it was cut."""
    if len(text) <= chars:
        return text
    return text[: chars - 1] + ELLIPSIS if chars > 0 else ""


def plural(n: float, noun: str, many: str | None = None) -> str:
    """``noun`` as it reads after the number ``n``: the singular for exactly 1, else ``many`` (by default
    the noun plus "s", or its entry in the short irregular table: "entry" -> "entries", "is" -> "are")."""
    if n == 1:
        return noun
    return many if many is not None else _IRREGULAR.get(noun, noun + "s")


def count(n: float, noun: str, many: str | None = None) -> str:
    """``n`` and its noun in agreement: ``count(1, "cell")`` is "1 cell", ``count(2, "cell")`` "2 cells"
    (``count(0.5, "point")`` is "0.5 points": only exactly one is singular)."""
    return f"{n:g} {plural(n, noun, many)}" if isinstance(n, float) else f"{n} {plural(n, noun, many)}"


def code_spans(text: str, open_tag: str = "<code>", close_tag: str = "</code>") -> str:
    """``text`` with each `backticked` span written between ``open_tag`` and ``close_tag``: messages mark
    code with backticks (the lesson's and Markdown's way), and a page or a comment that shows HTML must
    not show the backticks themselves. Escape ``text`` for HTML first; the span's text is kept as it is."""
    return _CODE_SPAN.sub(lambda m: f"{open_tag}{m.group(1)}{close_tag}", text)


def entry(value: object) -> str:
    """One tensor entry as a message quotes it: True/False for a bool (a mask once read "got 1, expected 0"),
    an int as it is, a float in 6 significant digits."""
    return str(value) if isinstance(value, (bool, int)) else f"{value:.6g}"


def returned(name: str, names: Sequence[str]) -> str:
    """A returned value as a message names it: "the output" for a function that returns one thing, "the
    returned `out`" for one of several (the config's ``returns`` names are code, not words: "the out differs")."""
    return "the output" if len(names) == 1 else f"the returned `{name}`"


def should_give(purpose: str) -> str:
    """The gate's sentence for an exercise's ``purpose:`` (assignments.yaml). A colon, not "It should give
    {purpose}": purposes are written as the lesson says them, a noun phrase ("the scores divided by
    sqrt(head_size)") or a clause ("row t is the mean of the values of tokens 0..t"), and only a colon reads
    right before both."""
    return f"What it should give: {purpose.rstrip('.')}."
