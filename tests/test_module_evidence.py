"""Module evidence: names from a module's structure, its weights and its gradients, where its outputs are
right (or say too little).

Families of student modules, each bug written several ways (tests/gradient_requests.py answers as the
child would): the causal mask kept as an nn.Parameter; a projection used for two roles, so another gets
no gradient; a stage of forward run without autograd; heads in a plain Python list, with the projections
created in every order. The corpus's correct modules and the reference are never named.
"""

from __future__ import annotations

import itertools
import re

import pytest
import torch

from grader.diagnosis.catalogue import Mistake, load_catalogue
from grader.diagnosis.observed import Observed
from tests.corpus_cases import corpus
from tests.gradient_requests import (B, CTX, D_MODEL, HEAD, REFERENCE, T, answered, diagnosed, module_requests, namespace,
                                     reference_params)

SOURCE = REFERENCE["attention-modules"].read_text()
TRIL = 'self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))'
FORWARD_QKV = ("        q = self.query(x)  # (B, T, hs)\n        k = self.key(x)  # (B, T, hs)\n"
               "        v = self.value(x)  # (B, T, hs)\n")
MHA_HEADS = ("        self.heads = nn.ModuleList(\n            SelfAttentionHead(d_model, head_size, context_length, dropout)\n"
             "            for _ in range(n_heads)\n        )\n")


def _with(*edits: tuple[str, str]) -> str:
    source = SOURCE
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


def _named(source: str, cls: str, seeds: tuple[int, ...] = (0, 1), mistakes: tuple = ()) -> list:
    ns = namespace(source, "_student_module")
    requests = [r for seed in seeds for r in module_requests(ns, cls, seed)]
    return diagnosed("attention-modules", cls, requests, mistakes)


TRIL_AS_PARAMETER = {
    "nn.Parameter": "self.tril = nn.Parameter(torch.tril(torch.ones(context_length, context_length)))",
    "frozen nn.Parameter": ("self.tril = nn.Parameter(torch.tril(torch.ones(context_length, context_length)), "
                            "requires_grad=False)"),
    "register_parameter": ('self.register_parameter("tril", nn.Parameter(torch.ones(context_length, '
                           'context_length).tril()))'),
    "torch.nn.parameter.Parameter": ("self.tril = torch.nn.parameter.Parameter(torch.tril(torch.ones("
                                     "context_length, context_length)))"),
}


@pytest.mark.parametrize("style", TRIL_AS_PARAMETER)
def test_a_mask_kept_as_a_parameter_is_named_from_the_structure(style):
    found = _named(_with((TRIL, TRIL_AS_PARAMETER[style])), "SelfAttentionHead")
    assert len(found) == 1 and isinstance(found[0], Observed), found
    assert (found[0].kind, found[0].exercise) == ("buffer_as_parameter", "SelfAttentionHead")
    text = found[0].explanation
    assert "registers `tril` as an nn.Parameter" in text and "buffer" in text and "has the parameter `tril`" in text


# (the forward's q, k, v lines written another way, the projection that forward never uses)
TWO_ROLES = {
    "v from key": ("        q = self.query(x)\n        k = self.key(x)\n        v = self.key(x)\n", "value"),
    "v from query": ("        q, k, v = self.query(x), self.key(x), self.query(x)\n", "value"),
    "k from query": ("        q = self.query(x)\n        k = self.query(x)\n        v = self.value(x)\n", "key"),
    "q from key, one call": ("        k = self.key(x)\n        q = k\n        v = self.value(x)\n", "query"),
    "v from key, functional": ("        q = x @ self.query.weight.T\n        k = x @ self.key.weight.T\n"
                               "        v = x @ self.key.weight.T\n", "value"),
}


@pytest.mark.parametrize("style", TWO_ROLES)
def test_a_projection_forward_never_uses_is_named_by_its_missing_gradient(style):
    lines, unused = TWO_ROLES[style]
    found = _named(_with((FORWARD_QKV, lines)), "SelfAttentionHead")
    assert len(found) == 1 and isinstance(found[0], Observed), found
    assert (found[0].kind, found[0].exercise) == ("parameter_without_gradient", "SelfAttentionHead")
    text = found[0].explanation
    assert f"no gradient reaches `{unused}.weight`" in text and f"does not depend on `{unused}`" in text
    assert set(re.findall(r"`(\w+)\.weight`", text)) == {unused}, text


STAGES = ["        q = self.query(x)  # (B, T, hs)", "        k = self.key(x)  # (B, T, hs)",
          "        v = self.value(x)  # (B, T, hs)",
          "        wei = q @ k.transpose(-2, -1) * self.head_size**-0.5  # (B, T, T)",
          '        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
          "        wei = torch.softmax(wei, dim=-1)"]
CUT = {"q": {"query"}, "k": {"key"}, "v": {"value"}, "wei": {"query", "key"}}


def _cut_variants() -> list[tuple[str, str, set[str]]]:
    found = []
    for line in STAGES:
        name, value = (s.strip() for s in line.split("#")[0].split("=", 1))
        found.append((f"{name} = ... in torch.no_grad()",
                      _with((line, f"        with torch.no_grad():\n    {line}")), CUT[name]))
        found.append((f"{name} = ... .detach()", _with((line, f"        {name} = ({value}).detach()")), CUT[name]))
        found.append((f"{name} = ... .detach().clone()", _with((line, f"        {name} = ({value}).detach().clone()")),
                      CUT[name]))
    return found


@pytest.mark.parametrize("how, source, cut", _cut_variants(), ids=[how for how, _, _ in _cut_variants()])
def test_a_stage_of_forward_without_autograd_is_named_by_the_parameters_it_cuts(how, source, cut):
    found = _named(source, "SelfAttentionHead")
    assert len(found) == 1 and isinstance(found[0], Observed), (how, found)
    assert (found[0].kind, found[0].exercise) == ("gradient_cut", "SelfAttentionHead")
    text = found[0].explanation
    assert text.startswith("your `SelfAttentionHead` gives the right values, but no gradient reaches ")
    assert set(re.findall(r"`(\w+)\.weight`", text)) == cut, text
    assert "inside torch.no_grad(), after .detach()" in text


HEAD_INIT = ("        self.query = nn.Linear(d_model, head_size, bias=False)\n"
             "        self.key = nn.Linear(d_model, head_size, bias=False)\n"
             "        self.value = nn.Linear(d_model, head_size, bias=False)\n")
PLAIN_LISTS = {
    "comprehension": "        self.heads = [SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)]\n",
    "list()": "        self.heads = list(SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads))\n",
    "append": ("        self.heads = []\n        for _ in range(n_heads):\n"
               "            self.heads.append(SelfAttentionHead(d_model, head_size, context_length, dropout))\n"),
}


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))), ids=str)
@pytest.mark.parametrize("style", PLAIN_LISTS)
def test_heads_in_a_plain_list_are_named_whatever_order_the_head_builds_its_projections(style, order):
    """The heads' weights are never loaded, so their values come from the order the head creates its
    projections in: outputs computed with weights unlike the variant's are compared by kind only."""
    lines = HEAD_INIT.splitlines(keepends=True)
    source = _with((HEAD_INIT, "".join(lines[i] for i in order)), (MHA_HEADS, PLAIN_LISTS[style]))
    mistakes = tuple(m for m in load_catalogue("attention-modules") if m.exercise == "MultiHeadAttention")
    found = _named(source, "MultiHeadAttention", seeds=(0,), mistakes=mistakes)
    assert [m.id for m in found] == ["mha_heads_python_list"], found


MODULE_ALTERNATIVES = [c for c in corpus("alternatives") if c.assignment == "attention-modules"]


@pytest.mark.parametrize("case", MODULE_ALTERNATIVES, ids=lambda c: c.id)
@pytest.mark.parametrize("cls", ["SelfAttentionHead", "MultiHeadAttention"])
def test_correct_modules_are_never_named(case, cls):
    mistakes = load_catalogue("attention-modules")
    assert _named(case.source(), cls, mistakes=mistakes) == [], case.id


@pytest.mark.parametrize("cls", ["SelfAttentionHead", "MultiHeadAttention"])
def test_the_reference_is_never_named(cls):
    assert _named(SOURCE, cls, seeds=(0, 1, 2), mistakes=load_catalogue("attention-modules")) == []


SANDBOXED = {
    # (assignment, edits to the reference, exercise, the id the answers' own reading gives, the words it holds,
    #  the slip operator's kind and words: the slip's variant, where one gives every answer, is named first)
    "v from key": ("attention-modules", (("v = self.value(x)", "v = self.key(x)"),), "SelfAttentionHead",
                   "parameter_without_gradient-SelfAttentionHead", "no gradient reaches `value.weight`",
                   "roles", "one projection (used )?for two roles"),
    "mask in no_grad": ("attention-modules",
                        (('        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))',
                          '        with torch.no_grad():\n            wei = wei.masked_fill(self.tril[:T, :T] == 0, '
                          'float("-inf"))'),), "SelfAttentionHead", "gradient_cut-SelfAttentionHead",
                        "no gradient reaches `key.weight` and `query.weight`", "grad", "no gradient flowing back|no_grad"),
    "tril parameter": ("attention-modules", ((TRIL, TRIL_AS_PARAMETER["nn.Parameter"]),), "SelfAttentionHead",
                       "buffer_as_parameter-SelfAttentionHead", "registers `tril` as an nn.Parameter", "storage",
                       "parameter \\(nn.Parameter\\) instead of a buffer"),
    "scores detached": ("attention", (("    scores = attention_scores(q, k)  # (..., T, T)",
                                       "    scores = attention_scores(q, k).detach().clone()"),), "attention",
                        "gradient_cut-attention", "no gradient flows back from it to `q`, `k` and `v`", "grad",
                        "no gradient flowing back|detached"),
}


@pytest.mark.parametrize("case", SANDBOXED)
def test_the_sandboxed_child_reports_what_names_it(case, grade):
    """Through the real sandbox: the child's probe reports the parameters' gradients, and the card names
    the mistake once, in the exercise whose code has it: the slip operator's variant where one gives every
    answer (tests/test_slips.py), else what the answers show of gradients and structure."""
    assignment, edits, exercise, observed, words, slip, slip_words = SANDBOXED[case]
    source = REFERENCE[assignment].read_text()
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    card = grade(source, assignment)
    named = [d for d in card.diagnoses if d.exercise == exercise]
    assert len(named) == 1 and named[0].text.startswith("Likely mistake: "), card.diagnoses
    if named[0].id == observed:
        assert words in named[0].text
    else:
        assert named[0].id.startswith(f"{slip}-{exercise}-"), named[0]
        assert re.search(slip_words, named[0].text), named[0].text


DROP_AFTER = ("        wei = torch.softmax(wei, dim=-1)\n        wei = self.dropout(wei)  # active only in training mode\n")
DROPOUT_MOVED = {  # where the operators' "stage one step earlier" puts the reference's dropout
    "before the softmax": "        wei = self.dropout(wei)\n        wei = torch.softmax(wei, dim=-1)\n",
}
DROPOUT_STUDENTS = {
    "reference style": "",
    "matmul, bool mask, F.softmax": '''

import torch.nn.functional as F


class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - the same __init__, another forward
    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(1, 2)) / (self.head_size ** 0.5)
        scores = scores.masked_fill(~self.tril[:T, :T].bool(), float("-inf"))
        scores = self.dropout(scores)
        return torch.matmul(F.softmax(scores, dim=-1), v)
''',
    "einsum, where": '''

class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - the same __init__, another forward
    def forward(self, x):
        T = x.shape[-2]
        q, k, v = self.query(x), self.key(x), self.value(x)
        wei = torch.einsum("btd,bsd->bts", q, k) * self.head_size ** -0.5
        wei = torch.where(self.tril[:T, :T] == 0, torch.full_like(wei, float("-inf")), wei)
        return torch.einsum("bts,bsd->btd", self.dropout(wei).softmax(-1), v)
''',
}


@pytest.mark.parametrize("style", DROPOUT_STUDENTS)
@pytest.mark.parametrize("where", DROPOUT_MOVED)
def test_dropout_moved_before_the_softmax_is_matched_by_a_variant_that_moves_it(where, style):
    """A student's dropout on the masked scores, written several ways, gives the answers of the variant that
    moves the reference's dropout one stage earlier (NaN where a dropped -inf is 0 * inf, the same draws):
    the evidence is enough once an operator makes that variant; written here, as the operators are not."""
    if style == "reference style":
        source = _with((DROP_AFTER, DROPOUT_MOVED[where]))
    else:
        source = SOURCE + DROPOUT_STUDENTS[style]
    moved = Mistake("dropout_moved", "attention-modules", "SelfAttentionHead", "dropout before the softmax",
                    "Drop the weights after the softmax.", ((DROP_AFTER, DROPOUT_MOVED[where]),))
    ns = namespace(source, "_student_dropout")
    requests = [r for seed in (0, 1) for r in module_requests(ns, "SelfAttentionHead", seed)]
    x = torch.randn(B, T, D_MODEL, generator=torch.Generator().manual_seed(5))
    requests += [answered(ns, {"op": "probe", "cls": "SelfAttentionHead", "args": [D_MODEL, HEAD, CTX, p], "seed": s,
                               "build_seed": 1, "mode": "train", "params": reference_params("SelfAttentionHead", 1),
                               "inputs": [x]}) for p in (0.25, 0.5) for s in (3, 4)]
    found = diagnosed("attention-modules", "SelfAttentionHead", requests, (moved, *load_catalogue("attention-modules")))
    assert [m.id for m in found] == ["dropout_moved"], found


BUGS_IN_ANY_ORDER = {  # a catalogued mistake of the head, as a student writes it (the catalogue's id)
    "head_scale_by_d_model": ("        wei = q @ k.transpose(-2, -1) * self.head_size**-0.5  # (B, T, T)\n",
                              "        wei = q @ k.transpose(-2, -1) * C**-0.5\n"),
    "head_no_scaling": ("        wei = q @ k.transpose(-2, -1) * self.head_size**-0.5  # (B, T, T)\n",
                        "        wei = torch.matmul(q, k.transpose(1, 2))\n"),
}


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))), ids=str)
@pytest.mark.parametrize("mistake", BUGS_IN_ANY_ORDER)
def test_a_head_built_in_any_order_is_named_as_in_the_references_order(mistake, order):
    """The order a module creates its parameters in changes the weights a check does not load and the order
    autograd lists their gradients in; neither is part of a mistake, so neither hides one."""
    lines = HEAD_INIT.splitlines(keepends=True)
    source = _with((HEAD_INIT, "".join(lines[i] for i in order)), BUGS_IN_ANY_ORDER[mistake])
    mistakes = tuple(m for m in load_catalogue("attention-modules") if m.exercise == "SelfAttentionHead")
    assert [m.id for m in _named(source, "SelfAttentionHead", seeds=(0,), mistakes=mistakes)] == [mistake]


def test_a_relation_says_the_same_to_every_student(tmp_path, server):
    """The gradient requests come from hidden checks (each student's own inputs): the sentence that names a
    cut gradient quotes none of them, so two students with the same code read the same words."""
    from grader import api

    secret = tmp_path / "course.secret"
    secret.write_text("a course secret of more than sixteen bytes\n")
    assignment, edits, exercise, _, words, _, slip_words = SANDBOXED["scores detached"]
    source = REFERENCE[assignment].read_text().replace(*edits[0])
    path = tmp_path / "attention.py"
    path.write_text(source)
    with api.Grader(assignment, course_secret_file=secret, server=server) as grader:
        assert grader.input_seed("alice") != grader.input_seed("bob")
        texts = [{d.exercise: d.text for d in grader.grade(path, student).diagnoses} for student in ("alice", "bob")]
    assert texts[0] == texts[1] and (words in texts[0][exercise] or re.search(slip_words, texts[0][exercise])), texts
    assert "float64[" not in texts[0][exercise]
