"""Properties both modules share: weights, the tril buffer, shapes, causality, dropout, devices.

Each test runs once per module (the ``spec`` fixture); every probe is one
self-contained request (construct, load weights, run, report), and every
judgment is made here from the facts the worker reports.
"""

from __future__ import annotations

import pytest
import torch

from grader.checks import helpers as h
from grader.checks.attention_modules import dropout_sites as sites
from grader.checks.attention_modules.conftest import B, CTX, D_MODEL, N_HEADS, T, ModuleSpec, skip_if_nonfinite, x_of
from grader.sandbox.errors import StudentError

HINTS = {
    "SelfAttentionHead": "Scale by sqrt(head_size), mask with tril[:T, :T] before the softmax, then weights @ v.",
    "MultiHeadAttention": "Concatenate the heads' outputs along the last dim, in order, then apply proj.",
}


def _outputs(facts, what, n):
    outs = facts.get("outputs") or []
    assert len(outs) == n, f"{what}: forward did not return an output for every input"
    return [h.as_tensor(o, f"{what} forward") for o in outs]


def structural_cause(student, spec, facts) -> str:
    """The structural reason a name is missing, in words, with the fix; "" when none is seen."""
    plain = facts.get("plain_containers") or {}
    if plain:
        name, kind = next(iter(plain.items()))
        fix = "nn.ModuleDict" if kind == "dict" else "nn.ModuleList"
        return (f"`{name}` holds modules in a plain Python {kind}, which hides them (and their weights and buffers) "
                f"from .parameters(), .to(), .eval() and state_dict; wrap it in {fix}(...)")
    try:
        ran = spec.probe(student, inputs=[x_of(T)])
    except StudentError:
        return ""
    new = ran.get("new_parameters") or []
    if new:
        return (f"parameter {new[0]!r} is created in forward, so it does not exist when the module is built "
                "(load_state_dict, the optimizer and .to() never see it); create every submodule in __init__")
    return ""


def test_weights_load_under_contract_names(student, spec):
    facts = spec.probe(student, params=spec.params())
    missing = facts.get("load", {}).get("missing", [])
    missing_params = [k for k in missing if k != "tril" and not k.endswith(".tril")]
    unexpected = facts.get("load", {}).get("unexpected", [])
    if missing_params or unexpected:
        cause = structural_cause(student, spec, facts)
        if cause:
            raise AssertionError(f"the reference's weights do not load into `{spec.cls}`: {cause}.")
    assert not missing_params, (
        f"`{spec.cls}` has no parameter {missing_params[0]!r}; the contract names its submodules "
        "(query/key/value without bias, heads as an nn.ModuleList, proj with bias)"
    )
    assert not unexpected, f"`{spec.cls}` has no place for {unexpected[0]!r}: check the submodule names and shapes"


def test_output_matches_reference_for_any_length(student, spec):
    xs = [x_of(t, seed=t) for t in (1, 4, T, CTX)]
    facts = spec.probe(student, params=spec.params(), inputs=xs)
    for x, out in zip(xs, _outputs(facts, f"`{spec.cls}`", len(xs))):
        t = x.shape[1]
        h.expect_shape(out, (B, t, spec.out_size), f"`{spec.cls}` output for x {B}x{t}x{D_MODEL}",
                       "Slice the mask to the input length: tril[:T, :T].")
        h.expect_close(out, spec.expected(x), f"`{spec.cls}` output with the reference's weights (T={t})", torch.float32,
                       HINTS[spec.cls])


def test_future_tokens_do_not_change_past_outputs(student, spec):
    x = x_of(T, seed=40)
    x2 = x.clone()
    x2[:, 3:] = h.randn(B, T - 3, D_MODEL, seed=41)
    a, b = _outputs(spec.probe(student, params=spec.params(), inputs=[x, x2]), f"`{spec.cls}`", 2)
    a, b = a[:, :3].double(), b[:, :3].double()
    finite = torch.isfinite(a) & torch.isfinite(b)
    changed = finite & ~torch.isclose(a, b, rtol=0.0, atol=1e-5)
    assert not changed.any(), (
        f"changing tokens after position 2 changed `{spec.cls}`'s outputs 0..2: the module is not causal "
        "(mask the scores with tril before the softmax)"
    )
    skip_if_nonfinite([a, b], f"`{spec.cls}` output", [f"x {B}x{T}x{D_MODEL} (seed 40)", "x with tokens 3.. changed"],
                      "causality")


def test_tril_is_a_registered_buffer(student, spec):
    facts = spec.probe(student)
    buffers = {k: v for k, v in (facts.get("buffers") or {}).items() if k.split(".")[-1] == "tril"}
    if not buffers:
        plain = [n for n in (facts.get("tensor_attributes") or {}) if n.split(".")[-1] == "tril"]
        if plain:
            raise AssertionError(
                f"`{spec.cls}` keeps {plain[0]!r} as a plain tensor attribute, not a buffer: it is neither saved in "
                "state_dict nor moved by .to(). Use self.register_buffer('tril', torch.tril(torch.ones(context_length, "
                "context_length)))."
            )
        cause = structural_cause(student, spec, facts)
        assert not cause, f"`{spec.cls}` shows no tril buffer because {cause}."
    assert buffers, (
        f"`{spec.cls}` has no buffer named tril: a plain attribute is neither saved in state_dict nor moved by .to(). "
        "Use self.register_buffer('tril', torch.tril(torch.ones(context_length, context_length)))."
    )
    for name, b in buffers.items():
        assert b["persistent"], f"buffer {name!r} is not saved in state_dict (persistent=False); the contract saves it"
        assert b["shape"] == [CTX, CTX], f"buffer {name!r} has shape {b['shape']}; expected ({CTX}, {CTX})"


def test_moves_to_the_inputs_device(student, spec):
    try:
        facts = spec.probe(student, to="meta", inputs=[x_of(T).to("meta")])
    except StudentError as err:
        text = str(err.reply.get("message", ""))
        if any(s in text for s in h.DEVICE_MISMATCH):
            try:
                plain = spec.probe(student)  # the cause, where it is structural
            except StudentError:
                plain = {}
            hidden = plain.get("plain_containers") or {}
            loose = [n for n in plain.get("tensor_attributes") or {} if n.split(".")[-1] == "tril"]
            if loose and not hidden:
                raise AssertionError(
                    f"`{spec.cls}` mixes devices after .to(): `{loose[0]}` is a plain tensor attribute, not a buffer, so "
                    ".to() leaves it on the CPU. Register it: self.register_buffer('tril', torch.tril(torch.ones(...)))."
                ) from None
            if hidden:
                name, kind = next(iter(hidden.items()))
                raise AssertionError(
                    f"`{spec.cls}` mixes devices after .to(): `{name}` holds modules in a plain Python {kind}, so .to() "
                    f"never moves them (nor their tril buffers). Wrap them in nn.Module{'Dict' if kind == 'dict' else 'List'}(...)."
                ) from None
            raise AssertionError(
                f"`{spec.cls}` mixes devices after .to(): \"{text[:160]}\". A tensor made in forward (or a tril that is not "
                "a buffer) stays on the CPU; register tril as a buffer and build nothing on a fixed device."
            ) from None
        raise
    stuck = [n for n, b in (facts.get("buffers") or {}).items() if b["device"] != "meta"]
    assert not stuck, f"buffer {stuck[0]!r} did not move with .to()"
    (out,) = _outputs(facts, f"`{spec.cls}`", 1)
    assert out.device.type == "meta", f"`{spec.cls}` returned its output on {out.device}, not on the inputs' device"


def test_follows_module_dtype(student, spec):
    """The module cast to float64 computes what it computes in float32 (the same weights), in float64."""
    x = x_of(T, seed=50)
    facts = spec.probe(student, params=spec.params(), dtype="float64", inputs=[x.double()])
    (out,) = _outputs(facts, f"`{spec.cls}`", 1)
    h.expect_dtype(out, torch.float64, f"`{spec.cls}` output after .to(torch.float64)")
    (out32,) = _outputs(spec.probe(student, params=spec.params(), inputs=[x]), f"`{spec.cls}`", 1)
    (again,) = _outputs(spec.probe(student, params=spec.params(), inputs=[x], stream=1), f"`{spec.cls}`", 1)
    skip_if_nonfinite([out32, out, again], f"`{spec.cls}` output", ["x in float32", "x in float64",
                                                                    "x in float32 under another random state"], "the dtype")
    rtol, atol = h.TOLERANCES[torch.float32]
    h.expect_close(out, out32, f"`{spec.cls}` in float64 compared with the same module in float32", torch.float32,
                   "After .to(torch.float64) the module must compute the same function in float64: "
                   "make nothing in forward with a fixed dtype.", tolerance=(rtol, atol + h.noise_margin(out32, again)))


def test_gradients_flow_to_the_input(student, spec, hidden_seed):
    """The input gradient exists, is finite, and matches finite differences of the module's own output.
    Hidden: the input, cotangent, directions and weights are this student's own (``grader.seeds``)."""
    x = x_of(T, seed=h.seed(60, hidden_seed)).double()
    cot = h.randn(B, T, spec.out_size, seed=h.seed(61, hidden_seed), dtype=torch.float64)
    eps = 1e-6
    dirs = [h.randn(B, T, D_MODEL, seed=h.seed(62 + i, hidden_seed), dtype=torch.float64) for i in range(2)]
    inputs = [x] + [x + s * eps * d for d in dirs for s in (1, -1)]
    facts = spec.probe(student, params=spec.params(h.seed(7, hidden_seed)), dtype="float64", inputs=inputs,
                       cotangent=cot)
    (out, *_) = _outputs(facts, f"`{spec.cls}`", len(inputs))
    h.expect_shape(out, (B, T, spec.out_size), f"`{spec.cls}` forward on x {B}x{T}x{D_MODEL}")  # else no gradient to compare
    grads = facts.get("input_grads") or [None]
    assert grads[0] is not None, f"no gradient reaches the input of `{spec.cls}`; something detaches the computation"
    outs = _outputs(facts, f"`{spec.cls}`", len(inputs))
    skip_if_nonfinite(outs[:1], f"`{spec.cls}` output", [f"x {B}x{T}x{D_MODEL} in float64"], "the gradient")
    g = grads[0].double()
    bad = h.nonfinite_finding(g, f"the input gradient of `{spec.cls}`", f"x {B}x{T}x{D_MODEL} in float64")
    assert bad is None, bad
    for i, d in enumerate(dirs):
        plus, minus = outs[1 + 2 * i].double(), outs[2 + 2 * i].double()
        numeric = float((cot * (plus - minus)).sum() / (2 * eps))
        analytic = float((g * d).sum())
        assert abs(numeric - analytic) <= 1e-4 * max(1.0, abs(numeric)), (
            f"the input gradient of `{spec.cls}` does not match its own output: along a random direction autograd "
            f"gives {analytic:.6g}, finite differences of the output give {numeric:.6g}. Something in forward "
            "breaks autograd (an in-place change of a tensor autograd needs, .data, or a detach on part of the path)."
        )


def test_no_dropout_in_eval_mode(student, spec):
    """In eval mode dropout does nothing: the same input under two random states gives one output, and
    dropout=0.5 gives what dropout=0.0 gives. The one check that reads the module's randomness in eval mode:
    every other check runs its requests under one random state (``grader.sandbox.rng``)."""
    x = x_of(T, seed=70)
    facts = spec.probe(student, dropout=0.5, params=spec.params(), mode="eval", inputs=[x])
    (a,) = _outputs(facts, f"`{spec.cls}`", 1)
    (b,) = _outputs(spec.probe(student, dropout=0.5, params=spec.params(), mode="eval", inputs=[x], stream=1),
                    f"`{spec.cls}`", 1)
    (c,) = _outputs(spec.probe(student, dropout=0.0, params=spec.params(), mode="eval", inputs=[x]), f"`{spec.cls}`", 1)
    skip_if_nonfinite([a, b, c], f"`{spec.cls}` output in eval mode", ["x (dropout=0.5)", "x again (dropout=0.5)",
                                                                       "x (dropout=0.0)"], "dropout")
    hidden = facts.get("plain_containers") or {}
    if hidden and not torch.equal(a, b):  # the cause is structural: .eval() never reaches modules in a plain container
        name, kind = next(iter(hidden.items()))
        raise AssertionError(
            f"`{spec.cls}` in eval mode still drops out: `{name}` holds modules in a plain Python {kind}, so .eval() "
            f"never reaches them. Wrap them in nn.Module{'Dict' if kind == 'dict' else 'List'}(...).")
    assert torch.equal(a, b), (
        f"`{spec.cls}` in eval mode gives different outputs for the same input under two random states: something "
        "random is still on in eval() (dropout, added noise, or a layer created in forward with new random weights). "
        "Use an nn.Dropout module, or F.dropout(..., training=self.training), and create every layer in __init__.")
    h.expect_close(a, c, f"`{spec.cls}` in eval mode with dropout=0.5 compared with the same weights and dropout=0.0",
                   torch.float32,
                   "In eval mode dropout must do nothing: use an nn.Dropout module (or F.dropout(..., training=self.training)).")


def test_dropout_active_in_training_mode(student, spec):
    """In training mode with dropout=0.5, the same input under two random states gives two outputs: something is
    dropped, and which depends on the random state. Compared with itself, never with eval mode, so dropout that
    is also (wrongly) on in eval mode still counts as active here."""
    x = x_of(T, seed=80)
    train = [_outputs(spec.probe(student, dropout=0.5, params=spec.params(), mode="train", inputs=[x], stream=s),
                      f"`{spec.cls}`", 1)[0] for s in (0, 1)]
    skip_if_nonfinite(train, f"`{spec.cls}` output", ["x in training mode (dropout=0.5)",
                                                      "x in training mode under another random state"], "dropout")
    if torch.allclose(train[0].double(), train[1].double(), atol=1e-5):
        raise AssertionError(f"`{spec.cls}` in training mode with dropout=0.5 gives the same output under two random "
                             f"states: {sites.why_not_random(student, spec)}")


def test_no_dropout_at_rate_zero_in_training_mode(student, spec):
    """The dropout argument is the rate: built with dropout=0.0, the module in training mode computes what it
    computes in eval mode. A rate fixed in the code (``F.dropout(w, 0.1, ...)``, or ``nn.Dropout()``, whose
    default drops half) drops anyway. The student is compared with itself, so wrong values elsewhere do not fail here."""
    x = x_of(T, seed=75)
    what = f"`{spec.cls}(..., dropout=0.0)`"
    facts = spec.probe(student, dropout=0.0, params=spec.params(), mode="train", inputs=[x])
    (train,) = _outputs(facts, what, 1)
    (again,) = _outputs(spec.probe(student, dropout=0.0, params=spec.params(), mode="train", inputs=[x], stream=1),
                        what, 1)
    (plain,) = _outputs(spec.probe(student, dropout=0.0, params=spec.params(), mode="eval", inputs=[x]), what, 1)
    skip_if_nonfinite([train, again, plain], f"{what} output",
                      ["x in training mode", "x in training mode under another random state", "x in eval mode"],
                      "the dropout rate")
    fixed = {n: p for n, p in (facts.get("dropout") or {}).items() if p != 0.0}
    seen = f" It holds {', '.join(f'{n} with p={p:g}' for n, p in sorted(fixed.items())[:2])}." if fixed else ""
    still_random = not torch.allclose(again.double(), train.double(), rtol=1e-4, atol=1e-5)
    if still_random or not torch.allclose(train.double(), plain.double(), rtol=1e-4, atol=1e-5):
        constant = sites.fixed_rate_sentence(student, spec, 0.0)  # which dropout, at which rate, if one is the cause
        seen = f" {constant[0].upper()}{constant[1:]}." if constant else seen
    assert not still_random, (
        f"{what} in training mode gives different outputs for the same input under two random states, so "
        f"something random is still on: with dropout=0.0 nothing may be dropped, and nothing else may be random.{seen} "
        "Use the `dropout` argument as the rate (nn.Dropout(dropout)), not a fixed number, and add no noise in forward.")
    h.expect_close(train, plain, f"{what} in training mode compared with the same module in eval mode", torch.float32,
                   f"With dropout=0.0 nothing may be dropped, in training mode too.{seen} Use the `dropout` argument as "
                   "the rate (nn.Dropout(dropout)), not a fixed number; nn.Dropout() alone drops half.")


def test_tril_is_built_at_context_length(student, spec):
    """A tril sized by a fixed block size (``torch.ones(8, 8)``, a module constant) is right at the
    usual context_length 8 and crashes on any input longer than that block. Built at context_length
    11, the module must hold an (11, 11) tril, run inputs of length 9 and 11, and on an input of length
    8 give what the same weights give at context_length 8 (context_length only sizes the mask).
    (A constant other than 8 already fails the buffer-shape check at context_length 8.)"""
    ctx = 11
    other = ModuleSpec(spec.cls, (*spec.args[:2], ctx), spec.reference)
    params = spec.params()
    x = x_of(ctx, seed=111)
    xs = [x, x[:, : ctx - 2].contiguous(), x[:, :CTX].contiguous()]
    what = f"`{spec.cls}(..., context_length={ctx})`"
    try:
        facts = other.probe(student, params=params, inputs=xs)
    except StudentError as err:
        text = str(err.reply.get("message", ""))[:160]
        said = f"{what} raised {err.exc_type} on inputs of length {ctx} and {ctx - 2} (\"{text}\")"
        if err.note.startswith("your `"):  # on what one of its own parts returned: that part is the cause, not tril
            raise AssertionError(f"{said}; {err.note}") from None
        raise AssertionError(
            f"{said}. Every T <= context_length must work: build tril with context_length "
            "(torch.ones(context_length, context_length)), not with a fixed block size, and slice it to [:T, :T]."
        ) from None
    for name, b in (facts.get("buffers") or {}).items():
        if name.split(".")[-1] == "tril":
            assert b["shape"] == [ctx, ctx], (
                f"{what} has a buffer {name!r} of shape {tuple(b['shape'])}; expected ({ctx}, {ctx}). "
                "Size tril by the context_length argument, not by a fixed block size."
            )
    outs = _outputs(facts, what, len(xs))
    for xi, out in zip(xs, outs):
        t = xi.shape[1]
        h.expect_shape(out, (B, t, spec.out_size), f"{what} output for x {B}x{t}x{D_MODEL}")
    (base,) = _outputs(spec.probe(student, params=params, inputs=[xs[2]]), f"`{spec.cls}`", 1)
    skip_if_nonfinite([outs[2], base], f"`{spec.cls}` output", [f"x {B}x{CTX}x{D_MODEL} at context_length {ctx}",
                                                                f"x {B}x{CTX}x{D_MODEL} at context_length {CTX}"],
                      "the mask size")
    h.expect_close(outs[2], base, f"{what} on an input of length {CTX}, compared with the same weights at "
                   f"context_length={CTX}", torch.float32,
                   "context_length must only size tril; slice it to the input length with tril[:T, :T].")


RATES = (0.25, 0.6)  # two rates: a rate fixed in the code (or nn.Dropout()'s default 0.5) cannot match both
RATE_ROWS = 64  # B at T=1: every row keeps its one weight with probability 1 - p, so some row keeps it


def _drop_factors(out: torch.Tensor, base: torch.Tensor) -> torch.Tensor:
    """What dropout did to each entry at T=1, where the single attention weight is exactly 1: ``out / base``
    (``base`` the same module's output with nothing dropped), 0 where it was dropped and 1 / (1 - p) where it
    was kept; read where ``base`` is clearly not 0."""
    readable = base.abs() > 1e-3
    return out.double()[readable] / base.double()[readable]


def _rate_finding(factors: torch.Tensor, p: float, what: str) -> str:
    """Why the kept weights do not show the rate ``p``, in words; "" when they do (or none was kept)."""
    kept = factors[factors.abs() > 1e-6]
    want = 1 / (1 - p)
    off = kept[~((kept - want).abs() <= 1e-3 * want)]
    if not off.numel():
        return ""
    seen = off[0].item()
    rate = ("no dropout at all" if abs(seen - 1) < 1e-3 else f"the rate {1 - 1 / seen:.3g}" if seen > 1
            else "no rate dropout gives")
    return (f"{what} in training mode scales a kept attention weight by {seen:.4g}, which is {rate}; dropout={p:g} "
            f"keeps a weight with factor 1 / (1 - {p:g}) = {want:.4g} (at T=1 the single weight is 1, so each output "
            "entry is 0 or that factor times the output with nothing dropped)")


def _raise_where_or_what_rate(student, spec, p: float, what: str, part: bool) -> None:
    """Where the rate is not the cause, say what is (``dropout_sites``): a dropout placed elsewhere than on the
    weights, or, for a head of MultiHeadAttention, a rate fixed inside the student's own SelfAttentionHead."""
    seen = sites.trace(student, spec, dropout=p)
    wrong = seen.misplaced(spec.cls) if seen else None
    if wrong is not None and not seen.on_weights(spec.cls):
        raise AssertionError(f"{what} in training mode does not drop attention weights at the rate {p:g}: "
                             + sites.site_sentence(wrong, spec.cls))
    own = sites.head_sentence(student, spec, p) if part else ""
    if own:
        raise AssertionError(f"{what} in training mode does not drop its heads' weights at the rate {p:g}: {own}")


def test_dropout_drops_at_the_asked_rate(student, spec):
    """At T=1 the one attention weight is exactly 1, so dropout leaves it 0 or scales it by exactly 1 / (1 - p):
    the rate shows in the kept entries without statistics, and a row that was dropped is never held against
    anyone. Judged at two rates against the module's own output with nothing dropped (eval mode, dropout=0.0,
    the reference's weights loaded), which must not depend on the random state. For `MultiHeadAttention`,
    each head is run as the module built it (``heads.i``): the rate it was given."""
    x = h.randn(RATE_ROWS, 1, D_MODEL, seed=95)
    params = spec.params()
    if spec.cls == "MultiHeadAttention":
        sites.head_spec(spec).params()  # asked on every run, so a kit records what naming a failing head needs
    for part in [None] if spec.cls == "SelfAttentionHead" else [f"heads.{i}" for i in range(N_HEADS)]:
        def what(p: float) -> str:
            return f"`{spec.cls}(..., dropout={p:g})`" + (f"'s {part}" if part else "")

        run = {"run": part} if part else {}
        try:
            base, again = (_outputs(spec.probe(student, dropout=0.0, params=params, mode="eval", inputs=[x], stream=s,
                                               **run), what(0.0), 1)[0] for s in (0, 1))
        except StudentError as err:
            if part and err.exc_type == "AttributeError":
                pytest.skip(f"`{spec.cls}` has no submodule {part} (its heads are not an nn.ModuleList of "
                            "SelfAttentionHead: another check reports that), so the heads' dropout rate cannot "
                            "be measured; not counted here")
            raise
        skip_if_nonfinite([base], f"{what(0.0)} output", [f"x {RATE_ROWS}x1x{D_MODEL} in eval mode"],
                          "the dropout rate")
        if not torch.equal(base, again):
            pytest.skip(f"{what(0.0)} in eval mode gives different outputs under two random states "
                        "(test_no_dropout_in_eval_mode reports it), so there is no output with nothing dropped to "
                        "read the rate against; not counted here")
        for p in RATES:
            facts = spec.probe(student, dropout=p, params=params, mode="train", inputs=[x], **run)
            (out,) = _outputs(facts, what(p), 1)
            h.expect_shape(out, tuple(base.shape), f"{what(p)} output for x {RATE_ROWS}x1x{D_MODEL}")
            skip_if_nonfinite([out], f"{what(p)} output", [f"x {RATE_ROWS}x1x{D_MODEL} in training mode"],
                              "the dropout rate")
            finding = _rate_finding(_drop_factors(out, base), p, what(p))
            if finding:
                _raise_where_or_what_rate(student, spec, p, what(p), bool(part))
            assert not finding, finding + (
                ". Build every head with the module's own rate: SelfAttentionHead(d_model, d_model // n_heads, "
                "context_length, dropout), not a fixed, halved or other number." if part else
                ". Use the `dropout` argument as the rate: nn.Dropout(dropout) on the weights, not a fixed number.")
