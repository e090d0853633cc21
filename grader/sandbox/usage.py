"""What the judge reads of a child's use of the machine, from outside (the child cannot fake it).

CPU time for the per-call CPU limit, everywhere; resident memory where the child has no memory limit
of its own (no ``rlimits``: Windows has no ``resource`` module, macOS does not enforce ``RLIMIT_AS``),
so the judge kills a child past ``memory_mib`` itself. Linux's ``/proc`` first (no import, a file
read), else psutil (macOS, Windows).
"""

from __future__ import annotations

import os

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # Windows: no /proc to read anyway


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of the whole process, from the kernel (the child cannot fake it): Linux's /proc, else
    psutil where it is installed (macOS, Windows); None where neither can tell, and then only the
    wall-clock limit ends a call. 0.0 for a process that is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return 0.0  # Linux, and the child is gone
    except (OSError, IndexError, ValueError):
        return 0.0
    try:
        import psutil
    except ImportError:
        return None
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system)


def resident_bytes(pid: int) -> int | None:
    """The child's resident memory (psutil); None where psutil is not installed, 0 for a process that is gone."""
    try:
        import psutil
    except ImportError:
        return None
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        return 0
