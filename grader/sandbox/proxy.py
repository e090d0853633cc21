"""The only door from the hidden checks to student code.

Checks write ``student.softmax(x)`` as if the function were local; the proxy
sends the call to the sandboxed child and returns plain data, or raises a
typed error (``errors``). It also offers the two richer requests the checks
need: a call with a vector-Jacobian product, and a self-contained module
probe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from grader.sandbox.client import SubmissionWorker, raise_for_reply
from grader.sandbox.errors import LoadFailed

DEFAULT_SEED = 1234


@dataclass(frozen=True)
class CallResult:
    value: Any
    grads: list[torch.Tensor | None] | None = None
    args_after: list[Any] | None = None


class StudentProxy:
    """Calls into the submission; every value returned is plain data."""

    def __init__(self, worker: SubmissionWorker) -> None:
        self._worker = worker
        self._requests: list[tuple[dict, dict]] = []

    def start_recording(self) -> None:
        """Forget the requests kept so far: the judge calls this as each check starts."""
        self._requests = []

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
            raise LoadFailed(self._worker.load_error)
        return name in self._worker.names

    def call(
        self,
        name: str,
        *args: Any,
        vjp: dict | None = None,
        return_args: bool = False,
        seed: int = DEFAULT_SEED,
        **kwargs: Any,
    ) -> CallResult:
        """Run ``name(*args, **kwargs)`` in the child.

        ``vjp={"wrt": [arg indices], "cotangents": ...}`` also returns the input
        gradients for those cotangents; ``return_args`` returns the inputs as
        they are after the call, to see whether they were modified.
        """
        message = {
            "op": "call",
            "fn": name,
            "args": list(args),
            "kwargs": kwargs,
            "seed": seed,
            "vjp": vjp,
            "return_args": return_args,
        }
        reply = self._worker.request(message, f"`{name}`")
        self._requests.append((message, reply))
        self._raise(reply, name)
        return CallResult(reply.get("value"), reply.get("grads"), reply.get("args"))

    def probe(self, cls: str, *args: Any, seed: int = DEFAULT_SEED, **options: Any) -> dict[str, Any]:
        """Construct ``cls(*args)`` in the child and report facts (see ``child.probe``)."""
        message = {"op": "probe", "cls": cls, "args": list(args), "seed": seed, **options}
        reply = self._worker.request(message, f"`{cls}`")
        self._requests.append((message, reply))
        self._raise(reply, cls)
        facts = reply.get("facts")
        return facts if isinstance(facts, dict) else {}

    def _raise(self, reply: dict, name: str) -> None:
        if reply.get("kind") == "memory":
            reply = {**reply, "message": f"memory limit {self._worker.limits.memory_mib} MiB exceeded"}
        raise_for_reply(reply, name)

