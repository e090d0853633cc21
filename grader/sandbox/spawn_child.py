"""``python -m grader.sandbox.spawn_child``: a sandboxed child started fresh (``spawn_server``).

The judge writes ``{"port", "token", "policy"}`` to this process's stdin and closes it. The child
imports torch and the sandbox, connects to 127.0.0.1:port, sends the token, then does what a forked
child does (``child.main``): applies every layer this system has (each one it lacks is reported
with the reason), enters its scratch folder and serves requests. It connects before the layers go
on: landlock (where there is one) would forbid the TCP connect afterwards.
"""

from __future__ import annotations

import json
import os
import socket
import sys

import torch

from grader.sandbox import child, layers, workspace
from grader.sandbox.layers.policy import child_policy


def main() -> None:
    """Never returns: exits 0 when the judge closes the socket, 71 when anything here failed."""
    code = 0
    try:
        request = json.loads(sys.stdin.buffer.read())
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
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
