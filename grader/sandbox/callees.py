"""In the child: what the submission's own functions returned to the function the judge called.

A caller whose code is right can still raise on what its callee returned: a correct
``multi_head_attention`` multiplies by ``w_o`` whatever the student's ``attention`` gave it. The error is
the caller's (its line raised), but the student should read where the value came from. So while the
judge's call runs, ``Callees`` keeps, for each of the submission's top-level functions that the called
function calls (directly or through another of them), the last call's arguments (shapes and dtypes, as
plain data), its caller, and what it returned. When the called function itself then raises, the reply carries them; the judge works out the
contract's answer to the same arguments (``returned.contract_outputs``) and names a callee only where
what it returned is not that.
"""

from __future__ import annotations

import dis
import sys
from types import FrameType
from typing import Any, Callable

import torch

from grader.sandbox import returned

MAX_CALLEES = 32  # distinct functions kept (a contract has a dozen; the rest are helpers of helpers)
VARARGS, VARKEYWORDS = 0x04, 0x08  # CPython's code flags: the function takes *args, **kwargs
RETURNS = frozenset(dis.opmap[op] for op in ("RETURN_VALUE", "RETURN_CONST") if op in dis.opmap)


def plain_facts(value: Any) -> Any:
    """An argument or an output as plain data: a tensor's shape and dtype; a number, bool, string or None as it
    is; anything else its type's name."""
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch.")}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, torch.device):
        return str(value)
    return {"type": type(value).__name__}


class Callees:
    """A profile hook for the duration of one call of ``top``, a function of the submission in ``filename``: what the
    submission's other functions returned while it ran."""

    def __init__(self, top: Callable[..., Any], filename: str) -> None:
        self._top = getattr(top, "__code__", None)
        self._filename = filename
        self._seen: dict[Any, dict[str, Any]] = {}  # by code object: two functions may share a name
        self._returns = 0  # returns seen so far: the callees are reported in the order they returned
        self._previous: Any = None

    def __enter__(self) -> Callees:
        if self._top is not None:
            self._previous = sys.getprofile()
            sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._top is not None:
            sys.setprofile(self._previous)

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        back, code = frame.f_back, frame.f_code
        if back is None or code is self._top or code.co_filename != self._filename:
            return
        if code.co_name.startswith("<"):  # a comprehension or lambda: not a helper (what it calls may be)
            return
        if event == "call":
            if code in self._seen or len(self._seen) < MAX_CALLEES:
                while back is not None and back.f_code.co_name.startswith("<"):  # a comprehension's caller is its function's
                    back = back.f_back
                by = back.f_code.co_name if back is not None and back.f_code.co_filename == self._filename else None
                self._seen[code] = {**_arguments(code, frame.f_locals), "by": by}
        elif code in self._seen and _returned(frame):
            self._returns += 1
            self._seen[code].update(value=arg, order=self._returns)
        elif code in self._seen:
            self._seen[code].pop("value", None)  # it raised: it returned nothing

    def facts(self, namespace: dict[str, Any], raised_in: str | None) -> dict[str, Any]:
        """``{"callees": [...]}`` when the call raised in the submission's code (``raised_in``: the innermost of its
        functions on the way, None where it raised in none) after some of its top-level functions returned to
        the called one; ``{}`` otherwise. Each: name, caller, arguments, what it returned (in words, and each
        output's shape and dtype), in the order they returned: the first not the contract's is where a wrong
        value began."""
        if self._top is None or raised_in is None:
            return {}
        found = []
        for code, seen in self._seen.items():
            name = code.co_name
            if "value" not in seen or getattr(namespace.get(name), "__code__", None) is not code:
                continue  # not one of the submission's top-level functions (a nested helper, a method)
            try:
                value = seen["value"]
                outputs = value if isinstance(value, (tuple, list)) else (value,)
                found.append({"name": name, "by": seen["by"], "order": seen["order"], "args": seen["args"], "kwargs": seen["kwargs"],
                              "returned": returned.describe(value)[:300], "kind": type(value).__name__,
                              "outputs": [plain_facts(o) for o in outputs][:8]})
            except Exception:  # noqa: BLE001 - a value the submission made may refuse to be described
                continue
        return {"callees": sorted(found, key=lambda c: c["order"])} if found else {}


def _arguments(code: Any, local: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as plain facts, read from its frame as it starts: the named positional ones then any
    ``*args`` in order, and the keyword-only ones and any ``**kwargs`` by name."""
    names = code.co_varnames
    positional = [plain_facts(local.get(n)) for n in names[:code.co_argcount]]
    at = code.co_argcount + code.co_kwonlyargcount
    keywords = {n: plain_facts(local.get(n)) for n in names[code.co_argcount:at]}
    if code.co_flags & VARARGS:
        positional += [plain_facts(a) for a in tuple(local.get(names[at]) or ())[:16]]
        at += 1
    if code.co_flags & VARKEYWORDS:
        keywords.update({str(k): plain_facts(v) for k, v in dict(local.get(names[at]) or {}).items()})
    return {"args": positional, "kwargs": keywords}


def _returned(frame: FrameType) -> bool:
    """Whether a frame that ends returned (its last instruction a return), rather than passed an exception on: a
    profile hook sees both as 'return', with ``None`` for the exception."""
    code = frame.f_code.co_code
    return 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] in RETURNS


class Forwards:
    """While a probe runs ``root``'s forward: what each of its submodules whose class the submission defines (a
    ``SelfAttentionHead`` in ``heads.0``) returned from its forward, called through nn.Module (``head(x)``), which
    the profile hook of ``Callees`` does not follow into. Forward hooks, removed on exit; one only fires on a
    forward that returned, so a part that raised is never reported as having returned."""

    def __init__(self, root: torch.nn.Module, namespace: dict[str, Any]) -> None:
        self._root = type(root).__name__
        self._parts = [(path, m) for path, m in root.named_modules()
                       if path and namespace.get(type(m).__name__) is type(m)][:MAX_CALLEES]
        self._seen: dict[str, dict[str, Any]] = {}
        self._handles: list[Any] = []

    def __enter__(self) -> Forwards:
        self._seen.clear()  # each forward of the probe starts afresh: only the one that raised is reported
        for path, module in self._parts:
            try:
                self._handles.append(module.register_forward_hook(self._hook(path), with_kwargs=True))
            except Exception:  # noqa: BLE001 - a part that refuses a hook is not followed; it is still graded
                continue
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _hook(self, path: str) -> Callable[..., None]:
        def record(module: torch.nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
            self._seen.pop(path, None)  # reported in the order they returned: the last call's place
            self._seen[path] = {"name": type(module).__name__, "path": path, "by": self._root, "value": output,
                                "args": [plain_facts(a) for a in args[:16]],
                                "kwargs": {str(k): plain_facts(v) for k, v in kwargs.items()}}
        return record

    def facts(self, raised_in: str | None) -> dict[str, Any]:
        """``{"callees": [...]}`` as ``Callees.facts`` gives them, each with the part's ``path`` and ``forward``
        set, where the forward raised in the submission's code after some of its parts returned; ``{}`` else."""
        if raised_in is None:
            return {}
        found = []
        for order, seen in enumerate(self._seen.values(), 1):
            try:
                value = seen["value"]
                outputs = value if isinstance(value, (tuple, list)) else (value,)
                found.append({**{k: v for k, v in seen.items() if k != "value"}, "order": order, "forward": True,
                              "returned": returned.describe(value)[:300], "kind": type(value).__name__,
                              "outputs": [plain_facts(o) for o in outputs][:8]})
            except Exception:  # noqa: BLE001 - a value the submission made may refuse to be described
                continue
        return {"callees": found} if found else {}
