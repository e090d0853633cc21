"""What one sandboxed child may do (``ChildPolicy``) and the fixed order the
layers go on in (``LAYER_ORDER``; the package docstring says why)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

LAYER_ORDER: tuple[str, ...] = (
    "netns",
    "mountns_scratch",
    "rlimits",
    "no_new_privs",
    "landlock",
    "capabilities",
    "seccomp",
)


@dataclass(frozen=True)
class ChildPolicy:
    """What one sandboxed child may do.  Sizes are in MiB."""

    memory_mib: int = 3072  # RLIMIT_AS; torch plus small ops needs ~640 MiB
    cpu_seconds: int = 120  # RLIMIT_CPU for the child's whole life
    file_size_mib: int = 16  # RLIMIT_FSIZE: largest file the child can write
    open_files: int = 64  # RLIMIT_NOFILE
    scratch_dir: str | None = None  # the only writable folder (must exist)
    scratch_mib: int = 16  # size cap of the scratch tmpfs (mountns_scratch)
    readable_paths: tuple[str, ...] = ()  # extra read-only paths
    disabled: frozenset[str] = frozenset()  # layer names to skip

    def __post_init__(self) -> None:
        unknown = set(self.disabled) - set(LAYER_ORDER)
        if unknown:  # a typo here would silently leave a protection on/off
            raise ValueError(f"unknown layer names in disabled: {sorted(unknown)}")


class LayerUnavailable(Exception):
    """A layer cannot be applied on this machine; the message says why."""


def child_policy(raw: dict[str, Any]) -> tuple[ChildPolicy, int]:
    """The ``ChildPolicy`` and thread count a judge's spawn request asks for (unknown keys ignored); the
    fork server and a spawned child (``spawn_child``) read it alike."""
    known = {f.name for f in dataclasses.fields(ChildPolicy)}
    values = {k: v for k, v in raw.items() if k in known}
    values["disabled"] = frozenset(values.get("disabled", ()))
    values["readable_paths"] = tuple(values.get("readable_paths", ()))
    return ChildPolicy(**values), int(raw.get("threads", 1))
