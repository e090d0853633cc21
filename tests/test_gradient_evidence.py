"""Gradient requests as evidence: a vector-Jacobian request replayed in the judge gives the child's
gradients, and a function whose values are right but whose gradient is cut is named for it.

The families: every single-line stage of every differentiable function of the reference, wrapped in
``torch.no_grad()`` or ``.detach()``ed (tests/gradient_requests.py answers as the child would).
"""

from __future__ import annotations

import ast
import inspect
import re

import pytest
import torch

from grader.config import load_config
from grader.diagnosis.answers import replay, same, student_answer
from grader.diagnosis.catalogue import module_from_source
from grader.diagnosis.gradients import no_gradient
from grader.diagnosis.observed import Observed
from tests.corpus_cases import corpus
from tests.gradient_requests import REFERENCE, diagnosed, function_requests, namespace, randn

SOURCE = REFERENCE["attention"].read_text()


def _inputs(fn: str, seed: int) -> list:
    """Arguments of the contract's shapes for ``fn`` (float64, as the gradient checks send them)."""
    q, k = randn(2, 3, 5, 4, seed=seed), randn(2, 3, 7, 4, seed=seed + 1)
    scores = randn(2, 3, 5, 7, seed=seed + 2)
    x = randn(2, 5, 12, seed=seed + 3)
    w = [randn(12, 12, seed=seed + 10 + i) for i in range(4)]
    return {
        "attention_scores": [q, k], "scale_scores": [scores, 4], "softmax": [scores],
        "apply_mask": [scores, torch.ones(5, 7, dtype=torch.bool).tril()],
        "mix_values": [torch.softmax(scores, -1), randn(2, 3, 7, 6, seed=seed + 4)],
        "attention": [q, randn(2, 3, 5, 4, seed=seed + 5), randn(2, 3, 5, 6, seed=seed + 6)],
        "bag_of_past": [randn(2, 5, 6, seed=seed + 7)], "split_heads": [x, 3], "merge_heads": [randn(2, 3, 5, 4, seed=seed)],
        "multi_head_attention": [x, *w, 3],
        "attention_entropy": [torch.softmax(scores.masked_fill(~torch.ones(5, 7, dtype=torch.bool).tril(), -torch.inf), -1)],
    }[fn]


def _wrt(fn: str) -> list[int]:
    exercise = next(e for e in load_config().assignment("attention").exercises if e.name == fn)
    return list(getattr(exercise, "gradient_inputs", None) or [0])


FUNCTIONS = ["attention_scores", "scale_scores", "apply_mask", "softmax", "mix_values", "attention", "bag_of_past",
             "split_heads", "merge_heads", "multi_head_attention", "attention_entropy"]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("fn", FUNCTIONS)
def test_a_vjp_replay_gives_the_childs_gradients_for_the_reference(fn, seed):
    ns, module = namespace(SOURCE, "_student_reference"), module_from_source(SOURCE, "_judge_reference")
    for message, reply in function_requests(ns, fn, _inputs(fn, seed), _wrt(fn), seed):
        assert reply["ok"], reply
        mine, theirs = student_answer(message, reply), replay(module, message)
        assert same(mine, theirs), (fn, mine.grads, theirs.grads)
        if message["vjp"] is not None:  # the gradients themselves, not only which inputs they reach
            assert mine.grads and all(not no_gradient(g) for _, g in theirs.grads), fn
            assert all(torch.allclose(g, e, rtol=1e-10, atol=1e-12) for (_, g), (_, e) in zip(mine.grads, theirs.grads))
            assert [n for n, _ in mine.grads] == [f"input {i}" for i in _wrt(fn) if i < len(message["args"])]


def _stage_variants() -> list[tuple[str, str, str]]:
    """(function, how, source): each single-line statement of a function's body run inside
    ``torch.no_grad()``, and each single-name assignment's value ``.detach()``ed."""
    tree = ast.parse(SOURCE)
    lines = SOURCE.splitlines()
    found = []
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in FUNCTIONS):
        for stmt in fn.body:
            if not isinstance(stmt, (ast.Assign, ast.Return)) or stmt.lineno != stmt.end_lineno or stmt.value is None:
                continue
            i, line = stmt.lineno - 1, lines[stmt.lineno - 1]
            pad = line[: len(line) - len(line.lstrip())]
            code = line.split("  #")[0].strip()
            guarded = lines[:i] + [f"{pad}with torch.no_grad():", f"{pad}    {code}"] + lines[i + 1:]
            found.append((fn.name, f"line {stmt.lineno} in torch.no_grad()", "\n".join(guarded)))
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = ast.get_source_segment(SOURCE, stmt.value)
                detached = lines[:i] + [f"{pad}{stmt.targets[0].id} = ({value}).detach()"] + lines[i + 1:]
                found.append((fn.name, f"line {stmt.lineno} detached", "\n".join(detached)))
    return [(fn, how, source) for fn, how, source in found if _compiles(source)]


def _compiles(source: str) -> bool:
    """A guarded line the reference's layout does not allow (a statement continued over lines) is left out."""
    try:
        compile(source, "<variant>", "exec")
    except SyntaxError:
        return False
    return True


VARIANTS = _stage_variants()


def test_the_family_covers_every_function_and_both_ways():
    assert {fn for fn, _, _ in VARIANTS} >= {"attention", "attention_entropy", "multi_head_attention", "mix_values"}
    assert {how.split()[-1] for _, how, _ in VARIANTS} == {"torch.no_grad()", "detached"}
    assert len(VARIANTS) >= 25


@pytest.mark.parametrize("fn, how, source", VARIANTS, ids=[f"{fn}-{how}" for fn, how, _ in VARIANTS])
def test_a_stage_without_autograd_is_named_where_the_values_are_right(fn, how, source):
    """Where the variant keeps the reference's values and cuts a gradient the reference has, the card names
    the cut in that function, with the inputs autograd no longer reaches; where its gradient is the
    reference's (a detach autograd does not need), or its values differ, no cut is named."""
    ns = namespace(source, "_student_variant")
    requests = [r for seed in (0, 1) for r in function_requests(ns, fn, _inputs(fn, seed), _wrt(fn), seed)]
    reference = module_from_source(SOURCE, "_judge_reference")
    plain = [(m, r) for m, r in requests if m["vjp"] is None]
    values_right = all(r["ok"] and same(student_answer(m, r), replay(reference, m)) for m, r in plain)
    grads = [(student_answer(m, r), replay(reference, m)) for m, r in requests if m["vjp"] is not None]
    cut = [(mine, ref) for mine, ref in grads if mine.raised or any(
        no_gradient(g) and not no_gradient(e) for (_, g), (_, e) in zip(mine.grads, ref.grads))]
    found = diagnosed("attention", fn, requests)
    observed = [m for m in found if isinstance(m, Observed) and m.kind == "gradient_cut"]
    if not (values_right and cut):
        assert not observed, (how, found)
        return
    assert len(observed) == 1 and observed[0].exercise == fn, (how, found)
    text = observed[0].explanation
    assert text.startswith(f"your `{fn}` gives the right values, but ") and "inside torch.no_grad(), after .detach()" in text
    names = list(inspect.signature(getattr(reference, fn)).parameters)
    quoted = set(re.findall(r"`(\w+)`", text.split(": part of")[0])) - {fn}
    assert quoted and quoted <= set(names), (text, names)
    mine, ref = cut[0]
    if not mine.raised:  # every input the sentence names gets no gradient from the student's code
        index = {f"input {i}": name for i, name in enumerate(names)}
        missing = {index[n] for (n, g), (_, e) in zip(mine.grads, ref.grads) if no_gradient(g) and not no_gradient(e)}
        assert quoted == missing, (text, missing)


@pytest.mark.parametrize("case", [c for c in corpus("alternatives") if c.assignment == "attention"], ids=lambda c: c.id)
def test_correct_alternatives_and_the_reference_are_never_named(case):
    """(The module alternatives: tests/test_module_evidence.py.)"""
    ns = namespace(case.source(), "_student_alternative")
    for fn in FUNCTIONS:
        requests = function_requests(ns, fn, _inputs(fn, 3), _wrt(fn), 3)
        assert diagnosed("attention", fn, requests) == [], (case.id, fn)
    ref = namespace(SOURCE, "_student_reference")
    assert all(diagnosed("attention", fn, function_requests(ref, fn, _inputs(fn, 4), _wrt(fn), 4)) == [] for fn in FUNCTIONS)
