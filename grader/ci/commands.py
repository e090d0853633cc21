"""GitHub workflow commands written safely: ours with escaped data and properties, and text a
submission controls (what it printed, messages quoting it) made inert, so it never becomes a command."""

from __future__ import annotations

import re


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_data(text: str) -> str:
    """A workflow command's message: GitHub's own escaping (``%``, CR, LF), so it stays on its line."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: the data escapes plus ``:`` and ``,``, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """``::name k=v,...::message`` with every value escaped."""
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def inert(text: str) -> str:
    """``text`` that GitHub's runner cannot read as a command when something prints it raw.

    Classroom's reporter ``console.log``s each test's message, so a line of a
    message that starts with ``::`` (after spaces), or holds ``##[`` anywhere
    (the runner's older command form), would be run as a workflow command.
    Both are broken with a space; carriage returns become newlines.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("::", ": :").replace("##[", "## [")


def printable(text: str) -> str:
    """What a submission printed, safe for a terminal and a CI log: control characters other than
    newline and tab (escape sequences, carriage returns that overwrite a line) shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
