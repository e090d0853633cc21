"""The wire format carries plain data only, and checks every size before allocating."""

from __future__ import annotations

import json
import struct

import pytest
import torch

from grader.sandbox import protocol


def roundtrip(value):
    return protocol.decode(protocol.encode(value))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool, torch.int64])
def test_tensors_round_trip_exactly(dtype):
    x = (torch.randn(2, 3, 4) * 3).to(dtype)
    y = roundtrip(x)
    assert type(y) is torch.Tensor and y.dtype == dtype and torch.equal(x, y)


def test_non_contiguous_layout_is_rebuilt():
    x = torch.randn(4, 5).T
    y = roundtrip(x)
    assert torch.equal(x, y) and y.stride() == x.stride() and not y.is_contiguous()


def test_meta_and_nested_values():
    value = {"a": (torch.empty(2, 3, device="meta"), [1, 2.5, None, True, "s"]), "b": float("-inf")}
    out = roundtrip(value)
    assert out["a"][0].device.type == "meta" and out["a"][1] == [1, 2.5, None, True, "s"] and out["b"] == float("-inf")


def test_subclass_is_reduced_to_a_plain_tensor():
    class Liar(torch.Tensor):
        def __eq__(self, other):  # noqa: D105
            return True

    x = torch.arange(3.0).as_subclass(Liar)
    y = roundtrip(x)
    assert type(y) is torch.Tensor and torch.equal(y, torch.arange(3.0))


def test_unknown_objects_become_opaque_descriptions():
    import numpy as np

    out = roundtrip([np.zeros(3), object()])
    assert isinstance(out[0], protocol.Opaque) and out[0].type_name == "numpy.ndarray"


def _frame(header: dict, data: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack(">I", len(raw)) + raw + data


@pytest.mark.parametrize("body", [
    b"",
    _frame({"value": 1}),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [10**6, 10**6], "device": "cpu", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [2], "device": "cpu", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": "object", "shape": [1], "device": "cpu", "buffer": 0}, "buffers": [8]}, b"\0" * 8),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [1], "device": "cuda:0; rm", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__pickle__": "gASVAAAA"}, "buffers": []}),
    _frame({"value": [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]], "buffers": []}),
])
def test_malformed_frames_are_refused(body):
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(body)


def test_oversized_frame_length_is_refused_before_reading():
    import socket

    a, b = socket.socketpair()
    a.sendall(struct.pack(">Q", protocol.MAX_FRAME_BYTES + 1))
    with pytest.raises(protocol.ProtocolError, match="exceeds the cap"):
        protocol.recv_frame(b)
