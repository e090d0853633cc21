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

import ast
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Cause:
    """One way a function of the course can give NaN or inf, and the exercises whose code can have it.

    ``code``: where the cause quotes code, the words (names, attributes, strings) of which the student's
    code must hold one for the cause to be listed (``code_words``); empty: the cause quotes none.
    ``unless``: words that show the code already does what the cause advises: listed only where it holds none.
    """

    text: str
    exercises: frozenset[str]
    code: frozenset[str] = frozenset()
    unless: frozenset[str] = frozenset()

    def fits(self, words: frozenset[str] | None) -> bool:
        """Whether the student's code (``words``; None: unknown) could have this cause."""
        return words is None or ((not self.code or bool(self.code & words)) and not self.unless & words)


TINY = "<a constant float16 rounds to 0>"  # a code word: a literal 0 < c < FLOAT16_ZERO
FLOAT16_ZERO = 2.98e-8  # below half float16's smallest subnormal (5.96e-8), a value rounds to 0
_WEIGHTS = frozenset({"softmax", "attention", "multi_head_attention", "SelfAttentionHead", "MultiHeadAttention"})
_MASKING = frozenset({"apply_mask", "attention", "multi_head_attention", "SelfAttentionHead", "MultiHeadAttention"})

# A cause is named only for a function whose own code (or the code it is asked to call) can have it: an
# entropy has no mask to fill and no softmax to overflow, a scaling has neither.
CAUSES: tuple[Cause, ...] = (
    Cause("an inf fill of the wrong sign (+inf where -inf was meant)", _MASKING, frozenset({"inf", "+inf", "infinity"})),
    Cause("a row with nothing to attend to (every score masked, so the softmax divides 0 by 0)", _MASKING | {"softmax"}),
    Cause("exp() without subtracting the max first (overflow)", _WEIGHTS, frozenset({"exp"})),
    Cause("0/0 when renormalising weights after zeroing some", _WEIGHTS),
    Cause("log(0) = -inf times a weight of 0 (0 · -inf is NaN): clamp the weights before the log",
          frozenset({"attention_entropy"}), unless=frozenset({"clamp", "clamp_min", "clip", "xlogy", "special"})),
    Cause("a clamp or epsilon too small for the dtype: in float16 `clamp_min(1e-12)` or `+ 1e-30` rounds to 0, so "
          "log still meets 0 (use torch.finfo(p.dtype).tiny, which every dtype can hold)",
          frozenset({"attention_entropy"}), frozenset({TINY})),
    Cause("a division by a count that starts at 0 (row t averages t + 1 values)", frozenset({"bag_of_past"})),
)
_FIRST_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)")


def causes_for(exercise: str, words: frozenset[str] | None = None) -> str:
    """The sentence of usual causes for ``exercise``; "" where the course knows none for it.

    ``words``: the student's code (``code_words``); a cause that quotes code is listed only where the code
    holds it. None: not known, every cause of the exercise is listed.
    """
    listed = [c.text for c in CAUSES if exercise in c.exercises and c.fits(words)]
    if not listed:
        return ""
    if len(listed) == 1:
        return f"Usual cause: {listed[0]}."
    return "Usual causes: " + ", ".join(listed[:-1]) + ", or " + listed[-1] + "."


# Kept for callers that quote the attention causes in full (the modules and the attention functions).
NONFINITE_CAUSES = causes_for("attention")


def nonfinite_finding(got: torch.Tensor, what: str, inputs: str = "",
                      expected: torch.Tensor | None = None, exercise: str | None = None) -> str | None:
    """The one message for NaN/inf in ``got`` (where ``expected``, if given, is finite); None if there is none.

    Wording: "<what> [on <inputs>] contains NaN at index (..) where the expected value is x. Usual causes: ..."
    The causes are those of ``exercise`` (by default the first name in backticks in ``what``).
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
    where = (f" where the expected value is {e[index].item() + 0.0:.4g}" if e is not None
             else " where a finite value is expected")  # + 0.0: -0 reads as 0
    if exercise is None:
        named = _FIRST_NAME.search(what)
        exercise = named.group(1) if named else ""
    causes = causes_for(exercise)
    return f"{what}{on} contains {kind} at index {index}{where}." + (f" {causes}" if causes else "")


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


def first_finding(*seen: tuple[torch.Tensor, str, str]) -> str | None:
    """The non-finite finding of the first (tensor, what, inputs) that has NaN/inf, or None."""
    for t, what, inputs in seen:
        finding = nonfinite_finding(t, what, inputs)
        if finding:
            return finding
    return None


@contextmanager
def naming_nonfinite(*seen: tuple[torch.Tensor, str, str]) -> Iterator[None]:
    """A property judged on finite entries that fails while the output also holds NaN/inf says so.

    The NaN/inf may be the cause (an inf score gives finite but wrong weights elsewhere in its row), so a
    failure that blamed only the property would send the student after a bug they may not have.
    """
    try:
        yield
    except AssertionError as exc:
        finding = first_finding(*seen)
        if finding is None:
            raise
        raise AssertionError(f"{exc} The output also holds NaN/inf, which may be the cause: {finding}") from None


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


def unjudged_gradient(outputs: list[object], expected: list[object], fn: str, inputs: str) -> None:
    """Fail a gradient check as unjudged where the student's output has NaN/inf and the reference's is finite.

    The cotangents were chosen where the reference's output is finite, so a NaN/inf output got one the
    reference's entry did not: the gradients then differ for that reason alone, and a count of differing
    entries would blame the gradient for what the NaN did.
    """
    for got, want in zip(outputs, expected):
        if isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor):
            finding = nonfinite_finding(got, f"`{fn}` output", inputs, expected=want)
            if finding:
                raise AssertionError(
                    "the output had NaN/inf, so the gradient could not be judged and this check does not count as "
                    f"passed; see test_output_matches_reference for the wrong values. {finding}")


def code_words(tree: ast.Module | None, exercise: str) -> frozenset[str] | None:
    """The words of ``exercise``'s code: names, attributes and strings (lower case) in its def and in every
    module-level def it names, on and on, and in the module's other statements (a constant defined at the
    top), plus ``TINY`` for a float literal float16 rounds to 0. None where the tree is unknown."""
    if tree is None:
        return None
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    roots: list[ast.AST] = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                         ast.ClassDef))]
    todo, seen, words = [exercise] if exercise in defs else list(defs), set(), set()
    while todo or roots:
        if roots:
            node = roots.pop()
        else:
            name = todo.pop()
            if name in seen or name not in defs:
                continue
            seen.add(name)
            node = defs[name]
        for part in ast.walk(node):
            if isinstance(part, ast.Name):
                words.add(part.id)
                todo.append(part.id)
            elif isinstance(part, ast.Attribute):
                words.add(part.attr)
            elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                words.add(part.value.strip().lower())
            elif isinstance(part, ast.Constant) and isinstance(part.value, float) and 0 < part.value < FLOAT16_ZERO:
                words.add(TINY)
    return frozenset(words)


def prune_causes(message: str, tree: ast.Module | None, exercise: str) -> str:
    """``message`` with each "Usual causes" sentence cut to the causes the student's code can have.

    The sentence is found by its exact words (``causes_for``), preferring the check's own ``exercise`` where
    several exercises share one. A sentence left with no cause is dropped.
    """
    if tree is None or "Usual cause" not in message:
        return message
    for name in sorted({exercise} | {e for c in CAUSES for e in c.exercises}, key=lambda e: e != exercise):
        full = causes_for(name)
        if full and full in message:
            kept = causes_for(name, code_words(tree, name))
            message = message.replace(f" {full}", f" {kept}" if kept else "").replace(full, kept)
    return message
