"""The sandboxed child: the only process that ever runs student code.

Forked from the warm server, it locks itself down (``layers.apply_layers``),
loads the submission from source the judge sends, then answers requests:

* ``call``  - run one student function on given inputs (optionally with a
  vector-Jacobian product and the inputs sent back, to see mutation);
* ``probe`` - construct a student module, load given weights, run it and
  report plain facts (outputs, buffers, state_dict, devices).

Every reply is plain data (``protocol``). The child makes no judgments:
whatever it says is only evidence the judge weighs, so a submission that
tampers with this module can spoil its own evidence, never forge a verdict.
"""

from __future__ import annotations

import __future__
import os
import socket
import sys
import types
from traceback import extract_tb, format_list  # bound now: a submission may replace the module's functions
from typing import Any, Callable, Iterator

import torch

from grader.sandbox import callees, layers, protocol, rng, trace, workspace
from grader.sandbox.vjp import vjp as _vjp

MAX_TRACEBACK = 2000
# The compiler flags of every `from __future__` feature (distinct bits): what a unit passes on to the next.
FUTURE_FLAGS = sum({getattr(__future__, name).compiler_flag for name in __future__.all_feature_names})


def main(sock: socket.socket, out_fd: int, policy: layers.ChildPolicy, threads: int = 1) -> None:
    """Entry point after fork; never returns."""
    code = 0
    try:
        os.setpgid(0, 0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        layers.close_inherited_fds(keep=(0, 1, 2, sock.fileno()))
        if policy.scratch_dir:
            os.chdir(policy.scratch_dir)
        trim_sys_path()
        active = layers.apply_layers(policy)
        workspace.enter(policy.scratch_dir)  # after the layers: the folders go on the scratch tmpfs they mount
        torch.set_num_threads(max(1, threads))
        torch.backends.cuda.matmul.allow_tf32 = False  # GPU parity is judged at float32 tolerances
        torch.backends.cudnn.allow_tf32 = False
        serve(sock, active)
    except BaseException:  # noqa: BLE001 - the child must end via os._exit, whatever happened
        code = 71
    finally:
        os._exit(code)


def trim_sys_path() -> None:
    """Keep only the Python installation on sys.path: never the course folder."""
    install = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    sys.path[:] = [p for p in sys.path if p and any(os.path.realpath(p).startswith(i) for i in install)]


def serve(sock: socket.socket, active_layers: dict[str, str]) -> None:
    namespace: dict[str, Any] | None = None
    protocol.send(sock, {"ready": True, "layers": active_layers, "pid": os.getpid()})
    while True:
        try:
            request = protocol.recv(sock)
        except protocol.PeerClosed:
            return
        op = request.get("op") if isinstance(request, dict) else None
        if op == "load":
            namespace, reply = load(request)
        elif namespace is None:
            reply = {"ok": False, "kind": "internal", "message": "no submission loaded"}
        elif op == "call":
            reply = call(namespace, request)
        elif op == "probe":
            reply = probe(namespace, request)
        else:
            reply = {"ok": False, "kind": "internal", "message": f"unknown op {op!r}"}
        _flush_output()
        try:
            protocol.send(sock, reply)
        except protocol.ProtocolError as exc:
            protocol.send(sock, {"ok": False, "kind": "bad_value", "message": str(exc)})


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass


def load(request: dict) -> tuple[dict[str, Any] | None, dict]:
    """Execute the submission's source as module ``submission``."""
    filename = str(request.get("filename", "submission.py"))
    module = types.ModuleType("submission")
    module.__file__ = filename
    sys.modules["submission"] = module
    try:
        rng.reset(int(request.get("seed", 0)))
        for code in _units(str(request["source"]), filename, request.get("units") or ()):
            exec(code, module.__dict__)  # noqa: S102 - this is the sandbox; running it is the point
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are student errors too
        return None, {"ok": False, **describe_exception(exc, filename)}  # a failed load serves no calls
    names = {k: _kind(v) for k, v in module.__dict__.items() if not k.startswith("__")}
    return module.__dict__, {"ok": True, "names": names}


def _units(source: str, filename: str, starts: Any) -> Iterator[types.CodeType]:
    """The source compiled as Jupyter compiles a notebook: a ``from __future__`` import starts a new unit
    (at the lines ``starts``, from the judge), compiled with the features of the units before it, so the
    import stands at the top of what is compiled and applies from there on. Each unit is compiled just
    before it runs, as in Jupyter, and padded with blank lines so that every line keeps its number.
    A .py file is one unit."""
    lines = source.split("\n")
    bounds = sorted({1, len(lines) + 1} | {int(n) for n in starts if 1 < int(n) <= len(lines)})
    flags = 0
    for first, end in zip(bounds, bounds[1:]):
        code = compile("\n" * (first - 1) + "\n".join(lines[first - 1: end - 1]), filename, "exec",
                       flags=flags, dont_inherit=True)
        flags |= code.co_flags & FUTURE_FLAGS
        yield code


def _kind(v: Any) -> str:
    if isinstance(v, type):
        return "class"
    if callable(v):
        return "function"
    return "value"


def _lookup(namespace: dict[str, Any], name: str) -> tuple[Callable | None, dict | None]:
    obj = namespace.get(name)
    if obj is None:
        return None, {"ok": False, "kind": "not_defined", "message": f"`{name}` is not defined"}
    if not callable(obj):
        return None, {"ok": False, "kind": "not_defined", "message": f"`{name}` is a {type(obj).__name__}, not a function"}
    return obj, None


def call(namespace: dict[str, Any], request: dict) -> dict:
    """Run one function; with ``vjp`` also return input gradients for given cotangents."""
    name = str(request.get("fn"))
    fn, error = _lookup(namespace, name)
    if error:
        return error
    args = list(request.get("args") or [])
    kwargs = dict(request.get("kwargs") or {})
    vjp = request.get("vjp")
    wrt = [i for i in (vjp or {}).get("wrt", []) if isinstance(args[i], torch.Tensor)]
    for i in wrt:
        args[i] = args[i].detach().requires_grad_(True)
    callee = callees.Callees(fn, str(namespace.get("__file__")))  # what its own helpers returned to it
    try:
        rng.reset(int(request.get("seed", 0)))  # inside: a submission that broke an RNG spoils only its own answer
        with callee:
            result = fn(*args, **kwargs)
        grads = _vjp(result, [args[i] for i in wrt], vjp["cotangents"]) if vjp else None
    except BaseException as exc:  # noqa: BLE001 - every student failure becomes evidence
        facts = describe_exception(exc, str(namespace.get("__file__")), name)
        return {"ok": False, **facts, **callee.facts(namespace, facts.get("function"))}
    reply: dict[str, Any] = {"ok": True, "value": _plain(result)}
    if vjp:
        reply["grads"] = grads
    if request.get("return_args"):
        reply["args"] = [a.detach() if isinstance(a, torch.Tensor) else a for a in args]
    return reply


def _plain(value: Any) -> Any:
    """Strip autograd state so only data is sent; the protocol drops subclasses."""
    if issubclass(type(value), torch.Tensor):
        return torch.Tensor.detach(value)
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def describe_exception(exc: BaseException, filename: str, called: str | None = None) -> dict:
    """Turn a student exception into plain facts: kind, exact type, message, where."""
    try:
        return _describe(exc, filename, called)
    except Exception:  # noqa: BLE001 - the exception object itself is hostile; report what is certain
        return {"kind": "exception", "type": "an exception that could not be described", "builtin": False,
                "message": "", "function": None, "line": None, "called": called, "traceback": ""}


def _describe(exc: BaseException, filename: str, called: str | None) -> dict:
    tb = extract_tb(exc.__traceback__)
    student_frames = [f for f in tb if f.filename == filename]
    where = student_frames[-1] if student_frames else None
    kind = "exception"
    if isinstance(exc, NotImplementedError) and type(exc) is NotImplementedError:
        kind = "not_implemented"
    elif isinstance(exc, MemoryError) or (
        isinstance(exc, RuntimeError) and "can't allocate memory" in str(exc)
    ):
        kind = "memory"
    elif isinstance(exc, RecursionError):
        kind = "recursion"
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a hostile __str__
        message = "<unprintable>"
    return {
        "kind": kind,
        "type": type(exc).__name__,
        "builtin": type(exc).__module__ == "builtins",
        "message": message[:1000],
        "function": where.name if where else None,
        "line": where.lineno if where else None,
        "called": called,
        "traceback": "".join(format_list(student_frames[-3:]))[-MAX_TRACEBACK:],
    }


def probe(namespace: dict[str, Any], request: dict) -> dict:
    """Build a student module, run it, and report facts; one self-contained request.

    Request keys: ``cls``, ``args``, ``kwargs``, ``params`` (tensors loaded
    with ``load_state_dict(strict=False)``), ``dtype``, ``to`` (a device),
    ``mode`` (``train``/``eval``), ``inputs`` (forward is called on each),
    ``cotangent`` (for the input gradient of the first input), ``seed`` (the RNG
    state every forward starts from, ``rng``), ``build_seed`` (the one the module
    is built in: weights the params do not replace are drawn from it), ``run`` (the dotted name of a
    submodule whose forward is run instead, such as ``heads.0``: a part judged
    as its parent built it), ``trace`` (record the first input's dropout calls and reseeding: ``trace``).
    """
    name = str(request.get("cls"))
    cls, error = _lookup(namespace, name)
    if error:
        return error
    facts: dict[str, Any] = {}
    parts: callees.Forwards | None = None
    seed = int(request.get("seed", 0))
    try:
        rng.reset(int(request.get("build_seed", seed)))
        module = cls(*(request.get("args") or []), **(request.get("kwargs") or {}))
        if not isinstance(module, torch.nn.Module):
            return {"ok": True, "facts": {"not_module": type(module).__name__}}
        if request.get("params") is not None:
            res = module.load_state_dict(request["params"], strict=False)
            facts["load"] = {"missing": list(res.missing_keys), "unexpected": list(res.unexpected_keys)}
        if request.get("dtype"):
            module = module.to(protocol.DTYPES[request["dtype"]])
        if request.get("to"):
            module = module.to(request["to"])
        module.train(request.get("mode", "eval") == "train")
        facts.update(_describe_module(module))
        before = set(facts["parameters"])
        run = module.get_submodule(str(request["run"])) if request.get("run") else module
        parts = callees.Forwards(run, namespace)  # what its own parts returned to it, said if it then raises
        outputs, grads = [], []
        for i, x in enumerate(request.get("inputs") or []):
            cot = request.get("cotangent") if i == 0 else None
            if cot is not None:
                x = x.detach().requires_grad_(True)
            rng.reset(seed)  # every input from the same state: one input twice gives one output twice
            if i == 0 and request.get("trace"):  # where dropout ran, who seeded the RNG (``trace``)
                with trace.recording(run, x, seed) as traced, parts:
                    out = run(x)
                facts.update(traced)
            else:
                with parts:
                    out = run(x)
            if cot is not None and isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(cot.shape):
                # the parameters' gradients too: one that gets none shows a projection forward does not use
                params = [(n, p) for n, p in run.named_parameters() if p.requires_grad]
                g, *pg = torch.autograd.grad(out, [x, *(p for _, p in params)], cot.to(out.dtype), allow_unused=True)
                grads.append(None if g is None else g.detach())
                facts["parameter_grads"] = {n: None if q is None else q.detach() for (n, _), q in zip(params, pg)}
            outputs.append(_plain(out))
        facts["outputs"] = outputs
        facts["input_grads"] = grads
        if request.get("inputs"):
            # parameters that forward itself registered: they missed load_state_dict, .to() and the optimizer
            facts["new_parameters"] = [n for n, _ in module.named_parameters() if n not in before]
    except BaseException as exc:  # noqa: BLE001 - every student failure becomes evidence
        described = describe_exception(exc, str(namespace.get("__file__")), name)
        return {"ok": False, **described, **(parts.facts(described.get("function")) if parts else {})}
    return {"ok": True, "facts": facts}


def _describe_module(module: torch.nn.Module) -> dict[str, Any]:
    persistent = set(module.state_dict().keys())
    return {
        "type": type(module).__name__,
        "children": {n: type(m).__name__ for n, m in module.named_modules() if n},
        "parameters": {n: _tensor_facts(p) for n, p in module.named_parameters()},
        "buffers": {
            n: {**_tensor_facts(b), "persistent": n in persistent} for n, b in module.named_buffers()
        },
        "attributes": {
            n: _tensor_facts(v) for n, v in vars(module).items() if isinstance(v, torch.Tensor)
        },
        "plain_containers": _plain_containers(module),
        "tensor_attributes": {
            f"{p}.{n}" if p else n: _tensor_facts(v)
            for p, m in module.named_modules()
            for n, v in vars(m).items()
            if isinstance(v, torch.Tensor) and not isinstance(v, torch.nn.Parameter)
        },
        "state_dict": {k: v.detach() for k, v in module.state_dict().items()},
        "linear": {
            n: {"in": m.in_features, "out": m.out_features, "bias": m.bias is not None}
            for n, m in module.named_modules()
            if isinstance(m, torch.nn.Linear)
        },
        "dropout": {n: float(m.p) for n, m in module.named_modules() if isinstance(m, torch.nn.Dropout)},
    }


_MODULE_INTERNALS = frozenset(vars(torch.nn.Module()))


def _plain_containers(module: torch.nn.Module) -> dict[str, str]:
    """Attributes holding nn.Modules in a plain list, tuple or dict (hidden from .parameters(), .to(), state_dict):
    attribute name -> container type."""
    found = {}
    for prefix, m in module.named_modules():
        for n, v in vars(m).items():
            if n in _MODULE_INTERNALS or type(v) not in (list, tuple, dict):
                continue
            items = v.values() if type(v) is dict else v
            if any(isinstance(i, torch.nn.Module) for i in items):
                found[f"{prefix}.{n}" if prefix else n] = type(v).__name__
    return found


def _tensor_facts(t: torch.Tensor) -> dict[str, Any]:
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "device": str(t.device)}
