"""What the hidden checks share: seeded inputs, and comparisons that explain themselves.

Every expected value is computed here, in the judge, from the reference in
float64 on the same (rounded) inputs the student received. Every failure is
an ``AssertionError`` whose text is written for a student: which function,
which property, what was seen, and a hint.

Output checks and property checks
---------------------------------
*Output checks* compare the student's values with the correct ones
(``check_matches_reference``, ``expect_close``). *Property checks* judge one
property each (causality, a flag, scaling, stability, ...) and compare the
student's code with itself under that property's transformation wherever the
property allows, so that a wrong value elsewhere does not fail them.

Non-finite outputs are one finding: ``grader.checks.nonfinite`` says how a check meets them.

The meta device
---------------
"Stays on the inputs' device" runs the student's function on ``meta`` tensors
(a CPU-built tensor then shows as the device error a GPU would raise). Some
operations cannot run on ``meta`` at all (data-dependent indexing, ``.item()``):
that is the grader's limitation, not the student's mistake, so the check is
judged on the CPU instead (``check_on_meta``): the function must run there and
return its outputs on the inputs' device. That is a weaker judgment, but a
recorded one; it is the same for every student whose code meets the limitation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Sequence, TypeVar

import numpy as np
import pytest
import torch

from grader.checks.nonfinite import (  # noqa: F401 - the checks call them as h.finite_entries(...) and so on
    NONFINITE_CAUSES,
    expect_finite,
    finite_entries,
    inconclusive_if_nonfinite,
    naming_nonfinite,
    nonfinite_finding,
    unjudged_gradient,
)
from grader.checks.seeding import randn, seed, seed_examples  # noqa: F401 - the checks call them as h.randn(...)
from grader.sandbox.errors import StudentError
from grader.sandbox import returned
from grader.sandbox.proxy import StudentProxy
from grader.words import count, entry, returned as output_name  # not `returned`: the sandbox module's name

TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (5e-3, 5e-3),
    torch.bfloat16: (2e-2, 2e-2),
}
LOW_PRECISION = (torch.float16, torch.bfloat16)
T = TypeVar("T")
DEVICE_MISMATCH = ("is not on the expected device", "Expected all tensors to be on the same device", "device meta")
# Errors that only say the meta device cannot do something (no data to read): inconclusive, not a bug.
META_LIMITATIONS = re.compile(
    r"meta tensor|on meta|'Meta' backend|Meta backend|item\(\)|data-dependent|data dependent|"
    r"Cannot copy out of meta|is not implemented for|not supported on meta", re.IGNORECASE)


def shape_text(x: Any) -> str:
    return "x".join(str(s) for s in x.shape) if isinstance(x, torch.Tensor) else type(x).__name__


def as_tensor(value: Any, what: str) -> torch.Tensor:
    """The value must be a plain torch.Tensor; anything else fails with a clear message."""
    assert isinstance(value, torch.Tensor), f"{what} returned {returned.describe(value)}; expected a torch.Tensor"
    return value


def as_pair(value: Any, what: str) -> tuple[torch.Tensor, torch.Tensor]:
    assert isinstance(value, (tuple, list)) and len(value) == 2, (
        f"{what} returned {returned.describe(value)}; expected a tuple (out, weights)"
    )
    return as_tensor(value[0], f"{what} (out)"), as_tensor(value[1], f"{what} (weights)")


def expect_shape(t: torch.Tensor, shape: Sequence[int], what: str, hint: str = "") -> None:
    assert tuple(t.shape) == tuple(shape), (
        f"{what} has shape {tuple(t.shape)}; expected {tuple(shape)}." + (f" {hint}" if hint else "")
    )


def expect_dtype(t: torch.Tensor, dtype: torch.dtype, what: str) -> None:
    assert t.dtype == dtype, (
        f"{what} is {str(t.dtype).removeprefix('torch.')} for {str(dtype).removeprefix('torch.')} inputs; "
        "outputs must keep the dtype of the inputs (avoid hard-coded dtypes such as torch.float32)"
    )


def all_close(x: np.ndarray, y: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> bool:
    """``torch.isclose(x, y, rtol, atol, equal_nan).all()`` for two float64 arrays of one shape: each entry
    equal, or NaN in both where ``equal_nan``, or a finite gap ``|x - y| <= atol + rtol * |y|`` (so an infinity
    is close only to itself). In NumPy because a grade makes hundreds of these comparisons on small arrays
    (diagnosis thousands for some mistakes), where torch's op costs ~20 us against ~6 us here;
    ``tests/test_diagnosis.py`` holds the two to the same answers."""
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.abs(x - y)
        within = gap <= atol + rtol * np.abs(y)
        finite = np.isfinite(gap)
        if finite.all():  # both finite everywhere: equal entries have gap 0, so ``within`` is the whole rule
            return bool(within.all())
        both_nan = np.isnan(x) & np.isnan(y) if equal_nan else False
        return bool(((x == y) | both_nan | (finite & within)).all())


def expect_close(got: torch.Tensor, expected: torch.Tensor, what: str, dtype: torch.dtype, hint: str = "",
                 tolerance: tuple[float, float] | None = None) -> None:
    """Compare in float64 with the dtype's tolerance; the message points at the worst entry."""
    expect_shape(got, expected.shape, what)
    rtol, atol = tolerance or TOLERANCES[dtype]
    g, e = got.detach().to(torch.float64).cpu(), expected.detach().to(torch.float64).cpu()
    # The common case, a pass, at once: |g - e| <= atol + rtol * |e|, an infinity only equal to itself, NaN
    # never close. The same test as below, which works out where and by how much only when it fails.
    if all_close(g.numpy(force=True), e.numpy(force=True), rtol, atol, equal_nan=False):
        return
    both_inf = torch.isinf(g) & torch.isinf(e) & (torch.sign(g) == torch.sign(e))
    err = torch.where(both_inf, torch.zeros_like(g), (g - e).abs())
    bad = ~(err <= atol + rtol * e.abs().nan_to_num(posinf=0.0, neginf=0.0))
    if not bad.any():
        return
    finding = nonfinite_finding(got, what, expected=expected)
    if finding:
        raise AssertionError(finding + (f" {hint}" if hint else ""))
    worst = torch.where(bad, err.nan_to_num(nan=float("inf")), torch.zeros_like(err))
    index = where_largest(worst)
    exact = not expected.is_floating_point()  # a mask or an index: no tolerance to quote, its values as they are
    was, wanted = entry(got.detach()[index].item()), entry(expected.detach()[index].item())
    raise AssertionError(
        f"{what} differs from the expected result in {int(bad.sum())} of {count(bad.numel(), 'entry')}; "
        f"at index {index} got {was}, expected {wanted}" + ("." if exact else f" (rtol={rtol:g}, atol={atol:g}).")
        + (f" {hint}" if hint else "")
    )


def expect_permuted(got: torch.Tensor, base: torch.Tensor, what: str, margin: float = 0.0) -> None:
    """``got`` (computed from permuted tokens) equals ``base`` (the original result, permuted alike).

    Both come from the student's own code, so a bug that keeps the symmetry does not fail
    here; only float32 rounding of sums taken in another order may differ, hence the
    small tolerance, plus ``margin`` (``noise_margin``) for code that is random on its own:
    its noise is the output checks' finding, never a "position-dependent term". Only entries
    finite on both sides are compared; the caller ends inconclusive (``inconclusive_if_nonfinite``)
    if there were others.
    """
    expect_shape(got, base.shape, what)
    keep = finite_entries(got, base)
    g, b = got.double().cpu()[keep], base.double().cpu()[keep]
    diff = (g - b).abs().max().item() if g.numel() else 0.0
    assert torch.allclose(g, b, rtol=1e-4, atol=1e-5 + margin), (
        f"{what} is not the original result reordered the same way (largest difference {diff:.3g}). "
        "Without the causal mask attention treats the tokens as a set: reordering the tokens must only "
        "reorder the results. Something in your code depends on a token's position (a bias, a mask, an index)."
    )


NOISE_MARGIN = 4  # how many times its own run-to-run spread a random output may move between dtypes or devices


def noise_margin(run: torch.Tensor, again: torch.Tensor) -> float:
    """The absolute tolerance a comparison across dtypes or devices adds for an output that is random on its own:
    ``NOISE_MARGIN`` times the largest difference between two runs on the same input under two random states
    (0 for deterministic code). The same random state draws other numbers in float64 than in float32, and on a
    GPU than on the CPU, so such a comparison cannot cancel the noise; the noise itself is judged by the checks
    whose property it is (dropout off in eval mode, the output against the reference)."""
    if tuple(run.shape) != tuple(again.shape):
        return 0.0
    spread = (run.detach().cpu().double() - again.detach().cpu().double()).abs()
    spread = spread[torch.isfinite(spread)]
    return NOISE_MARGIN * float(spread.max()) if spread.numel() else 0.0


def reference_f64(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run the reference in float64 on the same (already rounded) inputs."""
    def up(x: Any) -> Any:
        return x.to(torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
    return fn(*[up(a) for a in args], **{k: up(v) for k, v in kwargs.items()})


def outputs_of(value: Any) -> list[torch.Tensor]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


@dataclass(frozen=True)
class Case:
    """One call of a contract function: its inputs and a label for messages."""

    fn: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    label: str
    # The reference's answers on these inputs, by what was asked (``reference_answer``): a case that lives as long
    # as the judge (the visible ``cases`` are session-scoped) is answered once, not once per student.
    answers: dict[Any, tuple[Any, Any]] = field(default_factory=dict, compare=False, repr=False)

    def cast(self, dtype: torch.dtype) -> Case:
        def c(x: Any) -> Any:
            return x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
        return Case(self.fn, tuple(c(a) for a in self.args), {k: c(v) for k, v in self.kwargs.items()}, self.label)

    def to(self, device: str) -> Case:
        def c(x: Any) -> Any:
            return x.to(device) if isinstance(x, torch.Tensor) else x
        return Case(self.fn, tuple(c(a) for a in self.args), {k: c(v) for k, v in self.kwargs.items()}, self.label)


def reference_answer(reference: Any, case: Case, asked: Any, compute: Callable[[], T],
                     keep: Callable[[T], bool] = lambda answer: True) -> T:
    """``compute()``, the reference's answer to ``asked`` on ``case`` (its float64 run on the inputs cast to a
    dtype, the gate's runs), kept with the case for the same ``reference`` where ``keep`` allows: the same
    inputs get the same answer from trusted code whose result depends on its inputs alone, which is what
    the checks that compare with it exactly assume. Where ``reference`` is another object (a release records
    through one per check), the answer is worked out again and replaces the kept one."""
    kept = case.answers.get(asked)
    if kept is not None and kept[0] is reference:
        return kept[1]
    answer = compute()
    if keep(answer):
        case.answers[asked] = (reference, answer)
    return answer


def check_matches_reference(student: StudentProxy, reference: ModuleType, case: Case, dtype: torch.dtype,
                            names: Sequence[str] = ("output",), hint: str = "") -> None:
    """Student output equals the float64 reference on the same rounded inputs, dtype kept."""
    c = case.cast(dtype)
    value = student.call(c.fn, *c.args, **c.kwargs).value
    returned.check_kind(c.fn, value, names)  # an output check: the contract's kind (a tuple, not a list) is an output
    got = outputs_of(value)
    expected = outputs_of(reference_answer(reference, case, dtype,
                                           lambda: reference_f64(getattr(reference, c.fn), *c.args, **c.kwargs)))
    what = f"`{c.fn}` on {c.label}"
    assert len(got) == len(expected), f"{what} returned {count(len(got), 'value')}; expected {len(expected)}"
    for name, g, e in zip(names, got, expected):
        g = as_tensor(g, f"{what} ({name})")
        expect_shape(g, e.shape, f"{what}: {output_name(name, names)}")
        if e.is_floating_point():
            expect_dtype(g, dtype, f"{what}: {output_name(name, names)}")
        expect_close(g, e, f"{what}: {output_name(name, names)}", dtype, hint)


def where_largest(t: torch.Tensor) -> tuple[int, ...]:
    """The index of ``t``'s largest entry (the first, on ties), one int per dimension: what a message quotes.

    Worked out with divmod: ``torch.unravel_index`` goes through ``torch._check``, whose first call imports
    sympy into the judge (~0.3 s of CPU)."""
    flat, index = int(t.argmax()), []
    for size in reversed(t.shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


def check_inputs_unchanged(student: StudentProxy, case: Case) -> None:
    result = student.call(case.fn, *case.args, return_args=True, **case.kwargs)
    after = result.args_after or []
    for i, (before, now) in enumerate(zip(case.args, after)):
        if isinstance(before, torch.Tensor):
            assert isinstance(now, torch.Tensor) and torch.equal(before, now), (
                f"`{case.fn}` modified its input #{i + 1} in place; return a new tensor instead "
                "(e.g. masked_fill, not masked_fill_; x = x - m, not x -= m)"
            )


def check_gradients(student: StudentProxy, reference: ModuleType, case: Case, wrt: Sequence[int],
                    where: Callable[[int, torch.Tensor], torch.Tensor] | None = None, salt: int = 0) -> None:
    """Vector-Jacobian products for judge-chosen cotangents match the reference's, in float64.

    The cotangents are the student's own (``salt``, as ``seed``): for a linear function such as
    ``bag_of_past`` or ``merge_heads`` the gradient depends on them alone, not on the inputs."""
    c = case.cast(torch.float64)

    def pulled_back() -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor | None, ...]]:
        ref_args = [a.clone().requires_grad_(i in wrt) if isinstance(a, torch.Tensor) else a for i, a in enumerate(c.args)]
        ref_out = outputs_of(getattr(reference, c.fn)(*ref_args, **c.kwargs))
        # No cotangent where the output is ±inf (masked scores): any gradient there is meaningless.
        cotangents = tuple(randn(*o.shape, seed=seed(900 + i, salt), dtype=torch.float64) * torch.isfinite(o.detach())
                           for i, o in enumerate(ref_out))
        # sum(o * ct) has the gradient cotangents ct exactly, without autograd's check of explicit
        # grad_outputs, which imports sympy into the judge (~0.3 s of CPU in its first grade).
        pulled = sum((o * ct).sum() for o, ct in zip(ref_out, cotangents) if o.requires_grad)
        return cotangents, tuple(torch.autograd.grad(pulled, [ref_args[i] for i in wrt], allow_unused=True))

    cotangents, expected = reference_answer(reference, case, ("gradients", tuple(wrt), salt), pulled_back)
    try:
        result = student.call(c.fn, *c.args, vjp={"wrt": list(wrt), "cotangents": tuple(cotangents)}, **c.kwargs)
    except StudentError as err:
        # autograd's own words when the output is cut off from every input; say what causes it instead.
        if "does not require grad" in str(err.reply.get("message", "")):
            raise AssertionError(
                f"no gradient flows back through `{c.fn}` on {c.label}: its output is not connected to its inputs "
                "in autograd (a .detach(), .item(), .tolist() or a new torch.tensor(...) breaks the graph)"
            ) from None
        raise
    outputs = outputs_of(result.value)
    if [tuple(o.shape) for o in outputs] != [tuple(ct.shape) for ct in cotangents]:  # its gradient is not the contract's
        raise AssertionError(f"`{c.fn}` on {c.label} returned {returned.describe(result.value)}; the contract's output"
                             f"{'s have shapes' if len(cotangents) > 1 else ' has shape'} "
                             f"{', '.join(str(tuple(ct.shape)) for ct in cotangents)}, so its gradient could not be compared")
    grads = result.grads or []
    if hasattr(reference, c.fn):  # a NaN/inf output's cotangent is the reference's: no count read from it
        unjudged_gradient(outputs_of(result.value), outputs_of(getattr(reference, c.fn)(*c.args, **c.kwargs)),
                          c.fn, c.label)
    for k, (i, e) in enumerate(zip(wrt, expected)):
        what = f"the gradient of `{c.fn}` with respect to input #{i + 1} on {c.label}"
        g = grads[k] if k < len(grads) else None
        assert g is not None, f"{what} is missing: no gradient flows back (a .detach(), .item() or a new tensor breaks autograd)"
        e = torch.zeros_like(c.args[i]) if e is None else e
        if where is not None:
            keep = where(i, c.args[i])
            g, e = g[keep], e[keep]
        expect_close(g, e, what, torch.float64)


def check_on_meta(student: StudentProxy, case: Case) -> list[Any]:
    """Run on the `meta` device: a CPU-built tensor shows as the same device error a GPU would raise."""
    c = case.to("meta")
    try:
        value = student.call(c.fn, *c.args, **c.kwargs).value
    except StudentError as err:
        text = str(err.reply.get("message", ""))
        if any(s in text for s in DEVICE_MISMATCH):
            raise AssertionError(
                f"`{c.fn}` mixes devices: with inputs on another device (as on a GPU) it raised "
                f"\"{text[:200]}\". Build new tensors on the inputs' device (device=x.device)."
            ) from None
        if META_LIMITATIONS.search(text):
            return _device_kept_on_cpu(student, case)  # the grader's limitation: judged on the CPU instead
        _fails_on_cpu_too(student, case, err)
        raise AssertionError(
            f"`{c.fn}` raised {err.exc_type} when its inputs were on another device than the CPU "
            f"(\"{text[:160]}\"), and works on CPU inputs; it must work on whatever device its inputs are on"
        ) from None
    for k, out in enumerate(outputs_of(value)):
        t = as_tensor(out, f"`{c.fn}`")
        assert t.device.type == "meta", (
            f"`{c.fn}` returned output #{k + 1} on {t.device} for inputs on another device; "
            "outputs must stay on the inputs' device"
        )
    return outputs_of(value)


def _fails_on_cpu_too(student: StudentProxy, case: Case, err: StudentError) -> None:
    """An error on the other device that the CPU raises too is not about devices: say that, so this check
    never blames the device for a bug another check already shows (the same inputs, on the CPU)."""
    try:
        student.call(case.fn, *case.args, **case.kwargs)
    except StudentError as on_cpu:
        if on_cpu.exc_type == err.exc_type:
            raise AssertionError(
                f"`{case.fn}` raises {err.exc_type} on CPU inputs as well (\"{str(on_cpu.reply.get('message', ''))[:160]}\"), "
                "so whether it keeps to its inputs' device could not be checked; fix that error first"
                + (f" ({on_cpu.note})" if on_cpu.note else "")) from None


def _device_kept_on_cpu(student: StudentProxy, case: Case) -> list[Any]:
    """Where the meta device cannot run the student's code (not the student's fault), judge the
    device on the CPU: the function runs on CPU inputs and returns every output on the CPU.
    A pass is recorded only if it does; anything else fails, as on meta."""
    try:
        value = student.call(case.fn, *case.args, **case.kwargs).value
    except StudentError as err:
        raise AssertionError(
            f"`{case.fn}` raised {err.exc_type} on CPU inputs (\"{str(err.reply.get('message', ''))[:160]}\"); "
            "it must work on whatever device its inputs are on" + (f" ({err.note})" if err.note else "")) from None
    for k, out in enumerate(outputs_of(value)):
        t = as_tensor(out, f"`{case.fn}`")
        assert t.device.type == "cpu", (
            f"`{case.fn}` returned output #{k + 1} on {t.device} for CPU inputs; outputs must stay on the inputs' device")
    return outputs_of(value)


def check_cuda_matches_cpu(student: StudentProxy, case: Case, cuda: bool) -> None:
    """Numeric parity CPU vs CUDA (TF32 is off in the worker's default); skipped without CUDA."""
    if not cuda:
        pytest.skip("no CUDA device on this machine: GPU-only check not run")
    cpu = outputs_of(student.call(case.fn, *case.args, **case.kwargs).value)
    again = outputs_of(student.call(case.fn, *case.args, stream=1, **case.kwargs).value)
    gpu = outputs_of(student.call(case.fn, *case.to("cuda").args, **case.kwargs).value)
    rtol, atol = TOLERANCES[torch.float32]
    for c, a, g in zip(cpu, again, gpu):
        g = as_tensor(g, f"`{case.fn}` on CUDA")
        assert g.device.type == "cuda", f"`{case.fn}` returned a tensor on {g.device} for CUDA inputs"
        c = as_tensor(c, f"`{case.fn}`")
        margin = noise_margin(c, a) if isinstance(a, torch.Tensor) else 0.0
        expect_close(g.cpu(), c, f"`{case.fn}` on CUDA vs CPU", torch.float32, tolerance=(rtol, atol + margin))


def noncontiguous(x: torch.Tensor) -> torch.Tensor:
    """Same values, transposed memory layout (the worker rebuilds the strides)."""
    return x.transpose(-2, -1).contiguous().transpose(-2, -1) if x.dim() >= 2 else x
