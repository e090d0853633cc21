"""The only door from the hidden checks to student code.

Checks write ``student.softmax(x)`` as if the function were local; the proxy
sends the call to the sandboxed child and returns plain data, or raises a
typed error (``errors``). It also offers the two richer requests the checks
need: a call with a vector-Jacobian product, and a self-contained module
probe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import torch

from grader.sandbox import returned, rng
from grader.sandbox.client import SubmissionWorker, raise_for_reply
from grader.sandbox.errors import LoadFailed


@dataclass(frozen=True)
class CallResult:
    value: Any
    grads: list[torch.Tensor | None] | None = None
    args_after: list[Any] | None = None


class StudentProxy:
    """Calls into the submission; every value returned is plain data, compared with ``returns`` (each
    contract function's declared outputs, assignments.yaml) and followed into the judge's arithmetic
    (``returned``: what it returned is the student's, never an internal error)."""

    def __init__(self, worker: SubmissionWorker, returns: Mapping[str, Sequence[str]] | None = None,
                 contract: Callable[..., returned.Outputs | None] | None = None) -> None:
        self._worker = worker
        self._returns = dict(returns or {})
        self._contract = contract  # the reference's output shapes for given arguments (``returned.contract_outputs``)
        self._requests: list[tuple[dict, dict]] = []
        self._malformed: list[str] = []  # this check's returns that are not of the contract's kind, in words
        self._check, self._salt = "", 0

    def start_recording(self, check: str = "", salt: int = 0) -> None:
        """Forget the requests kept so far, and derive this check's RNG states from ``check`` (its id) and
        ``salt`` (the student's seed, ``grader.seeds``) from now on (``rng``): the judge calls this as each
        check starts."""
        self._requests = []
        self._malformed = []
        self._check, self._salt = check, salt

    def rng_seed(self, stream: int = 0) -> int:
        """The RNG seed a request of the current check on ``stream`` starts from."""
        return rng.derive(self._check, stream, self._salt)

    def malformed(self) -> list[str]:
        """Since ``start_recording``: each return that was not of its contract's kind, in words (``returned``)."""
        return list(self._malformed)

    def recorded(self) -> list[tuple[dict, dict]]:
        """Every (request, reply) since ``start_recording``: what a failed check's diagnosis replays."""
        return list(self._requests)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(name, *args, **kwargs).value

        return call

    def defined(self, name: str) -> bool:
        """Whether the loaded submission defines ``name``; raises LoadFailed if it did not load."""
        self._worker.ensure_started()
        if self._worker.load_error is not None:
            raise LoadFailed(self._worker.load_error, self._worker.where)
        return name in self._worker.names

    def call(
        self,
        name: str,
        *args: Any,
        vjp: dict | None = None,
        return_args: bool = False,
        stream: int = 0,
        **kwargs: Any,
    ) -> CallResult:
        """Run ``name(*args, **kwargs)`` in the child.

        ``vjp={"wrt": [arg indices], "cotangents": ...}`` also returns the input
        gradients for those cotangents; ``return_args`` returns the inputs as
        they are after the call, to see whether they were modified; ``stream``
        another RNG state than the check's own (``rng``: the same request on the
        same stream always gets the same answer).
        """
        message = {
            "op": "call",
            "fn": name,
            "args": list(returned.plain(args)),
            "kwargs": returned.plain(kwargs),
            "seed": self.rng_seed(stream),
            "vjp": vjp,
            "return_args": return_args,
        }
        reply = self._worker.request(message, f"`{name}`")
        self._requests.append((message, reply))
        self._raise(reply, name)
        value = reply.get("value")
        names = self._returns.get(name)
        if names is not None:
            problem = returned.kind_problem(name, value, names)
            if problem and problem not in self._malformed:
                self._malformed.append(problem)
            value = returned.follow(f"`{name}`", value, names, _given(message["args"]))
        return CallResult(value, reply.get("grads"), reply.get("args"))

    def probe(self, cls: str, *args: Any, stream: int = 0, **options: Any) -> dict[str, Any]:
        """Construct ``cls(*args)`` in the child and report facts (see ``child.probe``); ``stream`` as in ``call``,
        for the forwards only: the module is always built in the check's own state, so weights the check does not
        load are the same on every stream."""
        message = {"op": "probe", "cls": cls, "args": list(args), "seed": self.rng_seed(stream),
                   "build_seed": self.rng_seed(0), **returned.plain(options)}
        reply = self._worker.request(message, f"`{cls}`")
        self._requests.append((message, reply))
        self._raise(reply, cls, message)
        facts = reply.get("facts")
        if not isinstance(facts, dict):
            return {}
        if isinstance(facts.get("outputs"), list):  # forward's outputs, followed as a function's are
            facts = {**facts, "outputs": [returned.follow(f"`{cls}` forward", out, ("output",)) for out in facts["outputs"]]}
        return facts

    def _raise(self, reply: dict, name: str, probe: dict | None = None) -> None:
        if reply.get("kind") == "memory":
            reply = {**reply, "message": f"memory limit {self._worker.limits.memory_mib} MiB exceeded"}
        raise_for_reply(reply, name, self._worker.where, self._callee_note(reply, name, probe))

    def _callee_note(self, reply: dict, name: str, probe: dict | None = None) -> str:
        """Where ``name`` raised (in it or deeper) after one of the student's own contract functions returned to it something that is
        not the contract's answer to the same arguments (``callees``): which, and what it returned. '' otherwise:
        a callee that returned the contract's answer is not named. For a module (``probe``: the request that ran it),
        its parts' forwards too: a ``SelfAttentionHead`` that ``MultiHeadAttention`` called as ``head(x)``."""
        reported = reply.get("callees")
        if not isinstance(reported, list) or self._contract is None:
            return ""
        for callee in reported:
            other = callee.get("name") if isinstance(callee, dict) else None
            names = self._returns.get(other) if isinstance(other, str) else None
            args, kwargs = callee.get("args"), callee.get("kwargs")
            part = _part(probe, callee)
            expected = (self._contract(other, list(args), dict(kwargs), **part)
                        if names and isinstance(args, list) and isinstance(kwargs, dict) else None)
            if not names or expected is None:
                continue
            contract = returned.not_the_contracts(callee, expected, names)
            if contract and part:
                return (f"your `{name}` calls your `{other}` ({part['part']['path']}), whose forward returned "
                        f"{str(callee.get('returned'))[:300]}, where the contract's returns {contract} for the same "
                        f"input: fix `{other}` first")
            if contract:
                by = callee.get("by")
                through = f" (through your `{by}`)" if isinstance(by, str) and by not in (name, other) else ""
                return (f"your `{name}` calls your `{other}`{through}, which returned {str(callee.get('returned'))[:300]}, "
                        f"where the contract's `{other}` returns {contract} for the same arguments: fix `{other}` first")
        return ""


def _part(probe: dict | None, callee: dict) -> dict[str, Any]:
    """For a part's forward that a probe reported (``callees.Forwards``): the contract's keyword naming the probe
    that built it and where the part sits; {} for a function (or a forward no probe ran)."""
    if probe is None or not callee.get("forward") or not isinstance(callee.get("path"), str):
        return {}
    keys = ("cls", "args", "kwargs", "dtype", "run")
    return {"part": {**{k: probe.get(k) for k in keys}, "path": callee["path"][:80]}}  # a ModuleDict key may be long


def _given(args: Sequence[Any]) -> str:
    """The tensor arguments' shapes, for a sentence about what a function returned: 'inputs 2x5x4, 2x5x6'."""
    shapes = ["x".join(str(s) for s in a.shape) or "0-d" for a in args if isinstance(a, torch.Tensor)]
    return f"input{'s' if len(shapes) > 1 else ''} {', '.join(shapes)}" if shapes else ""
