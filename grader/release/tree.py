"""A complete grader source tree for some assignments, as staff run it: hidden checks and references included.

Two builds hand the course's full grader to a machine the staff do not sit at,
and both take it from here, so what grades there is the same tree:

* ``grader gradescope``: one assignment's tree, zipped with Gradescope's
  scripts (a Gradescope assignment has one autograder);
* ``grader release --hidden-key-file``: every released assignment's tree,
  zipped and encrypted into ``.grader/hidden.bundle`` (``hidden_bundle``),
  which the repository's CI decrypts with the organisation secret
  (``grader.hidden.unlock``) and grades with ``PYTHONPATH=<root>``.

The tree: ``grader/`` (the package without ``release``, nothing there grades,
and without other assignments' checks and mistake catalogues),
``assignments.yaml`` (only these assignments, ``reference:`` pointing into the
tree, no ``stub:``) and ``solutions/`` (the references). Run with the tree on
``PYTHONPATH``, its ``grader.config`` finds ``<root>/assignments.yaml`` as its
default config, as the course repository's does.

``zip_bytes`` makes the same bytes from the same files (sorted entries, one
timestamp, fixed modes and compression), so an unchanged course zips to an
unchanged archive.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml

from grader.config import AssignmentConfig, Config
from grader.files import read_yaml
from grader.release.kit import INSTRUCTOR_ONLY, PACKAGE_ROOT

PACKAGE_SUFFIXES = (".py", ".json", ".ini", ".yaml", ".j2")  # the grader package's source and data
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip can hold: no build date in the bytes
CONFIG_NAME = "assignments.yaml"


def source_tree(config: Config, assignments: Sequence[AssignmentConfig], written_by: str) -> dict[str, bytes]:
    """Every file of the tree, by path inside it: package, config, references.

    ``written_by`` names the command in the config's header (who made this file, for whoever finds it).
    Every assignment must have a reference (not a student kit's config); the callers check that first.
    """
    references = reference_paths(assignments)
    files = package_files(assignments)
    files[CONFIG_NAME] = tree_config(config, assignments, references, written_by)
    for a in assignments:
        assert a.reference is not None  # the callers refused a kit's config
        files[references[a.id]] = a.reference.read_bytes()
    return files


def reference_paths(assignments: Sequence[AssignmentConfig]) -> dict[str, str]:
    """Where each reference goes in the tree: ``solutions/<file name>``, or
    ``solutions/<assignment id>/<file name>`` when two assignments' references share a name."""
    names = Counter(a.reference.name for a in assignments if a.reference is not None)
    return {a.id: (f"solutions/{a.reference.name}" if names[a.reference.name] == 1
                   else f"solutions/{a.id}/{a.reference.name}")
            for a in assignments if a.reference is not None}


def package_files(assignments: Iterable[AssignmentConfig]) -> dict[str, bytes]:
    """The grader package with these assignments' hidden checks and mistake catalogues, no other's; no ``release``."""
    chosen = list(assignments)
    packages = {a.checks_package for a in chosen}
    ids = {a.id for a in chosen}
    files = {}
    for path in sorted(PACKAGE_ROOT.rglob("*")):
        rel = path.relative_to(PACKAGE_ROOT)
        if not path.is_file() or "__pycache__" in rel.parts or path.suffix not in PACKAGE_SUFFIXES:
            continue
        if rel.parts[0] in (*INSTRUCTOR_ONLY, "course"):
            continue
        if rel.parts[0] == "checks" and len(rel.parts) > 2 and rel.parts[1] not in packages:
            continue
        if rel.parts[:2] == ("diagnosis", "catalogue") and len(rel.parts) > 3 and rel.parts[2] not in ids:
            continue
        files[f"grader/{rel.as_posix()}"] = path.read_bytes()
    return files


def tree_config(config: Config, assignments: Sequence[AssignmentConfig], references: dict[str, str],
                written_by: str) -> bytes:
    """assignments.yaml with these assignments only, each reference where the tree puts it, no stub."""
    raw = read_yaml(config.path)
    out: dict[str, Any] = {key: raw[key] for key in ("schema_version", "defaults", "flagged_calls") if key in raw}
    out["assignments"] = {}
    for a in assignments:
        entry = dict(raw["assignments"][a.id])
        entry.pop("stub", None)  # the starter code: nothing grades with it
        entry["reference"] = references[a.id]
        out["assignments"][a.id] = entry
    which = ", ".join(repr(a.id) for a in assignments)
    header = (f"# Written by `{written_by}` from {config.path.name}: assignment{'s' if len(assignments) > 1 else ''} "
              f"{which} only.\n# Staff only: this file names the hidden checks.\n")
    return (header + yaml.safe_dump(out, sort_keys=False, allow_unicode=True, width=100)).encode()


def zip_bytes(files: dict[str, bytes], executable: Iterable[str] = ()) -> bytes:
    """The zip of ``files``: sorted entries, one timestamp, Unix modes (``executable`` 0755, the rest
    0644) and fixed compression, so the same files always give the same bytes."""
    run = set(executable)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.create_system = 3  # Unix, so unzip applies the modes below
            info.external_attr = (0o100755 if name in run else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compresslevel=9)
    return buffer.getvalue()


def write_file_atomically(out: Path, data: bytes) -> None:
    """Write ``data`` beside ``out`` and rename it into place: no half-written archive is ever uploaded."""
    tmp = out.with_name(f".tmp-{os.getpid()}-{out.name}")
    try:
        tmp.write_bytes(data)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
