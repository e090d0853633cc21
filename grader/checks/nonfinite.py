"""Non-finite outputs are one finding, and never a pass.

NaN or inf where the correct value is finite is reported in the same words
everywhere (``nonfinite_finding``): the function, the input, the first index,
and the usual causes. The rule for a property check that meets them:

* where NaN/inf *is* what its property forbids (a stable softmax on large
  scores, masking before the softmax when the future scores are huge), it fails
  with the finding (``expect_finite``);
* otherwise it draws no conclusion from a NaN/inf entry: it judges its property
  on the entries that are finite on every side of its comparison
  (``finite_entries``), fails if the property is broken there, and else ends
  *unjudged* (``inconclusive_if_nonfinite``): failed, 0 points, its points still
  possible, with the non-finite finding and the output check to read as its
  message. A skip would leave the total (``skipped_points: drop``), so a NaN
  would change how many points a student could have; every card of an
  assignment has the same checks and total. Fail closed: no points without a
  recorded pass.

Every comparison that reads a value treats NaN and inf as failing (``~(err <= tol)``,
never ``err > tol``, which is False for NaN): ``tests/test_nonfinite.py`` feeds every
check variants of each exercise, generated from the reference, whose outputs hold NaN or
inf, and holds each to "failed" or "could not be judged".
"""

from __future__ import annotations

import torch


NONFINITE_CAUSES = (
    "Usual causes: an inf fill of the wrong sign (+inf where -inf was meant), a row with nothing to attend to "
    "(every score masked, so the softmax divides 0 by 0), exp() without subtracting the max first (overflow), "
    "or 0/0 when renormalising weights after zeroing some."
)


def nonfinite_finding(got: torch.Tensor, what: str, inputs: str = "",
                      expected: torch.Tensor | None = None) -> str | None:
    """The one message for NaN/inf in ``got`` (where ``expected``, if given, is finite); None if there is none.

    Wording: "<what> [on <inputs>] contains NaN at index (..) where the expected value is x. Usual causes: ..."
    """
    if got.device.type == "meta" or not got.is_floating_point():
        return None  # a meta tensor has no values to judge
    g = got.detach().cpu()
    bad = ~torch.isfinite(g)
    e = None
    if expected is not None and tuple(expected.shape) == tuple(g.shape):
        e = expected.detach().to(torch.float64).cpu()
        bad &= torch.isfinite(e)
    if not bad.any():
        return None
    index = tuple(int(i) for i in torch.nonzero(bad)[0])
    value = g[index].item()
    kind = "NaN" if value != value else ("inf" if value > 0 else "-inf")
    on = f" on {inputs}" if inputs else ""
    where = f" where the expected value is {e[index].item():.4g}" if e is not None else " where a finite value is expected"
    return f"{what}{on} contains {kind} at index {index}{where}. {NONFINITE_CAUSES}"


def expect_finite(got: torch.Tensor, what: str, inputs: str = "", expected: torch.Tensor | None = None,
                  hint: str = "") -> None:
    """Fail with the non-finite finding: for checks whose property is exactly "no NaN/inf here"."""
    finding = nonfinite_finding(got, what, inputs, expected)
    if finding:
        raise AssertionError(finding + (f" {hint}" if hint else ""))


def finite_entries(*tensors: torch.Tensor) -> torch.Tensor:
    """Where every tensor (same shape) is finite: the entries a property check may judge."""
    keep = torch.ones(tensors[0].shape, dtype=torch.bool)
    for t in tensors:
        keep &= torch.isfinite(t.detach().cpu()) if t.is_floating_point() else torch.ones_like(keep)
    return keep


def inconclusive_if_nonfinite(prop: str, *seen: tuple[torch.Tensor, str, str]) -> None:
    """Fail a property check as unjudged if any (tensor, what, inputs) it saw has NaN/inf.

    Call it once the property has been judged on the finite entries and holds there. The check
    fails (0 points, its points kept in the total) because no conclusion is drawn from NaN/inf:
    a skip would change the total for this student only.
    """
    for t, what, inputs in seen:
        finding = nonfinite_finding(t, what, inputs)
        if finding:
            raise AssertionError(
                f"the output had NaN/inf, so {prop} could not be judged and this check does not count as "
                f"passed; see test_output_matches_reference for the wrong values. {finding}")
