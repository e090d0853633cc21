"""Requests as the checks record them, answered by the child's own request handlers run in-process on
trusted source the tests write (a reference variant, a corpus alternative): the replies a sandboxed child
would send, without a sandbox, so families of variants can be diagnosed quickly.

Used by tests/test_module_evidence.py and tests/test_gradient_evidence.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from grader.diagnosis.catalogue import module_from_source
from grader.diagnosis.diagnose import CheckEvidence, Diagnoser
from grader.sandbox import child

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = {"attention": ROOT / "solutions" / "attention.py",
             "attention-modules": ROOT / "solutions" / "attention_modules.py"}
D_MODEL, HEAD, CTX, N_HEADS, B, T = 12, 5, 8, 3, 2, 6
MODULE_ARGS = {"SelfAttentionHead": (D_MODEL, HEAD, CTX), "MultiHeadAttention": (D_MODEL, N_HEADS, CTX)}


def namespace(source: str, name: str) -> dict[str, Any]:
    """Trusted source run as the child would hold the submission."""
    return vars(module_from_source(source, name))


def answered(ns: dict[str, Any], message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(message, reply) as the proxy records it; the reply from the child's own handler."""
    handler = child.probe if message["op"] == "probe" else child.call
    return message, handler(ns, message)


def randn(*shape: int, seed: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def function_requests(ns: dict[str, Any], fn: str, args: list[Any], wrt: list[int], seed: int) -> list:
    """A plain call and a gradient call of ``fn`` (cotangents drawn for the reference's output shapes)."""
    reference = module_from_source(REFERENCE["attention"].read_text(), "_ref_for_cotangents")
    out = getattr(reference, fn)(*args)
    outs = out if isinstance(out, tuple) else (out,)
    cots = tuple(randn(*o.shape, seed=seed + 100 + i) * torch.isfinite(o) for i, o in enumerate(outs))
    plain = {"op": "call", "fn": fn, "args": list(args), "kwargs": {}, "seed": seed, "vjp": None, "return_args": False}
    grad = {**plain, "vjp": {"wrt": list(wrt), "cotangents": cots}}
    return [answered(ns, plain), answered(ns, grad)]


def reference_params(cls: str, seed: int) -> dict[str, torch.Tensor]:
    """The reference module's weights (as ``spec.params`` hands them to a probe)."""
    reference = module_from_source(REFERENCE["attention-modules"].read_text(), "_ref_for_params")
    torch.manual_seed(seed)
    return {k: v.clone() for k, v in getattr(reference, cls)(*MODULE_ARGS[cls], 0.0).state_dict().items()}


def module_requests(ns: dict[str, Any], cls: str, seed: int) -> list:
    """What the module checks ask: built only, run with the reference's weights, run with no weights loaded,
    and the gradient probe (float64, a cotangent for the first input)."""
    args = [*MODULE_ARGS[cls], 0.0]
    out = HEAD if cls == "SelfAttentionHead" else D_MODEL
    x = randn(B, T, D_MODEL, seed=seed, dtype=torch.float32)
    base = {"op": "probe", "cls": cls, "args": args, "seed": seed, "build_seed": seed + 1}
    params = reference_params(cls, seed)
    return [answered(ns, dict(base)),
            answered(ns, {**base, "params": params, "inputs": [x, x[:, :3]]}),
            answered(ns, {**base, "inputs": [x]}),
            answered(ns, {**base, "params": params, "dtype": "float64", "inputs": [x.double()],
                          "cotangent": randn(B, T, out, seed=seed + 7)})]


def diagnosed(assignment: str, exercise: str, requests: list, mistakes: tuple = ()) -> list:
    """The matches a failed check of ``exercise`` holding ``requests`` gets, with the catalogue's ``mistakes``
    only (no generated variants: what is named comes from them or from the answers themselves)."""
    diagnoser = Diagnoser(REFERENCE[assignment], mistakes, assignment=assignment)
    (found,) = diagnoser.diagnose([CheckEvidence(exercise, "failed", (), tuple(requests))])
    return found
