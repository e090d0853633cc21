"""Does each layer really bite on this machine?  :func:`probe_layers` forks a
throwaway child, applies the layers there and tries what each one should stop,
for the start-up record: a layer reported active that does not bite would
otherwise go unnoticed."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import tempfile
import threading
import time
from typing import Callable

from grader.sandbox.layers.policy import LAYER_ORDER, ChildPolicy
from grader.sandbox.layers.privileges import PR_GET_NO_NEW_PRIVS, capabilities_now
from grader.sandbox.layers.stack import apply_layers
from grader.sandbox.layers.syscalls import _prctl

try:
    import resource
except ImportError:  # Windows: probe_layers is Linux's (it forks); the kit imports this module all the same
    resource = None  # type: ignore[assignment]


def _expect_denied(action: Callable[[], object], what: str) -> str | None:
    try:
        action()
    except PermissionError:
        return None
    return f"{what} was allowed"


def _try_fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def _thread_runs() -> bool:
    done = threading.Event()
    worker = threading.Thread(target=done.set)
    worker.start()
    worker.join(5)
    return done.is_set()


def _verify_layer(name: str, policy: ChildPolicy, facts: dict) -> str | None:
    """None if the layer bites, else what went wrong."""
    if name == "rlimits":
        want = {"AS": policy.memory_mib << 20, "CPU": policy.cpu_seconds,
                "FSIZE": policy.file_size_mib << 20, "NOFILE": policy.open_files, "CORE": 0}
        soft = {res: resource.getrlimit(getattr(resource, f"RLIMIT_{res}"))[0] for res in want}
        high = [res for res, value in want.items()
                if soft[res] == resource.RLIM_INFINITY or soft[res] > value]
        return f"soft limits too high: {high}" if high else None
    if name == "no_new_privs":
        return None if _prctl(PR_GET_NO_NEW_PRIVS) == 1 else "no_new_privs is not set"
    if name == "landlock":
        return _expect_denied(lambda: open(facts["outside_file"], "rb").close(),
                              "reading a file outside the allow-list")
    if name == "capabilities":
        return None if capabilities_now() == (0, 0, 0) else f"capabilities left: {capabilities_now()}"
    if name == "seccomp":
        if not _thread_runs():
            return "threads do not work"
        return (_expect_denied(_try_fork, "fork")
                or _expect_denied(lambda: socket.socket(socket.AF_INET).close(), "socket(AF_INET)"))
    if name == "netns":
        same = os.stat("/proc/self/ns/net").st_ino == facts["netns"]
        return "still in the parent's network namespace" if same else None
    if name == "mountns_scratch":
        if os.stat("/proc/self/ns/mnt").st_ino == facts["mntns"]:
            return "still in the parent's mount namespace"
        if not os.statvfs("/").f_flag & os.ST_RDONLY:
            return "/ is writable"
        if policy.scratch_dir is not None:
            vfs = os.statvfs(policy.scratch_dir)
            if vfs.f_blocks * vfs.f_frsize > policy.scratch_mib << 20:
                return "scratch folder is not size-capped"
        return None
    raise ValueError(name)


def _probe_child(policy: ChildPolicy, facts: dict) -> dict[str, str]:
    status = apply_layers(policy)
    for name, state in status.items():
        if state == "active":
            try:
                problem = _verify_layer(name, policy, facts)
            except OSError as exc:
                problem = f"check failed: {exc}"
            if problem:
                status[name] = f"failed: {problem}"
    return status


def probe_layers(policy: ChildPolicy | None = None, timeout: float = 10.0) -> dict[str, str]:
    """Fork a throwaway child, apply the layers there and check that each one
    really works (fork and AF_INET sockets fail, a file outside the allow-list
    is unreadable, ...).  Returns ``{layer: 'active' | 'disabled' |
    'unavailable: ...' | 'failed: ...'}``; used at start-up to record which
    protections this machine gives.  Call it from a single-threaded process
    or one that has called torch.set_num_threads(1) (see ARCHITECTURE)."""
    with tempfile.TemporaryDirectory(prefix="probe-layers-") as tmp:
        if policy is None:
            scratch = os.path.join(tmp, "scratch")
            os.mkdir(scratch)
            policy = ChildPolicy(scratch_dir=scratch)
        outside = os.path.join(tmp, "outside.txt")
        with open(outside, "w") as handle:
            handle.write("not for the child\n")
        facts = {"outside_file": outside,
                 "netns": os.stat("/proc/self/ns/net").st_ino,
                 "mntns": os.stat("/proc/self/ns/mnt").st_ino}
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never return into the caller's code
            code = 1
            try:
                os.close(read_end)
                os.write(write_end, json.dumps(_probe_child(policy, facts)).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        payload = _read_until_eof(read_end, time.monotonic() + timeout)
        os.close(read_end)
        exit_status = _reap(pid, time.monotonic() + 2.0)
    if not payload:
        return {name: f"failed: probe child gave no report ({exit_status})" for name in LAYER_ORDER}
    return json.loads(payload)


def _read_until_eof(fd: int, deadline: float) -> bytes:
    chunks = []
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
    return b""  # timed out: treat a partial report as none


def _reap(pid: int, deadline: float) -> str:
    """Wait for the child until the deadline, then SIGKILL it."""
    while time.monotonic() < deadline:
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            return f"wait status {wait_status}"
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "killed after timeout"
