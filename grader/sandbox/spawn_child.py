"""``python -m grader.sandbox.spawn_child``: a sandboxed child started fresh (``spawn_server``).

The judge writes ``{"port", "token", "policy"}`` to this process's stdin and closes it. The child
imports torch and the sandbox, connects to 127.0.0.1:port, sends the token, then does what a forked
child does (``child.main``): applies every layer this system has (each one it lacks is reported
with the reason), enters its scratch folder and serves requests. It connects before the layers go
on: landlock (where there is one) would forbid the TCP connect afterwards.

While it imports, its output goes nowhere: nobody reads the pipe until the judge has accepted the
connection, and a pipe's buffer is small (a few KiB on Windows), so a library that printed warnings
while loading would otherwise block the child before it ever connected. If the imports fail, one
line saying why goes to the pipe, which the judge reports.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any


def _quiet_imports() -> tuple[Any, Any, Any, Any, Any]:
    """torch and the sandbox, loaded with fds 1 and 2 on the null device; the real ones back after."""
    saved = (os.dup(1), os.dup(2))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        import torch

        from grader.sandbox import child, layers, workspace
        from grader.sandbox.layers.policy import child_policy
    except BaseException as exc:  # noqa: BLE001 - whatever stops the imports is said once, then the child ends
        os.dup2(saved[0], 1)
        os.write(1, f"the worker cannot load: {type(exc).__name__}: {exc}\n".encode("utf-8", "replace"))
        os._exit(71)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)
    return torch, child, layers, workspace, child_policy


def main() -> None:
    """Never returns: exits 0 when the judge closes the socket, 71 when anything here failed."""
    code = 0
    try:
        request = json.loads(sys.stdin.buffer.read())
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        torch, child, layers, workspace, child_policy = _quiet_imports()
        policy, threads = child_policy(request.get("policy") or {})
        sock = socket.create_connection(("127.0.0.1", int(request["port"])))
        sock.sendall(bytes.fromhex(request["token"]))
        if policy.scratch_dir:
            os.chdir(policy.scratch_dir)
        child.trim_sys_path()
        active = layers.apply_layers(policy)
        workspace.enter(policy.scratch_dir)
        torch.set_num_threads(max(1, threads))
        child.serve(sock, active)
    except BaseException:  # noqa: BLE001 - the child must end via os._exit, whatever happened
        code = 71
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    main()
