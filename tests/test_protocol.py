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


# ------------------------------------------------ the fast paths keep the general rules


@pytest.mark.parametrize("make", [
    lambda: torch.randn(4, 5).T,                                # a permuted layout: rebuilt as it was
    lambda: torch.randn(2, 3, 4).permute(2, 0, 1),
    lambda: torch.randn(3, 2).bfloat16().T,                     # bfloat16 has no numpy dtype
    lambda: torch.randn(2, 3, dtype=torch.complex64).T,
    lambda: torch.randn(1, 6, 1),                               # size-1 dims keep torch's strides
    lambda: torch.randn(6)[:, None],
    lambda: torch.randn(5, 1, 3).transpose(0, 1),
    lambda: torch.tensor(2.5),                                  # 0-dim
    lambda: torch.zeros(2, 0, 3),                               # empty
    lambda: torch.randint(0, 9, (3, 4), dtype=torch.int16).T,
])
def test_layouts_round_trip_with_their_strides(make):
    x = make()
    y = roundtrip(x)
    assert type(y) is torch.Tensor and y.dtype == x.dtype and y.shape == x.shape and y.stride() == x.stride()
    assert torch.equal(y.view(torch.int16) if y.dtype == torch.bfloat16 else y,
                       x.view(torch.int16) if x.dtype == torch.bfloat16 else x)


@pytest.mark.parametrize("make", [
    lambda: torch.randn(3, 8)[:, ::2],      # gapped: sent contiguous
    lambda: torch.randn(3, 1).expand(3, 4),  # overlapping (stride 0): sent contiguous
    lambda: torch.randn(4, 6)[1:, 2:],      # an offset view with gaps
])
def test_other_layouts_arrive_contiguous_with_the_same_values(make):
    x = make()
    y = roundtrip(x)
    assert y.is_contiguous() and torch.equal(x, y)


def test_decoded_tensors_own_their_memory_and_never_require_grad():
    x = torch.randn(3, requires_grad=True)
    body = protocol.encode([x, x])
    a, b = protocol.decode(body)
    assert not a.requires_grad and torch.equal(a, x.detach())
    a += 1  # writable, and shared with nothing: not the other tensor, not the frame
    assert torch.equal(b, x.detach()) and torch.equal(protocol.decode(body)[0], x.detach())


def test_plain_values_keep_their_types():
    value = [1, -0.0, 2.5, None, True, "s", (1, [2, (3,)]), {"k": [None, "v"]}, [], (), {},
             1 << 63, float("nan"), float("inf")]
    out = roundtrip(value)
    assert out[:12] == [1, -0.0, 2.5, None, True, "s", (1, [2, (3,)]), {"k": [None, "v"]}, [], (), {}, float(1 << 63)]
    assert [type(v) for v in out[:12]] == [int, float, float, type(None), bool, str, tuple, dict, list, tuple, dict, float]
    assert out[12] != out[12] and out[13] == float("inf")


def test_subclasses_of_builtins_follow_the_general_rules():
    import enum

    class L(list):
        pass

    class D(dict):
        pass

    class S(str):
        pass

    class Color(enum.IntEnum):
        RED = 3

    out = roundtrip([L([1, "a"]), D(k=(2,)), S("s"), Color.RED, {1: "not a str key"}])
    assert out[:4] == [[1, "a"], {"k": (2,)}, "s", 3] and type(out[0]) is list and type(out[1]) is dict
    assert isinstance(out[4], protocol.Opaque) and out[4].type_name == "builtins.dict"


@pytest.mark.parametrize("nest", [lambda v: [v], lambda v: (v,), lambda v: {"k": v}])
@pytest.mark.parametrize("leaf", ["s", None, 1, torch.zeros(1)])
def test_depth_limit_holds_for_leaves_taken_without_a_call(nest, leaf):
    deepest = leaf
    for _ in range(protocol.MAX_DEPTH):
        deepest = nest(deepest)
    protocol.decode(protocol.encode(deepest))  # the leaf at MAX_DEPTH is fine
    with pytest.raises(protocol.ProtocolError, match="nested too deeply"):
        protocol.encode(nest(deepest))
    empty = []
    for _ in range(protocol.MAX_DEPTH):
        empty = nest(empty)
    assert roundtrip(empty) == empty  # an empty list at MAX_DEPTH has no item to be too deep


def test_too_many_items_are_refused():
    with pytest.raises(protocol.ProtocolError, match="too deep or too large"):
        protocol.decode(_frame({"value": [0] * protocol.MAX_ITEMS, "buffers": []}))
    assert len(protocol.decode(_frame({"value": [0] * (protocol.MAX_ITEMS - 1), "buffers": []}))) == protocol.MAX_ITEMS - 1


def _raw_frame(header: bytes, data: bytes = b"") -> bytes:
    return struct.pack(">I", len(header)) + header + data


@pytest.mark.parametrize("body", [
    # fields of types JSON allows but the format does not: refused, not a TypeError in the judge
    _frame({"value": {"__tensor__": True, "dtype": ["float32"], "shape": [1], "device": "cpu", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": {"a": 1}, "shape": [1], "device": "cpu", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    # an int JSON parses but Python will not convert (over 4300 digits): refused, not a ValueError
    _raw_frame(b'{"value": ' + b"9" * 5000 + b', "buffers": []}'),
    _raw_frame(b'{"value": 1, "buffers": []} {}'),             # trailing data
    _raw_frame(b'{"value": "\xff", "buffers": []}'),            # not UTF-8
    _raw_frame(b'{"value": "\xed\xa0\x80", "buffers": []}'),    # an encoded surrogate is not UTF-8 either
    _raw_frame(b'{"value": ' + b"[" * 100_000 + b"]" * 100_000 + b', "buffers": []}'),
    _frame({"value": 1, "buffers": [0] * (protocol.MAX_ITEMS + 1)}),  # more buffers than a value can hold tensors
    _frame({"value": 1, "buffers": [True]}),
    _frame({"value": 1, "buffers": [4]}, b"\0" * 3),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [1], "device": "cpu", "buffer": 1}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [1.0], "device": "cpu", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [True], "device": "cpu", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [1] * 9, "device": "cpu", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [0, 10**30], "device": "meta", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [1], "device": None, "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": {"__tensor__": True, "dtype": "float32", "shape": [1], "device": "tpu", "buffer": 0}, "buffers": [4]}, b"\0" * 4),
    _frame({"value": "x" * (protocol.MAX_STRING + 1), "buffers": []}),
    _frame({"value": {"__float__": "1e999"}, "buffers": []}),
    _frame({"value": {"__tuple__": "not a list"}, "buffers": []}),
])
def test_hostile_headers_are_refused_as_protocol_errors(body):
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(body)


def test_a_header_json_loads_accepts_is_still_accepted():
    assert protocol.decode(_raw_frame(b' \n{"value": [1, NaN], "buffers": []}\t ')) == [1, pytest.approx(float("nan"), nan_ok=True)]


def test_devices_outside_the_allow_list_are_refused_before_reading():
    body = protocol.encode(torch.zeros(2))
    with pytest.raises(protocol.ProtocolError, match="'cpu' not allowed"):
        protocol.decode(body, allow_devices=frozenset({"meta"}))
    meta = protocol.encode(torch.empty(2, device="meta"))
    with pytest.raises(protocol.ProtocolError, match="'meta' not allowed"):
        protocol.decode(meta, allow_devices=frozenset({"cpu"}))


@pytest.mark.parametrize("size", [0, 10, 300_000])  # one recv, and (over 1 MiB) several
def test_send_and_recv_frame_values_through_a_socket(size):
    import socket
    import threading
    import time

    value = {"t": torch.arange(size, dtype=torch.float32), "s": "x" * 3, "n": (1, None)}
    a, b = socket.socketpair()
    with a, b:
        writer = threading.Thread(target=protocol.send, args=(a, value))
        writer.start()
        out = protocol.recv(b, deadline=time.monotonic() + 30)
        writer.join()
    assert torch.equal(out["t"], value["t"]) and out["s"] == "xxx" and out["n"] == (1, None)
