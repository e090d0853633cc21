"""Properties both modules share: weights, the tril buffer, shapes, causality, dropout, devices.

Each test runs once per module (the ``spec`` fixture); every probe is one
self-contained request (construct, load weights, run, report), and every
judgment is made here from the facts the worker reports.

PYTEST_DONT_REWRITE: messages are written for students; pytest's assertion
rewriting (active when the project's own tests grade in-process) would append its own.
"""

from __future__ import annotations

import torch

from grader.checks import helpers as h
from grader.checks.attention_modules.conftest import B, CTX, D_MODEL, T, ModuleSpec, x_of
from grader.sandbox.errors import StudentError

HINTS = {
    "SelfAttentionHead": "Scale by sqrt(head_size), mask with tril[:T, :T] before the softmax, then weights @ v.",
    "MultiHeadAttention": "Concatenate the heads' outputs along the last dim, in order, then apply proj.",
}


def _outputs(facts, what, n):
    outs = facts.get("outputs") or []
    assert len(outs) == n, f"{what}: forward did not return an output for every input"
    return [h.as_tensor(o, f"{what} forward") for o in outs]


def test_weights_load_under_contract_names(student, spec):
    facts = spec.probe(student, params=spec.params())
    missing = facts.get("load", {}).get("missing", [])
    missing_params = [k for k in missing if k != "tril" and not k.endswith(".tril")]
    assert not missing_params, (
        f"`{spec.cls}` has no parameter {missing_params[0]!r}; the contract names its submodules "
        "(query/key/value without bias, heads as an nn.ModuleList, proj with bias)"
    )
    unexpected = facts.get("load", {}).get("unexpected", [])
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
    assert torch.allclose(a[:, :3], b[:, :3], atol=1e-5), (
        f"changing tokens after position 2 changed `{spec.cls}`'s outputs 0..2: the module is not causal "
        "(mask the scores with tril before the softmax)"
    )


def test_tril_is_a_registered_buffer(student, spec):
    facts = spec.probe(student)
    buffers = {k: v for k, v in (facts.get("buffers") or {}).items() if k.split(".")[-1] == "tril"}
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
    x = x_of(T, seed=50).double()
    facts = spec.probe(student, params=spec.params(), dtype="float64", inputs=[x])
    (out,) = _outputs(facts, f"`{spec.cls}`", 1)
    h.expect_dtype(out, torch.float64, f"`{spec.cls}` output after .to(torch.float64)")
    h.expect_close(out, spec.expected(x), f"`{spec.cls}` in float64", torch.float64)


def test_gradients_flow_to_the_input(student, spec):
    x = x_of(T, seed=60).double()
    cot = h.randn(B, T, spec.out_size, seed=61, dtype=torch.float64)
    facts = spec.probe(student, params=spec.params(), dtype="float64", inputs=[x], cotangent=cot)
    grads = facts.get("input_grads") or [None]
    assert grads[0] is not None, f"no gradient reaches the input of `{spec.cls}`; something detaches the computation"
    xr = x.clone().requires_grad_(True)
    (want,) = torch.autograd.grad(spec.reference_module()(xr), xr, cot)
    h.expect_close(grads[0], want, f"the input gradient of `{spec.cls}`", torch.float64)


def test_no_dropout_in_eval_mode(student, spec):
    x = x_of(T, seed=70)
    facts = spec.probe(student, dropout=0.5, params=spec.params(), mode="eval", inputs=[x, x])
    a, b = _outputs(facts, f"`{spec.cls}`", 2)
    assert torch.equal(a, b), f"`{spec.cls}` in eval mode gives different outputs on the same input: dropout must be off in eval()"
    h.expect_close(a, spec.expected(x), f"`{spec.cls}` in eval mode with dropout=0.5", torch.float32,
                   "In eval mode dropout must do nothing: use an nn.Dropout module (or F.dropout(..., training=self.training)).")


def test_dropout_active_in_training_mode(student, spec):
    x = x_of(T, seed=80)
    train = _outputs(spec.probe(student, dropout=0.5, params=spec.params(), mode="train", inputs=[x]), f"`{spec.cls}`", 1)[0]
    assert not torch.allclose(train.double(), spec.expected(x), atol=1e-5), (
        f"`{spec.cls}` in training mode with dropout=0.5 gives exactly the eval output: dropout is never applied"
    )


def test_tril_is_built_at_context_length(student, spec):
    """A tril sized by a fixed block size (``torch.ones(8, 8)``, a module constant) is right at the
    usual context_length 8 and crashes on any input longer than that block. Built at context_length
    11, the module must hold an (11, 11) tril and run inputs of length 9 and 11. (A constant other
    than 8 already fails the buffer-shape check at context_length 8.)"""
    ctx = 11
    other = ModuleSpec(spec.cls, (*spec.args[:2], ctx), spec.reference)
    ref = other.reference_module()
    params = {k: v.detach().float() for k, v in ref.named_parameters()}
    xs = [x_of(ctx, seed=111), x_of(ctx - 2, seed=112)]
    what = f"`{spec.cls}(..., context_length={ctx})`"
    try:
        facts = other.probe(student, params=params, inputs=xs)
    except StudentError as err:
        text = str(err.reply.get("message", ""))[:160]
        raise AssertionError(
            f"{what} raised {err.exc_type} on inputs of length {ctx} and {ctx - 2} (\"{text}\"). "
            "Every T <= context_length must work: build tril with context_length "
            "(torch.ones(context_length, context_length)), not with a fixed block size, and slice it to [:T, :T]."
        ) from None
    for name, b in (facts.get("buffers") or {}).items():
        if name.split(".")[-1] == "tril":
            assert b["shape"] == [ctx, ctx], (
                f"{what} has a buffer {name!r} of shape {tuple(b['shape'])}; expected ({ctx}, {ctx}). "
                "Size tril by the context_length argument, not by a fixed block size."
            )
    for x, out in zip(xs, _outputs(facts, what, len(xs))):
        t = x.shape[1]
        h.expect_shape(out, (B, t, spec.out_size), f"{what} output for x {B}x{t}x{D_MODEL}")
        with torch.no_grad():
            want = ref(x.double())
        h.expect_close(out, want, f"{what} output with the reference's weights (T={t})", torch.float32, HINTS[spec.cls])
