"""The wire format's vocabulary, shared by its encoder (``protocol``) and decoder (``decoding``): the
limits every frame is checked against, the dtypes and devices a tensor may have, and the errors."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

import torch

MAX_FRAME_BYTES = 96 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024 * 1024
MAX_TENSOR_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 12
MAX_ITEMS = 20_000
MAX_NDIM = 8
MAX_STRING = 1 << 20
FRAME_LENGTH = struct.Struct(">Q")  # a frame: this many bytes of body follow
HEADER_LENGTH = struct.Struct(">I")  # a body: this many bytes of JSON header, then the buffers

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
