"""Each isolation layer really blocks what it is meant to block.

Every attempt runs in a forked child that applies a policy, tries the
forbidden thing and reports over a pipe.  For an attempt that layers L1..Ln
each block on their own, ``assert_blocked_by`` checks that:

* with every layer on, the attempt is blocked;
* with L1..Ln all disabled, the same attempt succeeds (so the test is real);
* with only one of L1..Ln left on, it is still blocked (so each one bites).

With a single layer this is "blocked, and it succeeds when only that layer is
disabled": switching a protection off makes its test fail.  Every attempt is
bounded (capped loops and allocations, a timeout per child).
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import importlib
import json
import os
import resource
import select
import signal
import socket
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

import pytest
import torch

from grader.sandbox.layers import (
    LAYER_ORDER,
    ChildPolicy,
    apply_layers,
    close_inherited_fds,
    probe_layers,
)

# A parent that has run a multi-threaded op makes forked children deadlock on
# their first parallel op (ARCHITECTURE, "Facts measured").
torch.set_num_threads(1)

# Only a hung child waits this long; a busy machine (a full suite beside another) must not make a slow
# child read as a dead one (seen: test_fork_denied_but_threads_and_torch_threads_work at load ~6).
CHILD_TIMEOUT_S = 60.0
MIB = 1 << 20
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# Memory the children try to read in the parent.  Each child zeroes its own
# copy first, so seeing the text proves it came from the parent.
PARENT_SECRET = b"parent-secret-0123456789"
secret_buffer = ctypes.create_string_buffer(PARENT_SECRET)

pytestmark = pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64",
                                reason="the layers are written for Linux x86_64")


# --------------------------------------------------------------------------
# running an attempt in a sandboxed child


def outcome(action: Callable[[], object]) -> str:
    """'ok' if the action worked, 'blocked: ...' if the OS refused it."""
    try:
        action()
    except MemoryError:
        return "blocked: MemoryError"
    except OSError as exc:
        return f"blocked: {errno.errorcode.get(exc.errno, exc.errno)}"
    return "ok"


def run_child(policy: ChildPolicy, attempt: Callable[[int], object]) -> dict:
    """Fork, apply ``policy`` in the child, run ``attempt(report_fd)``.

    Returns ``{'status': ..., 'result': ...}`` from the child, or
    ``{'died': 'SIGXCPU' | 'exit 1' | 'timeout'}`` if it wrote no report.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read_end)
            status = apply_layers(policy)
            os.write(write_end, json.dumps({"status": status, "result": attempt(write_end)}).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + CHILD_TIMEOUT_S
    while select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))[0]:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    while not (reaped := os.waitpid(pid, os.WNOHANG))[0] and time.monotonic() < deadline:
        time.sleep(0.005)
    if not reaped[0]:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return {"died": "timeout"}
    if chunks:
        return json.loads(b"".join(chunks))
    if os.WIFSIGNALED(reaped[1]):
        return {"died": signal.Signals(os.WTERMSIG(reaped[1])).name}
    return {"died": f"exit {os.waitstatus_to_exitcode(reaped[1])}"}


def skip_unless_active(report: dict, layers: set[str]) -> None:
    status = report.get("status", {})
    for layer in sorted(layers):
        if status.get(layer, "active") != "active":
            pytest.skip(f"{layer}: {status[layer]}")


def assert_blocked_by(layers: set[str], attempt: Callable[[int], str], policy: ChildPolicy,
                      blocked_prefix: str = "blocked") -> None:
    full = run_child(policy, attempt)
    skip_unless_active(full, layers)
    assert full.get("result", "").startswith(blocked_prefix), (layers, full)
    unprotected = run_child(_without(policy, layers), attempt)
    assert unprotected.get("result") == "ok", (f"{sorted(layers)} all disabled", unprotected)
    if len(layers) > 1:
        for layer in sorted(layers):
            alone = run_child(_without(policy, layers - {layer}), attempt)
            assert alone.get("result", "").startswith(blocked_prefix), (f"only {layer} on", alone)


def _without(policy: ChildPolicy, layers: set[str]) -> ChildPolicy:
    return dataclasses.replace(policy, disabled=policy.disabled | frozenset(layers))


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    path = tmp_path / "scratch"
    path.mkdir()
    return path


@pytest.fixture
def policy(scratch: Path) -> ChildPolicy:
    return ChildPolicy(scratch_dir=str(scratch))


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A stand-in for the course repository: nothing here may be readable."""
    solutions = tmp_path / "course" / "solutions"
    solutions.mkdir(parents=True)
    (solutions / "attention.py").write_text("ANSWER = 42\n")
    return tmp_path / "course"


# --------------------------------------------------------------------------
# the policy object and the probe


def test_unknown_layer_name_is_rejected() -> None:
    with pytest.raises(ValueError):
        ChildPolicy(disabled=frozenset({"secomp"}))


def test_disabled_layers_are_reported(policy: ChildPolicy) -> None:
    report = run_child(_without(policy, set(LAYER_ORDER)), lambda fd: "ok")
    assert report["status"] == {name: "disabled" for name in LAYER_ORDER}


def test_probe_reports_every_layer_and_none_fails() -> None:
    report = probe_layers()
    assert set(report) == set(LAYER_ORDER)
    assert not [state for state in report.values() if state.startswith("failed")], report
    if os.geteuid() == 0:  # everything works as root on the reference machine
        assert set(report.values()) == {"active"}, report


def test_refuses_a_multithreaded_process() -> None:
    """Landlock and the namespaces would cover only the calling thread."""
    def attempt(report_fd: int) -> str:
        stop = threading.Event()
        worker = threading.Thread(target=stop.wait, args=(5,))
        worker.start()
        try:
            apply_layers(ChildPolicy())
        except RuntimeError:
            return "refused"
        finally:
            stop.set()
            worker.join()
        return "applied"

    assert run_child(ChildPolicy(disabled=frozenset(LAYER_ORDER)), attempt)["result"] == "refused"


def test_close_inherited_fds_keeps_only_the_given_ones() -> None:
    def attempt(report_fd: int) -> dict:
        extra = [os.open(os.devnull, os.O_RDONLY) for _ in range(5)]
        close_inherited_fds({0, 1, 2, report_fd})
        still_open = [fd for fd in (0, 1, 2, report_fd, *extra) if outcome(lambda fd=fd: os.fstat(fd)) == "ok"]
        return {"open": still_open, "kept": [0, 1, 2, report_fd]}

    result = run_child(_without(ChildPolicy(), set(LAYER_ORDER)), attempt)["result"]
    assert result["open"] == result["kept"]


# --------------------------------------------------------------------------
# seccomp: processes, sockets, signals and the rest


def test_fork_denied_but_threads_and_torch_threads_work(policy: ChildPolicy) -> None:
    def fork() -> None:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)

    assert_blocked_by({"seccomp"}, lambda fd: outcome(fork), policy)

    def threads(report_fd: int) -> dict:
        results: list[int] = []
        workers = [threading.Thread(target=results.append, args=(i,)) for i in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(5)
        err_read, err_write = os.pipe()  # torch's first op must not complain
        saved_stderr = os.dup(2)
        os.dup2(err_write, 2)
        torch.set_num_threads(2)
        a = torch.randn(384, 512, generator=torch.Generator().manual_seed(0))
        value = float(torch.softmax(a @ a.T, dim=-1).sum())
        os.dup2(saved_stderr, 2)
        os.close(err_write)
        os.set_blocking(err_read, False)
        stderr = os.read(err_read, 4096).decode(errors="replace")
        return {"python_threads": len(results), "torch_value": value, "stderr": stderr,
                "tasks": os.stat("/proc/self/task").st_nlink - 2}

    report = run_child(policy, threads)
    skip_unless_active(report, {"seccomp"})
    assert "result" in report, f"the child wrote no report: {report}"
    result = report["result"]
    assert result["python_threads"] == 4
    assert result["torch_value"] == pytest.approx(384, rel=1e-4)
    assert result["tasks"] >= 2  # torch's worker thread was really created
    assert result["stderr"] == ""


def test_subprocess_denied(policy: ChildPolicy) -> None:
    def spawn() -> None:
        import subprocess
        subprocess.run(["/bin/true"], check=True, timeout=5)

    assert_blocked_by({"seccomp", "landlock"}, lambda fd: outcome(spawn), policy)


def test_execve_denied(policy: ChildPolicy) -> None:
    def execute(report_fd: int) -> str:
        os.dup2(report_fd, 9)  # inheritable; sh only redirects to one-digit fds
        script = """printf '{"status": {}, "result": "ok"}' >&9"""
        return outcome(lambda: os.execv("/bin/sh", ["sh", "-c", script]))

    assert_blocked_by({"seccomp", "landlock"}, execute, policy)


@pytest.mark.parametrize("family,layers", [
    (socket.AF_INET, {"seccomp"}),
    (socket.AF_INET6, {"seccomp"}),
    (socket.AF_NETLINK, {"seccomp"}),
    (socket.AF_PACKET, {"seccomp", "capabilities"}),  # also needs CAP_NET_RAW
], ids=["AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET"])
def test_network_sockets_denied(policy: ChildPolicy, family: int, layers: set[str]) -> None:
    sock_type = socket.SOCK_RAW if family in (socket.AF_NETLINK, socket.AF_PACKET) else socket.SOCK_STREAM
    assert_blocked_by(layers, lambda fd: outcome(lambda: socket.socket(family, sock_type).close()), policy)


def test_unix_socketpair_allowed_but_not_datagram(policy: ChildPolicy) -> None:
    def pair(report_fd: int) -> str:
        left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        left.sendall(b"ping")
        return right.recv(4).decode()

    report = run_child(policy, pair)
    assert report["result"] == "ping"
    datagram = lambda fd: outcome(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
    assert_blocked_by({"seccomp"}, datagram, policy)


def test_signal_to_parent_denied(policy: ChildPolicy) -> None:
    assert_blocked_by({"seccomp", "landlock"}, lambda fd: outcome(lambda: os.kill(os.getppid(), 0)), policy)


def test_signal_to_itself_allowed(policy: ChildPolicy) -> None:
    def own(report_fd: int) -> str:
        got = []
        signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
        os.kill(os.getpid(), signal.SIGUSR1)
        signal.raise_signal(signal.SIGUSR1)
        return f"ok {len(got)}"

    assert run_child(policy, own)["result"] == "ok 2"


def test_leaving_the_process_group_denied(policy: ChildPolicy) -> None:
    assert_blocked_by({"seccomp"}, lambda fd: outcome(os.setsid), policy)


def test_new_user_namespace_denied(policy: ChildPolicy) -> None:
    CLONE_NEWUSER = 0x10000000
    def unshare() -> None:
        if libc.unshare(CLONE_NEWUSER) < 0:
            raise OSError(ctypes.get_errno(), "unshare")
    assert_blocked_by({"seccomp"}, lambda fd: outcome(unshare), policy)


def _syscall_errno(number: int, *args: int | None) -> int:
    cargs = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return 0 if libc.syscall(ctypes.c_long(number), *cargs) >= 0 else ctypes.get_errno()


# (name, x86_64 number, harmless arguments, errno wanted under seccomp)
SYSCALL_PROBES = [
    ("clone3", 435, (None, 0), errno.ENOSYS),
    ("io_uring_setup", 425, (0, None), errno.EPERM),
    ("bpf", 321, (-1, None, 0), errno.EPERM),
    ("perf_event_open", 298, (None, 0, -1, -1, 0), errno.EPERM),
    ("userfaultfd", 323, (0xFFFF,), errno.EPERM),
    ("keyctl", 250, (-1, 0, 0, 0, 0), errno.EPERM),
    ("personality", 135, (0xFFFFFFFF,), errno.EPERM),
    ("ptrace", 101, (2, "ppid", 0, 0), errno.EPERM),  # PTRACE_PEEKDATA, not attached
    ("process_vm_writev", 311, ("ppid", None, 0, None, 0, 0), errno.EPERM),  # writes nothing
    ("pidfd_open", 434, ("ppid", 0), errno.EPERM),
    ("tgkill", 234, ("ppid", "ppid", 0), errno.EPERM),
    ("setns", 308, (-1, 0), errno.EPERM),
    ("umount2", 166, (b"/nonexistent-layers-test", 0), errno.EPERM),
    ("chroot", 161, (b"/nonexistent-layers-test",), errno.EPERM),
    ("setpgid", 109, (0, 0), errno.EPERM),
    ("setpriority", 141, (0, 0, 0), errno.EPERM),
    ("shmctl", 31, (-1, 0, None), errno.EPERM),  # IPC_RMID on no segment
    ("prlimit64 (set)", 302, (0, resource.RLIMIT_CORE, "zero_limit", None), errno.EPERM),
]


@pytest.mark.parametrize("name,number,args,wanted", SYSCALL_PROBES, ids=[p[0] for p in SYSCALL_PROBES])
def test_syscall_denied_by_seccomp(name: str, number: int, args: tuple, wanted: int) -> None:
    """Seccomp alone vs. nothing at all: only the filter gives ``wanted``."""
    def attempt(report_fd: int) -> int:
        zero_limit = (ctypes.c_uint64 * 2)(0, 0)
        values = {"ppid": os.getppid(), "zero_limit": ctypes.byref(zero_limit)}
        return _syscall_errno(number, *[values.get(a, a) if isinstance(a, str) else a for a in args])

    only_seccomp = ChildPolicy(disabled=frozenset(LAYER_ORDER) - {"seccomp"})
    report = run_child(only_seccomp, attempt)
    skip_unless_active(report, {"seccomp"})
    assert report["result"] == wanted, errno.errorcode.get(report["result"])
    bare = run_child(ChildPolicy(disabled=frozenset(LAYER_ORDER)), attempt)
    assert bare["result"] != wanted


# --------------------------------------------------------------------------
# landlock: files, other processes' memory, abstract sockets


def test_course_files_unreadable(policy: ChildPolicy, course: Path) -> None:
    secret = course / "solutions" / "attention.py"
    assert_blocked_by({"landlock"}, lambda fd: outcome(lambda: secret.read_text()), policy)
    assert_blocked_by({"landlock"}, lambda fd: outcome(lambda: os.listdir(course)), policy)


def test_fresh_stdlib_and_site_packages_imports_work(policy: ChildPolicy) -> None:
    """Modules are dropped from sys.modules first, so they are read from disk
    under the full policy (sqlite3 also loads a C extension and libsqlite3)."""
    names = ["fractions", "statistics", "tomllib", "zoneinfo", "sqlite3", "yaml"]

    def imports(report_fd: int) -> dict:
        for cached in [m for m in sys.modules if m.split(".")[0] in names]:
            del sys.modules[cached]
        loaded = {name: importlib.import_module(name) for name in names}
        return {
            "fraction": str(loaded["fractions"].Fraction(1, 3) + loaded["fractions"].Fraction(1, 6)),
            "mean": loaded["statistics"].mean([1, 2, 6]),
            "toml": loaded["tomllib"].loads("a = 1"),
            "sqlite": loaded["sqlite3"].connect(":memory:").execute("select 6*7").fetchone()[0],
            "yaml": loaded["yaml"].safe_load("a: [1, 2]"),
        }

    report = run_child(policy, imports)
    assert report.get("result") == {"fraction": "1/2", "mean": 3, "toml": {"a": 1}, "sqlite": 42,
                                    "yaml": {"a": [1, 2]}}, report


def test_writing_outside_scratch_denied_inside_allowed(policy: ChildPolicy, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    assert_blocked_by({"landlock", "mountns_scratch"},
                      lambda fd: outcome(lambda: outside.write_text("x")), policy)

    def inside(report_fd: int) -> str:
        folder = Path(policy.scratch_dir) / "sub"
        folder.mkdir()
        (folder / "a.txt").write_text("hello")
        (folder / "a.txt").rename(folder / "b.txt")
        return (folder / "b.txt").read_text()

    assert run_child(policy, inside)["result"] == "hello"


def test_relative_paths_in_scratch_cwd_land_on_the_tmpfs(policy: ChildPolicy) -> None:
    """The worker's child chdirs into the scratch folder before the layers."""
    def attempt(report_fd: int) -> dict:
        os.chdir(policy.scratch_dir)
        status = apply_layers(policy)
        Path("relative.txt").write_text("hi")
        return {"status": status, "cwd_size_mib": os.statvfs(".").f_blocks * os.statvfs(".").f_frsize // MIB}

    result = run_child(_without(policy, set(LAYER_ORDER)), attempt)["result"]
    skip_unless_active(result, {"mountns_scratch", "landlock"})
    assert result["cwd_size_mib"] == policy.scratch_mib
    assert not (Path(policy.scratch_dir) / "relative.txt").exists()  # it went to the child's tmpfs


def test_parent_memory_unreadable_through_proc(policy: ChildPolicy) -> None:
    """/proc is made readable, so landlock's ptrace scoping is what stops this;
    a child without capabilities also may not ptrace the (root, capable)
    parent: commoncap wants the tracer's capabilities to cover the tracee's."""
    address = ctypes.addressof(secret_buffer)

    def read_parent(report_fd: int) -> str:
        ctypes.memset(address, 0, len(PARENT_SECRET))
        def read() -> None:
            with open(f"/proc/{os.getppid()}/mem", "rb", buffering=0) as mem:
                mem.seek(address)
                if mem.read(len(PARENT_SECRET)) != PARENT_SECRET:
                    raise OSError(errno.EIO, "read something else")
        return outcome(read)

    with_proc = dataclasses.replace(policy, readable_paths=("/proc",))
    assert_blocked_by(_ptrace_blockers(), read_parent, with_proc)


def test_parent_memory_unreadable_through_process_vm_readv(policy: ChildPolicy) -> None:
    address = ctypes.addressof(secret_buffer)

    class IoVec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    def read_parent(report_fd: int) -> str:
        ctypes.memset(address, 0, len(PARENT_SECRET))
        local = ctypes.create_string_buffer(len(PARENT_SECRET))
        def read() -> None:
            got = libc.process_vm_readv(os.getppid(), ctypes.byref(IoVec(ctypes.addressof(local), len(local))), 1,
                                        ctypes.byref(IoVec(address, len(PARENT_SECRET))), 1, 0)
            if got < 0:
                raise OSError(ctypes.get_errno(), "process_vm_readv")
            if local.raw != PARENT_SECRET:
                raise OSError(errno.EIO, "read something else")
        return outcome(read)

    assert_blocked_by({"seccomp"} | _ptrace_blockers(), read_parent, policy)


def _ptrace_blockers() -> set[str]:
    """Layers that stop reading the parent's memory (see above)."""
    return {"landlock", "capabilities"} if os.geteuid() == 0 else {"landlock"}


def test_abstract_unix_socket_outside_unreachable(policy: ChildPolicy) -> None:
    name = f"\0layers-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(name)
        server.listen(16)
        def connect() -> None:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                client.connect(name)
        assert_blocked_by({"landlock", "netns", "seccomp"}, lambda fd: outcome(connect), policy)


# --------------------------------------------------------------------------
# netns, mountns_scratch, capabilities, no_new_privs


def test_no_network_to_the_host(policy: ChildPolicy) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        address = listener.getsockname()
        def send() -> None:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
                sender.sendto(b"hello", address)
        assert_blocked_by({"netns", "seccomp"}, lambda fd: outcome(send), policy)


def test_scratch_tmpfs_caps_many_small_files(policy: ChildPolicy) -> None:
    def fill(report_fd: int) -> str:
        chunk = b"x" * (32 * 1024)
        def write_all() -> None:
            for i in range(1024):  # 32 MiB in all, twice the cap
                with open(os.path.join(policy.scratch_dir, f"f{i:04d}"), "wb") as handle:
                    handle.write(chunk)
        return outcome(write_all)

    assert_blocked_by({"mountns_scratch"}, fill, policy, blocked_prefix="blocked: ENOSPC")


def test_file_modes_outside_scratch_unchangeable(policy: ChildPolicy, course: Path) -> None:
    secret = course / "solutions" / "attention.py"
    assert_blocked_by({"mountns_scratch", "seccomp"}, lambda fd: outcome(lambda: os.chmod(secret, 0o666)), policy)


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root child has capabilities to drop")
def test_root_child_loses_capabilities(policy: ChildPolicy) -> None:
    def chown(report_fd: int) -> str:
        path = os.path.join(policy.scratch_dir, "owned")
        open(path, "w").close()
        return outcome(lambda: os.chown(path, 12345, 12345))

    assert_blocked_by({"capabilities", "seccomp"}, chown, policy)


def test_no_new_privs(policy: ChildPolicy) -> None:
    PR_GET_NO_NEW_PRIVS = 39
    def check(report_fd: int) -> str:
        return "blocked: no_new_privs" if libc.prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 else "ok"
    # libseccomp also sets no_new_privs when it loads its filter
    assert_blocked_by({"no_new_privs", "seccomp"}, check, policy)


# --------------------------------------------------------------------------
# rlimits


def test_rlimit_values(policy: ChildPolicy) -> None:
    def limits(report_fd: int) -> dict:
        return {name: resource.getrlimit(getattr(resource, f"RLIMIT_{name}"))
                for name in ("AS", "CPU", "FSIZE", "NOFILE", "CORE")}

    report = run_child(policy, limits)
    skip_unless_active(report, {"rlimits"})
    assert report["result"] == {"AS": [3072 * MIB] * 2, "CPU": [120, 121], "FSIZE": [16 * MIB] * 2,
                                "NOFILE": [64, 64], "CORE": [0, 0]}


def test_memory_limit(policy: ChildPolicy) -> None:
    def allocate(report_fd: int) -> str:
        return outcome(lambda: bytes(4 << 30))  # calloc: pages stay untouched when allowed

    assert_blocked_by({"rlimits"}, allocate, policy, blocked_prefix="blocked: MemoryError")


def test_file_size_limit(scratch: Path) -> None:
    small = ChildPolicy(scratch_dir=str(scratch), file_size_mib=1)
    def write(report_fd: int) -> str:
        return outcome(lambda: (scratch / "big.bin").write_bytes(b"x" * (2 * MIB)))
    assert_blocked_by({"rlimits"}, write, small, blocked_prefix="blocked: EFBIG")


def test_open_files_limit(policy: ChildPolicy) -> None:
    def open_many(report_fd: int) -> str:
        return outcome(lambda: [os.dup(report_fd) for _ in range(100)])
    assert_blocked_by({"rlimits"}, open_many, policy, blocked_prefix="blocked: EMFILE")


def test_cpu_limit(policy: ChildPolicy) -> None:
    one_second = dataclasses.replace(policy, cpu_seconds=1)
    def spin(report_fd: int) -> str:
        # Bounded by the child's own CPU time, never by the wall clock: on a busy machine a wall-clock
        # spin gets less than a second of CPU and never reaches the limit.
        while time.process_time() < 1.6:
            pass
        return "ok"

    assert run_child(one_second, spin) == {"died": "SIGXCPU"}
    assert run_child(_without(one_second, {"rlimits"}), spin)["result"] == "ok"
