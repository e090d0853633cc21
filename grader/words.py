"""Text helpers every stage shares: one way to cut a message, so cards, pages and exports cut alike."""

from __future__ import annotations

ELLIPSIS = "…"


def clip(text: str, chars: int) -> str:
    """``text`` in at most ``chars`` characters, the last an ellipsis when it was cut."""
    if len(text) <= chars:
        return text
    return text[: chars - 1] + ELLIPSIS if chars > 0 else ""
