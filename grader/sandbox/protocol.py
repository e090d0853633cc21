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
from itertools import accumulate
from typing import Any

import numpy as np
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
# numpy reads the buffers (it is the quickest way from bytes to a shaped array); it has no
# bfloat16, so those are read as int16 and viewed as bfloat16 afterwards (the same bytes)
NUMPY_DTYPES = {dtype: torch.empty(0, dtype=torch.int16 if dtype is torch.bfloat16 else dtype).numpy().dtype
                for dtype in DTYPES.values()}
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
#
# Both directions are on the hot path of every check (a grade sends a couple of hundred
# requests each way, mostly small dicts of a few tensors), so the walks below first test
# the exact builtin types such traffic is made of, with ``type(v) is ...``, and only fall
# back to the general, isinstance-based rules for anything else. The results are the same
# either way: the fast paths are the general rules specialised to exact types.

_U32 = struct.Struct(">I")  # the header length
_U64 = struct.Struct(">Q")  # the frame length
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
    return [_U32.pack(len(header)), header, *buffers]


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


# --------------------------------------------------------------------- decode


def decode(body: bytes, *, allow_devices: frozenset[str] = frozenset({"cpu", "meta", "cuda"})) -> Any:
    """Rebuild a value from a frame body, validating every field first."""
    tree, starts, sizes = _read_header(body)
    return _Decoder(body, starts, sizes, allow_devices).value(tree, 0)


def _read_header(body: bytes) -> tuple[Any, list[int], list[int]]:
    """The header's value tree, and each buffer's start and size, all checked against the body."""
    if len(body) < 4:
        raise ProtocolError("frame too short")
    (hlen,) = _U32.unpack_from(body)
    if hlen > MAX_HEADER_BYTES or 4 + hlen > len(body):
        raise ProtocolError("bad header length")
    try:
        header = _parse_json(body[4 : 4 + hlen].decode())
    except (ValueError, RecursionError) as exc:  # ValueError: bad UTF-8, bad JSON, an int over 4300 digits
        raise ProtocolError(f"header is not JSON: {exc}") from None
    if type(header) is not dict or type(header.get("buffers")) is not list:
        raise ProtocolError("header lacks buffers")
    sizes = header["buffers"]
    if len(sizes) > MAX_ITEMS:  # each buffer is a tensor's, and a value holds at most MAX_ITEMS
        raise ProtocolError("too many buffers")
    for n in sizes:
        if type(n) is not int or not 0 <= n <= MAX_TENSOR_BYTES:
            raise ProtocolError("bad buffer size")
    starts = list(accumulate(sizes, initial=4 + hlen))
    if starts.pop() != len(body):
        raise ProtocolError("buffer sizes do not add up to the frame")
    return header.get("value"), starts, sizes


_scan_json = json.JSONDecoder().scan_once  # the parser json.loads runs, with the same (default) settings


def _parse_json(text: str) -> Any:
    """``json.loads(text)``, a microsecond sooner for a text that is exactly one JSON value.

    That is every header we write; anything else (whitespace around the value, trailing
    data, no value at all) goes through ``json.loads`` itself, so the same texts are
    accepted and the same errors raised. The parser's own errors (bad JSON inside the
    value, recursion, over-long ints) propagate as they would from ``json.loads``.
    """
    try:
        value, end = _scan_json(text, 0)
    except StopIteration:  # json.loads turns this into "Expecting value"
        end = -1
    if end == len(text):
        return value
    return json.loads(text)


class _Decoder:
    """One frame's walk: counts the items it has seen and owns the body its tensors are read from."""

    __slots__ = ("allow_devices", "items", "sizes", "starts", "view")

    def __init__(self, body: bytes, starts: list[int], sizes: list[int], allow_devices: frozenset[str]) -> None:
        self.view = memoryview(body)  # tensors slice it: one copy of their bytes, not two
        self.starts = starts
        self.sizes = sizes
        self.allow_devices = allow_devices
        self.items = 0

    def value(self, v: Any, depth: int) -> Any:
        self.items += 1
        if depth > MAX_DEPTH or self.items > MAX_ITEMS:
            raise ProtocolError("value too deep or too large")
        kind = type(v)
        if kind is dict:
            if "__tensor__" in v:
                return self.tensor(v)
            return self.tagged(v, depth)
        if kind is str:
            if len(v) > MAX_STRING:
                raise ProtocolError("string too long")
            return v
        if kind is list:
            return [self.value(x, depth + 1) for x in v]
        if v is None or kind is bool or kind is int or kind is float:
            return v
        raise ProtocolError("unexpected JSON value")

    def tagged(self, v: dict, depth: int) -> Any:
        """A JSON object other than a tensor is a tuple, dict, non-finite float or opaque."""
        if "__tuple__" in v and type(v["__tuple__"]) is list:
            return tuple([self.value(x, depth + 1) for x in v["__tuple__"]])
        if "__dict__" in v and type(v["__dict__"]) is dict:
            return {k: self.value(x, depth + 1) for k, x in v["__dict__"].items()}  # JSON keys are str
        if "__float__" in v and v["__float__"] in ("inf", "-inf", "nan"):
            return float(v["__float__"])
        if "__opaque__" in v:
            return Opaque(str(v["__opaque__"])[:200], str(v.get("text", ""))[:200])
        raise ProtocolError("unknown tagged value")

    def tensor(self, meta: dict) -> torch.Tensor:
        """Check every field, then the sizes, before allocating; then build the tensor from its bytes."""
        name = meta.get("dtype")
        dtype = DTYPES.get(name) if type(name) is str else None  # a list or dict name would be unhashable
        shape = meta.get("shape")
        device = meta.get("device")
        index = meta.get("buffer")
        if dtype is None:
            raise ProtocolError("unknown dtype")
        if type(shape) is not list or len(shape) > MAX_NDIM:
            raise ProtocolError("bad shape")
        for size in shape:
            if type(size) is not int or size < 0:
                raise ProtocolError("bad shape")
        if device == "cpu":
            if "cpu" not in self.allow_devices:
                raise ProtocolError("device 'cpu' not allowed")
        elif type(device) is not str or not DEVICE.fullmatch(device) or device.split(":")[0] not in self.allow_devices:
            raise ProtocolError(f"device {device!r} not allowed")
        if type(index) is not int or not 0 <= index < len(self.starts):
            raise ProtocolError("bad buffer index")
        numel = math.prod(shape)
        nbytes = numel * dtype.itemsize
        if nbytes > MAX_TENSOR_BYTES:
            raise ProtocolError("tensor too large")
        if device == "meta":
            if self.sizes[index]:
                raise ProtocolError("meta tensor with data")
            return torch.empty(shape, dtype=dtype, device="meta")
        if self.sizes[index] != nbytes:
            raise ProtocolError("tensor bytes do not match its shape")
        if numel == 0:
            tensor = torch.empty(0, dtype=dtype).reshape(shape)
        else:  # copied once, into a writable buffer of its own; the tensor shares it and keeps it alive
            start = self.starts[index]
            data = np.frombuffer(bytearray(self.view[start : start + nbytes]), NUMPY_DTYPES[dtype])
            tensor = torch.from_numpy(data.reshape(shape))
            if dtype is torch.bfloat16:
                tensor = tensor.view(dtype)
        stride = meta.get("stride")
        if not _is_contiguous_stride(shape, stride) and _is_dense_layout(shape, stride):
            tensor = torch.empty_strided(shape, stride, dtype=dtype).copy_(tensor)
        if device != "cpu":
            tensor = tensor.to(device)
        return tensor


def _is_contiguous_stride(shape: list[int], stride: Any) -> bool:
    """True when ``stride`` is the C-contiguous layout of ``shape`` (sizes of 0 counted as 1).

    Compared item by item with ``!=``, which for JSON values agrees with comparing lists.
    """
    if type(stride) is not list or len(stride) != len(shape):
        return False
    step = 1
    for i in range(len(shape) - 1, -1, -1):
        if stride[i] != step:
            return False
        step *= shape[i] or 1
    return True


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
    for step, size in sorted(zip(stride, shape)):  # by step, then size
        if size == 1:
            continue
        if step != expected:
            return False
        expected *= size
    return True


# ----------------------------------------------------------------- framing


def send_frame(sock: socket.socket, body: bytes) -> None:
    """Write one length-prefixed frame."""
    sock.sendall(_U64.pack(len(body)) + body)


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
    (length,) = _U64.unpack(recv_exact(sock, 8, deadline))
    if length > max_bytes:
        raise ProtocolError(f"frame of {length} bytes exceeds the cap of {max_bytes}")
    return recv_exact(sock, length, deadline)


def send(sock: socket.socket, value: Any) -> None:
    """Encode and write one frame, its data copied once (into the joined frame), not three times."""
    parts = _encode_parts(value)
    sock.sendall(b"".join([_U64.pack(sum(map(len, parts))), *parts]))


def recv(sock: socket.socket, deadline: float | None = None) -> Any:
    return decode(recv_frame(sock, deadline=deadline))
