"""The warm-up skips ``torch._dynamo`` and freezes the heap without changing what torch computes or raises.

Whether ``torch._dynamo`` is imported is process state: each side runs in a fresh interpreter, once per
module (two interpreters in all), and the tests read what they saw.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

META_WORK = """
    m = torch.empty(2, 3, 3, device="meta")
    mask = torch.ones(3, 3, dtype=torch.bool, device="meta").tril()
    meta = []
    for make in (lambda: m.masked_fill(~mask, float("-inf")).softmax(-1),
                 lambda: torch.where(mask, m, 0.0),
                 lambda: m.masked_fill(torch.ones(3, 3, dtype=torch.bool), 0.0),
                 lambda: torch.where(mask, m, torch.zeros(3, 3)),
                 lambda: (m.half() / 2 ** 0.5).exp().sum(-1, keepdim=True)):
        try:
            r = make()
            meta.append([list(r.shape), str(r.dtype), str(r.device)])
        except Exception as exc:
            meta.append([type(exc).__name__, str(exc).splitlines()[0]])
"""

WARMED = """
    import gc, json, sys, torch
    from grader.sandbox.warmup import warm_up_worker
    warm_up_worker()
    seen = {"dynamo_after_warm_up": "torch._dynamo" in sys.modules,
            "frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}
""" + META_WORK + """
    seen["meta"], seen["dynamo_after_meta"] = meta, "torch._dynamo" in sys.modules
    import torch._dynamo, torch._refs
    fn = torch._refs.where
    while not hasattr(fn, "__dynamo_disable") and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    seen["slot_before"] = fn.__dynamo_disable.__qualname__
    m.masked_fill(torch.ones(3, dtype=torch.bool, device="meta"), 0.0)
    seen["slot_after"] = fn.__dynamo_disable.__qualname__
    print(json.dumps(seen))
"""

PLAIN = """
    import json, sys, torch
""" + META_WORK + """
    print(json.dumps({"meta": meta, "dynamo_after_meta": "torch._dynamo" in sys.modules}))
"""


def run_fresh(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def warmed() -> dict:
    """What a fresh interpreter saw after the worker's warm-up, then the meta work, then importing dynamo."""
    return run_fresh(WARMED)


@pytest.fixture(scope="module")
def plain() -> dict:
    """The same meta work in a fresh interpreter with no warm-up: torch as it comes."""
    return run_fresh(PLAIN)


def test_worker_warm_up_leaves_dynamo_unimported(warmed: dict) -> None:
    assert warmed["dynamo_after_warm_up"] is False, "the meta-device warm-up imported torch._dynamo again"
    assert warmed["dynamo_after_meta"] is False, "masked_fill/where on meta imported torch._dynamo"


def test_meta_results_and_errors_match_torch_unpatched(warmed: dict, plain: dict) -> None:
    """The same meta-device work with and without the skip: same shapes, dtypes, devices, error texts."""
    assert warmed["meta"] == plain["meta"]
    assert plain["dynamo_after_meta"], "torch itself no longer imports dynamo here: the skip is moot"


def test_dynamo_imported_later_gets_torchs_own_wrap(warmed: dict) -> None:
    assert warmed["slot_before"].startswith("_until_dynamo"), warmed
    assert warmed["slot_after"] != warmed["slot_before"], "with torch._dynamo loaded, calls must use torch's disable"


def test_warm_up_freezes_what_is_loaded(warmed: dict) -> None:
    """torch's objects leave the collector's generations: a full collection no longer walks them."""
    assert warmed["frozen"] > 50_000, warmed
    assert warmed["tracked"] < warmed["frozen"] / 10, warmed
