"""The wire format between the judge and the sandboxed worker.

Only plain data crosses: None, bools, ints, floats, strings, lists, tuples,
dicts with string keys, and tensors sent as raw bytes with their dtype,
shape, stride and device. Nothing is ever unpickled, and every size is
checked *before* anything is allocated, because the worker runs student code
and may write anything at all into its end of the socket.

A frame is an 8-byte big-endian length, then a body: a 4-byte header length,
a UTF-8 JSON header ``{"value": tree, "buffers": [nbytes, ...]}``, then the
tensor buffers back to back.

Here: encoding and framing. The limits, dtypes and errors are in ``wire``, the
validating decoder in ``decoding``; both are used through this module.
"""

from __future__ import annotations

import json
import math
import socket
import time
from typing import Any

import torch

from grader.sandbox.decoding import decode  # noqa: F401 - part of this module's API
from grader.sandbox.wire import (  # noqa: F401 - the format's vocabulary, used as protocol.X by callers
    DEVICE, DTYPE_NAMES, DTYPES, MAX_DEPTH, MAX_FRAME_BYTES, MAX_HEADER_BYTES, MAX_ITEMS, MAX_NDIM, MAX_STRING,
    MAX_TENSOR_BYTES, NUMPY_DTYPES, FRAME_LENGTH, HEADER_LENGTH, Opaque, PeerClosed, ProtocolError)


# --------------------------------------------------------------------- encode
#
# Both directions are on the hot path of every check (a grade sends a couple of hundred
# requests each way, mostly small dicts of a few tensors), so the walks below first test
# the exact builtin types such traffic is made of, with ``type(v) is ...``, and only fall
# back to the general, isinstance-based rules for anything else. The results are the same
# either way: the fast paths are the general rules specialised to exact types.

_INT_LIMIT = 1 << 63
_VERBATIM = frozenset({str, bool, type(None)})  # exact types sent as they are, without a call
_is_str = str.__instancecheck__  # isinstance(k, str), as a C function for all(map(...))
# json.dumps' settings less its check for cycles (a dict of ids kept per container): the walk
# builds the tree afresh, so only an Opaque made with cyclic fields could loop, and that fails
# too, with RecursionError where json.dumps raised ValueError (both end the child's reply)
_HEADER = json.JSONEncoder(check_circular=False)


def encode(value: Any) -> bytes:
    """Serialise ``value`` into one frame body (without the length prefix)."""
    return b"".join(_encode_parts(value))


def _encode_parts(value: Any) -> list[bytes]:
    """The body as pieces (length, header, buffers), joined once by the caller: one copy of the data."""
    buffers: list[bytes] = []
    tree = _encode_value(value, 0, buffers)
    header = _HEADER.encode({"value": tree, "buffers": [len(b) for b in buffers]}).encode()
    return [HEADER_LENGTH.pack(len(header)), header, *buffers]


def _encode_value(v: Any, depth: int, buffers: list[bytes]) -> Any:
    """The JSON tree for ``v``; tensor data goes to ``buffers``."""
    if depth > MAX_DEPTH:
        raise ProtocolError("value nested too deeply")
    kind = type(v)
    if kind in _VERBATIM:
        return v
    if kind is dict:
        if all(map(_is_str, v)):  # isinstance, as the general rule has it
            return {"__dict__": _encode_mapping(v, depth, buffers)}
        return _opaque(v)
    if kind is torch.Tensor:
        return _encode_tensor(v, buffers)
    if kind is list:
        return _encode_items(v, depth, buffers)
    if kind is int:
        return v if abs(v) < _INT_LIMIT else float(v)
    if kind is float:
        return _encode_float(v)
    if kind is tuple:
        return {"__tuple__": _encode_items(v, depth, buffers)}
    return _encode_other(v, depth, buffers)


def _encode_other(v: Any, depth: int, buffers: list[bytes]) -> Any:
    """The general rules, in their order, for anything not of an exact builtin type (subclasses too).

    Containers here walk item by item: a subclass may override ``__bool__`` or ``__len__``,
    so the shortcuts of ``_encode_items`` are kept to the exact types.
    """
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v if abs(v) < _INT_LIMIT else float(v)
    if isinstance(v, float):
        return _encode_float(v)
    if issubclass(type(v), torch.Tensor):  # type(), not isinstance: __class__ can lie
        return _encode_tensor(v, buffers)
    if isinstance(v, tuple):
        return {"__tuple__": [_encode_value(x, depth + 1, buffers) for x in v]}
    if isinstance(v, list):
        return [_encode_value(x, depth + 1, buffers) for x in v]
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {"__dict__": {k: _encode_value(x, depth + 1, buffers) for k, x in v.items()}}
    if isinstance(v, Opaque):
        return {"__opaque__": v.type_name, "text": v.text}
    return _opaque(v)


def _encode_float(v: float) -> Any:
    if math.isfinite(v):
        return v
    return {"__float__": repr(v)}


def _encode_items(v: list | tuple, depth: int, buffers: list[bytes]) -> list:
    """An exact list's or tuple's items; strings, bools and None are copied without a call."""
    if v and depth >= MAX_DEPTH:  # where the first item's own call would fail
        raise ProtocolError("value nested too deeply")
    depth += 1
    return [x if type(x) in _VERBATIM else _encode_value(x, depth, buffers) for x in v]


def _encode_mapping(v: dict, depth: int, buffers: list[bytes]) -> dict:
    """An exact dict's values (its keys are strings); strings, bools and None without a call."""
    if v and depth >= MAX_DEPTH:
        raise ProtocolError("value nested too deeply")
    depth += 1
    return {k: x if type(x) in _VERBATIM else _encode_value(x, depth, buffers) for k, x in v.items()}


def _opaque(v: Any) -> dict:
    return {"__opaque__": f"{type(v).__module__}.{type(v).__qualname__}", "text": _short_repr(v)}


def _encode_tensor(v: torch.Tensor, buffers: list[bytes]) -> dict[str, Any]:
    """A tensor's meta, its data appended to ``buffers``; a subclass is sent as the plain tensor it wraps."""
    if type(v) is torch.Tensor:
        meta, raw = _tensor_meta(v)
    else:
        with torch._C.DisableTorchFunctionSubclass():  # the subclass's overrides are not run
            meta, raw = _tensor_meta(torch.Tensor._make_subclass(torch.Tensor, v))
    meta["buffer"] = len(buffers)
    buffers.append(raw)
    if type(v) is not torch.Tensor:
        meta["subclass"] = type(v).__qualname__
    return meta


def _tensor_meta(t: torch.Tensor) -> tuple[dict[str, Any], bytes]:
    dtype = DTYPE_NAMES.get(t.dtype)
    if dtype is None:
        raise ProtocolError(f"unsupported tensor dtype {t.dtype}")
    strided = t.layout == torch.strided
    meta = {
        "__tensor__": True,
        "dtype": dtype,
        "shape": list(t.shape),
        "stride": list(t.stride()) if strided else None,
        "device": "cpu" if t.is_cpu else str(t.device),
        "requires_grad": bool(t.requires_grad),
    }
    if t.is_meta:
        return meta, b""
    return meta, _tensor_bytes(t, strided)


def _tensor_bytes(t: torch.Tensor, strided: bool) -> bytes:
    """The values in C order, as the bytes of ``t.contiguous()``.

    A plain strided CPU tensor goes through numpy, whose ``tobytes`` writes any strided
    layout in C order with one copy; numpy has no bfloat16, so that is read as int16 (the
    same bytes). Anything else (other devices, sparse layouts, conjugate or negative views)
    takes the general route: to the CPU, made contiguous, read as bytes.
    """
    if strided and t.is_cpu and not t.is_conj() and not t.is_neg():
        if t.requires_grad:
            t = t.detach()
        if t.dtype is torch.bfloat16:
            t = t.view(torch.int16)
        return t.numpy().tobytes()
    data = t.detach().to("cpu").contiguous()
    if data.numel() == 0:
        return b""
    return data.reshape(-1).view(torch.uint8).numpy().tobytes()


def _short_repr(v: Any) -> str:
    try:
        text = repr(v)
    except Exception as exc:  # noqa: BLE001 - a student's __repr__ may raise anything
        text = f"<repr raised {type(exc).__name__}>"
    return text[:200]


# ----------------------------------------------------------------- framing


def send_frame(sock: socket.socket, body: bytes) -> None:
    """Write one length-prefixed frame."""
    sock.sendall(FRAME_LENGTH.pack(len(body)) + body)


def recv_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    """Read exactly n bytes; with ``deadline`` (time.monotonic) the whole read, not each recv, is bounded.

    Memory grows only as bytes arrive, whatever ``n`` claims. Most frames come in one
    ``recv``; that chunk is returned as it is, without the two copies of the general loop.
    """
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
        if len(chunk) == n:  # all of it at once (so chunks is still empty)
            return chunk
        chunks += chunk
    return bytes(chunks)


def recv_frame(sock: socket.socket, max_bytes: int = MAX_FRAME_BYTES, deadline: float | None = None) -> bytes:
    """Read one frame, refusing lengths over ``max_bytes`` before reading them."""
    (length,) = FRAME_LENGTH.unpack(recv_exact(sock, 8, deadline))
    if length > max_bytes:
        raise ProtocolError(f"frame of {length} bytes exceeds the cap of {max_bytes}")
    return recv_exact(sock, length, deadline)


def send(sock: socket.socket, value: Any) -> None:
    """Encode and write one frame, its data copied once (into the joined frame), not three times."""
    parts = _encode_parts(value)
    sock.sendall(b"".join([FRAME_LENGTH.pack(sum(map(len, parts))), *parts]))


def recv(sock: socket.socket, deadline: float | None = None) -> Any:
    return decode(recv_frame(sock, deadline=deadline))
