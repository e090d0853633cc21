"""Expected values as data: what the reference answered inside each visible check.

The checks ask the ``reference`` fixture for expected values. In the course
repository that fixture is the reference solution itself. A student kit
(``grader release``) must run the visible checks without it, so the release
grades the reference once with a ``Recorder`` in its place, which keeps every
question a check asked and the answer it got, per check; the kit ships that
as JSON, and ``Tape`` answers the same questions from it.

Only what visible checks ask is recorded, so nothing about the hidden checks
or the reference's code reaches students. A question the tape cannot answer
(new inputs, a gradient through the reference) raises ``TapeMiss``: the check
ends as the grader's error, never as the student's failure.

Questions are matched by name and inputs, not by their order, and floating
inputs match within a tight tolerance: a student's BLAS may round a float64
product in the last bit differently than the instructor's did.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import torch

FORMAT = 1
ALLOWED_MODULE_METHODS = ("double", "float", "eval", "train", "named_parameters")


class TapeMiss(Exception):
    """A check asked the recorded reference something the release did not record."""


class TapeUnsupported(Exception):
    """A visible check uses the reference in a way that cannot be recorded as data."""


# --- encoding: JSON that is byte-identical for identical values --------------------------------------

def encode(value: Any) -> Any:
    """A JSON-able form of a check's argument or a reference's answer."""
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        return {"tensor": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
                "data": base64.b64encode(raw).decode("ascii")}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[str(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TapeUnsupported(f"cannot record a value of type {type(value).__name__}")


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "tensor" in data:
        dtype = getattr(torch, data["tensor"])
        raw = bytearray(base64.b64decode(data["data"]))
        flat = torch.frombuffer(raw, dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
        return flat.view(dtype).reshape(data["shape"]).clone()
    if "tuple" in data:
        return tuple(decode(v) for v in data["tuple"])
    if "dict" in data:
        return {k: decode(v) for k, v in data["dict"]}
    if "dtype" in data:
        return getattr(torch, data["dtype"])
    if "device" in data:
        return torch.device(data["device"])
    raise TapeMiss(f"unknown recorded value {sorted(data)}")


def digest(value: Any) -> Any:
    """What the tape keeps of a check's inputs: enough to tell them apart, far less than the data.

    A tensor becomes its dtype, shape, counts of NaN/±inf, and sums of its
    finite values: plain, squared and with fixed pseudo-random weights per
    position (a swapped or changed entry changes that one).
    """
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().reshape(-1).to(torch.float64)
        finite = torch.isfinite(t)
        x = torch.where(finite, t, torch.zeros_like(t))
        weights = (torch.arange(t.numel(), dtype=torch.float64) * 0.6180339887498949) % 1.0 + 0.5
        return {"digest": str(value.dtype).removeprefix("torch."), "shape": list(value.shape),
                "nan": int(torch.isnan(t).sum()), "posinf": int((t == float("inf")).sum()),
                "neginf": int((t == float("-inf")).sum()),
                "sums": [float(x.sum()), float((x * x).sum()), float((x * weights).sum())]}
    if isinstance(value, (tuple, list)):
        return [digest(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[str(k), digest(v)] for k, v in sorted(value.items())]}
    return encode(value)


def same_inputs(recorded: Any, actual: Any) -> bool:
    """The recorded digest and the actual inputs' agree; sums within rtol 1e-9 (module docstring)."""
    return _agree(recorded, digest(actual))


def _agree(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and "digest" in a:
        if not (isinstance(b, dict) and all(a[k] == b.get(k) for k in ("digest", "shape", "nan", "posinf", "neginf"))):
            return False
        scale = max(1.0, *(abs(v) for v in a["sums"]))
        return all(abs(x - y) <= 1e-9 * scale for x, y in zip(a["sums"], b["sums"]))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b))
    return a == b


def rng_fingerprint() -> str:
    """The CPU generator's state: a module built after ``torch.manual_seed(s)`` is known by it."""
    return hashlib.sha256(torch.random.get_rng_state().numpy().tobytes()).hexdigest()[:16]


def _module_dtype(module: torch.nn.Module) -> str:
    first = next(iter(module.parameters()), None)
    return str(first.dtype).removeprefix("torch.") if first is not None else "float32"


# --- recording (the instructor's machine, during `grader release`) ---------------------------------

@dataclass
class Recorder:
    """Stands in for the reference while the release grades it: keeps every answer, per check."""

    module: ModuleType
    checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # A release refuses gradients through the reference (a tape cannot replay them); a scan of
    # what every check asks, hidden ones included, lets them through and records the outputs.
    gradients: bool = False

    def for_check(self, check_id: str) -> RecordingReference:
        return RecordingReference(self.module, self.checks.setdefault(check_id, []), self.gradients)

    def to_json(self) -> str:
        kept = {k: v for k, v in sorted(self.checks.items()) if v}
        return json.dumps({"format": FORMAT, "checks": kept}, sort_keys=True, separators=(",", ":")) + "\n"


class RecordingReference:
    """The reference module as one check sees it: its functions and classes, recorded."""

    def __init__(self, module: ModuleType, log: list[dict[str, Any]], gradients: bool = False) -> None:
        self._module, self._log, self._gradients = module, log, gradients

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._module, name)
        if isinstance(target, type) and issubclass(target, torch.nn.Module):
            return lambda *args: self._construct(name, target, args)
        if callable(target):
            return lambda *args, **kwargs: self._call(name, target, args, kwargs)
        raise TapeUnsupported(f"a visible check reads `{name}` of the reference, which is not a function or a module")

    def _call(self, name: str, fn: Any, args: tuple, kwargs: dict) -> Any:
        with torch.set_grad_enabled(self._gradients and torch.is_grad_enabled()):
            result = fn(*args, **kwargs)
        self._log.append({"kind": "call", "name": name, "args": digest(list(args)),
                          "kwargs": digest(kwargs), "result": encode(result)})
        return result

    def _construct(self, name: str, cls: type, args: tuple) -> RecordingModule:
        rng = rng_fingerprint()
        module = cls(*args)
        entry = {"kind": "module", "name": name, "args": digest(list(args)), "rng": rng,
                 "params": encode({k: v for k, v in module.named_parameters()}), "forwards": []}
        self._log.append(entry)
        return RecordingModule(module, entry["forwards"], self._gradients)


class RecordingModule:
    """A reference module that records each forward; only the methods the checks may use."""

    def __init__(self, module: torch.nn.Module, forwards: list[dict[str, Any]], gradients: bool = False) -> None:
        self._module, self._forwards, self._gradients = module, forwards, gradients

    def __getattr__(self, name: str) -> Any:
        if name not in ALLOWED_MODULE_METHODS:
            raise TapeUnsupported(f"a visible check uses `.{name}` of a reference module; only "
                                  f"{', '.join(ALLOWED_MODULE_METHODS)} and calling it can be recorded")
        method = getattr(self._module, name)
        if name in ("double", "float", "eval", "train"):
            def chained(*args: Any) -> RecordingModule:
                method(*args)
                return self
            return chained
        return method

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and x.requires_grad and not self._gradients:
            raise TapeUnsupported("a visible check takes a gradient through a reference module; "
                                  "gradients cannot be recorded (make that check hidden)")
        out = self._module(x)
        self._forwards.append({"x": digest(x), "training": self._module.training,
                               "dtype": _module_dtype(self._module), "out": encode(out)})
        return out


# --- replay (the student kit) ------------------------------------------------------------------

class Tape:
    """The recorded answers of one assignment's visible checks."""

    def __init__(self, checks: dict[str, list[dict[str, Any]]]) -> None:
        self._checks = checks

    @classmethod
    def load(cls, path: Path) -> Tape:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise TapeMiss(f"{path.name} has format {data.get('format')!r}; this grader reads format {FORMAT}")
        return cls(data["checks"])

    def for_check(self, check_id: str) -> ReplayReference:
        return ReplayReference(check_id, self._checks.get(check_id, []))


class ReplayReference:
    """Answers one check's questions from the tape, the way the reference did."""

    def __init__(self, check_id: str, log: list[dict[str, Any]]) -> None:
        self._check_id, self._log = check_id, log

    def __getattr__(self, name: str) -> Any:
        entries = [e for e in self._log if e["name"] == name]
        if entries and entries[0]["kind"] == "module":
            return lambda *args: self._construct(name, entries, args)
        return lambda *args, **kwargs: self._call(name, entries, args, kwargs)

    def _miss(self, what: str) -> TapeMiss:
        return TapeMiss(f"the visible check {self._check_id} asked for {what}, which this release did not "
                        "record (the kit and the course's grader differ; ask course staff for a new release)")

    def _call(self, name: str, entries: list[dict[str, Any]], args: tuple, kwargs: dict) -> Any:
        # The question's digest once, not once per recorded entry: a check's log holds every input it asked.
        asked_args, asked_kwargs = digest(list(args)), digest(kwargs)
        for entry in entries:
            if _agree(entry["args"], asked_args) and _agree(entry["kwargs"], asked_kwargs):
                return decode(entry["result"])
        raise self._miss(f"`{name}` on inputs it did not record")

    def _construct(self, name: str, entries: list[dict[str, Any]], args: tuple) -> ReplayModule:
        rng = rng_fingerprint()
        # The same seed and arguments build the same module: a check may build it more than once.
        asked = digest(list(args))
        same = [e for e in entries if e["rng"] == rng and _agree(e["args"], asked)]
        if not same:
            raise self._miss(f"a `{name}` built with other arguments or another seed")
        forwards = [f for e in same for f in e["forwards"]]
        return ReplayModule(decode(same[0]["params"]), forwards, lambda: self._miss(f"a forward of `{name}`"))


class ReplayModule:
    """A reference module from the tape: its weights, and the outputs recorded for its inputs."""

    def __init__(self, params: dict[str, torch.Tensor], forwards: list[dict[str, Any]], miss: Any) -> None:
        self._params, self._forwards, self._miss = params, forwards, miss
        self._dtype, self.training = "float32", True

    def double(self) -> ReplayModule:
        self._dtype = "float64"
        return self

    def float(self) -> ReplayModule:
        self._dtype = "float32"
        return self

    def eval(self) -> ReplayModule:
        self.training = False
        return self

    def train(self, mode: bool = True) -> ReplayModule:
        self.training = mode
        return self

    def named_parameters(self) -> Iterator[tuple[str, torch.Tensor]]:
        for name, value in self._params.items():
            yield name, value.to(getattr(torch, self._dtype))

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and x.requires_grad:
            raise self._miss()
        asked = digest(x)
        for entry in self._forwards:
            if entry["training"] == self.training and entry["dtype"] == self._dtype and _agree(entry["x"], asked):
                return decode(entry["out"])
        raise self._miss()
