"""The held-out corpora's shape (``tests/corpus_unseen``, ``_fresh``, ``_kept``, ``_blind``): what
bench/diagnosis.py relies on, never its verdicts.

Only the bench grades these files (the corpus is held out from the diagnosis's own tests); here we check
that each one is well formed: a label, and for a bug file one definition over a correct base.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CORPORA = ("corpus_unseen", "corpus_fresh", "corpus_kept", "corpus_blind")
FILES = [path for corpus in CORPORA for path in sorted(HERE.glob(f"{corpus}/*/*.py"))]
CONTRACTS = {  # an assignment's folder -> the names a whole submission defines
    "attention": {"attention_scores", "scale_scores", "causal_mask", "apply_mask", "softmax", "mix_values", "attention",
                  "bag_of_past", "split_heads", "merge_heads", "multi_head_attention", "attention_entropy"},
    "attention_modules": {"SelfAttentionHead", "MultiHeadAttention"},
}
DEFINITIONS = (ast.FunctionDef, ast.ClassDef)


def header(path: Path) -> dict[str, str]:
    return dict(re.findall(r"^# (source|exercise|accept|why|base): (.*)$", path.read_text(encoding="utf-8"), re.M))


@pytest.mark.parametrize(("corpus", "least"), [("corpus_unseen", 50), ("corpus_fresh", 50), ("corpus_kept", 50),
                                               ("corpus_blind", 51)])
def test_the_corpus_is_there(corpus, least):
    assert len([f for f in FILES if f.parent.parent.name == corpus]) >= least


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_each_file_is_labelled_and_whole(path):
    label = header(path)
    assert {"source", "exercise", "accept", "why"} <= label.keys(), f"{path.name}: header {sorted(label)}"
    re.compile(label["accept"])
    if label["exercise"] == "none":
        assert "base" not in label and label["accept"] == "-"
        defined = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, DEFINITIONS)}
        contract = CONTRACTS[path.parent.name]
        assert contract <= defined, f"{path.name} lacks {sorted(contract - defined)}"
        return
    base = path.with_name(f"{label['base']}.py")
    assert base.is_file() and header(base)["exercise"] == "none", f"{path.name}: its base must be a correct file"
    patch = [n for n in ast.parse(path.read_text(encoding="utf-8")).body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [getattr(n, "name", None) for n in patch] == [label["exercise"]], \
        f"{path.name}: one definition, the buggy {label['exercise']}"
