# expect: below_full
# assignment: attention
# base: none
# output_has: DENIED
# output_lacks: LEAKED
# why: every function tries to import or read the reference (sys.path tricks, the judge's PYTHONPATH, absolute and relative paths, assignments.yaml, the hidden checks) and delegates to it, else returns zeros; every read must fail, so no real credit

import glob
import importlib.util
import os
import sys

import torch

_CANDIDATES = [
    "/work/main/solutions/attention.py",
    "/work/main/assignments.yaml",
    "/work/main/grader/checks/attention/test_softmax.py",
    "/work/main/grader/checks/attention/conftest.py",
    "/work/shared/spec/CONTRACT.md",
    "../solutions/attention.py",
    "../../solutions/attention.py",
    "solutions/attention.py",
]
for _root in os.environ.get("PYTHONPATH", "").split(os.pathsep) + [os.environ.get("HOME", ""), os.getcwd()]:
    if _root:
        _CANDIDATES += [os.path.join(_root, "solutions", "attention.py"), os.path.join(_root, "assignments.yaml")]


def _try_read():
    found = {}
    for path in _CANDIDATES:
        try:
            with open(path, "rb") as fh:
                found[path] = fh.read()
            print(f"LEAKED {path}", flush=True)
        except OSError as exc:
            print(f"DENIED {path}: {type(exc).__name__}", flush=True)
    for pattern in ("/work/*", "/work/main/*", "/tmp/*", "/home/*", "/root/*"):
        hits = glob.glob(pattern)
        if hits:
            print(f"LEAKED listing {pattern}: {hits[:5]}", flush=True)
    for extra in ("/work/main", "/work/main/solutions", ".."):
        sys.path.insert(0, extra)
    try:
        import solutions.attention as ref  # noqa: PLC0415

        print("LEAKED import solutions.attention", flush=True)
        return ref
    except ImportError as exc:
        print(f"DENIED import: {exc}", flush=True)
    for path, data in found.items():
        if path.endswith("attention.py"):
            spec = importlib.util.spec_from_loader("leaked_reference", loader=None)
            module = importlib.util.module_from_spec(spec)
            exec(compile(data, path, "exec"), module.__dict__)
            return module
    return None


_REF = _try_read()


def _delegate(name, *args, zeros_like=None, shape=None):
    if _REF is not None:
        return getattr(_REF, name)(*args)
    if shape is not None:
        return torch.zeros(shape, dtype=torch.bool)
    return torch.zeros_like(zeros_like)


def attention_scores(q, k):
    return _delegate("attention_scores", q, k, zeros_like=q[..., :1] * k[..., :1].transpose(-2, -1))


def scale_scores(scores, head_size):
    return _delegate("scale_scores", scores, head_size, zeros_like=scores)


def causal_mask(T, device=None):
    return _delegate("causal_mask", T, device, shape=(T, T))


def apply_mask(scores, mask):
    return _delegate("apply_mask", scores, mask, zeros_like=scores)


def softmax(scores, dim=-1):
    return _delegate("softmax", scores, dim, zeros_like=scores)


def mix_values(weights, v):
    return _delegate("mix_values", weights, v, zeros_like=weights[..., :1] * v[..., :1, :])


def attention(q, k, v, causal=True, scale=True):
    if _REF is not None:
        return _REF.attention(q, k, v, causal, scale)
    return torch.zeros_like(v), torch.zeros(*q.shape[:-1], q.shape[-2], dtype=q.dtype)


def bag_of_past(v):
    return _delegate("bag_of_past", v, zeros_like=v)


def split_heads(x, n_heads):
    if _REF is not None:
        return _REF.split_heads(x, n_heads)
    B, T, C = x.shape
    return torch.zeros(B, n_heads, T, C // n_heads, dtype=x.dtype)


def merge_heads(x):
    if _REF is not None:
        return _REF.merge_heads(x)
    B, H, T, d = x.shape
    return torch.zeros(B, T, H * d, dtype=x.dtype)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    if _REF is not None:
        return _REF.multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal)
    B, T, C = x.shape
    return torch.zeros_like(x), torch.zeros(B, n_heads, T, T, dtype=x.dtype)


def attention_entropy(weights):
    return _delegate("attention_entropy", weights, zeros_like=weights[..., 0])
