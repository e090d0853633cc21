"""A request's answer, from the student's reply or replayed on trusted code, and how two answers compare.

While a check runs, the student proxy keeps every request it sent to the sandboxed child and the
child's reply. Diagnosis turns a reply into an ``Answer`` (``student_answer``) and replays the same
request in the judge on the reference or a variant (``replay``), with the same inputs and seeds; two
answers agree (``same``) when they raise alike or give the same values within the dtype's tolerance,
dtype, shape and device. ``call_text`` and ``answer_text`` put one request in a sentence, the
evidence a card shows.
"""

from __future__ import annotations

import functools
import hashlib
import re
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Sequence

import torch

from grader.checks.helpers import DEVICE_MISMATCH, TOLERANCES, all_close
from grader.diagnosis import gradients
from grader.sandbox.protocol import DTYPES

Request = tuple[dict[str, Any], dict[str, Any]]  # (message sent to the child, its reply)


@dataclass(frozen=True)
class Answer:
    """What one request gave: an exception kind, or the outputs, which inputs were written into,
    and (for a module) its registered parameters and buffers; for a gradient request the named
    gradients (``gradients``); for a module the weights it ran with (None: some were hidden)."""

    raised: tuple[str, bool, str] | None = None  # (type, device mismatch?, first line with digits as N)
    outputs: tuple[Any, ...] = ()
    modified: tuple[bool, ...] = ()
    structure: tuple[Any, ...] = ()
    grads: gradients.NamedGrads = ()
    weights: tuple[tuple[str, Any], ...] | None = ()

    @functools.cached_property
    def compared(self) -> tuple[tuple[Any, Any], ...]:
        """The outputs as ``same`` compares them, worked out once per answer: a student's answer is held
        against every candidate mistake's, and a mistake's (remembered by the diagnoser) against every
        student's, so the copies to float64 on the CPU are made once, not at each comparison."""
        return tuple(_comparable(x) for x in self.outputs)

    @functools.cached_property
    def compared_weights(self) -> tuple[tuple[str, tuple[Any, Any]], ...] | None:
        """The weights as ``same`` compares them, once per answer (None: some were hidden)."""
        return None if self.weights is None else tuple((n, _comparable(w)) for n, w in self.weights)


VARIES = re.compile(r"0x[0-9a-fA-F]+|(?<=line )\d+")


def _raised(type_name: str, message: str) -> Answer:
    """An exception as evidence: its type, whether it is a device mismatch, and its first line with memory
    addresses and line numbers read as N (they differ between two runs of the same code). The sizes in it stay:
    on the same inputs the same mistake fails on the same sizes, and "(15x8 and 12x12)" is not "(5x12 and 8x12)".
    Which of these count is decided where answers are compared (``same``): the words only where the contract
    asks for no exception."""
    text = VARIES.sub("N", message.splitlines()[0] if message else "")[:100]
    return Answer(raised=(type_name, any(s in message for s in DEVICE_MISMATCH), text))


def _structure(parameters: dict[str, Any], buffers: dict[str, Any]) -> tuple[Any, ...]:
    """Parameter names and shapes; buffer names, shapes and whether state_dict saves them."""
    return (tuple(sorted((n, tuple(p["shape"])) for n, p in parameters.items())),
            tuple(sorted((n, tuple(b["shape"]), bool(b["persistent"])) for n, b in buffers.items())))


def _flat(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _modified(before: Sequence[Any], after: Sequence[Any]) -> tuple[bool, ...]:
    def changed(b: Any, a: Any) -> bool:
        if not isinstance(b, torch.Tensor) or b.device.type == "meta":
            return False
        return not (isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a.cpu(), b.cpu()))
    return tuple(changed(b, a) for b, a in zip(before, after))


def replayable(message: dict[str, Any]) -> bool:
    """A call (with or without a vector-Jacobian product: ``gradients``) or a module probe."""
    return message.get("op") in ("call", "probe")


def student_answer(message: dict[str, Any], reply: dict[str, Any]) -> Answer:
    """The child's reply as an Answer."""
    if not reply.get("ok"):
        return _raised(str(reply.get("type") or reply.get("kind") or "error"), str(reply.get("message", "")))
    if message["op"] == "probe":
        facts = reply.get("facts") or {}
        return Answer(outputs=tuple(facts.get("outputs") or ()),
                      structure=_structure(facts.get("parameters") or {}, facts.get("buffers") or {}),
                      grads=gradients.student_probe_grads(facts) if message.get("cotangent") is not None else (),
                      weights=gradients.student_weights(facts))
    modified = _modified(message["args"], reply.get("args") or []) if message.get("return_args") else ()
    grads = gradients.named_call_grads(message, reply.get("grads")) if message.get("vjp") is not None else ()
    return Answer(outputs=_flat(reply.get("value")), modified=modified, grads=grads)


def replay(module: ModuleType, message: dict[str, Any]) -> Answer:
    """Answer ``message`` with ``module`` (the reference or a variant), in the judge.

    The global RNG is seeded as the child seeds it and restored afterwards,
    so dropout draws the same numbers and the judge's own state is untouched. Autograd runs only
    for a gradient request (``gradients``), as the child ran it.
    """
    wants_grad = gradients.is_gradient_request(message)
    with torch.random.fork_rng(devices=[]), torch.set_grad_enabled(wants_grad), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a variant's deprecation warnings say nothing about the student
        seed = int(message.get("seed", 0))
        torch.default_generator.manual_seed(seed)
        try:
            if message["op"] == "probe":
                torch.default_generator.manual_seed(int(message.get("build_seed", seed)))
                return _probe(module, message, seed)
            value, args, grads = gradients.replay_call(getattr(module, message["fn"]), message)
        except Exception as exc:  # noqa: BLE001 - the variant's exception is the evidence compared
            return _raised(type(exc).__name__, str(exc))
    modified = _modified(message["args"], args) if message.get("return_args") else ()
    return Answer(outputs=_flat(value), modified=modified, grads=grads)


def _probe(module: ModuleType, message: dict[str, Any], seed: int) -> Answer:
    """What ``child.probe`` does, for the outputs and the structure: build, load, move, run each input."""
    built = getattr(module, message["cls"])(*(message.get("args") or []), **(message.get("kwargs") or {}))
    if message.get("params") is not None:
        built.load_state_dict(message["params"], strict=False)
    if message.get("dtype"):
        built = built.to(DTYPES[message["dtype"]])
    if message.get("to"):
        built = built.to(message["to"])
    built.train(message.get("mode", "eval") == "train")
    saved = set(built.state_dict())
    structure = _structure({n: {"shape": p.shape} for n, p in built.named_parameters()},
                           {n: {"shape": b.shape, "persistent": n in saved} for n, b in built.named_buffers()})
    weights = gradients.module_weights(built, gradients.hidden_modules(built))
    outputs, grads = [], ()
    cotangent = message.get("cotangent")
    for i, x in enumerate(message.get("inputs") or []):
        torch.default_generator.manual_seed(seed)  # as ``child.probe``: every forward from the request's state
        run = built.get_submodule(str(message["run"])) if message.get("run") else built
        if i == 0 and cotangent is not None:
            x = x.detach().requires_grad_(True)
            out = run(x)
            grads = gradients.probe_grads(run, x, out, cotangent)
        else:
            out = run(x)
        outputs.append(out.detach() if isinstance(out, torch.Tensor) else out)
    return Answer(outputs=tuple(outputs), structure=structure, grads=grads, weights=weights)


def same(a: Answer, b: Answer, words: bool = True) -> bool:
    """Whether two answers agree: the same exception, or outputs equal within the dtype's tolerance.

    Two exceptions agree by type and device mismatch, and, with ``words``, by their first line (digits
    as N). Words are left out where the contract asks for an exception (the reference raises): then
    the contract asks for a type (``split_heads`` with C % n_heads != 0 raises ``ValueError``) and its
    words are the student's own. Where the contract asks for none, an exception is a failure inside
    running code, and its words say which (a ``ValueError`` from unpacking a tensor into two names is
    not one the student raised; torch raises ``RuntimeError`` for nearly every failure).
    """
    if a.raised or b.raised:
        if a.raised is None or b.raised is None:
            return False
        return a.raised[:2] == b.raised[:2] and (not words or a.raised[2] == b.raised[2])
    if not (a.modified == b.modified and a.structure == b.structure and len(a.outputs) == len(b.outputs)):
        return False
    # A module that ran with other weights than the other's (built in another order, or hidden in a plain
    # list): its values say nothing of the mistake, only their dtype, shape and device do.
    values = a.weights == () == b.weights or _same_weights(a, b)
    return all(_agree(x, y) if values else x[0] == y[0] for x, y in zip(a.compared, b.compared)) and (
        gradients.grads_agree(a.grads, b.grads))


def _same_weights(a: Answer, b: Answer) -> bool:
    """Whether two modules computed with the same weights: both fully seen, the same names, close values.
    Where not (a module built in another order draws the weights a check does not load in another order; one
    in a plain list is never loaded), its outputs' values say nothing of the mistake. Weights equal bit for bit
    (most often: both loaded from the request) agree without their float64 copies (``_identical``)."""
    if a.weights is None or b.weights is None or [n for n, _ in a.weights] != [n for n, _ in b.weights]:
        return False
    return all(_identical(u, v) or _agree(a.compared_weights[i][1], b.compared_weights[i][1])
               for i, ((_, u), (_, v)) in enumerate(zip(a.weights, b.weights)))


def _identical(x: Any, y: Any) -> bool:
    """Two tensors of one dtype, shape and device (not ``meta``) equal element for element, NaN nowhere: ``_agree``
    holds for them whatever the tolerance, so one ``torch.equal`` decides (no copies, no tolerance test)."""
    return (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.dtype == y.dtype and x.shape == y.shape
            and x.device == y.device and x.device.type != "meta" and torch.equal(x, y))


def _comparable(x: Any) -> tuple[Any, Any]:
    """``(key, values)``: a tensor's dtype, shape and device as the key, its values beside it (a float64 NumPy
    array for floating dtypes, the tensor itself for others, None on ``meta``); anything else is its own key."""
    if not isinstance(x, torch.Tensor):
        return (type(x), x), None
    key = ("tensor", x.dtype, tuple(x.shape), x.device.type)
    if x.device.type == "meta":
        return key, None
    data = x.detach().cpu()
    return key, data.double().numpy(force=True) if x.is_floating_point() else data


def _agree(x: tuple[Any, Any], y: tuple[Any, Any]) -> bool:
    (kx, vx), (ky, vy) = x, y
    if kx[0] != "tensor" or ky[0] != "tensor":
        return kx[0] != "tensor" and ky[0] != "tensor" and kx[0] is ky[0] and kx[1] == ky[1]
    if kx != ky:
        return False
    if vx is None:  # meta: nothing but dtype, shape and device to compare
        return True
    if isinstance(vx, torch.Tensor):  # integers, booleans, complex: exactly
        return torch.equal(vx, vy)
    rtol, atol = TOLERANCES.get(kx[1], TOLERANCES[torch.float32])
    return all_close(vx, vy, rtol, atol, equal_nan=True)


def _close(x: Any, y: Any) -> bool:
    """Whether two outputs agree, as ``same`` holds them (one pair, for the sentences below)."""
    return _agree(_comparable(x), _comparable(y))


def request_key(message: dict[str, Any]) -> str:
    """A digest of everything a request hands the code: equal keys, equal answers from trusted code."""
    digest = hashlib.blake2b(digest_size=16)

    def feed(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            digest.update(f"T{value.dtype}{tuple(value.shape)}{value.stride()}{value.device.type}".encode())
            if value.device.type != "meta":
                digest.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(value, dict):
            digest.update(b"{")
            for k in sorted(value, key=str):
                digest.update(repr(k).encode())
                feed(value[k])
            digest.update(b"}")
        elif isinstance(value, (list, tuple)):
            digest.update(b"[")
            for v in value:
                feed(v)
            digest.update(b"]")
        else:
            digest.update(repr(value).encode())

    feed(message)  # the cotangents too: a gradient request's answer is not its plain call's
    return digest.hexdigest()


def call_text(message: dict[str, Any]) -> str:
    def arg(value: Any) -> str:
        if isinstance(value, torch.Tensor):
            return f"{str(value.dtype).removeprefix('torch.')}[{'x'.join(map(str, value.shape))}]"
        return repr(value)[:40]
    name = message.get("fn") or message.get("cls") or "the function"
    args = [arg(a) for a in message.get("args") or []]
    args += [f"{k}={arg(v)}" for k, v in (message.get("kwargs") or {}).items()]
    if message.get("op") == "probe":
        inputs = [arg(x) for x in message.get("inputs") or []]
        return f"`{name}({', '.join(args)})`" + (f" run on {', '.join(inputs)}" if inputs else ", built,")
    return f"`{name}({', '.join(args)})`"


def answer_text(answer: Answer, reference: Answer, as_mistake: bool = True) -> str:
    """'<yours> (as this mistake does); the reference gives <theirs>', at the first place they differ."""
    if not as_mistake:
        return answer_text(answer, reference).replace(", as with this mistake", "").replace(
            "the same answers as this mistake, and not the reference's.", "answers unlike the reference's.")
    if answer.raised:
        return f"{_article(answer.raised[0])} {answer.raised[0]} with your code, as with this mistake; the reference's does not raise."
    if reference.raised:
        return f"a result with your code, as with this mistake; the reference raises {_article(reference.raised[0])} {reference.raised[0]}."
    if len(answer.outputs) != len(reference.outputs):
        return (f"{len(answer.outputs)} value(s) with your code, as with this mistake; the reference returns "
                f"{len(reference.outputs)}.")
    written = [i for i, (mine, theirs) in enumerate(zip(answer.modified, reference.modified)) if mine and not theirs]
    if written:
        return (f"the right values but writes into its argument {written[0] + 1} with your code, as with this mistake; "
                "the reference leaves its inputs unchanged.")
    if answer.structure != reference.structure:
        return ("a module whose parameters or buffers are not the reference's with your code, as with this mistake: "
                f"{_structure_text(answer.structure)} against {_structure_text(reference.structure)}.")
    for i, (mine, theirs) in enumerate(zip(answer.outputs, reference.outputs)):
        if _close(mine, theirs):
            continue
        which = f"output {i}" if len(answer.outputs) > 1 else "the output"
        if not isinstance(mine, torch.Tensor) or not isinstance(theirs, torch.Tensor):
            return f"{which} {mine!r} with your code, as with this mistake; the reference gives {theirs!r}."
        if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
            return (f"{which} of shape {tuple(mine.shape)} and dtype {str(mine.dtype).removeprefix('torch.')} with your "
                    f"code, as with this mistake; the reference gives {tuple(theirs.shape)}, "
                    f"{str(theirs.dtype).removeprefix('torch.')}.")
        if mine.device.type != theirs.device.type:
            return (f"{which} on the {mine.device.type} device with your code, as with this mistake; the reference's "
                    f"is on {theirs.device.type}, the inputs' device.")
        if mine.device.type == "meta":
            break
        g, e = mine.detach().cpu().double(), theirs.detach().cpu().double()
        diff = torch.where(torch.isnan(g) & torch.isnan(e), torch.zeros_like(g), (g - e).abs().nan_to_num(float("inf")))
        where = tuple(int(j) for j in torch.nonzero(diff == diff.max())[0]) if diff.numel() else ()
        # + 0.0: a -0 reads as 0 (the sign of a zero is no part of any answer here)
        return (f"{g[where].item() + 0.0:.4g} at index {where} of {which} with your code, as with this mistake; "
                f"the reference gives {e[where].item() + 0.0:.4g}.")
    return "the same answers as this mistake, and not the reference's."


def _structure_text(structure: tuple[Any, ...]) -> str:
    parameters, buffers = structure if len(structure) == 2 else ((), ())
    names = [n for n, *_ in parameters] + [f"buffer {n}" for n, *_ in buffers]
    return ", ".join(names[:6]) or "none"


def _article(word: str) -> str:
    return "an" if word[:1].upper() in "AEIOU" else "a"
