"""Benchmark: the sandbox wire format (`grader.sandbox.protocol`) on one grade's real traffic.

Usage: python bench/codec.py [--repeat 20] [--baseline PATH] [--traffic F] [--save F]

Grades `solutions/attention.py` once with `grader.api.Grader("attention")`, capturing every
request the judge sends (by wrapping `SubmissionWorker._exchange`), then computes the replies
in-process with `grader.sandbox.child` (load / call / probe, as the child would). Prints the
median microseconds (CPU time of this process, less disturbed than wall time on a shared
machine; torch kept to one thread) per encode and per decode over all requests and over all
replies, the median of `--repeat` rounds, each round timing the whole traffic once; and the
same traffic through `send` and `recv` over a socketpair (framing included: requests as the
child reads them, replies with a deadline as the judge reads them).

`--baseline PATH` also times another copy of protocol.py (say the original, saved aside before
a change) in the same run, rounds interleaved, and prints its figures and the ratio
baseline / current. `--save F` writes the captured requests as length-prefixed frames (the wire's own
format, no pickle); `--traffic F` reads such a file instead of grading (quicker when repeating).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import socket
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from grader.sandbox import protocol  # noqa: E402


def capture_requests() -> list[bytes]:
    """Grade the reference once; return every request the judge sent, encoded."""
    from grader import api
    from grader.sandbox import client

    bodies: list[bytes] = []
    exchange = client.SubmissionWorker._exchange

    def recording(self: Any, message: dict | None, what: str, cpu_limit: float) -> dict:
        if message is not None:
            bodies.append(protocol.encode(message))  # encoded now: the caller may reuse the dict
        return exchange(self, message, what, cpu_limit)

    client.SubmissionWorker._exchange = recording
    try:
        with api.Grader("attention") as grader:
            grader.grade(ROOT / "solutions/attention.py")
    finally:
        client.SubmissionWorker._exchange = exchange
    return bodies


def compute_replies(requests: list[Any]) -> list[Any]:
    """Answer the requests in this process, the way the sandboxed child does (no sandbox layers)."""
    from grader.sandbox import child

    namespace: dict[str, Any] | None = None
    replies = []
    for request in requests:
        op = request.get("op")
        if op == "load":
            namespace, reply = child.load(request)
        elif op == "call":
            reply = child.call(namespace, request)
        elif op == "probe":
            reply = child.probe(namespace, request)
        else:
            reply = {"ok": False, "kind": "internal", "message": f"unknown op {op!r}"}
        replies.append(reply)
    return replies


def load_module(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("protocol_baseline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def one_round(codec: ModuleType, values: list[Any], bodies: list[bytes]) -> tuple[float, float]:
    """Microseconds per encode of ``values`` and per decode of ``bodies``, one pass each."""
    encode, decode = codec.encode, codec.decode
    start = time.process_time()
    for v in values:
        encode(v)
    mid = time.process_time()
    for b in bodies:
        decode(b)
    end = time.process_time()
    return (mid - start) / len(values) * 1e6, (end - mid) / len(bodies) * 1e6


def socket_round(codec: ModuleType, values: list[Any], pair: tuple[socket.socket, socket.socket],
                 deadline: bool) -> float:
    """Microseconds per ``send`` then ``recv`` of each value through ``pair``, one pass."""
    send, recv = codec.send, codec.recv
    writer, reader = pair
    start = time.process_time()
    for v in values:
        send(writer, v)
        recv(reader, deadline=time.monotonic() + 60 if deadline else None)
    return (time.process_time() - start) / len(values) * 1e6


def socketpair(largest: int) -> tuple[socket.socket, socket.socket]:
    """A connected pair whose buffers hold the largest frame, so one thread can send, then receive."""
    pair = socket.socketpair()
    for sock in pair:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 2 * largest + 65536)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2 * largest + 65536)
    return pair


def read_frames(data: bytes) -> list[bytes]:
    """The frame bodies ``--save`` wrote, in order."""
    stream, bodies = io.BytesIO(data), []
    while header := stream.read(protocol.FRAME_LENGTH.size):
        (length,) = protocol.FRAME_LENGTH.unpack(header)
        bodies.append(stream.read(length))
    return bodies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--baseline", help="another protocol.py to time alongside, interleaved")
    parser.add_argument("--traffic", help="the requests as frames (from --save) instead of grading")
    parser.add_argument("--save", help="write the captured requests here")
    args = parser.parse_args()
    torch.set_num_threads(1)

    if args.traffic:
        path = Path(args.traffic)
        if not path.exists():
            parser.error(f"{path} does not exist (leave out --traffic to grade the reference for it)")  # exit 2
        raw = read_frames(path.read_bytes())
    else:
        raw = capture_requests()
    if args.save:
        Path(args.save).write_bytes(b"".join(protocol.FRAME_LENGTH.pack(len(b)) + b for b in raw))
    requests = [protocol.decode(b) for b in raw]
    replies = compute_replies([protocol.decode(b) for b in raw])  # fresh copies: calls may mutate inputs
    traffic = {"requests": requests, "replies": replies}
    encoded = {k: [protocol.encode(v) for v in vs] for k, vs in traffic.items()}
    sizes = {k: sum(map(len, bs)) for k, bs in encoded.items()}
    print(f"traffic: {len(requests)} requests ({sizes['requests']} bytes), "
          f"{len(replies)} replies ({sizes['replies']} bytes); {args.repeat} rounds, median")

    codecs = {"current": protocol}
    if args.baseline:
        codecs["baseline"] = load_module(args.baseline)
    pair = socketpair(max(len(b) for bs in encoded.values() for b in bs))
    ops = ("encode", "decode", "send+recv")
    times: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(args.repeat):
        for name, codec in codecs.items():
            for kind in traffic:
                enc, dec = one_round(codec, traffic[kind], encoded[kind])
                times.setdefault((name, kind, "encode"), []).append(enc)
                times.setdefault((name, kind, "decode"), []).append(dec)
                both = socket_round(codec, traffic[kind], pair, deadline=kind == "replies")
                times.setdefault((name, kind, "send+recv"), []).append(both)

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{'us per message':<25}" + "".join(f"{n:>12}" for n in codecs)
          + ("       ratio" if args.baseline else ""))
    for kind in traffic:
        for op in ops:
            row = f"{kind + ' ' + op:<25}" + "".join(f"{med[(n, kind, op)]:>12.1f}" for n in codecs)
            if args.baseline:
                row += f"{med[('baseline', kind, op)] / med[('current', kind, op)]:>11.2f}x"
            print(row)
    for name in codecs:
        total = sum(med[(name, kind, op)] * len(traffic[kind]) for kind in traffic for op in ("encode", "decode"))
        print(f"{name}: encode + decode of the whole grade's traffic, both ways: {total / 1000:.2f} ms")


if __name__ == "__main__":
    main()
