"""Mistakes named from what the answers themselves show, where no known variant gives them.

A variant names a mistake by giving every answer the student gave. Some mistakes show in a relation
between the student's answers and the reference's on the same requests, whatever code wrote them:

- **a cut gradient**: the values are the reference's, but no gradient reaches an input or a parameter
  that the reference's gradient reaches (``torch.no_grad()`` or ``.detach()`` around a stage);
- **a parameter without gradient**: the values differ and a parameter the reference trains gets no
  gradient at all (a projection that forward never uses: v computed with ``self.key``);
- **a tensor of another kind**: a name the reference registers as a buffer is a parameter (or the
  other way round), with the same shape.

Each is said in the lesson's words, from what this student's answers showed. A structure is shown on the
request that built the module (the checks' own sizes); a gradient is told without its inputs, which come
from hidden checks (the student's own inputs), so the sentence is the same for every student. They are looked for only for an exercise that fails and that no variant explains
(``Diagnoser.diagnose``): a variant's name, written for its mistake, is always preferred.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence

from grader.diagnosis.answers import Answer, call_text, same
from grader.diagnosis.gradients import INPUT, PARAM, is_gradient_request, no_gradient

Evidence = tuple[dict[str, Any], str, Answer]
ReferenceAnswer = Callable[[dict[str, Any], str], Answer]

CUT = "the gradient is cut"
NO_AUTOGRAD = ("part of the computation runs outside autograd (inside torch.no_grad(), after .detach(), or through a "
               "value rebuilt with .item(), .numpy() or torch.tensor(...))")


KINDS = ("buffer_as_parameter", "parameter_as_buffer", "gradient_cut", "parameter_without_gradient")


@dataclass(frozen=True)
class Observed:
    """A mistake read from the answers: ``explanation`` is the whole sentence a student reads."""

    kind: str  # one of KINDS
    exercise: str
    title: str
    explanation: str

    @property
    def id(self) -> str:
        """``<kind>-<exercise>``: the exercise whose answers show it (``exercise_of`` reads it back)."""
        return f"{self.kind}-{self.exercise}"


def exercise_of(mistake_id: str) -> str | None:
    """The exercise an observed mistake's id names, or None for any other id."""
    kind, _, exercise = mistake_id.partition("-")
    return exercise if kind in KINDS and exercise else None


def observations(failing: set[str], evidence: Mapping[str, Sequence[Evidence]], reference: ReferenceAnswer,
                 module: ModuleType, uses: Mapping[str, frozenset[str]]) -> dict[str, Observed]:
    """For each failing exercise, what its answers show (``observe``), callees first: an exercise that calls
    a failing one with an observation of its own is explained by that one (its own checks fail first)."""
    found: dict[str, Observed] = {}
    for exercise in sorted(failing, key=lambda e: (len(uses.get(e, ())), e)):
        inner = [found[f] for f in sorted(uses.get(exercise, frozenset()) - {exercise}) if f in found]
        seen = inner[0] if inner else observe(exercise, evidence.get(exercise, ()), reference, module)
        if seen is not None:
            found[exercise] = seen
    return found


def observe(exercise: str, evidence: Sequence[Evidence], reference: ReferenceAnswer,
            module: ModuleType) -> Observed | None:
    """The first relation the exercise's answers show, or None."""
    pairs = [(message, answer, reference(message, key)) for message, key, answer in evidence]
    return _kind_exchanged(exercise, pairs) or _cut(exercise, pairs, module) or _unused_parameter(exercise, pairs)


def _values_right(pairs: Sequence[tuple[dict[str, Any], Answer, Answer]]) -> bool:
    """Every answer's values are the reference's, gradients aside (an exception only on a gradient request)."""
    for message, answer, ref in pairs:
        if is_gradient_request(message) and answer.raised and not ref.raised:
            continue  # autograd raised: the values were never returned; the gradient tells the rest
        if not same(replace(answer, grads=()), replace(ref, grads=()), words=ref.raised is None):
            return False
    return True


def _kind_exchanged(exercise: str, pairs: Sequence[tuple[dict[str, Any], Answer, Answer]]) -> Observed | None:
    for message, answer, ref in pairs:
        if message.get("op") != "probe" or len(answer.structure) != 2 or len(ref.structure) != 2:
            continue
        (params, buffers), (ref_params, ref_buffers) = answer.structure, ref.structure
        as_param = dict(params)
        as_buffer = {n: s for n, s, _ in buffers}
        ref_param = dict(ref_params)
        ref_buffer = {n: s for n, s, _ in ref_buffers}
        shown = call_text({**message, "inputs": None})  # as built: the structure is the evidence, not a forward
        for name, shape in ref_buffer.items():
            if as_param.get(name) == shape and name not in as_buffer:
                return Observed("buffer_as_parameter", exercise, f"`{name}` registered as a parameter, not a buffer",
                                f"your `{exercise}` registers `{name}` as an nn.Parameter, where the reference keeps it "
                                "as a buffer: a buffer is saved in state_dict and moved by .to() but never trained, while "
                                "a parameter is handed to the optimizer and counted by .parameters(). Register it with "
                                f"self.register_buffer(...). For example, {shown} has the parameter `{name}` "
                                "and no buffer of that name.")
        for name, shape in ref_param.items():
            if as_buffer.get(name) == shape and name not in as_param:
                return Observed("parameter_as_buffer", exercise, f"`{name}` registered as a buffer, not a parameter",
                                f"your `{exercise}` registers `{name}` as a buffer, where the reference has a parameter: "
                                "a buffer is never trained. Make it a parameter (an nn.Linear's weight, or nn.Parameter). "
                                f"For example, {shown} has the buffer `{name}` and no parameter of that name.")
    return None


def _cut(exercise: str, pairs: Sequence[tuple[dict[str, Any], Answer, Answer]], module: ModuleType) -> Observed | None:
    """The values are the reference's, but a gradient the reference has is missing."""
    if not _values_right(pairs):
        return None
    for message, answer, ref in pairs:
        if not is_gradient_request(message) or ref.raised:
            continue
        reached = [name for name, g in ref.grads if not no_gradient(g)]
        if answer.raised:
            if "does not require grad" not in answer.raised[2] or not reached:
                continue
            missing = reached
        else:
            mine = dict(answer.grads)
            if [n for n, _ in answer.grads] != [n for n, _ in ref.grads]:
                continue
            missing = [n for n in reached if no_gradient(mine.get(n))]  # what else reaches, the cut changes too
            if not missing:
                continue
        names = _names(missing, message, module)
        several = len(ref.outputs) > 1 or len(answer.outputs) > 1
        if answer.raised:  # autograd found nothing to differentiate in an output: which inputs it cut is unknown
            cut = (f"{'one of its outputs is' if several else 'its output is'} cut off from autograd, so no gradient "
                   f"flows back from it to {_listed(names)}")
            seen = "an error from autograd (an output with nothing to differentiate)"
        else:
            cut = f"no gradient reaches {_listed(names)}"
            seen = f"no gradient for {names[0]}"
        return Observed("gradient_cut", exercise, f"the right values, but {cut}",
                        f"your `{exercise}` gives the right values, but {cut}: {NO_AUTOGRAD}. Compute every step with "
                        f"ordinary tensor operations, so that autograd follows it. Asked for a gradient, your code gives "
                        f"{seen}, where the reference's gradient reaches {'them' if answer.raised and len(names) > 1 else 'it'}.")
    return None


def _unused_parameter(exercise: str, pairs: Sequence[tuple[dict[str, Any], Answer, Answer]]) -> Observed | None:
    """A parameter the reference trains gets no gradient from the student's module, whose values differ."""
    for message, answer, ref in pairs:
        if message.get("op") != "probe" or answer.raised or ref.raised or not answer.grads:
            continue
        mine = dict(answer.grads)
        missing = [n for n, g in ref.grads if n.startswith(PARAM) and n in mine
                   and not no_gradient(g) and no_gradient(mine[n])]
        if not missing:
            continue
        names = [f"`{n.removeprefix(PARAM)}`" for n in missing]
        parts = sorted({n.removeprefix(PARAM).rsplit(".", 1)[0] for n in missing})
        roles = {p.rsplit(".", 1)[-1] for p in parts} <= {"query", "key", "value"}
        fix = ("compute the query, key and value each with its own projection" if roles
               else f"use {_listed([f'`{p}`' for p in parts])} in forward")
        return Observed("parameter_without_gradient", exercise, f"{names[0]} gets no gradient",
                        f"in your `{exercise}` no gradient reaches {_listed(names)}: the output does not depend on "
                        f"{_listed([f'`{p}`' for p in parts])} through autograd, so training would never change "
                        f"{'it' if len(names) == 1 else 'them'}. A projection that forward never uses (another one "
                        f"computing its tensor in its place) or one used without autograd does this: {fix}. Asked for a "
                        f"gradient, your module gives none for {names[0]}, where the reference's gradient reaches it.")
    return None


def _names(grads: Sequence[str], message: dict[str, Any], module: ModuleType) -> list[str]:
    """The gradients' names in the lesson's words: an argument by its name in the contract, a parameter by
    its dotted name, a module's input as 'the input'."""
    try:
        params = list(inspect.signature(getattr(module, str(message.get("fn")))).parameters)
    except (AttributeError, TypeError, ValueError):
        params = []
    out = []
    for n in grads:
        if n.startswith(INPUT):
            i = int(n.removeprefix(INPUT))
            out.append(f"`{params[i]}`" if i < len(params) else f"argument {i + 1}")
        elif n.startswith(PARAM):
            out.append(f"`{n.removeprefix(PARAM)}`")
        else:
            out.append("the input")
    return out


def _listed(names: Sequence[str], most: int = 5) -> str:
    shown = list(names) if len(names) <= most else list(names[:most - 1]) + [f"{len(names) - most + 1} more"]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
