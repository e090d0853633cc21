"""Which known mistake do a failed check's answers match?

While a check runs, the student proxy keeps every request it sent to the
sandboxed child and the child's reply (``StudentProxy.recording``). When the
check fails, the judge replays those requests here, in its own process, on
the reference and on every catalogued variant of the check's exercise, with
the same inputs and the same seeds. A mistake is named only when

- the reference does not give the student's answers (the check failed for a
  reason the answers show), and
- the variant gives every one of them: the same values within the dtype's
  tolerance (NaN where NaN, inf where inf), the same dtype, shape and device,
  the same exception where the student's code raised (see ``_raised``), the
  same inputs written into where the check looked.

Two mistakes that both match are named together; nothing is guessed. A
request that cannot be replayed (a vector-Jacobian product, a probe with no
forward) is not evidence either way.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

import torch

from grader.checks.helpers import DEVICE_MISMATCH, TOLERANCES
from grader.diagnosis.catalogue import Mistake, module_from_source
from grader.diagnosis.operators import Variant, VariantFactory
from grader.diagnosis.operators import variants as generate_variants
from grader.sandbox.protocol import DTYPES
from grader.scorecard import Diagnosis, MistakeName

Request = tuple[dict[str, Any], dict[str, Any]]  # (message sent to the child, its reply)
MAX_REMEMBERED_ANSWERS = 20_000  # a few KB each at most: the checks' tensors are small


@dataclass(frozen=True)
class Answer:
    """What one request gave: an exception kind, or the outputs, which inputs were written into,
    and (for a module) its registered parameters and buffers."""

    raised: tuple[str, bool, str] | None = None  # (type, device mismatch?, first line with digits as N)
    outputs: tuple[Any, ...] = ()
    modified: tuple[bool, ...] = ()
    structure: tuple[Any, ...] = ()


def _raised(type_name: str, message: str) -> Answer:
    """An exception as evidence: its type, whether it is a device mismatch, and its first line with
    every run of digits read as N. Which of these count is decided where answers are compared
    (``same``): the words only where the contract asks for no exception."""
    text = re.sub(r"\d+", "N", message.splitlines()[0] if message else "")[:100]
    return Answer(raised=(type_name, any(s in message for s in DEVICE_MISMATCH), text))


def _structure(parameters: dict[str, Any], buffers: dict[str, Any]) -> tuple[Any, ...]:
    """Parameter names and shapes; buffer names, shapes and whether state_dict saves them."""
    return (tuple(sorted((n, tuple(p["shape"])) for n, p in parameters.items())),
            tuple(sorted((n, tuple(b["shape"]), bool(b["persistent"])) for n, b in buffers.items())))


def _flat(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _modified(before: Sequence[Any], after: Sequence[Any]) -> tuple[bool, ...]:
    def changed(b: Any, a: Any) -> bool:
        if not isinstance(b, torch.Tensor) or b.device.type == "meta":
            return False
        return not (isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a.cpu(), b.cpu()))
    return tuple(changed(b, a) for b, a in zip(before, after))


def replayable(message: dict[str, Any]) -> bool:
    """A plain call or a module probe; not a vector-Jacobian product (gradients are not replayed)."""
    return (message.get("op") == "call" and message.get("vjp") is None) or message.get("op") == "probe"


def student_answer(message: dict[str, Any], reply: dict[str, Any]) -> Answer:
    """The child's reply as an Answer."""
    if not reply.get("ok"):
        return _raised(str(reply.get("type") or reply.get("kind") or "error"), str(reply.get("message", "")))
    if message["op"] == "probe":
        facts = reply.get("facts") or {}
        return Answer(outputs=tuple(facts.get("outputs") or ()),
                      structure=_structure(facts.get("parameters") or {}, facts.get("buffers") or {}))
    modified = _modified(message["args"], reply.get("args") or []) if message.get("return_args") else ()
    return Answer(outputs=_flat(reply.get("value")), modified=modified)


def _clone(x: Any) -> Any:
    return x.clone() if isinstance(x, torch.Tensor) else x


def replay(module: ModuleType, message: dict[str, Any]) -> Answer:
    """Answer ``message`` with ``module`` (the reference or a variant), in the judge.

    The global RNG is seeded as the child seeds it and restored afterwards,
    so dropout draws the same numbers and the judge's own state is untouched.
    """
    with torch.random.fork_rng(devices=[]), torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a variant's deprecation warnings say nothing about the student
        seed = int(message.get("seed", 0))
        torch.default_generator.manual_seed(seed)
        try:
            if message["op"] == "probe":
                torch.default_generator.manual_seed(int(message.get("build_seed", seed)))
                return _probe(module, message, seed)
            args = [_clone(a) for a in message["args"]]
            kwargs = {k: _clone(v) for k, v in message.get("kwargs", {}).items()}
            value = getattr(module, message["fn"])(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the variant's exception is the evidence compared
            return _raised(type(exc).__name__, str(exc))
    modified = _modified(message["args"], args) if message.get("return_args") else ()
    return Answer(outputs=_flat(value), modified=modified)


def _probe(module: ModuleType, message: dict[str, Any], seed: int) -> Answer:
    """What ``child.probe`` does, for the outputs and the structure: build, load, move, run each input."""
    built = getattr(module, message["cls"])(*(message.get("args") or []), **(message.get("kwargs") or {}))
    if message.get("params") is not None:
        built.load_state_dict(message["params"], strict=False)
    if message.get("dtype"):
        built = built.to(DTYPES[message["dtype"]])
    if message.get("to"):
        built = built.to(message["to"])
    built.train(message.get("mode", "eval") == "train")
    saved = set(built.state_dict())
    structure = _structure({n: {"shape": p.shape} for n, p in built.named_parameters()},
                           {n: {"shape": b.shape, "persistent": n in saved} for n, b in built.named_buffers()})
    outputs = []
    for i, x in enumerate(message.get("inputs") or []):
        torch.default_generator.manual_seed(seed)  # as ``child.probe``: every forward from the request's state
        run = built.get_submodule(str(message["run"])) if message.get("run") else built
        outputs.append(run(x))
    return Answer(outputs=tuple(outputs), structure=structure)


def same(a: Answer, b: Answer, words: bool = True) -> bool:
    """Whether two answers agree: the same exception, or outputs equal within the dtype's tolerance.

    Two exceptions agree by type and device mismatch, and, with ``words``, by their first line (digits
    as N). Words are left out where the contract asks for an exception (the reference raises): then
    the contract asks for a type (``split_heads`` with C % n_heads != 0 raises ``ValueError``) and its
    words are the student's own. Where the contract asks for none, an exception is a failure inside
    running code, and its words say which (a ``ValueError`` from unpacking a tensor into two names is
    not one the student raised; torch raises ``RuntimeError`` for nearly every failure).
    """
    if a.raised or b.raised:
        if a.raised is None or b.raised is None:
            return False
        return a.raised[:2] == b.raised[:2] and (not words or a.raised[2] == b.raised[2])
    return a.modified == b.modified and a.structure == b.structure and len(a.outputs) == len(b.outputs) and all(
        _close(x, y) for x, y in zip(a.outputs, b.outputs))


def _close(x: Any, y: Any) -> bool:
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        return not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor) and type(x) is type(y) and x == y
    if x.shape != y.shape or x.dtype != y.dtype or x.device.type != y.device.type:
        return False
    if x.device.type == "meta":
        return True
    if not x.is_floating_point():
        return torch.equal(x.cpu(), y.cpu())
    g, e = x.detach().cpu().double(), y.detach().cpu().double()
    if not torch.equal(torch.isnan(g), torch.isnan(e)) or not torch.equal(torch.isinf(g) * g.sign(), torch.isinf(e) * e.sign()):
        return False
    finite = torch.isfinite(e)
    rtol, atol = TOLERANCES.get(x.dtype, TOLERANCES[torch.float32])
    return bool(((g[finite] - e[finite]).abs() <= atol + rtol * e[finite].abs()).all())


def request_key(message: dict[str, Any]) -> str:
    """A digest of everything a request hands the code: equal keys, equal answers from trusted code."""
    digest = hashlib.blake2b(digest_size=16)

    def feed(value: Any) -> None:
        if isinstance(value, torch.Tensor):
            digest.update(f"T{value.dtype}{tuple(value.shape)}{value.stride()}{value.device.type}".encode())
            if value.device.type != "meta":
                digest.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(value, dict):
            digest.update(b"{")
            for k in sorted(value, key=str):
                digest.update(repr(k).encode())
                feed(value[k])
            digest.update(b"}")
        elif isinstance(value, (list, tuple)):
            digest.update(b"[")
            for v in value:
                feed(v)
            digest.update(b"]")
        else:
            digest.update(repr(value).encode())

    feed({k: v for k, v in message.items() if k != "vjp"})
    return digest.hexdigest()


def uses(module: ModuleType) -> dict[str, frozenset[str]]:
    """For each function or class of ``module``, every name of the module it calls, directly or not.

    A mistake in ``softmax`` also changes ``attention`` (which calls it), so an
    ``attention`` check considers the mistakes of everything ``attention`` uses.
    """
    own = {name: obj for name, obj in vars(module).items()
           if getattr(obj, "__module__", None) == module.__name__ and callable(obj)}

    def names(obj: Any) -> set[str]:
        codes = [obj.__code__] if hasattr(obj, "__code__") else [
            f.__code__ for f in vars(obj).values() if hasattr(f, "__code__")]
        found: set[str] = set()
        while codes:
            code = codes.pop()
            found.update(code.co_names)
            codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
        return found & own.keys()

    direct = {name: names(obj) for name, obj in own.items()}
    closure: dict[str, frozenset[str]] = {}
    for name in own:
        seen, todo = {name}, [name]
        while todo:
            for used in direct[todo.pop()] - seen:
                seen.add(used)
                todo.append(used)
        closure[name] = frozenset(seen)
    return closure


@dataclass(frozen=True)
class CheckEvidence:
    """One check of a card, as settling needs it: its exercise, status, matches and requests.

    ``diagnosable``: the check failed on the student's answers (an assertion, or an error raised by
    their code); one that could not be judged, or that the grader itself broke, names no mistake."""

    exercise: str
    status: str
    matches: tuple[Known, ...]
    requests: tuple[Request, ...]
    diagnosable: bool = True


Evidence = tuple[dict[str, Any], str, Answer]  # (request, its digest, the student's answer)


def _evidence(requests: Sequence[Request]) -> list[Evidence]:
    return [(message, request_key(message), student_answer(message, reply))
            for message, reply in requests if replayable(message)]


class Diagnoser:
    """The reference and the known mistakes of one assignment, loaded once for a judge's life: the
    catalogued ones and, with ``operators``, the variants the mutation operators generate from the
    reference (``grader.diagnosis.operators``), made the first time a card needs them."""

    def __init__(self, reference: Path, mistakes: Sequence[Mistake], *, operators: bool = False,
                 assignment: str = "") -> None:
        self._reference_path = reference
        self._assignment = assignment or (mistakes[0].assignment if mistakes else "")
        self._mistakes = tuple(mistakes)
        self._operators = operators
        self._generated: tuple[Variant, ...] | None = None
        self._factory: VariantFactory | None = None
        self._modules: dict[str, ModuleType] = {}  # loaded when first needed: most gradings never diagnose
        self._uses: dict[str, frozenset[str]] | None = None
        # The checks' inputs are seeded, so every submission asks mostly the same questions: a variant's
        # answer is computed once per judge, not once per student (bounded: oldest answers go first).
        self._answers: OrderedDict[tuple[str, str], Answer] = OrderedDict()

    def _answer(self, mistake: Known | None, message: dict[str, Any], digest: str) -> Answer:
        key = (mistake.id if mistake else "", digest)
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key]
        answer = self._answers[key] = replay(self._module(mistake), message)
        if len(self._answers) > MAX_REMEMBERED_ANSWERS:
            self._answers.popitem(last=False)
        return answer

    def _module(self, mistake: Known | None) -> ModuleType:
        key = mistake.id if mistake else ""
        if key not in self._modules:
            if mistake is None:
                module = module_from_source(self._reference_path.read_text(encoding="utf-8"), "_diagnosis_reference")
            elif isinstance(mistake, Variant):
                if self._factory is None:
                    self._factory = VariantFactory(self._reference_path.read_text(encoding="utf-8"), "_variant")
                module = self._factory.build(mistake)
            else:
                module = mistake.variant(self._reference_path)
            self._modules[key] = module
        return self._modules[key]

    def family(self) -> tuple[Known, ...]:
        """Every known mistake: the catalogue's first (their words are written by hand), then the generated."""
        if self._generated is None:
            self._generated = () if not self._operators else tuple(generate_variants(
                self._reference_path.read_text(encoding="utf-8"), self._assignment))
        return self._mistakes + self._generated

    def candidates(self, exercise: str) -> list[Known]:
        """The mistakes that can change what ``exercise`` computes: its own and those of what it uses."""
        if self._uses is None:
            self._uses = uses(self._module(None))
        reach = self._uses.get(exercise, frozenset({exercise}))
        return [m for m in self.family() if m.exercise in reach]

    def matching(self, exercise: str, requests: Sequence[Request]) -> list[Known]:
        """The known mistakes whose variant gives every answer the student gave, when the reference does not."""
        candidates = self.candidates(exercise)
        evidence = _evidence(requests) if candidates else []
        if not evidence or not candidates or self._reference_agrees(evidence):
            return []
        return [m for m in candidates if self._gives(m, self._discriminating_first(evidence))]

    def _reference_agrees(self, evidence: Sequence[Evidence]) -> bool:
        """The reference gives the same answers: they do not show a mistake."""
        return all(same(answer, ref := self._answer(None, message, key), words=ref.raised is None)
                   for message, key, answer in evidence)

    def _discriminating_first(self, evidence: Sequence[Evidence]) -> list[Evidence]:
        """The answers unlike the reference's first: most variants differ from the student there, so the
        replay of each stops after one request."""
        def agrees(item: Evidence) -> bool:
            message, key, answer = item
            ref = self._answer(None, message, key)
            return same(answer, ref, words=ref.raised is None)
        return sorted(evidence, key=agrees)

    def _gives(self, mistake: Known, evidence: Sequence[Evidence]) -> bool:
        """Whether the variant gives every answer; stops at the first it does not. Where the contract asks
        for an exception (the reference raises) and the student raised another type, only that type (and
        whether it is a device mismatch) is compared, even for a ``RuntimeError``: a student's own ``raise
        RuntimeError(...)`` in place of the ``ValueError`` asked for has words of its own."""
        for message, key, answer in evidence:
            variant = self._answer(mistake, message, key)
            reference = self._answer(None, message, key)
            if answer.raised and reference.raised and answer.raised[0] != reference.raised[0]:
                if not variant.raised or variant.raised[:2] != answer.raised[:2]:
                    return False
            elif not same(answer, variant, words=reference.raised is None):
                return False
        return True

    def diagnose(self, checks: Sequence[CheckEvidence]) -> list[list[Known]]:
        """The known mistakes each failed check of one card shows, found over the whole family at bounded cost.

        For every exercise with a failed check, the pool is the mistakes of that exercise and of the
        failing exercises it uses (a mistake whose exercise passed every check is not the student's), and
        a mistake stays only if its variant answers like the student on every request of that exercise's
        checks, passed or failed, unlike-the-reference answers first (most variants stop there). A failed
        check is then matched by the survivors unless the reference itself gives its answers. ``settle``
        applies the card-wide rules to the result.
        """
        failing = {c.exercise for c in checks if c.status not in ("passed", "skipped")}
        evidence: dict[str, list[Evidence]] = {}
        for c in checks:
            if c.exercise in failing:
                evidence.setdefault(c.exercise, []).extend(_evidence(c.requests))
        survivors: dict[str, tuple[Known, ...]] = {}
        for exercise in failing:
            ordered = self._discriminating_first(evidence.get(exercise, []))
            pool = [m for m in self.candidates(exercise) if m.exercise == exercise or m.exercise in failing]
            if self._only_raised(ordered) and self._uses_failing(exercise, failing):
                # Every answer unlike the reference's is an exception, and a function it calls fails too: the
                # exception most likely comes from there, so only that function's mistakes may explain it.
                pool = [m for m in pool if m.exercise != exercise]
            survivors[exercise] = tuple(m for m in pool if ordered and self._gives(m, ordered))
        matched = []
        for c in checks:
            own = _evidence(c.requests) if c.status not in ("passed", "skipped") and c.diagnosable else []
            found = survivors.get(c.exercise, ()) if own and not self._reference_agrees(own) else ()
            matched.append(CheckEvidence(c.exercise, c.status, tuple(found), c.requests, c.diagnosable))
        return self.settle(matched)

    def _only_raised(self, evidence: Sequence[Evidence]) -> bool:
        """Whether every answer unlike the reference's is an exception."""
        unlike = [answer for message, key, answer in evidence
                  if not same(answer, ref := self._answer(None, message, key), words=ref.raised is None)]
        return bool(unlike) and all(answer.raised for answer in unlike)

    def _uses_failing(self, exercise: str, failing: set[str]) -> bool:
        if self._uses is None:
            self._uses = uses(self._module(None))
        return bool((self._uses.get(exercise, frozenset()) - {exercise}) & failing)

    def settle(self, checks: Sequence[CheckEvidence]) -> list[list[Known]]:
        """Across one card, drop the matches the card itself rules out.

        - A mistake of another exercise whose checks all passed is not the student's: every
          catalogued mistake fails a check of its own exercise.
        - A mistake whose variant answers unlike the student anywhere in the checks of the same
          exercise, passed or failed, is not the student's either: a check stops at its first failed
          answer, so one check alone may hold too little to tell (an all-False mask for T = 1 is
          both "zeros" and "the diagonal masked"; T = 5 tells them apart).
        - Where several still match and one is the only match of a check of its own exercise, keep
          that one: it is shown there and alone explains this check too (a ``causal_mask`` that
          ignores its device fails ``attention`` as an ``attention`` that builds its mask on the CPU would).
        """
        failing = {c.exercise for c in checks if c.status not in ("passed", "skipped")}
        kept = [[m for m in c.matches if m.exercise == c.exercise or m.exercise in failing] for c in checks]
        involved = {c.exercise for found, c in zip(kept, checks) if found}
        evidence: dict[str, list[Evidence]] = {}
        for c in checks:
            if c.exercise in involved:
                evidence.setdefault(c.exercise, []).extend(_evidence(c.requests))
        kept = [[m for m in found if self._gives(m, evidence[c.exercise])] for found, c in zip(kept, checks)]
        named = [_named(found) for found in kept]  # equivalent generated variants count as one
        shown = {n[0].id for n, c in zip(named, checks) if len(n) == 1 and n[0].exercise == c.exercise}
        return [[m for m in found if m.id in shown] or found if len(found) > 1 else found for found in kept]

    def smallest_difference(self, requests: Sequence[Request]) -> str:
        """The recorded request with the smallest inputs where the student's answer is not the reference's,
        in a sentence ('' when none differs): what a student can try by hand when no known mistake fits."""
        def size(message: dict[str, Any]) -> int:
            values = [*(message.get("args") or []), *(message.get("kwargs") or {}).values(), *(message.get("inputs") or [])]
            return sum(v.numel() for v in values if isinstance(v, torch.Tensor))
        for message, key, answer in sorted(_evidence(requests), key=lambda e: (e[2].raised is not None, size(e[0]))):
            ref = self._answer(None, message, key)
            if not same(answer, ref, words=ref.raised is None):
                return f"{_call_text(message)} gives {_answer_text(answer, ref, as_mistake=False)}"
        return ""

    def example(self, mistake: Known, requests: Sequence[Request]) -> str:
        """One request where the student's answer is the variant's and not the reference's, in a sentence:
        the evidence a student can check by hand. '' when no such request was recorded."""
        for message, key, answer in sorted(_evidence(requests), key=lambda e: e[2].raised is not None):  # values first
            ref = self._answer(None, message, key)
            if same(answer, ref, words=ref.raised is None) or not same(answer, self._answer(mistake, message, key),
                                                                        words=ref.raised is None):
                continue
            return f"For example, {_call_text(message)} gives {_answer_text(answer, ref)}"
        return ""


def _call_text(message: dict[str, Any]) -> str:
    def arg(value: Any) -> str:
        if isinstance(value, torch.Tensor):
            return f"{str(value.dtype).removeprefix('torch.')}[{'x'.join(map(str, value.shape))}]"
        return repr(value)[:40]
    name = message.get("fn") or message.get("cls") or "the function"
    args = [arg(a) for a in message.get("args") or []]
    args += [f"{k}={arg(v)}" for k, v in (message.get("kwargs") or {}).items()]
    if message.get("op") == "probe":
        return f"`{name}({', '.join(args)})` run on {len(message.get('inputs') or [])} input(s)"
    return f"`{name}({', '.join(args)})`"


def _answer_text(answer: Answer, reference: Answer, as_mistake: bool = True) -> str:
    """'<yours> (as this mistake does); the reference gives <theirs>', at the first place they differ."""
    if not as_mistake:
        return _answer_text(answer, reference).replace(", as with this mistake", "").replace(
            "the same answers as this mistake, and not the reference's.", "answers unlike the reference's.")
    if answer.raised:
        return f"{_article(answer.raised[0])} {answer.raised[0]} with your code, as with this mistake; the reference's does not raise."
    if reference.raised:
        return f"a result with your code, as with this mistake; the reference raises {_article(reference.raised[0])} {reference.raised[0]}."
    for i, (mine, theirs) in enumerate(zip(answer.outputs, reference.outputs)):
        if _close(mine, theirs):
            continue
        which = f"output {i}" if len(answer.outputs) > 1 else "the output"
        if not isinstance(mine, torch.Tensor) or not isinstance(theirs, torch.Tensor):
            return f"{which} {mine!r} with your code, as with this mistake; the reference gives {theirs!r}."
        if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
            return (f"{which} of shape {tuple(mine.shape)} and dtype {str(mine.dtype).removeprefix('torch.')} with your "
                    f"code, as with this mistake; the reference gives {tuple(theirs.shape)}, "
                    f"{str(theirs.dtype).removeprefix('torch.')}.")
        if mine.device.type != theirs.device.type:
            return (f"{which} on the {mine.device.type} device with your code, as with this mistake; the reference's "
                    f"is on {theirs.device.type}, the inputs' device.")
        if mine.device.type == "meta":
            break
        g, e = mine.detach().cpu().double(), theirs.detach().cpu().double()
        diff = torch.where(torch.isnan(g) & torch.isnan(e), torch.zeros_like(g), (g - e).abs().nan_to_num(float("inf")))
        where = tuple(int(j) for j in torch.nonzero(diff == diff.max())[0]) if diff.numel() else ()
        return (f"{g[where].item():.4g} at index {where} of {which} with your code, as with this mistake; "
                f"the reference gives {e[where].item():.4g}.")
    return "the same answers as this mistake, and not the reference's."


Known = Mistake | Variant  # a catalogued mistake or a generated variant: id, exercise, title, explanation

# Which generated variant speaks for a class of equivalent ones: the simplest kinds of edit first.
OPERATOR_ORDER = ("mask", "scale", "untransposed", "dim", "transpose", "ignored", "keepdim", "reduction", "returned", "dropped", "operand", "swap", "pair", "stage",
                  "order",
                  "twice", "flag", "reversed", "shape", "function", "inplace", "inplace_arith", "cast", "einsum")


def diagnosis(found: Sequence[Known], example: str = "") -> tuple[Diagnosis, str] | None:
    """The scorecard's diagnosis and the sentence a student reads after the check's own message.

    Catalogued mistakes that match alike are named together. Generated variants that match alike are
    one mistake written several ways (``dim=-1`` and ``dim=2`` on 3-d inputs): one speaks for them,
    the simplest kind of edit first. ``example``: a request that shows it (``Diagnoser.example``)."""
    named = _named(found)
    if not named:
        return None
    first, *others = named
    shown = f" {example}" if example else ""
    if not others:
        return Diagnosis(first.id, first.title), f"Likely mistake: your results match {first.title}. {first.explanation}{shown}"
    listed = "; or ".join(m.title for m in named)
    text = (f"Likely mistake: your results match each of {len(named)} known mistakes equally well, "
            f"so it is one of them: {listed}.{shown}")
    return Diagnosis(first.id, first.title, tuple(MistakeName(m.id, m.title) for m in others)), text


def _named(found: Sequence[Known]) -> list[Known]:
    catalogued = [m for m in found if isinstance(m, Mistake)]
    generated = sorted((m for m in found if isinstance(m, Variant)), key=lambda v: OPERATOR_ORDER.index(v.operator)
                       if v.operator in OPERATOR_ORDER else len(OPERATOR_ORDER))
    return catalogued or generated[:1]


def representative(found: Sequence[Known]) -> Known | None:
    """The mistake a card names first for ``found`` (``diagnosis``), or None."""
    named = _named(found)
    return named[0] if named else None


def _article(word: str) -> str:
    return "an" if word[:1].upper() in "AEIOU" else "a"
