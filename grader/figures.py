"""Stage 3b (judge side): the small tensors the HTML report draws, from the student's own code.

Runs after the hidden checks, through the same proxy (student code never
runs in the judge), on PUBLIC inputs only: the lesson's worked example and
seeded tensors whose seeds no hidden check uses, so a picture can never give
a hidden input away. Each figure is computed on its own: a call that raises,
hangs or returns something unusable turns only that figure into
``{"error": reason}``. Nothing here touches a check or a score; the result
is plain JSON (floats rounded to 4 decimals, a few T x T matrices). NaN and
inf are drawn, not refused: a student whose attention gives them needs the
picture most, so they are kept as the strings "NaN", "inf" and "-inf"
(JSON has no number for them) and the report colours and names those cells.

The judge's own numbers (scores, the causal mask, entropies) come from the
trusted reference's functions, never from code written here: this module
ships in the student kit, which must hold no exercise's answer
(``tests/test_release.py`` scans it). The kit has no reference and draws nothing.
"""

from __future__ import annotations

import math
from functools import cache
from types import ModuleType
from typing import Any, Callable

import torch

from grader.checks.helpers import randn
from grader.sandbox.errors import NotAttempted, StudentCrash, StudentProblem, StudentTimeout
from grader.sandbox.proxy import StudentProxy
from grader.sandbox.returned import describe

DECIMALS = 4
# Seeds far from every hidden check's (they use < 1000): the pictures' inputs are public.
SEED_LONG = 80_100
SEED_HEADS = 80_200
SEED_BREAK = 80_300
LONG_T, LONG_D = 10, 8
HEADS_B, HEADS_T, HEADS_C, HEADS_H = 1, 8, 16, 4
BREAK_T, BREAK_D = 8, 256

WORKED_TOKENS = ("fluffy", "blue", "cat")
# The lesson's hand-checkable example ("The worked example"), d = 2.
WORKED_Q = ((0.0, 1.0), (0.0, 1.0), (2.0, 0.0))
WORKED_K = ((1.0, 0.0), (1.0, 0.0), (0.0, 1.0))
WORKED_V = ((3.0, 0.0), (0.0, 3.0), (1.0, 1.0))


class FigureProblem(Exception):
    """What the student's code returned cannot be drawn (wrong type, shape, NaN...): one short reason."""


def collect(student: StudentProxy, reference: ModuleType, assignment_id: str) -> dict[str, Any] | None:
    """The report's figures for one submission, or None where the assignment has none.

    ``reference`` is the trusted reference module, run here in the judge.
    """
    if assignment_id != "attention":
        return None
    makers: dict[str, Callable[[StudentProxy, ModuleType], dict[str, Any]]] = {
        "worked_example": worked_example,
        "long_sequence": long_sequence,
        "head_entropy": head_entropy,
        "break_it": break_it,
    }
    figures: dict[str, Any] = {}
    stopped: str | None = None
    for name, make in makers.items():
        if stopped is not None:
            figures[name] = {"error": f"not drawn: {stopped}"}
            continue
        try:
            figures[name] = make(student, reference)
        except FigureProblem as exc:
            figures[name] = {"error": str(exc)}
        except (StudentTimeout, StudentCrash) as exc:
            # Each new call would restart the worker or wait for a hang again: stop here.
            figures[name] = {"error": _short(exc.student_message())}
            stopped = "an earlier picture's call crashed or timed out"
        except NotAttempted as exc:
            figures[name] = {"error": f"`{exc.name}` is not attempted yet"}
        except StudentProblem as exc:
            figures[name] = {"error": _short(exc.student_message())}
    return figures


# ------------------------------------------------------------------ the figures


def worked_example(student: StudentProxy, reference: ModuleType) -> dict[str, Any]:
    """The lesson's fluffy / blue / cat example: causal, scaled by sqrt(2)."""
    q, k, v = (torch.tensor(x, dtype=torch.float32) for x in (WORKED_Q, WORKED_K, WORKED_V))
    out, weights = _attention_pair(student, q, k, v, {}, (3, 2), (3, 3))
    ref_out, ref_weights = reference.attention(q, k, v)
    return {
        "tokens": list(WORKED_TOKENS),
        "student": plain(weights),
        "reference": plain(ref_weights),
        "student_out": plain(out),
        "reference_out": plain(ref_out),
    }


def long_sequence(student: StudentProxy, reference: ModuleType) -> dict[str, Any]:
    """A longer seeded sequence, where a leak into the future or a lost scale shows as a pattern."""
    q, k, v = (randn(LONG_T, LONG_D, seed=SEED_LONG + i) for i in range(3))
    _, weights = _attention_pair(student, q, k, v, {}, (LONG_T, LONG_D), (LONG_T, LONG_T))
    _, ref_weights = reference.attention(q, k, v)
    return {"tokens": [str(t) for t in range(LONG_T)], "student": plain(weights), "reference": plain(ref_weights)}


def head_entropy(student: StudentProxy, reference: ModuleType) -> dict[str, Any]:
    """Mean row entropy per head of ``multi_head_attention``, measured here from the returned weights.

    The judge measures the entropy with the reference's ``attention_entropy``, so this picture
    depends on the student's multi-head attention only, not on their ``attention_entropy``.
    """
    x = randn(HEADS_B, HEADS_T, HEADS_C, seed=SEED_HEADS)
    ws = [randn(HEADS_C, HEADS_C, seed=SEED_HEADS + 1 + i, scale=HEADS_C ** -0.5) for i in range(4)]
    got = student.call("multi_head_attention", x, *ws, HEADS_H).value
    _, weights = _pair(got, "`multi_head_attention`")
    _expect(weights, (HEADS_B, HEADS_H, HEADS_T, HEADS_T), "`multi_head_attention` (weights)")
    _, ref_weights = reference.multi_head_attention(x, *ws, HEADS_H)
    return {
        "heads": HEADS_H,
        "student": plain(mean_entropy(weights, dims=(0, 2), entropy=reference.attention_entropy)),
        "reference": plain(mean_entropy(ref_weights, dims=(0, 2), entropy=reference.attention_entropy)),
        # Uniform weights over the past (the bag of the past): the most spread a causal head can be.
        # Row t has entropy ln(t + 1); their mean is ln(T!) / T.
        "uniform": _round(math.lgamma(HEADS_T + 1) / HEADS_T),
    }


def break_it(student: StudentProxy, reference: ModuleType) -> dict[str, Any]:
    """The lesson's "break it on purpose" #1: the same attention with and without scaling at head_size 256.

    The scores' spread is the student's own: their ``attention_scores`` and, scaled, their ``scale_scores``
    on the same inputs. Where those cannot give it (an error, a wrong shape), the reference's spread is
    recorded with ``score_std_from: "reference"``, and the page says whose it is.
    """
    q, k, v = (randn(BREAK_T, BREAK_D, seed=SEED_BREAK + i) for i in range(3))
    mask = reference.causal_mask(BREAK_T)
    entropy = reference.attention_entropy
    result: dict[str, Any] = {"head_size": BREAK_D}
    for name, scale in (("scaled", True), ("unscaled", False)):
        _, weights = _attention_pair(student, q, k, v, {"scale": scale}, (BREAK_T, BREAK_D), (BREAK_T, BREAK_T))
        scores, whose = _own_scores(student, q, k, scale)
        if scores is None:
            raw = reference.attention_scores(q, k)
            scores, whose = (reference.scale_scores(raw, BREAK_D) if scale else raw), "reference"
        result[name] = {
            "weights": plain(weights),
            "mean_entropy": _round(float(mean_entropy(weights, dims=(0,), entropy=entropy).item())),
            # The raw scores the softmax would receive: their spread grows with sqrt(d) unless scaled.
            "score_std": _round(float(scores.detach().to(torch.float64)[mask].std().item())),
            "score_std_from": whose,
        }
    _, ref_scaled = reference.attention(q, k, v)
    _, ref_unscaled = reference.attention(q, k, v, scale=False)
    result["reference_mean_entropy"] = {
        "scaled": _round(float(mean_entropy(ref_scaled, dims=(0,), entropy=entropy).item())),
        "unscaled": _round(float(mean_entropy(ref_unscaled, dims=(0,), entropy=entropy).item())),
    }
    return result


# ------------------------------------------------------------------ helpers


def _own_scores(student: StudentProxy, q: torch.Tensor, k: torch.Tensor,
                scale: bool) -> tuple[torch.Tensor | None, str]:
    """The student's ``attention_scores(q, k)``, through their ``scale_scores(.., head_size)`` when ``scale``;
    (None, "") where their functions do not give a (T, T) float tensor."""
    try:
        scores = student.call("attention_scores", q, k).value
        if scale and isinstance(scores, torch.Tensor):
            scores = student.call("scale_scores", scores, BREAK_D).value
    except (NotAttempted, StudentProblem):
        return None, ""
    if not (isinstance(scores, torch.Tensor) and scores.is_floating_point()
            and tuple(scores.shape) == (BREAK_T, BREAK_T)):
        return None, ""
    return scores, "yours"


def mean_entropy(weights: torch.Tensor, dims: tuple[int, ...],
                 entropy: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """Row entropies (0 · log 0 = 0), in float64, averaged over ``dims`` (of the rows' shape).

    ``entropy``: the reference's ``attention_entropy`` (the default: the course's reference for
    ``attention``). Borrowed, not written here: this module ships in the student kit.
    """
    rows = (entropy or _course_entropy())(weights.detach().to(torch.float64))
    return rows.mean(dim=dims)


@cache
def _course_entropy() -> Callable[[torch.Tensor], torch.Tensor]:
    """The course reference's ``attention_entropy`` (trusted code, loaded into the judge once)."""
    from grader.session import load_reference
    from grader.config import load_config

    reference = load_config().assignment("attention").reference
    if reference is None:
        raise FigureProblem("no reference to measure entropies with (a student kit draws no figures)")
    return load_reference(reference).attention_entropy


def plain(t: torch.Tensor) -> Any:
    """Nested lists of floats rounded to DECIMALS (JSON-native, small)."""
    values = t.detach().to(torch.float64).cpu().tolist()
    return _round_nested(values)


def _round_nested(x: Any) -> Any:
    return [_round_nested(v) for v in x] if isinstance(x, list) else _round(x)


def _round(x: float) -> float | str:
    """4 decimals, or "NaN" / "inf" / "-inf": JSON has no number for them, and the page draws them."""
    x = float(x)
    if not math.isfinite(x):
        return "NaN" if x != x else ("inf" if x > 0 else "-inf")
    return round(x, DECIMALS) + 0.0  # + 0.0: no "-0.0" in the card


def _attention_pair(student: StudentProxy, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    kwargs: dict[str, Any], out_shape: tuple[int, ...],
                    weights_shape: tuple[int, ...]) -> tuple[torch.Tensor, torch.Tensor]:
    """The student's ``attention(q, k, v, **kwargs)``, checked to be drawable (NaN and inf are drawable)."""
    out, weights = _pair(student.call("attention", q, k, v, **kwargs).value, "`attention`")
    _expect(out, out_shape, "`attention` (out)")
    _expect(weights, weights_shape, "`attention` (weights)")
    return out, weights


def _pair(value: Any, what: str) -> tuple[torch.Tensor, torch.Tensor]:
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise FigureProblem(f"{what} returned {describe(value)}; expected a tuple (out, weights)")
    out, weights = value
    for name, t in (("out", out), ("weights", weights)):
        if not isinstance(t, torch.Tensor):
            raise FigureProblem(f"{what} returned {describe(t)} as its {name}; expected a torch.Tensor")
    return out, weights


def _expect(t: torch.Tensor, shape: tuple[int, ...], what: str) -> None:
    if tuple(t.shape) != shape:
        raise FigureProblem(f"{what} has shape {tuple(t.shape)}; expected {shape}")
    if not t.is_floating_point():
        raise FigureProblem(f"{what} is {str(t.dtype).removeprefix('torch.')}; expected floating-point values")


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
