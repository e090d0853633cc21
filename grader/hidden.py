"""The hidden checks a released repository carries, encrypted, and how CI opens them.

Why encrypted, and why in the repository at all: a course that grades pull
requests in GitHub Actions must run every check there, but a student
repository (a template's copy, a GitHub Classroom starter) is readable by
the student. So ``grader release --hidden-key-file`` puts the full grader
there only as ciphertext: ``.grader/hidden.bundle`` is a complete grader
source tree (every check, the course config for every released assignment
with ``reference:`` paths into the tree, the reference solutions; built by
``grader.release.tree``, the tree ``grader gradescope`` zips), zipped the
same way every time and encrypted with Fernet (AES-128-CBC and
HMAC-SHA256, from the maintained ``cryptography`` package). The key is the
organisation secret ``GRADER_HIDDEN_KEY``; it never enters the repository.
A run without the secret (a fork's pull request) cannot open the bundle and
grades the visible checks only.

This module ships in the student kit (the release's ``pip install .``) because
CI decrypts with the kit installed; it holds nothing secret. ``grader ci``
calls ``unlock`` and grades with the tree first on the import path::

    root = unlock(Path(BUNDLE), os.environ[KEY_ENV], private_empty_dir)
    PYTHONPATH=<root> python -P -m grader.cli grade FILE --assignment ID --config <root>/assignments.yaml ...

``-P`` (or a working directory outside the repository) matters: ``python -m``
puts the working directory first on ``sys.path``, and the repository's root
holds the kit's own ``grader/`` package, which would shadow the tree's.

Fernet cannot tell a wrong key from a damaged bundle (both fail the same
authentication), so one message covers both.
"""

from __future__ import annotations

import binascii
import os
import stat
import zipfile
from io import BytesIO
from pathlib import Path, PurePosixPath

from cryptography.fernet import Fernet, InvalidToken

BUNDLE = ".grader/hidden.bundle"  # where the release puts it, relative to the repository root
KEY_ENV = "GRADER_HIDDEN_KEY"  # the organisation secret's name, and the environment variable CI reads
CONFIG = "assignments.yaml"  # the tree's full config, relative to the root unlock returns
MAX_UNPACKED = 256 << 20  # far above a grader tree (about 1 MiB); a bigger archive is not one of ours


class HiddenChecksUnavailable(Exception):
    """The hidden checks cannot be opened here: no bundle, a wrong or missing key, or a damaged bundle."""


def unlock(bundle: Path, key: str, into: Path) -> Path:
    """Decrypt ``bundle`` with ``key`` and unpack it into ``into``; returns the root of the grader source
    tree (``into`` itself), whose full config is ``<root>/assignments.yaml``.

    ``into`` must be an existing, empty directory that only this user can enter (``tempfile.mkdtemp``
    makes one): the tree holds the reference solutions. A bad ``into`` is the caller's mistake and raises
    ValueError; everything about the bundle and the key raises HiddenChecksUnavailable with one sentence.
    Files are unpacked by hand, refusing any entry whose name is absolute, climbs out with ``..``, or is
    a link: the archive is authenticated, but an unpacker that trusts names is one bug away from writing
    outside ``into``. On an error ``into`` may hold part of the tree; the caller removes its directory.
    """
    _check_private_empty(into)
    archive = _decrypt(bundle, key)
    try:
        with zipfile.ZipFile(BytesIO(archive)) as z:
            infos = z.infolist()
            _check_entries(infos)
            for info in infos:
                target = into.joinpath(*PurePosixPath(info.filename).parts)
                if info.is_dir():
                    target.mkdir(mode=0o700, parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "wb") as out:
                    out.write(z.read(info))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise HiddenChecksUnavailable(f"{bundle} decrypts but is not a readable archive ({exc}); "
                                      "release the course again") from None
    if not (into / CONFIG).is_file() or not (into / "grader" / "__init__.py").is_file():
        raise HiddenChecksUnavailable(f"{bundle} holds no grader source tree ({CONFIG} or grader/ is missing); "
                                      "release the course again")
    return into


def _check_private_empty(into: Path) -> None:
    try:
        st = into.lstat()
    except FileNotFoundError:
        raise ValueError(f"{into} does not exist: unlock needs an empty private directory") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{into} is not a directory: unlock needs an empty private directory")
    if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise ValueError(f"{into} may be entered by other users (mode {stat.S_IMODE(st.st_mode):o}): "
                         "unlock needs a private directory (mode 700, e.g. tempfile.mkdtemp())")
    if any(into.iterdir()):
        raise ValueError(f"{into} is not empty: unlock needs an empty private directory")


def _decrypt(bundle: Path, key: str) -> bytes:
    try:
        token = bundle.read_bytes()
    except FileNotFoundError:
        raise HiddenChecksUnavailable(f"this repository has no hidden checks ({bundle} is missing: the course "
                                      "was released without --hidden-key-file)") from None
    except OSError as exc:
        raise HiddenChecksUnavailable(f"cannot read {bundle}: {exc.strerror or exc}") from None
    if not key.strip():
        raise HiddenChecksUnavailable(f"no key to open the hidden checks: the secret {KEY_ENV} is not available "
                                      "to this run (a fork's pull request, or the secret is not set)")
    try:
        fernet = Fernet(key.strip().encode("ascii"))
    except (ValueError, UnicodeEncodeError, binascii.Error):
        raise HiddenChecksUnavailable(f"{KEY_ENV} is not a key made by `grader keygen` "
                                      "(44 characters of URL-safe base64)") from None
    try:
        return fernet.decrypt(token.strip())
    except InvalidToken:
        raise HiddenChecksUnavailable(f"the hidden checks cannot be decrypted: {KEY_ENV} is not the key "
                                      f"this release was made with, or {bundle} is damaged") from None


def _check_entries(infos: list[zipfile.ZipInfo]) -> None:
    """Refuse names that could land outside the target, links, duplicates, and more than MAX_UNPACKED bytes."""
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        parts = PurePosixPath(name).parts
        if (not name or name.startswith("/") or "\\" in name or ":" in name or ".." in parts
                or "." in name.split("/")[:-1] or not parts):
            raise HiddenChecksUnavailable(f"the hidden bundle holds an unsafe file name {name!r}; nothing "
                                          "outside the tree is written, and the bundle is refused")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise HiddenChecksUnavailable(f"the hidden bundle holds a link {name!r}; the bundle is refused")
        if name in seen:
            raise HiddenChecksUnavailable(f"the hidden bundle holds {name!r} twice; the bundle is refused")
        seen.add(name)
        total += info.file_size
    if total > MAX_UNPACKED:
        raise HiddenChecksUnavailable(f"the hidden bundle would unpack to {total} bytes, more than a grader "
                                      f"tree ever is ({MAX_UNPACKED}); the bundle is refused")
