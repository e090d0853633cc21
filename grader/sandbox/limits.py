"""Per-call and per-child limits (plain data, no torch: the CLI reads them before torch is imported)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Per-call and per-child limits; filled from assignments.yaml."""

    call_cpu_seconds: float = 10.0
    call_wall_seconds: float = 30.0
    submission_wall_seconds: float = 180.0
    load_cpu_seconds: float = 10.0
    memory_mib: int = 3072
    child_cpu_seconds: int = 300
    file_size_mib: int = 16
    open_files: int = 64
    scratch_mib: int = 16
    output_keep_bytes: int = 64 * 1024
    threads: int = 1
    disabled_layers: tuple[str, ...] = ()
