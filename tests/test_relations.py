"""Relations read from the answers (``grader.diagnosis.relations``, ``relation_search``).

No sandbox: a student's answers are simulated by running student-style functions (ours, trusted) on the
checks' own inputs (``build_cases``) and on generated sizes, as the proxy would record them; the
diagnoser then replays the reference in this process. Each rule is proved on a family: factors ×
spellings × sizes, transforms × exercises, and never on the reference, a correct rewrite, noise or NaN.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest
import torch

from grader.checks.attention.conftest import build_cases
from grader.diagnosis.catalogue import module_from_source
from grader.diagnosis.diagnose import CheckEvidence, Diagnoser
from tests.conftest import ROOT
from grader.diagnosis.naming import diagnosis
from grader.diagnosis.relations import Relation
from grader.session.verdicts import Verdict, with_diagnoses
from tests.corpus_cases import REFERENCE

REF = module_from_source(REFERENCE["attention"].read_text(encoding="utf-8"), "_test_relations_reference")


@pytest.fixture(scope="module")
def diagnoser() -> Diagnoser:
    """Relations alone: no catalogue (it would be named first), no generated variants."""
    return Diagnoser(REFERENCE["attention"], (), operators=False, assignment="attention")


def _request(fn_name, student, args, kwargs=None):
    kwargs = kwargs or {}
    message = {"op": "call", "fn": fn_name, "args": list(args), "kwargs": dict(kwargs), "seed": 0, "vjp": None,
               "return_args": False}
    try:
        value = student(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
        return message, {"ok": True, "value": value}
    except Exception as exc:  # noqa: BLE001 - the student's exception is the answer
        return message, {"ok": False, "kind": "exception", "type": type(exc).__name__, "message": str(exc)}


def _requests(fn_name, student, extra=()):
    """The checks' own inputs for ``fn_name`` and ``extra`` ones, answered by ``student``."""
    cases = [(c.args, c.kwargs) for c in build_cases()[fn_name]] + list(extra)
    return [_request(fn_name, student, args, kwargs) for args, kwargs in cases]


def _named(diagnoser, fn_name, requests):
    """The sentence the card says for ``fn_name`` (None when nothing is named) and what was named."""
    found = diagnoser.diagnose([CheckEvidence(fn_name, "failed", (), tuple(requests))])[0]
    named = diagnosis(found)
    return (named[1] if named else None), found


def _g(seed):
    return torch.Generator().manual_seed(seed)


SCALE_SIZES = [((2, 3, 4, 6), 9), ((5, 7), 6), ((3, 3), 25), ((4, 5, 2), 3)]


@pytest.mark.parametrize("student, said", [
    (lambda scores, head_size: scores / head_size, r"`scores` × 1/\(head_size\), where the reference's are `scores` × 1/√\(head_size\)"),
    (lambda s, h: s * (1.0 / h), r"`scores` × 1/\(head_size\), where the reference's are `scores` × 1/√\(head_size\)"),
    (lambda scores, head_size: scores / head_size ** 0.25, r"`scores` × 1/\(head_size\)\^¼, where the reference's are"),
    (lambda scores, head_size: scores / math.sqrt(scores.shape[-1]), r"`scores` × 1/√\(scores.shape\[-1\]\), where"),
    (lambda x, n: x / x.size(-1) ** 0.5, r"`scores` × 1/√\(scores.shape\[-1\]\), where"),
    (lambda scores, head_size: scores / math.sqrt(scores.dim()), r"`scores` × 1/√\(scores.dim\(\)\), where"),
    (lambda scores, head_size: scores, r"the reference's × √\(head_size\)"),
], ids=["by-h", "times-inverse", "fourth-root", "sqrt-S", "size-method", "sqrt-rank", "unscaled"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_scale_by_another_size_is_said_with_its_factor(diagnoser, student, said, seed):
    extra = [((torch.randn(*shape, generator=_g(seed * 10 + i)), h), {}) for i, (shape, h) in enumerate(SCALE_SIZES)]
    extra.append(((torch.randn(3, 7, generator=_g(seed)).half(), 10), {}))  # low precision: its own tolerance
    text, found = _named(diagnoser, "scale_scores", _requests("scale_scores", student, extra))
    assert text is not None and re.search(said, text), text
    assert all(isinstance(m, Relation) and m.exercise == "scale_scores" for m in found)
    example = diagnoser.example(found[0], _requests("scale_scores", student, extra))
    assert example.startswith("For example, `scale_scores(") and "(here head_size = " in example, example


def _attention_with(scale):
    def attention(q, k, v, causal=True, scale_flag=True):
        scores = q @ k.transpose(-2, -1)
        if scale_flag:
            scores = scores / scale(q, k)
        if causal:
            t = q.shape[-2]
            scores = scores.masked_fill(~torch.ones(t, t, dtype=torch.bool).tril(), float("-inf"))
        w = torch.softmax(scores, dim=-1)
        return w @ v, w
    return lambda q, k, v, causal=True, scale=True: attention(q, k, v, causal, scale)


ATTENTION_SIZES = [(2, 5, 2), (3, 4, 8), (1, 6, 3), (2, 2, 16)]


def _qkv_extra(seed):
    return [((torch.randn(b, t, d, generator=_g(seed + i)), torch.randn(b, t, d, generator=_g(seed + 50 + i)),
              torch.randn(b, t, 5, generator=_g(seed + 90 + i))), {}) for i, (b, t, d) in enumerate(ATTENTION_SIZES)]


@pytest.mark.parametrize("scale, factor", [
    (lambda q, k: q.shape[-1], r"× 1/√d"),
    (lambda q, k: math.sqrt(k.shape[-2]), r"× √d/√T"),
    (lambda q, k: q.dim() ** 0.5, r"× √d/√\(q.dim\(\)\)"),
    (lambda q, k: q.size(-1) ** 0.25, r"× \(?d\)?\^¼|× d\^¼"),
], ids=["by-d", "by-sqrt-T", "by-sqrt-rank", "by-fourth-root"])
@pytest.mark.parametrize("seed", [0, 7])
def test_a_wrong_scale_inside_attention_is_said_as_a_scaled_input(diagnoser, scale, factor, seed):
    text, found = _named(diagnoser, "attention", _requests("attention", _attention_with(scale), _qkv_extra(seed)))
    assert text is not None and re.search(factor, text), text
    assert {m.kind for m in found} == {"scaled"} and all(m.exercise == "attention" for m in found)


def _merge_batch_major(x):
    b, h, t, d = x.shape
    return x.reshape(h, b, t, d).permute(1, 2, 0, 3).reshape(b, t, h * d)


def _mha_heads_reversed(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q, k, v = (REF.split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))
    out, weights = REF.attention(q, k, v, causal=causal)
    return REF.merge_heads(out.flip(1)) @ w_o, weights


def _softmax_half(scores, dim=-1):  # the lesson's stable softmax, computed in float16
    s = scores.half()
    e = torch.exp(s - s.amax(dim=dim, keepdim=True))
    return (e / e.sum(dim=dim, keepdim=True)).to(scores.dtype)


def _causal(k):
    return lambda T, device=None: torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=k)


@pytest.mark.parametrize("fn_name, student, kind, words", [
    ("attention", lambda q, k, v, causal=True, scale=True: REF.attention(q, k, v, causal, scale)[::-1], "returned",
     "two returned values in the other order"),
    ("attention_scores", lambda q, k: (q @ k.transpose(-2, -1)).squeeze(), "squeezed", "size-1 axes removed"),
    ("merge_heads", _merge_batch_major, "folded", "first two axes in the other order"),
    ("multi_head_attention", _mha_heads_reversed, "blocks", "blocks of `w_o`'s axis 0 in reverse order"),
    ("softmax", _softmax_half, "cast", "computed in float16 and cast back"),
    ("attention_scores", lambda q, k: k @ q.transpose(-2, -1), None, r"`q` and `k` swapped|transposed"),
    ("causal_mask", _causal(1), "diagonal", r"diagonal moved by \+1"),
    ("causal_mask", _causal(2), "diagonal", r"diagonal moved by \+2"),
    ("causal_mask", _causal(-2), "diagonal", r"diagonal moved by -2"),
    ("bag_of_past", lambda v: v.cumsum(-2) / v.shape[-2], "factor", r"× \(position in T\)/T"),
], ids=lambda p: p if isinstance(p, str) else None)
def test_a_transform_is_found_and_said(diagnoser, fn_name, student, kind, words):
    text, found = _named(diagnoser, fn_name, _requests(fn_name, student))
    assert text is not None and re.search(words, text), text
    assert all(isinstance(m, Relation) and m.exercise == fn_name for m in found)
    assert kind is None or {m.kind for m in found} == {kind}


CORRECT = {  # written other ways than the reference, all right
    "softmax": lambda scores, dim=-1: torch.nn.functional.softmax(scores, dim=dim),
    "attention_scores": lambda q, k: torch.einsum("...td,...sd->...ts", q, k),
    "scale_scores": lambda scores, head_size: scores * head_size ** -0.5,
    "mix_values": lambda weights, v: torch.einsum("...ts,...sd->...td", weights, v),
    "bag_of_past": lambda v: v.cumsum(-2) / torch.arange(1, v.shape[-2] + 1, dtype=v.dtype).unsqueeze(-1),
    "causal_mask": lambda T, device=None: torch.arange(T, device=device)[:, None] >= torch.arange(T, device=device),
}


@pytest.mark.parametrize("fn_name", sorted(CORRECT))
def test_the_reference_and_correct_rewrites_get_no_relation(diagnoser, fn_name):
    for student in (getattr(REF, fn_name), CORRECT[fn_name]):
        text, found = _named(diagnoser, fn_name, _requests(fn_name, student))
        assert text is None and not found, text


@pytest.mark.parametrize("fn_name", ["scale_scores", "softmax", "attention_scores", "bag_of_past", "mix_values"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_noise_or_nan_never_gets_a_relation(diagnoser, fn_name, seed):
    fn = getattr(REF, fn_name)

    def noisy(*args, **kwargs):
        out = fn(*args, **kwargs)
        return out + 1e-2 * torch.randn(out.shape, generator=_g(seed))

    def nan_where_big(*args, **kwargs):
        out = fn(*args, **kwargs)
        return out.masked_fill(out.abs() > out.abs().mean(), float("nan")) * 2

    for student in (noisy, nan_where_big):
        text, found = _named(diagnoser, fn_name, _requests(fn_name, student))
        assert not any(isinstance(m, Relation) for m in found), text


def test_a_constant_factor_on_one_size_is_not_named(diagnoser):
    """``head_size`` 16 alone: a factor of 1/4 is also √head_size, and nothing tells them apart."""
    requests = [_request("scale_scores", lambda s, h: s / h, (torch.randn(3, 5, generator=_g(i)), 16)) for i in range(4)]
    text, found = _named(diagnoser, "scale_scores", requests)
    assert text is None and not found, text


@pytest.mark.parametrize("scale", [lambda q, k: q.shape[-1], lambda q, k: math.sqrt(k.shape[-2])])
def test_relations_never_change_a_verdict_or_its_status(diagnoser, scale):
    """Points come from the checks alone: a relation adds words to a failed check, nothing else."""
    student = _attention_with(scale)
    requests = tuple(_requests("attention", student, _qkv_extra(3)))
    verdicts = [Verdict("test_output_matches_reference", "test_output_matches_reference[attention]", "attention",
                        "failed", "outputs differ", 0.1, requests=requests, diagnosable=True),
                Verdict("test_rows_sum_to_one", "test_rows_sum_to_one[attention]", "attention", "passed", "", 0.1,
                        requests=requests[:1], diagnosable=False)]
    said = with_diagnoses(verdicts, diagnoser)
    assert said[0].diagnosis is not None and said[0].diagnosis.id.startswith("relation-attention-scaled-")
    assert [replace(v, diagnosis=None, diagnosis_text="") for v in said] == verdicts


def test_a_fault_in_the_diagnosis_costs_no_grade(diagnoser, monkeypatch, capsys):
    """Naming a mistake is advice: if the diagnosis itself raises, the card keeps every verdict as the checks gave
    it (points, status, message), names nothing, and the grader says so once on stderr."""
    student = _attention_with(0.5)
    requests = tuple(_requests("attention", student, _qkv_extra(3)))
    verdicts = [Verdict("test_output_matches_reference", "test_output_matches_reference[attention]", "attention",
                        "failed", "outputs differ", 0.1, requests=requests, diagnosable=True)]

    def broken(*args, **kwargs):
        raise IndexError("a bug in the diagnosis")

    monkeypatch.setattr(diagnoser, "diagnose", broken)
    assert with_diagnoses(verdicts, diagnoser) == verdicts
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no mistake named" in err and "IndexError: a bug in the diagnosis" in err


@pytest.mark.slow
@pytest.mark.parametrize("returned", ["return w, mix_values(w, v)", "out = w @ v\n    return (w, out)"])
def test_a_relation_of_values_is_found_beside_the_gradient_checks(grade, returned):
    """A card's evidence holds gradient requests too (their cotangents follow the contract's outputs): a
    relation speaks of values, and is found and named through the whole card."""
    reference = (ROOT / "solutions" / "attention.py").read_text()
    card = grade(reference + f'''

def attention(q, k, v, causal=True, scale=True):
    s = attention_scores(q, k)
    if scale:
        s = scale_scores(s, q.shape[-1])
    if causal:
        s = apply_mask(s, causal_mask(q.shape[-2], device=q.device))
    w = softmax(s, dim=-1)
    {returned}
''')
    said = {d.exercise: d for d in card.diagnoses}
    assert said["attention"].id.startswith("relation-attention-returned"), card.diagnoses
    assert "two returned values in the other order" in said["attention"].text
