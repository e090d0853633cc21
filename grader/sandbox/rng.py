"""One RNG state per request: a student's randomness is repeatable, and read only where it is the property.

Every call the judge makes into student code starts from an RNG state derived
from three things: the check that makes it, a stream number the check chooses
(0 unless it asks for another state on purpose), and the student's seed of
hidden inputs. So

* the same request in the same check always gets the same answer: code with
  dropout left on, or ``torch.randn`` noise, gives one answer per request, not
  a new one per call;
* requests of one check share a state unless the check asks otherwise, so a
  property judged by comparing the student's code with itself (causality, the
  gradient against finite differences, float32 against float64, the gate's
  other inputs) sees the same noise on both sides and is not fooled by it;
* the properties about randomness itself (dropout off in eval mode, on in
  training mode) ask for two streams and compare them.

Inside a probe every forward starts from the request's state, so one input run
twice in one probe gives the same output twice.

The child calls ``reset`` before each call and forward; diagnosis replays a
recorded request in the judge with the same ``reset`` of torch's generator.
"""

from __future__ import annotations

import hashlib
import random
import sys

import torch

SEED_BITS = 63  # torch accepts seeds below 2**64; Python's random any int; NumPy's legacy seed below 2**32


def derive(check: str, stream: int = 0, salt: int = 0) -> int:
    """The RNG seed of a request: from the check's id, the stream the check asked for, the student's seed."""
    digest = hashlib.sha256(f"{check}\0{stream}\0{salt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def reset(seed: int) -> None:
    """Put every RNG student code may draw from in the state ``seed`` names.

    Not ``torch.manual_seed``: it also queues seeds for CUDA, XPU and MTIA with a
    formatted stack trace each (~100 us a call, measured: a third of a trivial
    request). The CPU generator is seeded directly; CUDA only once a request has
    brought CUDA tensors in (CUDA initialises lazily in the child, never in the
    server); NumPy only where the submission imported it (importing it here would
    cost every request).
    """
    torch.default_generator.manual_seed(seed)
    if torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)
