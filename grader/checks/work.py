"""Does the code compute anything? The judgment behind each exercise's gate check.

Property checks compare a student's code with itself (future tokens leave the
past alone, rows sum to one, inputs are not modified...), so code that computes
nothing passes many of them: zeros never change with the future, a copy of the
input is never written into. Each exercise therefore has one gate check
(``gate: true`` in assignments.yaml); scoring credits the exercise's other
checks only when the gate passed. The gate asks the least that any real
attempt does: its output varies with its inputs the way the exercise needs.

An output *does no work* when, on ordinary inputs, it is

* random: the same inputs give different values under another random seed,
  while the reference is deterministic;
* constant: every entry has one value where the reference's do not, or other
  input values give the very same output where the reference's changes;
* the input handed back: it equals one of the inputs where the reference's
  output does not.

A function with several outputs (``attention``'s ``(out, weights)``) does work
when any one of them does; a wrong but input-dependent answer always passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch


@dataclass(frozen=True)
class Runs:
    """One output (a tensor) of the same code on: the inputs, the inputs under another seed, other inputs."""

    first: torch.Tensor
    again: torch.Tensor
    other: torch.Tensor


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shapes and values, NaN equal to NaN (exactness is the point: a placeholder repeats itself bit for bit)."""
    if tuple(a.shape) != tuple(b.shape):
        return False
    a64, b64 = a.detach().cpu().to(torch.float64), b.detach().cpu().to(torch.float64)
    return bool(torch.equal(a64.nan_to_num(nan=0.5e300), b64.nan_to_num(nan=0.5e300)))


def one_value(t: torch.Tensor) -> bool:
    """Every entry holds the same value (an output of one entry says nothing)."""
    if t.numel() < 2:
        return False
    flat = t.detach().cpu().to(torch.float64).flatten().nan_to_num(nan=0.5e300)
    return bool((flat == flat[0]).all())


def varies(t: torch.Tensor) -> bool:
    """At least two entries, not all equal: an output that can show whether code computed it."""
    return t.numel() >= 2 and not one_value(t)


def telling(reference: Runs, inputs: Sequence[Any]) -> bool:
    """Whether these inputs can show a placeholder: the reference's output varies within, changes with the
    other inputs and is none of the inputs (on T=1, or a one-head split, it may be none of these)."""
    return (varies(reference.first) and not same(reference.first, reference.other)
            and not any(isinstance(x, torch.Tensor) and same(reference.first, x) for x in inputs))


def no_work(student: Runs, reference: Runs, inputs: Sequence[Any]) -> str:
    """Why this output does no work, in words; "" when it varies with its inputs as the reference's does.
    Conclusive only where ``telling(reference, inputs)``."""
    if not same(student.first, student.again) and same(reference.first, reference.again):
        return "gives different values for the same inputs (random values?)"
    if one_value(student.first) and varies(reference.first):
        return f"holds the single value {_value(student.first)} in every entry"
    if same(student.first, student.other) and not same(reference.first, reference.other):
        return "is exactly the same for different input values"
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and same(student.first, x) and not same(reference.first, x):
            return f"is input #{i + 1} handed back unchanged"
    return ""


def _value(t: torch.Tensor) -> str:
    v = t.detach().cpu().flatten()[0].item()
    return repr(v) if isinstance(v, bool) else f"{v:g}"
