"""Per-student inputs for the hidden checks.

A hidden check's inputs are not shown to students, but they would be the same
for everyone: an output copied from a classmate's card, or hard-coded for
inputs someone once saw, would pass. So each student's hidden checks draw
their random inputs from a seed of their own::

    seed = HMAC-SHA256(course secret, "<assignment>\\0<student id>") -> 32-bit int, never 0

Re-grading the same student gives the same inputs (the seed depends on
nothing else), one student's seed says nothing about another's, and nobody
without the course secret can compute any. Visible checks keep fixed inputs
(the student kit replays their recorded answers), so only hidden checks read
the seed (the ``hidden_seed`` fixture, ``grader.checks.helpers.seed``).

The secret comes from the environment variable ``GRADER_COURSE_SECRET`` or a
file (``grader grade --course-secret-file``; ``course_secret_file:`` in
assignments.yaml, relative to it). Without one the seed is 0: the hidden
checks' inputs are the fixed ones every student gets, and the card says so
once (``environment.input_seed_note``). A secret shorter than
``MIN_SECRET_BYTES`` is refused, and so is a ``GRADER_COURSE_SECRET`` that is
set but empty (``course_secret`` says why). The seed is on the staff's card
(``environment.input_seed``), never on a student's (``grader.export.views``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

import yaml

from grader.files import read_yaml
from grader.words import count

SECRET_ENV = "GRADER_COURSE_SECRET"
CONFIG_KEY = "course_secret_file"
NO_SECRET = 0  # the inputs as written in the checks: the same for everyone
MIN_SECRET_BYTES = 16  # 128 bits: below that a secret can be guessed offline from one card's hidden inputs
MAKE_ONE = "make one with `python -c 'import secrets; print(secrets.token_hex(16))'`"
SECRET_FILE_EXAMPLE = "~/.config/grader/course-secret"  # outside every repository, readable by its owner only
MAKE_SECRET_FILE = (f"mkdir -p ~/.config/grader && (umask 077 && python3 -c 'import secrets; "
                    f"print(secrets.token_hex(32))' > {SECRET_FILE_EXAMPLE})")  # the README's and the warning's
NO_SECRET_NOTE = (f"no course secret ({SECRET_ENV} or --course-secret-file): the hidden checks' inputs are the "
                  "same for every student")


class SecretError(Exception):
    """The course secret was named but cannot be read (the CLI's exit 2)."""


def derive(secret: bytes | str, assignment: str, student: str) -> int:
    """The student's seed: 1 .. 2**32 - 1, from HMAC-SHA256 of the assignment and student id."""
    key = secret.encode() if isinstance(secret, str) else secret
    digest = hmac.new(key, f"{assignment}\0{student}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % (2**32 - 1) + 1


def read_secret_file(path: Path) -> bytes:
    try:
        secret = Path(path).read_bytes().strip()
    except OSError as exc:
        raise SecretError(f"cannot read the course secret file {path}: {exc.strerror or exc}") from None
    if not secret:
        raise SecretError(f"the course secret file {path} is empty")
    return long_enough(secret, f"the course secret file {path}")


def long_enough(secret: bytes, where: str) -> bytes:
    """``secret``, or SecretError when it is under ``MIN_SECRET_BYTES``: the seeds are an HMAC of ids
    anyone can guess, so a short secret could be found by trying them against one card's hidden inputs,
    and with it every student's inputs. Refused rather than used: grading with it would look protected."""
    if len(secret) < MIN_SECRET_BYTES:
        raise SecretError(f"{where} holds {count(len(secret), 'byte')}: a course secret needs at least {MIN_SECRET_BYTES} "
                          f"(a shorter one can be guessed); {MAKE_ONE}")
    return secret


def course_secret(secret_file: Path | None = None, config_path: Path | None = None) -> bytes | None:
    """The course secret: ``secret_file``, else ``$GRADER_COURSE_SECRET``, else the config's
    ``course_secret_file:``; None when there is none (every seed is then 0).

    A ``GRADER_COURSE_SECRET`` that is set but empty (or only spaces) is refused (SecretError), not
    read as "no secret": it is what a CI secret that failed to reach the job, or a shell variable
    that was never filled in, looks like, and taking it for "none" would grade the class on the
    inputs every student shares, with nothing on screen but a note on each card. Unset the
    variable to grade on shared inputs on purpose."""
    if secret_file is not None:
        return read_secret_file(secret_file)
    if SECRET_ENV in os.environ:
        value = os.environ[SECRET_ENV].strip()
        if not value:
            raise SecretError(f"{SECRET_ENV} is set but empty: nothing graded (an empty secret would give every "
                              f"student the same hidden inputs); set it to the course secret, or unset it to "
                              f"grade on shared inputs on purpose")
        return long_enough(value.encode(), SECRET_ENV)
    named = _config_secret_file(config_path)
    return read_secret_file(named) if named is not None else None


def _config_secret_file(config_path: Path | None) -> Path | None:
    if config_path is None:
        return None
    try:
        data = read_yaml(Path(config_path))
    except (OSError, yaml.YAMLError):
        return None  # the config loader reports a broken config
    named = data.get(CONFIG_KEY) if isinstance(data, dict) else None
    if not named:
        return None
    path = Path(str(named)).expanduser()
    return path if path.is_absolute() else Path(config_path).parent / path


def secret_id(secret: bytes | None) -> str:
    """A short tag that changes with the secret and reveals nothing of it ('' without one): part of
    grade-all's card key, so a new secret re-grades the class."""
    if not secret:
        return ""
    return hmac.new(secret, b"grader: which course secret", hashlib.sha256).hexdigest()[:16]


def student_seed(secret: bytes | None, assignment: str, student: str | None) -> int:
    """The seed a student's hidden checks use: 0 without a secret or a student id."""
    if not secret or not student:
        return NO_SECRET
    return derive(secret, assignment, student)


def environment_entries(seed: int, secret: bytes | None) -> dict[str, object]:
    """What the staff card's ``environment`` says about the hidden inputs."""
    entries: dict[str, object] = {"input_seed": seed}
    if not secret:
        entries["input_seed_note"] = NO_SECRET_NOTE
    return entries


HIDDEN_ENVIRONMENT_KEYS = ("input_seed", "input_seed_note")  # removed from the student's view
