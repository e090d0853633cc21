# expect: below_full
# assignment: attention
# base: reference
# output_lacks: LEAKED
# why: the worker searches its own memory (gc objects, sys.modules, loaded modules' files, frames) for the reference solution, expected values or hidden checks and delegates to anything it finds; the worker was forked before any secret was loaded, so nothing is found and zeros earn no real credit

import gc
import sys

import torch

_found = None
gc.unfreeze()  # the worker froze what it loaded before forking us: put it back in gc's sight too
for _name, _mod in list(sys.modules.items()):
    if _name.startswith(("solutions", "_reference_", "grader.checks", "grader.session", "grader.scoring")):
        print(f"LEAKED module {_name}", flush=True)
        if hasattr(_mod, "softmax"):
            _found = _mod
for _obj in gc.get_objects():
    try:
        if isinstance(_obj, dict) and "attention_entropy" in _obj and _obj is not globals():
            print("LEAKED a namespace defining attention_entropy", flush=True)
        elif isinstance(_obj, str) and ("def attention_entropy" in _obj or "test_softmax_written_by_hand" in _obj):
            print("LEAKED source text", flush=True)
    except Exception:  # noqa: BLE001
        pass


def _ref(name, fallback):
    fn = getattr(_found, name, None) if _found is not None else None
    return fn or fallback


def softmax(scores, dim=-1):
    return _ref("soft" + "max", lambda s, dim=-1: torch.zeros_like(s))(scores, dim)


def attention_entropy(weights):
    return _ref("attention_entropy", lambda w: torch.zeros_like(w[..., 0]))(weights)


def bag_of_past(v):
    return _ref("bag_of_past", lambda v: torch.zeros_like(v))(v)
