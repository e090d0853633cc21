"""Where a module's dropout runs and who seeds its RNG, judged from what the child recorded (``sandbox/trace.py``).

The dropout checks see outputs; a sentence that says *why* an output is wrong must say what this student's
forward did, not what a typical bug does. So before advising, a check reads the trace of one training-mode
forward: each dropout call (which module, which rate, on what) and any ``torch.manual_seed`` in forward.
"Apply an nn.Dropout ..." is said only where no dropout acts on the attention weights, and "use the
``dropout`` argument as the rate" only where the rate, not the place, is what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.sandbox.errors import StudentError

if TYPE_CHECKING:  # the checks' conftest is imported where a check runs (``trace``), not where a trace is read
    from grader.checks.attention_modules.conftest import ModuleSpec
    from grader.sandbox.proxy import StudentProxy

TRACE_SEED = 120  # the input traced: any input of length T shows where dropout runs
AFTER_SOFTMAX = "wei = self.dropout(torch.softmax(wei, dim=-1)), then wei @ v"


@dataclass(frozen=True)
class DropoutSite:
    """One dropout call of forward: where it ran and on what (``kind``), as the child recorded it."""

    module: str
    kind: str  # weights | scores | values | output (a head's) | input | after_proj (MultiHeadAttention's) | other
    p: float | None
    training: bool | None
    fill: str | None  # the mask's fill in what it was given: -inf, finite, or None
    shape: tuple[int, ...]
    source: str | None

    @property
    def drops(self) -> bool:
        """It really drops something: a rate above 0, in training."""
        return bool(self.training) and (self.p or 0.0) > 0.0


@dataclass(frozen=True)
class DropoutTrace:
    sites: tuple[DropoutSite, ...]
    reseeded: dict[str, Any] | None

    def in_heads(self, cls: str) -> tuple[DropoutSite, ...]:
        """The sites inside the attention (a head's): for MultiHeadAttention, those under ``heads``."""
        if cls == "SelfAttentionHead":
            return self.sites
        return tuple(s for s in self.sites if s.module.startswith("heads."))

    def on_weights(self, cls: str) -> bool:
        return any(s.kind == "weights" and s.drops for s in self.in_heads(cls))

    def misplaced(self, cls: str) -> DropoutSite | None:
        """The first dropout inside the attention that drops something other than the weights."""
        return next((s for s in self.in_heads(cls) if s.kind != "weights" and s.drops), None)


def _kind(call: dict[str, Any], cls: str, module: str) -> str:
    shape = tuple(call.get("shape") or ())
    if call.get("probabilities") or call.get("function") == "scaled_dot_product_attention":
        return "weights"  # rows of weights, or the fused attention's own dropout, which acts on its weights
    if len(shape) >= 2 and shape[-1] == shape[-2] and shape[-1] > 1 and not call.get("is_input"):
        return "scores"
    if call.get("is_input"):
        return "input"
    by = call.get("returned_by")
    head = cls == "SelfAttentionHead" or module.startswith("heads.")
    if by is not None and (by == "" if cls == "SelfAttentionHead" else by.count(".") == 1 and by.startswith("heads.")):
        return "output"  # what the head's forward returns
    if str(call.get("input_from") or "").split(".")[-1] == "value":
        return "values"
    return "other" if head else "after_proj" if by == "" else "other"


def read_trace(facts: dict[str, Any], cls: str) -> DropoutTrace:
    sites = []
    for call in facts.get("dropout_calls") or []:
        module = str(call.get("module") or "")
        sites.append(DropoutSite(module, _kind(call, cls, module), call.get("p"), call.get("training"), call.get("fill"),
                          tuple(call.get("shape") or ()), call.get("input_from")))
    return DropoutTrace(tuple(sites), facts.get("reseeded"))


def trace(student: StudentProxy, spec: ModuleSpec, dropout: float = 0.5) -> DropoutTrace | None:
    """One training-mode forward of the student's module (the reference's weights), traced; None if it raised."""
    from grader.checks.attention_modules.conftest import T, x_of

    try:
        facts = spec.probe(student, dropout=dropout, params=spec.params(), mode="train",
                           inputs=[x_of(T, seed=TRACE_SEED)], trace=True)
    except StudentError:
        return None
    return read_trace(facts, spec.cls)


def _where(site: DropoutSite, cls: str) -> str:
    """``in heads.0`` for a head of MultiHeadAttention, "" for the head itself."""
    head = site.module.split(".")[:2]
    return f" (in {'.'.join(head)})" if cls == "MultiHeadAttention" and site.module.startswith("heads.") else ""


def site_sentence(site: DropoutSite, cls: str) -> str:
    """What this dropout does instead of dropping weights, and the fix, in the lesson's words."""
    where = _where(site, cls)
    if site.kind == "scores":
        what = "the masked scores" if site.fill else "the scores"
        leak = {"finite": " A dropped entry of the mask's fill becomes 0, so a future token gets weight in training mode;",
                "-inf": " A dropped -inf entry becomes NaN (-inf times 0), and the softmax spreads it over the row;",
                }.get(site.fill or "", " A dropped score becomes 0, which is a score, not a dropped weight, and the "
                                       "weights still sum to 1;")
        return (f"dropout is applied before the softmax, to {what}{where}.{leak} apply it to the weights after the "
                f"softmax: {AFTER_SOFTMAX}.")
    what = {"values": "the values (the output of `value`)", "output": "the head's output (weights @ v)",
            "input": "the input x"}.get(site.kind, f"a tensor of shape {site.shape} that is not the attention weights")
    return (f"dropout is applied to {what}{where}, not to the attention weights: apply it to the weights after the "
            f"softmax: {AFTER_SOFTMAX}.")


def reseed_sentence(reseeded: dict[str, Any], cls: str) -> str:
    module = str(reseeded.get("module") or "")
    who = f"`{cls}`'s forward" if not module else f"the forward of {module}"
    return (f"{who} sets the random seed itself (torch.manual_seed({reseeded.get('seed')})): every call draws the "
            "same dropout mask, and the caller's random state is reset with it. Seed once, outside the module "
            "(in the training script), never in forward.")


def why_not_random(student: StudentProxy, spec: ModuleSpec) -> str:
    """Why training mode gives one output under two random states, from the trace: a seed set in forward, no
    dropout that drops, or dropout that drops but not at random. Advice to add a dropout only where none acts."""
    seen = trace(student, spec)
    if seen is None:
        return "dropout is never applied at random. Apply an nn.Dropout(dropout) to the attention weights."
    if seen.reseeded:
        return reseed_sentence(seen.reseeded, spec.cls)
    if not seen.sites:
        return "no dropout runs in forward. Apply an nn.Dropout(dropout) to the attention weights."
    if not any(s.drops for s in seen.sites):
        off = next((s for s in seen.sites if s.training is False), None)
        if off:
            return (f"the dropout {_in(off)} is called with training=False, so it never drops. "
                    "Use an nn.Dropout(dropout) module, or F.dropout(..., training=self.training).")
        zero = seen.sites[0]
        return (f"the dropout {_in(zero)} has p={zero.p}, although the module was built with "
                "dropout=0.5, so it never drops. Use the `dropout` argument as the rate: nn.Dropout(dropout).")
    return ("forward applies dropout, yet its output does not change with the random state it is given. Use "
            "nn.Dropout(dropout) (or F.dropout) on the weights, which draws a new mask from torch's random state on "
            "every call.")


def _in(site: DropoutSite) -> str:
    return f"in `{site.module}`" if site.module else "in forward"


def fixed_rate_sentence(student: StudentProxy, spec: ModuleSpec, p: float, subject: str = "it") -> str:
    """Which dropout of forward drops at a rate other than ``p``, the rate the module was built with; "" if none.
    ``subject``: who applies it, as the sentence names the module ("it", "your SelfAttentionHead")."""
    seen = trace(student, spec, dropout=p)
    other = next((s for s in seen.sites if s.drops and s.p is not None and abs(s.p - p) > 1e-9), None) if seen else None
    if other is None:
        return ""
    return (f"built with dropout={p:g}, {subject} applies dropout with p={other.p:g} ({_in(other)}): that rate is "
            "written in the code, not read from the `dropout` argument")


def head_spec(spec: ModuleSpec) -> ModuleSpec:
    """One head of MultiHeadAttention ``spec``, built alone as the contract builds it: (d_model, d_model // n_heads,
    context_length). Its reference weights are asked for on every run of the rate check (``spec.params()``), so a
    student kit's recording holds what ``head_sentence`` reads when a student's head fails."""
    from grader.checks.attention_modules.conftest import ModuleSpec

    return ModuleSpec("SelfAttentionHead", (*spec.args[:1], spec.args[0] // spec.args[1], spec.args[2]), spec.reference)


def head_sentence(student: StudentProxy, spec: ModuleSpec, p: float) -> str:
    """For MultiHeadAttention whose heads drop at the wrong rate: "" unless the student's own SelfAttentionHead,
    built alone with the rate ``p``, already drops at another rate or drops no weight at all (then the head,
    not the passing on, is the cause)."""
    head = head_spec(spec)
    own = fixed_rate_sentence(student, head, p, subject="your SelfAttentionHead")
    if own:
        return (f"{own}; so every head drops at that rate whatever MultiHeadAttention passes on. Use the `dropout` "
                "argument as the rate in SelfAttentionHead: nn.Dropout(dropout).")
    seen = trace(student, head, dropout=p)
    if seen is not None and not any(s.drops for s in seen.sites):
        return (f"your SelfAttentionHead, built alone with dropout={p:g}, drops nothing in training mode (its own "
                "dropout checks report it), so no head drops whatever MultiHeadAttention passes on")
    return ""
