"""``helpers.expect_close`` passes through one ``helpers.all_close`` and explains only a failure: the pass must be
exactly the rule its message states (entrywise ``|got - expected| <= atol + rtol * |expected|``, an infinity
close only to itself, NaN never close), including every mix of infinities and NaN."""

from __future__ import annotations

import pytest
import torch

from grader.checks.helpers import TOLERANCES, expect_close

SPECIAL = torch.tensor([0.0, 1.0, -1.0, 1e-7, float("inf"), float("-inf"), float("nan")], dtype=torch.float64)


def stated_rule(got: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float) -> bool:
    """The rule written out entry by entry in Python floats: what a pass must mean."""
    for g, e in zip(got.double().flatten().tolist(), expected.double().flatten().tolist()):
        if g != g or e != e:  # NaN
            return False
        if abs(e) == float("inf") or abs(g) == float("inf"):
            if g != e:
                return False
            continue
        if not abs(g - e) <= atol + rtol * abs(e):
            return False
    return True


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_a_pass_is_exactly_the_stated_rule(dtype):
    rtol, atol = TOLERANCES[dtype]
    gen = torch.Generator().manual_seed(0)
    passed = failed = 0
    for _ in range(400):
        expected = torch.randn(3, 4, generator=gen, dtype=torch.float64)
        # Nudges up to just past the tolerance's edge (most within it), and special values: the same in both
        # tensors at some entries, in one of them only at others.
        edge = torch.rand(3, 4, generator=gen, dtype=torch.float64) ** 4 * 1.05
        got = expected + (atol + rtol * expected.abs()) * edge * torch.sign(torch.randn(3, 4, generator=gen))
        both = torch.rand(3, 4, generator=gen) < 0.15
        special = SPECIAL[torch.randint(len(SPECIAL), (3, 4), generator=gen)]
        got[both], expected[both] = special[both], special[both]
        for t in (got, expected):
            where = torch.rand(3, 4, generator=gen) < 0.02
            t[where] = SPECIAL[torch.randint(len(SPECIAL), (int(where.sum()),), generator=gen)]
        got = got.to(dtype).double() if dtype != torch.float64 else got
        rule = stated_rule(got, expected, rtol, atol)
        try:
            expect_close(got, expected, "`f`", torch.float64, tolerance=(rtol, atol))
            verdict = True
        except AssertionError:
            verdict = False
        assert verdict == rule, (got, expected)
        passed, failed = passed + rule, failed + (not rule)
    assert passed > 50 and failed > 50, "the sample must hold passes and failures alike"


def test_a_failure_still_points_at_the_worst_entry():
    expected = torch.zeros(2, 3, dtype=torch.float64)
    got = expected.clone()
    got[1, 2] = 0.5
    with pytest.raises(AssertionError, match=r"in 1 of 6 entries; at index \(1, 2\) got 0\.5, expected 0"):
        expect_close(got, expected, "`f`", torch.float32)
