"""``.grader/hidden.bundle``: every released assignment's full grader tree, encrypted for the repository's CI.

The decision, and why (the student repository is readable by the student, its
CI must grade with every check): the release can carry the complete grader
source tree of ``tree.source_tree`` (all checks, the course config for every
released assignment with ``reference:`` paths into the tree, the reference
solutions) zipped deterministically (``tree.zip_bytes``) and encrypted with
Fernet from the ``cryptography`` package. The key is made by ``grader keygen``
and kept as the organisation secret ``GRADER_HIDDEN_KEY``; CI opens the
bundle with ``grader.hidden.unlock``, which ships in the student kit.
Without ``--hidden-key-file``/``--hidden-key-env`` a release has no bundle.

Fernet encrypts with a fresh random IV each time, so the same tree never gives
the same ciphertext twice. To keep "re-releasing an unchanged course rewrites
identical files", ``seal`` reuses an earlier release's ciphertext when it
decrypts, with the same key, to exactly the new archive; any change to the
tree or the key gives a new one.
"""

from __future__ import annotations

import binascii
import os
from pathlib import Path
from typing import Sequence

from cryptography.fernet import Fernet, InvalidToken

from grader.config import AssignmentConfig, Config
from grader.hidden import BUNDLE, KEY_ENV
from grader.release import tree

__all__ = ["BUNDLE", "KEY_ENV", "HiddenKeyError", "check_key", "hidden_bundle", "key_from_env", "key_from_file",
           "new_key", "seal"]  # BUNDLE and KEY_ENV: grader.hidden's, named here for the release side


class HiddenKeyError(ValueError):
    """The key for the hidden bundle is missing or is not a Fernet key (one line for the CLI, exit 2)."""


def new_key() -> str:
    """A new random key (32 bytes, URL-safe base64: 44 characters), for ``grader keygen``."""
    return Fernet.generate_key().decode("ascii")


def key_from_file(path: Path) -> str:
    """The key in ``path`` (one line; surrounding white space ignored), checked."""
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise HiddenKeyError(f"cannot read the key file {path}: no such file (make one with `grader keygen > {path}`)") from None
    except UnicodeDecodeError:
        raise HiddenKeyError(f"{path} is not a key made by `grader keygen` (it is not plain ASCII)") from None
    except OSError as exc:
        raise HiddenKeyError(f"cannot read the key file {path}: {exc.strerror or exc}") from None
    return check_key(text, str(path))


def key_from_env(name: str) -> str:
    """The key in the environment variable ``name``, checked."""
    value = os.environ.get(name, "")
    if not value.strip():
        raise HiddenKeyError(f"the environment variable {name} is not set or is empty: it should hold the key "
                             "`grader keygen` printed")
    return check_key(value, f"the environment variable {name}")


def check_key(text: str, where: str) -> str:
    """``text`` stripped, if it is a Fernet key; else HiddenKeyError naming ``where`` (never the text)."""
    key = text.strip()
    try:
        Fernet(key.encode("ascii"))
    except (ValueError, binascii.Error):  # UnicodeEncodeError is a ValueError
        raise HiddenKeyError(f"{where} does not hold a key made by `grader keygen` "
                             "(one line of 44 characters, URL-safe base64)") from None
    return key


def hidden_bundle(config: Config, assignments: Sequence[AssignmentConfig], key: str,
                  previous: bytes | None = None) -> bytes:
    """The bundle's bytes: the tree of ``assignments``, zipped, sealed with ``key`` (``previous``: the
    bundle an earlier release wrote at the same place, reused when it holds the same archive)."""
    archive = tree.zip_bytes(tree.source_tree(config, assignments, "grader release --hidden-key-file"))
    return seal(archive, key, previous)


def seal(archive: bytes, key: str, previous: bytes | None = None) -> bytes:
    """``archive`` encrypted with ``key`` as one line of Fernet token; ``previous`` if it already is that."""
    fernet = Fernet(key.encode("ascii"))
    if previous is not None:
        try:
            if fernet.decrypt(previous.strip()) == archive:
                return previous
        except InvalidToken:
            pass  # another key, or another file: seal anew
    return fernet.encrypt(archive) + b"\n"
