"""Decode one frame body (``protocol.decode``): every field and size validated before anything is allocated.

The peer may be the sandboxed child, which runs student code and may write anything at all into its end
of the socket: a hostile header must raise ``ProtocolError`` before memory is spent on what it claims.
"""

from __future__ import annotations

import json
import math
from itertools import accumulate
from typing import Any

import numpy as np
import torch

from grader.sandbox.wire import (DEVICE, DTYPES, MAX_DEPTH, MAX_HEADER_BYTES, MAX_ITEMS, MAX_NDIM, MAX_STRING,
                                 MAX_TENSOR_BYTES, NUMPY_DTYPES, HEADER_LENGTH, Opaque, ProtocolError)

def decode(body: bytes, *, allow_devices: frozenset[str] = frozenset({"cpu", "meta", "cuda"})) -> Any:
    """Rebuild a value from a frame body, validating every field first."""
    tree, starts, sizes = _read_header(body)
    return _Decoder(body, starts, sizes, allow_devices).value(tree, 0)


def _read_header(body: bytes) -> tuple[Any, list[int], list[int]]:
    """The header's value tree, and each buffer's start and size, all checked against the body."""
    if len(body) < 4:
        raise ProtocolError("frame too short")
    (hlen,) = HEADER_LENGTH.unpack_from(body)
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
