"""The operators for students' slips (``grader.diagnosis.slips``) and the two-edit search (``pairs``).

Each operator is shown on a generated family of reference-like code written several ways: it proposes its
edit at the sites of that shape and nowhere else. The diagnosis tests replay simulated answers in this
process (trusted code); the end-to-end family grades student files through the sandbox (slow tier).
"""

from __future__ import annotations

import ast
import itertools
import math
import re

import pytest
import torch

from grader.diagnosis import family, pairs, slips
from grader.diagnosis.catalogue import load_catalogue, module_from_source
from grader.diagnosis.diagnose import Diagnoser, diagnosis, is_pair
from tests.corpus_cases import REFERENCE


def _made(source: str, operator: str) -> list[family.Variant]:
    return [v for v in family.variants(source, "x") if v.operator == operator]


def _body(variant: family.Variant) -> str:
    return ast.unparse(ast.parse(variant.definition))


def _run(source: str, name: str, *args):
    return module_from_source(source, "_slips_test").__dict__[name](*args)


def _seeded(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ------------------------------------------------------------------ an int parameter for a size or a rank

SCALES = ("{t} / math.sqrt({p})", "{t} * {p} ** -0.5", "torch.div({t}, math.sqrt({p}))", "{t} / {p} ** 0.5")


@pytest.mark.parametrize("form, tensor, param", list(itertools.product(SCALES, ("scores", "att", "s"), ("head_size", "d_k"))))
def test_an_int_parameter_is_replaced_by_each_size_and_the_rank_of_the_tensor(form, tensor, param):
    body = form.format(t=tensor, p=param)
    source = f"import math\nimport torch\n\ndef f({tensor}: torch.Tensor, {param}: int) -> torch.Tensor:\n    return {body}\n"
    made = {ast.unparse(ast.parse(v.definition).body[0].body[-1]) for v in _made(source, "size")}
    expected = {ast.unparse(ast.parse(f"return {form.format(t=tensor, p=r)}"))
                for r in (f"{tensor}.shape[-1]", f"{tensor}.shape[-2]", f"{tensor}.dim()")}
    assert made == expected


@pytest.mark.parametrize("header", [
    "def f(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:",  # a defaulted int is a dim, not a size
    "def f(scores, head_size):",  # no annotations: nothing says which is the size
    "def f(scores: torch.Tensor, scale: float) -> torch.Tensor:",
])
def test_no_size_variant_without_an_int_size_parameter(header):
    name = header.split("(")[1].split(",")[1].split(":")[0].split(")")[0].strip()
    source = f"import math\nimport torch\n\n{header}\n    return scores / math.sqrt({name})\n"
    assert _made(source, "size") == []


def test_a_size_in_a_message_is_left_alone():
    source = ("import torch\n\ndef f(x: torch.Tensor, n: int) -> torch.Tensor:\n"
              "    if x.shape[-1] % n:\n        raise ValueError(f'{n} heads')\n    return x.view(*x.shape[:-1], n, -1)\n")
    made = [_body(v) for v in _made(source, "size")]
    assert len(made) == 2 * 3 and all("{n} heads" in m for m in made)


@pytest.mark.parametrize("owner, others, index", [("q", ("k", "v"), -1), ("x", ("y",), -2), ("a", ("b", "c"), -1)])
def test_a_size_passed_at_a_call_is_replaced_by_another_size_or_the_rank(owner, others, index):
    params = ", ".join((owner, *others))
    source = f"import torch\n\ndef f({params}):\n    d = {owner}.shape[-1]\n    return g({owner}, {owner}.shape[{index}]) + d\n"
    # the same size at another axis, or another tensor's at the same axis, is shape_index's edit already (the
    # family keeps one variant per edited source): the two operators together offer every size and the rank
    made = {m.group(1) for v in [*_made(source, "size_at_call"), *_made(source, "shape")]
            if (m := re.search(r"g\(\w+, (.*)\) \+ d", _body(v)))} - {f"{owner}.shape[{index}]"}
    expected = {f"{t}.shape[{i}]" for t in (owner, *others) for i in (-1, -2)} - {f"{owner}.shape[{index}]"}
    assert expected | {f"{owner}.dim()"} <= made
    own = _made(source, "size_at_call")
    assert own and all(f"d = {owner}.shape[-1]" in _body(v) for v in own)  # the assignment is not a call's argument


# ------------------------------------------------------------------ a stage moved one step

STAGES = ("{n} = {n}.masked_fill(mask == 0, float('-inf'))", "{n} = torch.softmax({n}, dim=-1)",
          "{n} = self.dropout({n})", "{n} = {n} / 2.0", "{n} = F.relu({n})")


@pytest.mark.parametrize("name, order", [(n, o) for n in ("wei", "att") for o in itertools.permutations(range(4), 3)])
def test_neighbouring_updates_of_one_name_are_swapped(name, order):
    steps = [STAGES[i].format(n=name) for i in order]
    lines = [f"        {name} = q @ k", *(f"        {s}" for s in steps), f"        return {name}"]
    source = "import torch\n\nclass H:\n    def forward(self, q, k, mask):\n" + "\n".join(lines) + "\n"
    made = {_body(v) for v in _made(source, "moved")}
    expected = set()
    for i in range(len(steps) - 1):
        swapped = steps[:i] + [steps[i + 1], steps[i]] + steps[i + 2:]
        expected.add(ast.unparse(ast.parse(source.replace("\n".join(f"        {s}" for s in steps),
                                                          "\n".join(f"        {s}" for s in swapped))).body[-1]))
    assert made == expected  # the first line (`wei = q @ k`) does not update wei from itself: never moved


def test_updates_of_different_names_are_not_swapped():
    source = "import torch\n\ndef f(a, b):\n    a = a * 2\n    b = torch.exp(b)\n    return a + b\n"
    assert _made(source, "moved") == []


# ------------------------------------------------------------------ a constant where a parameter belongs

@pytest.mark.parametrize("rate, size", [("dropout", "context_length"), ("p_drop", "block_size"), ("rate", "max_len")])
def test_a_rate_or_a_size_argument_is_replaced_by_the_constants_students_write(rate, size):
    source = (f"import torch\nimport torch.nn as nn\n\nclass H(nn.Module):\n"
              f"    def __init__(self, {size}: int, {rate}: float = 0.0, causal: bool = True) -> None:\n"
              f"        super().__init__()\n        self.drop = nn.Dropout({rate})\n"
              f"        self.register_buffer('tril', torch.ones({size}, {size}).tril())\n")
    made = {_body(v) for v in _made(source, "constant")}
    rates = {f"nn.Dropout({r})" for r in slips.RATES}
    sizes = {f"torch.ones({s}, {s})" for s in slips.SIZES}
    assert {m for m in made if any(r in m for r in rates)} and len(made) == len(slips.RATES) + len(slips.SIZES)
    assert {next(s for s in sizes if s in m) for m in made if f"Dropout({rate})" in m} == sizes  # every use at once
    assert all("causal" in m and "True" in m for m in made)  # a bool flag is never a constant's site


# ------------------------------------------------------------------ one projection for two roles

@pytest.mark.parametrize("names", [("query", "key", "value"), ("q_proj", "k_proj", "v_proj"), ("to_q", "to_k", "to_v")])
def test_a_submodule_called_on_the_same_input_takes_another_role(names):
    lines = "\n".join(f"        {n[-1] if n.startswith('to_') else n[0]} = self.{n}(x)" for n in names)
    source = f"class H:\n    def forward(self, x, y):\n{lines}\n        z = self.proj(y)\n        return q @ k + v + z\n"
    made = [_body(v) for v in _made(source, "roles")]
    assert len(made) == 6  # each of three for each other; self.proj(y) takes another input: never swapped
    assert all("self.proj(y)" in m for m in made)
    for a, b in itertools.permutations(names, 2):
        assert sum(f"self.{b}(x)" in m and m.count(f"self.{b}(x)") == 2 for m in made) >= 1


def test_weight_attributes_of_a_kind_are_swapped():
    source = "class H:\n    def forward(self, x):\n        return (x @ self.w_q) @ (x @ self.w_k).T @ (x @ self.w_v)\n"
    made = [_body(v) for v in _made(source, "roles")]
    assert len(made) == 6 and all(sum(m.count(f"self.w_{c}") for c in "qkv") == 3 for m in made)


# ------------------------------------------------------------------ parameter, buffer, plain attribute

@pytest.mark.parametrize("name, tensor", [("tril", "torch.tril(torch.ones(8, 8))"), ("mask", "torch.ones(4, 4).bool()"),
                                          ("bias", "torch.zeros(3)")])
@pytest.mark.parametrize("kept", ["self.register_buffer('{n}', {t})", "self.{n} = nn.Parameter({t})",
                                  "self.{n} = {t}", "self.register_buffer('{n}', {t}, persistent=False)"])
def test_a_kept_tensor_is_offered_as_each_other_kind(name, tensor, kept):
    line = kept.format(n=name, t=tensor)
    source = f"import torch\nimport torch.nn as nn\n\nclass H(nn.Module):\n    def __init__(self):\n        super().__init__()\n        {line}\n        self.n = 3\n"
    made = {_body(v).splitlines()[-2].strip() for v in _made(source, "storage")}
    forms = {f"self.register_buffer({name!r}, {tensor})", f"self.{name} = torch.nn.Parameter({tensor})",
             f"self.{name} = {tensor}", f"self.register_buffer({name!r}, {tensor}, persistent=False)"}
    own = next(f for f in forms if ast.dump(ast.parse(f)) == ast.dump(ast.parse(line.replace("nn.Parameter", "torch.nn.Parameter"))))
    assert made == forms - {own}  # and `self.n = 3`, not a tensor, is never a site


# ------------------------------------------------------------------ a list built in reverse order

@pytest.mark.parametrize("comp", ["[h(x) for h in self.heads]", "[f(x, i) for i in range(n)]", "[t.mean(0) for t in ts]"])
def test_a_list_handed_to_a_call_is_offered_reversed_and_a_stored_one_is_not(comp):
    source = f"import torch\n\ndef f(self, x, n, ts):\n    kept = {comp}\n    return torch.cat({comp}, dim=-1), kept\n"
    made = [_body(v) for v in _made(source, "reversed_list")]
    assert made == [ast.unparse(ast.parse(source.replace(f"cat({comp}", f"cat({comp}[::-1]")).body[-1])]


# ------------------------------------------------------------------ no_grad and detach

@pytest.mark.parametrize("steps", [("a = x * 2", "b = torch.exp(a)"), ("a = x.tanh()", "b = a @ a.T", "c = b.sum(-1)")])
def test_each_stage_is_offered_under_no_grad_and_detached_and_only_gradients_change(steps):
    out = steps[-1].split()[0]
    source = "import torch\n\ndef f(x):\n" + "".join(f"    {s}\n" for s in steps) + f"    return {out}\n"
    made = _made(source, "grad")
    assert len(made) == len(steps) + 1  # each stage detached (or under no_grad: alike), the whole body under no_grad
    x = _seeded(3, 3).requires_grad_()
    (grad,) = torch.autograd.grad(_run(source, "f", x).sum(), x)
    for v in made:
        y = _run("import torch\n" + v.definition, "f", x)
        assert torch.allclose(y, _run(source, "f", x).detach())  # the same values
        cut = y.grad_fn is None or torch.autograd.grad(y.sum(), x, allow_unused=True)[0] is None
        assert cut or not torch.allclose(torch.autograd.grad(y.sum(), x, allow_unused=True)[0], grad), v.title


# ------------------------------------------------------------------ x @ w.T, F.linear's convention

@pytest.mark.parametrize("weights", [("w_q", "w_k", "w_v"), ("wq", "wk"), ("a", "b", "c", "d")])
def test_every_projection_by_an_argument_is_transposed_at_once(weights):
    params = ", ".join(("x", *weights))
    body = " + ".join(f"(x @ {w})" for w in weights)
    source = f"import torch\n\ndef f({params}):\n    return {body}\n"
    (made,) = _made(source, "linear")
    x, ws = _seeded(2, 4), [_seeded(4, 4, seed=i + 1) for i in range(len(weights))]
    linear = sum(torch.nn.functional.linear(x, w) for w in ws)
    assert torch.allclose(module_from_source("import torch\n" + made.definition, "_l").__dict__["f"](x, *ws), linear)


def test_one_projection_alone_is_not_taken_for_the_linear_convention():
    assert _made("def mix(weights, v):\n    return weights @ v\n", "linear") == []


# ------------------------------------------------------------------ two edits

NAIVE_SOFTMAXES = {  # reference-like softmaxes written differently; the book's softmax_naive for each
    "shifted": ("def softmax(x, dim=-1):\n    m = x.amax(dim=dim, keepdim=True)\n    e = torch.exp(x - m)\n"
                "    return e / e.sum(dim=dim, keepdim=True)\n"),
    "max_values": ("def softmax(x, dim=-1):\n    e = (x - x.max(dim, keepdim=True).values).exp()\n"
                   "    return e / e.sum(dim, keepdim=True)\n"),
    "functions": ("def softmax(s, dim=-1):\n    e = torch.exp(s - torch.amax(s, dim=dim, keepdim=True))\n"
                  "    return e / torch.sum(e, dim=dim, keepdim=True)\n"),
}


@pytest.mark.parametrize("name", NAIVE_SOFTMAXES)
def test_the_book_softmax_naive_is_a_listed_pair_of_edits(name):
    source = "import torch\n\n" + NAIVE_SOFTMAXES[name]
    made = [v for v in family.variants(source, "x") if is_pair(v)]
    assert 0 < len(made) <= pairs.MAX_PAIRS_PER_DEFINITION
    x = _seeded(3, 4, 5)
    naive = torch.exp(x) / torch.exp(x).sum(dim=0)
    def gives_naive(v: family.Variant) -> bool:
        try:
            return torch.allclose(_run("import torch\n" + v.definition, "softmax", x), naive)
        except RuntimeError:  # a pair whose shapes do not broadcast
            return False
    hits = [v for v in made if gives_naive(v)]
    assert hits and all(", and " in v.title and "not subtracted" in v.title for v in hits)


def test_only_the_listed_pairs_are_combined():
    source = "import torch\n\n" + NAIVE_SOFTMAXES["shifted"]
    tree = ast.parse(source)
    assert list(pairs.two_edits(tree.body[1], [], pairs=(("operand", "dim"),))) == []  # no edits, no pairs
    assert {k for pair in pairs.listed_pairs() for k in pair} <= {*family.NODE_OPERATORS}


def _answers(fn, *args):
    message = {"op": "call", "fn": fn.__name__, "args": list(args), "kwargs": {}, "seed": 0, "vjp": None,
               "return_args": False}
    return message, {"ok": True, "value": fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])}


def softmax(scores, dim=-1):  # the book's softmax_naive, copied into the contract's signature
    return torch.exp(scores) / torch.exp(scores).sum(dim=0)


def scale_scores(scores, head_size):  # the head size read from the scores
    return scores / math.sqrt(scores.shape[-1])


@pytest.mark.parametrize("student, args, words", [
    # large scores: exp overflows without the max subtracted, which tells the pair from a softmax over dim 0
    (softmax, (_seeded(2, 3, 5, seed=1) * 100,), r"not subtracted.*, and .*dim (0|-3) "),  # the same axis in 3-d
    (softmax, (_seeded(3, 6, seed=2) * 60,), r"not subtracted.*, and .*dim (0|-2) "),
    (scale_scores, (_seeded(2, 4, 7, seed=3), 16), r"size of `scores` along axis -1.*head_size"),
    (scale_scores, (_seeded(5, 3, seed=4), 4), r"size of `scores` along axis -1.*head_size"),
], ids=lambda p: getattr(p, "__name__", None))
def test_a_slip_is_named_in_its_own_exercise(student, args, words):
    diagnoser = Diagnoser(REFERENCE["attention"], load_catalogue("attention"), operators=True, assignment="attention")
    from grader.diagnosis.diagnose import CheckEvidence
    (found,) = diagnoser.diagnose([CheckEvidence(student.__name__, "failed", (), (_answers(student, *args),))])
    named = diagnosis(found)
    assert named is not None and re.search(words, named[1]) and f"`{student.__name__}`" in named[1], named


def test_a_pair_is_never_named_where_one_edit_fits():
    """softmax over dim 0 with the max subtracted is one edit: the pair search is not even tried."""
    def softmax(scores, dim=-1):  # noqa: ANN001, ANN202 - a student's
        e = torch.exp(scores - scores.amax(dim=dim, keepdim=True))
        return e / e.sum(dim=0, keepdim=True)
    diagnoser = Diagnoser(REFERENCE["attention"], (), operators=True, assignment="attention")
    from grader.diagnosis.diagnose import CheckEvidence
    (found,) = diagnoser.diagnose([CheckEvidence("softmax", "failed", (), (_answers(softmax, _seeded(2, 3, 5)),))])
    assert found and not any(is_pair(m) for m in found)


# ------------------------------------------------------------------ end to end: graded through the sandbox

MODULES = REFERENCE["attention-modules"].read_text(encoding="utf-8")
FUNCTIONS = REFERENCE["attention"].read_text(encoding="utf-8")
V, K, Q = "v = self.value(x)", "k = self.key(x)", "q = self.query(x)"
SOFTMAX, DROP = "wei = torch.softmax(wei, dim=-1)", "wei = self.dropout(wei)  # active only in training mode"
BUFFER = 'self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))'
CAT = "out = torch.cat([h(x) for h in self.heads], dim=-1)"

END_TO_END = [  # (assignment, edits of the reference, exercise, words the sentence says)
    ("attention-modules", [(V, "v = self.key(x)")], "SelfAttentionHead", r"`self\.key` used where `self\.value`"),
    ("attention-modules", [(K, "k = self.query(x)")], "SelfAttentionHead", r"`self\.query` used where `self\.key`"),
    ("attention-modules", [(f"{SOFTMAX}\n        {DROP}", f"{DROP}\n        {SOFTMAX}")], "SelfAttentionHead",
     r"dropout.* before .*softmax"),
    ("attention-modules", [(BUFFER, "self.tril = nn.Parameter(torch.tril(torch.ones(context_length, context_length)))")],
     "SelfAttentionHead", r"parameter"),
    ("attention-modules", [(BUFFER, BUFFER.replace("torch.tril(torch.ones(context_length, context_length))",
                                                   "torch.ones(context_length, context_length).tril().requires_grad_()")
                            .replace('self.register_buffer("tril", ', "self.tril = nn.Parameter(").replace(")))", "))"))],
     "SelfAttentionHead", r"parameter"),
    ("attention-modules", [(CAT, "outs = []\n        for h in self.heads:\n            outs.insert(0, h(x))\n"
                                 "        out = torch.cat(outs, dim=-1)")], "MultiHeadAttention", r"reverse order"),
    ("attention-modules", [(CAT, "out = torch.cat(list(reversed([h(x) for h in self.heads])), dim=-1)")],
     "MultiHeadAttention", r"reverse order"),
    ("attention", [("return scores / math.sqrt(head_size)", "return scores / math.sqrt(scores.shape[-1])")],
     "scale_scores", r"size of `scores` along axis -1|√\(scores\.shape\[-1\]\)"),  # the slip, or the relation
    ("attention", [("return scores / math.sqrt(head_size)", "return scores * scores.size(-1) ** -0.5")],
     "scale_scores", r"size of `scores` along axis -1|√\(scores\.shape\[-1\]\)"),  # the slip, or the relation
    ("attention", [(f"x @ w_{w}", f"torch.nn.functional.linear(x, w_{w})") for w in "qkv"]
     + [("merge_heads(out) @ w_o", "torch.nn.functional.linear(merge_heads(out), w_o)")], "multi_head_attention",
     r"x @ wᵀ"),
    ("attention", [(f"x @ w_{w}", f"x @ w_{w}.T") for w in "qkv"] + [("merge_heads(out) @ w_o", "merge_heads(out) @ w_o.t()")],
     "multi_head_attention", r"x @ wᵀ"),
    ("attention", [("scores = scale_scores(scores, q.shape[-1])", "scores = scale_scores(scores, q.dim())")], "attention",
     r"rank of `q`"),
    ("attention", [("scores = scale_scores(scores, q.shape[-1])", "scores = scale_scores(scores, len(q.shape))")],
     "attention", r"rank of `q`"),
    ("attention-modules", [("""        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C""", """        self.dropout = nn.Dropout(0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C""")], "SelfAttentionHead", r"fixed rate|constant 0\.2"),
    ("attention", [("""    row_max = scores.detach().amax(dim=dim, keepdim=True)  # (..., 1, ...)
    # A row whose max is -inf would give -inf - (-inf) = NaN: shift it by 0.
    row_max = row_max.masked_fill(row_max == float("-inf"), 0.0)
    e = torch.exp(scores - row_max)  # all in [0, 1]
    return e / e.sum(dim=dim, keepdim=True)""", "    return torch.exp(scores) / torch.exp(scores).sum(dim=0)")], "softmax",
     r"not subtracted.*, and .*dim 0"),
]


@pytest.mark.parametrize("assignment, edits, exercise, words", END_TO_END,
                         ids=[f"{e[2]}-{i}" for i, e in enumerate(END_TO_END)])
def test_a_student_file_with_a_slip_is_named_in_its_exercise(grade, assignment, edits, exercise, words):
    source = MODULES if assignment == "attention-modules" else FUNCTIONS
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    card = grade(source, assignment)
    said = {d.exercise: d.text for d in card.diagnoses}
    assert exercise in said and re.search(words, said[exercise]), said
