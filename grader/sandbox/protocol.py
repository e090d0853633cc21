"""The wire format between the judge and the sandboxed worker.

Only plain data crosses: None, bools, ints, floats, strings, lists, tuples,
dicts with string keys, and tensors sent as raw bytes with their dtype,
shape, stride and device. Nothing is ever unpickled, and every size is
checked *before* anything is allocated, because the worker runs student code
and may write anything at all into its end of the socket.

A frame is an 8-byte big-endian length, then a body: a 4-byte header length,
a UTF-8 JSON header ``{"value": tree, "buffers": [nbytes, ...]}``, then the
tensor buffers back to back.
"""

from __future__ import annotations

import json
import re
import math
import socket
import struct
import time
from dataclasses import dataclass
from typing import Any

import torch

MAX_FRAME_BYTES = 96 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024 * 1024
MAX_TENSOR_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 12
MAX_ITEMS = 20_000
MAX_NDIM = 8
MAX_STRING = 1 << 20

DTYPES: dict[str, torch.dtype] = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "bool": torch.bool,
    "uint8": torch.uint8,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
DEVICE = re.compile(r"(cpu|meta|cuda)(:\d{1,2})?")


class ProtocolError(Exception):
    """The peer sent something that is not a well-formed, in-bounds frame."""


class PeerClosed(ProtocolError):
    """The peer closed its end (for the worker: it died or exited)."""


@dataclass(frozen=True)
class Opaque:
    """A value the worker could not express as plain data (say a numpy array).

    The judge only ever sees its type name and a short repr, so checks can
    say "returned a numpy.ndarray, expected a torch.Tensor".
    """

    type_name: str
    text: str


# --------------------------------------------------------------------- encode


def _tensor_meta(t: torch.Tensor) -> tuple[dict[str, Any], bytes]:
    dtype = DTYPE_NAMES.get(t.dtype)
    if dtype is None:
        raise ProtocolError(f"unsupported tensor dtype {t.dtype}")
    meta = {
        "__tensor__": True,
        "dtype": dtype,
        "shape": list(t.shape),
        "stride": list(t.stride()) if t.layout == torch.strided else None,
        "device": str(t.device),
        "requires_grad": bool(t.requires_grad),
    }
    if t.device.type == "meta":
        return meta, b""
    data = t.detach().to("cpu").contiguous()
    if data.numel() == 0:
        return meta, b""
    return meta, data.reshape(-1).view(torch.uint8).numpy().tobytes()


def encode(value: Any) -> bytes:
    """Serialise ``value`` into one frame body (without the length prefix)."""
    buffers: list[bytes] = []

    def walk(v: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise ProtocolError("value nested too deeply")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v if abs(v) < 1 << 63 else float(v)
        if isinstance(v, float):
            if math.isfinite(v):
                return v
            return {"__float__": repr(v)}
        if issubclass(type(v), torch.Tensor):  # type(), not isinstance: __class__ can lie
            with torch._C.DisableTorchFunctionSubclass():
                plain = torch.Tensor._make_subclass(torch.Tensor, v) if type(v) is not torch.Tensor else v
                meta, raw = _tensor_meta(plain)
            meta["buffer"] = len(buffers)
            buffers.append(raw)
            if type(v) is not torch.Tensor:
                meta["subclass"] = type(v).__qualname__
            return meta
        if isinstance(v, tuple):
            return {"__tuple__": [walk(x, depth + 1) for x in v]}
        if isinstance(v, list):
            return [walk(x, depth + 1) for x in v]
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"__dict__": {k: walk(x, depth + 1) for k, x in v.items()}}
        if isinstance(v, Opaque):
            return {"__opaque__": v.type_name, "text": v.text}
        return {"__opaque__": f"{type(v).__module__}.{type(v).__qualname__}", "text": _short_repr(v)}

    tree = walk(value, 0)
    header = json.dumps({"value": tree, "buffers": [len(b) for b in buffers]}).encode()
    return struct.pack(">I", len(header)) + header + b"".join(buffers)


def _short_repr(v: Any) -> str:
    try:
        text = repr(v)
    except Exception as exc:  # noqa: BLE001 - a student's __repr__ may raise anything
        text = f"<repr raised {type(exc).__name__}>"
    return text[:200]


# --------------------------------------------------------------------- decode


def decode(body: bytes, *, allow_devices: frozenset[str] = frozenset({"cpu", "meta", "cuda"})) -> Any:
    """Rebuild a value from a frame body, validating every field first."""
    if len(body) < 4:
        raise ProtocolError("frame too short")
    (hlen,) = struct.unpack(">I", body[:4])
    if hlen > MAX_HEADER_BYTES or 4 + hlen > len(body):
        raise ProtocolError("bad header length")
    try:
        header = json.loads(body[4 : 4 + hlen].decode())
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ProtocolError(f"header is not JSON: {exc}") from None
    if not isinstance(header, dict) or not isinstance(header.get("buffers"), list):
        raise ProtocolError("header lacks buffers")
    sizes = header["buffers"]
    if not all(type(n) is int and 0 <= n <= MAX_TENSOR_BYTES for n in sizes):
        raise ProtocolError("bad buffer size")
    offsets = []
    pos = 4 + hlen
    for n in sizes:
        offsets.append((pos, n))
        pos += n
    if pos != len(body):
        raise ProtocolError("buffer sizes do not add up to the frame")
    items = [0]

    def walk(v: Any, depth: int) -> Any:
        items[0] += 1
        if depth > MAX_DEPTH or items[0] > MAX_ITEMS:
            raise ProtocolError("value too deep or too large")
        if v is None or type(v) in (bool, int, float):
            return v
        if type(v) is str:
            if len(v) > MAX_STRING:
                raise ProtocolError("string too long")
            return v
        if type(v) is list:
            return [walk(x, depth + 1) for x in v]
        if type(v) is not dict:
            raise ProtocolError("unexpected JSON value")
        if "__tensor__" in v:
            return _decode_tensor(v, body, offsets, allow_devices)
        if "__tuple__" in v and type(v["__tuple__"]) is list:
            return tuple(walk(x, depth + 1) for x in v["__tuple__"])
        if "__dict__" in v and type(v["__dict__"]) is dict:
            return {str(k): walk(x, depth + 1) for k, x in v["__dict__"].items()}
        if "__float__" in v and v["__float__"] in ("inf", "-inf", "nan"):
            return float(v["__float__"])
        if "__opaque__" in v:
            return Opaque(str(v["__opaque__"])[:200], str(v.get("text", ""))[:200])
        raise ProtocolError("unknown tagged value")

    return walk(header.get("value"), 0)


def _decode_tensor(meta: dict, body: bytes, offsets: list, allow_devices: frozenset[str]) -> torch.Tensor:
    dtype = DTYPES.get(meta.get("dtype"))
    shape = meta.get("shape")
    device = meta.get("device")
    index = meta.get("buffer")
    if dtype is None:
        raise ProtocolError("unknown dtype")
    if type(shape) is not list or len(shape) > MAX_NDIM or not all(type(s) is int and s >= 0 for s in shape):
        raise ProtocolError("bad shape")
    if device != "cpu" and (type(device) is not str or not DEVICE.fullmatch(device)
                            or device.split(":")[0] not in allow_devices):
        raise ProtocolError(f"device {device!r} not allowed")
    if device == "cpu" and "cpu" not in allow_devices:
        raise ProtocolError("device 'cpu' not allowed")
    if type(index) is not int or not 0 <= index < len(offsets):
        raise ProtocolError("bad buffer index")
    numel = math.prod(shape)
    itemsize = dtype.itemsize
    if numel * itemsize > MAX_TENSOR_BYTES:
        raise ProtocolError("tensor too large")
    start, nbytes = offsets[index]
    if device == "meta":
        if nbytes:
            raise ProtocolError("meta tensor with data")
        return torch.empty(shape, dtype=dtype, device="meta")
    if nbytes != numel * itemsize:
        raise ProtocolError("tensor bytes do not match its shape")
    if numel == 0:
        flat = torch.empty(0, dtype=dtype)
    else:
        flat = torch.frombuffer(bytearray(body[start : start + nbytes]), dtype=dtype)
    tensor = flat.reshape(shape)
    stride = meta.get("stride")
    if stride != _contiguous_strides(shape) and _is_dense_layout(shape, stride):
        tensor = torch.empty_strided(shape, stride, dtype=dtype).copy_(tensor)
    if device != "cpu":
        tensor = tensor.to(device)
    return tensor


def _contiguous_strides(shape: list[int]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return strides[::-1]


def _is_dense_layout(shape: list[int], stride: Any) -> bool:
    """True when ``stride`` is a permutation of a contiguous layout of ``shape``.

    Only such layouts are rebuilt (to pass non-contiguous inputs through);
    anything else - overlapping, gapped, negative - is sent contiguous.
    """
    if type(stride) is not list or len(stride) != len(shape) or not all(type(s) is int for s in stride):
        return False
    if 0 in shape:
        return False
    expected = 1
    for size, step in sorted(zip(shape, stride), key=lambda p: (p[1], p[0])):
        if size == 1:
            continue
        if step != expected:
            return False
        expected *= size
    return True


# ----------------------------------------------------------------- framing


def send_frame(sock: socket.socket, body: bytes) -> None:
    """Write one length-prefixed frame."""
    sock.sendall(struct.pack(">Q", len(body)) + body)


def recv_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    """Read exactly n bytes; with ``deadline`` (time.monotonic) the whole read, not each recv, is bounded."""
    chunks = bytearray()
    while len(chunks) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the reply did not arrive in time")
            sock.settimeout(left)
        chunk = sock.recv(min(n - len(chunks), 1 << 20))
        if not chunk:
            raise PeerClosed("peer closed the connection")
        chunks += chunk
    return bytes(chunks)


def recv_frame(sock: socket.socket, max_bytes: int = MAX_FRAME_BYTES, deadline: float | None = None) -> bytes:
    """Read one frame, refusing lengths over ``max_bytes`` before reading them."""
    (length,) = struct.unpack(">Q", recv_exact(sock, 8, deadline))
    if length > max_bytes:
        raise ProtocolError(f"frame of {length} bytes exceeds the cap of {max_bytes}")
    return recv_exact(sock, length, deadline)


def send(sock: socket.socket, value: Any) -> None:
    send_frame(sock, encode(value))


def recv(sock: socket.socket, deadline: float | None = None) -> Any:
    return decode(recv_frame(sock, deadline=deadline))
