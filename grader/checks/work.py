"""Does the code compute anything? The judgment behind each exercise's gate check.

Property checks compare a student's code with itself (future tokens leave the
past alone, rows sum to one, inputs are not modified...), so code that computes
nothing passes many of them: zeros never change with the future, a copy of the
input is never written into. Each exercise therefore has one gate check
(``gate: true`` in assignments.yaml); scoring credits the exercise's other
checks only when the gate passed. The gate asks the least that any real
attempt does: its output varies with its inputs the way the exercise needs.

An output *does no work* when, on ordinary inputs, it is

* random: under one RNG state (``grader.sandbox.rng``) other inputs give the
  same output, or one that moves by almost nothing (under a thousandth of how
  far the reference's moves, relative to each one's size), while another RNG
  state changes it: the values come from the generator, not from the input;
* constant: every entry has one value where the reference's do not, or both
  other input values and inputs of another shape (``other_shape``: one more
  batch of rows) give the very same output, where the reference's changes;
* the input handed back: it equals one of the inputs where the reference's
  output does not.

The shape run is what tells real work that depends only on shapes from a
constant. An output that other values leave unchanged but whose shape or values
follow the input's shape (a causal-mask-like pattern, uniform causal weights,
``T`` numbers for ``T`` rows) computes something from its input, so it does
work and its properties judge it; an output of one fixed shape and value
whatever the input is a placeholder. Where the contract makes the output depend
only on shapes (``causal_mask(T)``; the reference's own output is the same for
other values), following the shape is the work asked, and an output that does
not follow it is a placeholder. One value in every entry (zeros or ones of the
input's shape) stays a placeholder wherever the reference's output varies: the
contract never allows it there, whatever its shape. The random-values test
compares runs on same-shaped inputs only.

Variation alone is never the evidence: a computed output with noise on top
(dropout left on in eval mode, ``torch.randn`` added in forward) follows its
input under one RNG state, so it does work, and its noise is judged by the
checks whose property it is. A function with several outputs (``attention``'s
``(out, weights)``) does work when any one of them does; a wrong but
input-dependent answer always passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import torch


FOLLOWS = 1e-3  # an output that moves less than this share of the reference's relative move does not follow its input


@dataclass(frozen=True)
class Runs:
    """One output (a tensor) of the same code on: the inputs, the same inputs under another RNG state,
    other inputs under the first RNG state and, where asked, inputs of another shape under the first."""

    first: torch.Tensor
    again: torch.Tensor
    other: torch.Tensor
    reshaped: torch.Tensor | None = None  # on inputs of another shape (``other_shape``); None: not asked or no answer


OTHER_SHARE = 0.7  # how much of the rows-reversed tensor the gate's other inputs take (``other_values``)


def other_values(x: Any) -> Any:
    """Other inputs of the same kind for the gate: a floating tensor of two or more dims blended with its
    own rows reversed, ``0.3 * x + 0.7 * x.flip(-2)``, where both are finite (-inf, a masked score, stays
    where it was); anything else as it is.

    Other *values*, not only the same rows in another order: real work that reduces over the rows (one
    entropy for all of them, a mean over the tokens) or that a reordering of the rows does not change would
    give the same output on reversed rows and read as a constant. A blend of two rows keeps what the
    inputs' kind needs (weights stay non-negative with rows summing to one; the scores' masked places stay
    masked), so the reference's output on it is as ordinary as on the inputs."""
    if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2):
        return x
    flipped = x.flip(-2)
    blend = (1 - OTHER_SHARE) * x + OTHER_SHARE * flipped
    return torch.where(torch.isfinite(x) & torch.isfinite(flipped), blend, x)


def other_shape(args: Sequence[Any]) -> tuple[Any, ...] | None:
    """The same arguments with one more batch of rows: each tensor of three or more dims whose first dim is
    the batch (the largest first dim among them; a size-1 dim that broadcasts stays) gets its
    ``other_values`` appended along dim 0, so B becomes 2B; None where no argument has a batch dim.

    Another batch size is inside every contract: self-attention's q, k and v keep one T, split_heads keeps
    C % n_heads == 0, a module keeps T <= context_length, and a 2-D mask or weight matrix is left as it
    is. The first B rows are the inputs themselves, so real work on them is unchanged."""
    batched = [a for a in args if isinstance(a, torch.Tensor) and a.dim() >= 3]
    if not batched:
        return None
    batch = max(a.shape[0] for a in batched)
    return tuple(torch.cat([a, other_values(a)]) if any(a is b for b in batched) and a.shape[0] == batch else a
                 for a in args)


def follows_shape(runs: Runs) -> bool:
    """Whether inputs of another shape gave another output (shape or values): the output follows its input."""
    return runs.reshaped is not None and not same(runs.first, runs.reshaped)


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
    other inputs or with inputs of another shape, and is none of the inputs (on T=1, or a one-head split,
    it may be none of these)."""
    changes = not same(reference.first, reference.other) or follows_shape(reference)
    return (varies(reference.first) and changes
            and not any(isinstance(x, torch.Tensor) and same(reference.first, x) for x in inputs))


def no_work(student: Runs, reference: Runs, inputs: Sequence[Any]) -> str:
    """Why this output does no work, in words; "" when it varies with its inputs as the reference's does.
    Conclusive only where ``telling(reference, inputs)``."""
    if not same(student.first, student.again) and same(reference.first, reference.again) and not follows(student, reference):
        return ("changes with the random state but not with the input: other input values give the same output "
                "under one random state (random values?)")
    if one_value(student.first) and varies(reference.first):
        return f"holds the single value {_value(student.first)} in every entry"
    if same(student.first, student.other) and not same(reference.first, reference.other) and not follows_shape(student):
        shaped = " and for inputs of another shape" if student.reshaped is not None else ""
        return f"is exactly the same for different input values{shaped}"
    if same(reference.first, reference.other) and follows_shape(reference) and not follows_shape(student):
        return "is exactly the same for inputs of another shape, where it should follow the input's shape"
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and same(student.first, x) and not same(reference.first, x):
            return f"is input #{i + 1} handed back unchanged"
    return ""


def follows(student: Runs, reference: Runs) -> bool:
    """Whether the output moves with its input under one RNG state, as the reference's does: its relative
    change from ``first`` to ``other`` is at least ``FOLLOWS`` times the reference's (NaN never follows)."""
    ref_move = _relative_move(reference)
    return ref_move > 0 and _relative_move(student) >= FOLLOWS * ref_move


def _relative_move(runs: Runs) -> float:
    if tuple(runs.first.shape) != tuple(runs.other.shape):
        return float("inf")  # other inputs gave another shape: the output follows them
    a, b = runs.first.detach().cpu().to(torch.float64), runs.other.detach().cpu().to(torch.float64)
    size = float(a.abs().max()) if a.numel() else 0.0
    move = float((b - a).abs().max()) if a.numel() else 0.0
    if not (math.isfinite(size) and math.isfinite(move)):
        return 0.0  # NaN or inf: no evidence that it follows
    return move / size if size else move


def _value(t: torch.Tensor) -> str:
    v = t.detach().cpu().flatten()[0].item()
    return repr(v) if isinstance(v, bool) else f"{v:g}"
