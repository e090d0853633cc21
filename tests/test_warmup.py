"""The warm-up skips ``torch._dynamo`` without changing what torch computes or raises.

Each case runs in a fresh interpreter: whether ``torch._dynamo`` is imported is process state.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest


def run_fresh(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_worker_warm_up_leaves_dynamo_unimported() -> None:
    seen = run_fresh("""
        import json, sys
        from grader.sandbox.warmup import warm_up_worker
        warm_up_worker()
        print(json.dumps({"dynamo": "torch._dynamo" in sys.modules}))
    """)
    assert seen == {"dynamo": False}, "the meta-device warm-up imported torch._dynamo again"


def test_meta_results_and_errors_match_torch_unpatched() -> None:
    """The same meta-device work, with and without the skip: same shapes, dtypes, devices, error texts."""
    code = """
        import json, sys, torch
        if sys.argv[-1] == "skip":
            from grader.sandbox.warmup import skip_dynamo_until_imported
            assert skip_dynamo_until_imported() > 0
        out = []
        m = torch.empty(2, 3, 3, device="meta")
        mask = torch.ones(3, 3, dtype=torch.bool, device="meta").tril()
        for make in (lambda: m.masked_fill(~mask, float("-inf")).softmax(-1),
                     lambda: torch.where(mask, m, 0.0),
                     lambda: m.masked_fill(torch.ones(3, 3, dtype=torch.bool), 0.0),
                     lambda: torch.where(mask, m, torch.zeros(3, 3)),
                     lambda: (m.half() / 2 ** 0.5).exp().sum(-1, keepdim=True)):
            try:
                r = make()
                out.append([list(r.shape), str(r.dtype), str(r.device)])
            except Exception as exc:
                out.append([type(exc).__name__, str(exc).splitlines()[0]])
        print(json.dumps({"out": out, "dynamo": "torch._dynamo" in sys.modules}))
    """
    skipped = run_fresh(code.replace('sys.argv[-1] == "skip"', "True"))
    plain = run_fresh(code.replace('sys.argv[-1] == "skip"', "False"))
    assert skipped["out"] == plain["out"]
    assert plain["dynamo"] and not skipped["dynamo"], "torch itself no longer imports dynamo here: the skip is moot"


def test_dynamo_imported_later_gets_torchs_own_wrap() -> None:
    seen = run_fresh("""
        import json, torch
        from grader.sandbox.warmup import skip_dynamo_until_imported, _until_dynamo
        skip_dynamo_until_imported()
        m = torch.empty(3, device="meta")
        m.masked_fill(torch.ones(3, dtype=torch.bool, device="meta"), 0.0)
        import torch._dynamo, torch._refs
        fn = torch._refs.where
        while not hasattr(fn, "__dynamo_disable") and hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        before = fn.__dynamo_disable.__qualname__
        m.masked_fill(torch.ones(3, dtype=torch.bool, device="meta"), 0.0)
        after = fn.__dynamo_disable
        print(json.dumps({"before": before, "after_is_ours": after.__qualname__ == before}))
    """)
    assert seen["before"].startswith("_until_dynamo"), seen
    assert seen["after_is_ours"] is False, "with torch._dynamo loaded, the call must go through torch's disable"


def test_judge_warm_up_freezes_what_is_loaded() -> None:
    """torch's objects leave the collector's generations: a full collection no longer walks them."""
    seen = run_fresh("""
        import gc, json, time
        from grader.sandbox.warmup import warm_up_judge
        warm_up_judge()
        print(json.dumps({"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}))
    """)
    assert seen["frozen"] > 50_000, seen
    assert seen["tracked"] < seen["frozen"] / 10, seen
