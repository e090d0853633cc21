"""The mutation operators (``grader.diagnosis.operators``, ``family``): what each generates, and that the family is sound.

No sandbox here: sources are parsed and variants built in this process (trusted code, ours), and a
student's answers are simulated by running a student-style function on the checks' kind of inputs.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

import pytest
import torch

from grader.diagnosis import family, operators
from grader.diagnosis.catalogue import load_catalogue, module_from_source
from grader.diagnosis.diagnose import Diagnoser
from grader.diagnosis.naming import diagnosis
from tests.corpus_cases import REFERENCE

SOURCES = {name: path.read_text(encoding="utf-8") for name, path in REFERENCE.items()}


@pytest.fixture(scope="module")
def families() -> dict[str, list[family.Variant]]:
    return {name: family.variants(source, name) for name, source in SOURCES.items()}


def test_every_operator_makes_variants_somewhere(families):
    made = Counter(v.operator for variants in families.values() for v in variants)
    einsum = family.variants("import torch\ndef f(q, k):\n    return torch.einsum('btd,bsd->bts', q, k)\n", "x")
    made.update(v.operator for v in einsum)
    missing = [name for name in [*operators.OPERATORS, "order", "pair", "ignored"] if not made[name]]
    assert not missing, f"operators that never find a site: {missing}"


def test_every_variant_compiles_differs_from_the_reference_and_has_a_stable_unique_id(families):
    for name, made in families.items():
        again = family.variants(SOURCES[name], name)
        assert [v.id for v in made] == [v.id for v in again], "ids must not change between runs"
        assert len({v.id for v in made}) == len(made)
        definitions = {d.name: ast.unparse(d) for d in ast.parse(SOURCES[name]).body if hasattr(d, "name")}
        for v in made:
            compile(v.definition, v.id, "exec")
            assert v.definition != definitions[v.exercise], v.id
            assert v.title.startswith(f"`{v.exercise}`") and v.explanation.startswith("Fix: ")


def test_a_new_exercise_gets_variants_without_operator_work():
    """Operators find sites by the shape of the code: a function no operator was written for still gets its family."""
    source = ("import math\nimport torch\n\n"
              "def alibi_bias(scores, slopes):\n"
              "    T = scores.shape[-1]\n"
              "    distance = torch.arange(T)[None, :] - torch.arange(T)[:, None]\n"
              "    return scores + slopes.unsqueeze(-1).unsqueeze(-1) * distance.clamp_max(0) / math.sqrt(T)\n")
    made = family.variants(source, "alibi")
    kinds = {v.operator for v in made}
    assert {"dim", "shape", "scale", "cast"} <= kinds, kinds
    assert all(v.exercise == "alibi_bias" for v in made)


def test_a_variant_of_a_helper_reaches_its_callers():
    """``attention`` calls ``softmax``: the variant module's ``attention`` runs the edited ``softmax``."""
    made = family.variants(SOURCES["attention"], "attention")
    factory = family.VariantFactory(SOURCES["attention"], "_test")
    dim0 = next(v for v in made if v.exercise == "softmax" and v.operator == "dim" and "dim 0" in v.title
                and "e.sum" in v.title)
    reference, variant = module_from_source(SOURCES["attention"], "_test_reference").__dict__, factory.build(dim0).__dict__
    q, k, v = (torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(i)) for i in range(3))
    assert not torch.allclose(variant["attention"](q, k, v)[1], reference["attention"](q, k, v)[1])
    assert torch.allclose(variant["softmax"](q).sum(0), torch.ones(3, 4))  # the edit itself: sums over dim 0


def _answers(fn, *args):
    """A request as the proxy records it and the reply the child would send for ``fn`` (a student's code)."""
    message = {"op": "call", "fn": fn.__name__, "args": list(args), "kwargs": {}, "seed": 0, "vjp": None,
               "return_args": False}
    try:
        return message, {"ok": True, "value": fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])}
    except Exception as exc:  # noqa: BLE001 - the student's exception is the answer
        return message, {"ok": False, "kind": "exception", "type": type(exc).__name__, "message": str(exc)}


def softmax(scores, dim=-1):  # a student's: normalised over a hard-coded dim 1, written their own way
    e = torch.exp(scores - scores.max(dim=dim, keepdim=True).values)
    return e / e.sum(1, keepdim=True)


def scale_scores(scores, head_size):  # a student's: the integer square root
    import math
    return scores * (1 / math.isqrt(head_size))


def attention_entropy(weights):  # a student's: averaged instead of summed
    return -(weights * torch.log(weights.clamp(min=1e-30))).mean(-1)


def apply_mask(scores, mask):  # a student's: the result of masked_fill dropped
    scores.masked_fill(mask == 0, float("-inf"))
    return scores


@pytest.mark.parametrize("student, args, words", [
    (softmax, (torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(1)),), r"dim (1|-2) "),  # alike in 3-d
    (scale_scores, (torch.randn(4, 6, generator=torch.Generator().manual_seed(2)), 8), "integer square root"),
    (attention_entropy, (torch.softmax(torch.randn(3, 7, generator=torch.Generator().manual_seed(3)), -1),), r"\.mean"),
    (apply_mask, (torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(4)), torch.ones(5, 5).tril().bool()),
     "dropped"),
], ids=lambda p: getattr(p, "__name__", None))
def test_a_classic_written_another_way_is_named_by_a_generated_variant(student, args, words):
    """The catalogue has no entry for these spellings; the generated family names them."""
    diagnoser = Diagnoser(REFERENCE["attention"], load_catalogue("attention"), operators=True, assignment="attention")
    found = diagnoser.matching(student.__name__, [_answers(student, *args)])
    named = diagnosis(found)
    assert named is not None, f"{student.__name__}: nothing named"
    assert re.search(words, named[1]) and f"`{student.__name__}`" in named[1], named[1]


def test_the_reference_itself_is_never_named():
    diagnoser = Diagnoser(REFERENCE["attention"], load_catalogue("attention"), operators=True, assignment="attention")
    x = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(9))
    right = _answers(diagnoser._module(None).softmax, x)
    right[0]["fn"] = "softmax"
    assert diagnoser.matching("softmax", [right]) == []
