"""The answer scan of `grader release` (grader/release/answers.py) reads every text file a student receives,
and in each the parts that are code: it finds an answer written in a notebook's code cell, in a code block of
a markdown cell or a README, in a YAML block, in any other text file; it passes over the same answer written
as prose or in a comment. The family below places each construction of every exercise in every container."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from grader.release import answers

DATA = Path(__file__).resolve().parent / "data" / "answer_scan"

# Constructions a solution writes, by the exercise they answer: a tuple is lines in a row. Every one holds a
# space, so that as a Python string it is prose (``answers.python_code_lines``).
CONSTRUCTIONS: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "attention_scores": ("scores = q @ k.transpose(-2, -1)", "s = torch.matmul(q, k.transpose(-1, -2))",
                         "s = torch.einsum('btd,bsd->bts', q, k)", "wei = q @ k.mT"),
    "scale_scores": ("return scores / math.sqrt(d)", "s = s / d ** 0.5", "s = s * torch.rsqrt(torch.tensor(d))"),
    "causal_mask": ("m = torch.tril(torch.ones(T, T, dtype=torch.bool))", "m = torch.ones(T, T).triu(1) == 0",
                    "m = torch.arange(T)[:, None] >= torch.arange(T)"),
    "apply_mask": ("s = s.masked_fill(~m, float('-inf'))", "s = torch.where(m, s, float('-inf'))"),
    "softmax": (("e = (x - x.amax(-1, keepdim=True)).exp()", "return e / e.sum(-1, keepdim=True)"),
                "return (x - x.logsumexp(-1, keepdim=True)).exp()"),
    "mix_values": ("out = weights @ v",),
    "bag_of_past": ("return v.cumsum(-2) / torch.arange(1, T + 1)[:, None]",),
    "split_heads": ("x = x.view(B, T, n_heads, C // n_heads).transpose(1, 2)",
                    "x = x.reshape(B, T, n_heads, -1).permute(0, 2, 1, 3)"),
    "merge_heads": ("x = x.transpose(1, 2).contiguous().view(B, T, C)", "return x.transpose(1, 2).reshape(B, T, -1)"),
    "attention_entropy": ("return -(p * p.clamp_min(1e-12).log()).sum(-1)", "return -torch.special.xlogy(p, p).sum(-1)",
                          "return torch.special.entr(p).sum(-1)"),
    "SelfAttentionHead / MultiHeadAttention": ("self.register_buffer('tril', torch.ones(n, n))",
                                               "out = torch.cat([h(x) for h in self.heads], dim=-1)"),
}
FAMILY = [(exercise, (c,) if isinstance(c, str) else c) for exercise, cs in CONSTRUCTIONS.items() for c in cs]
FILLER = ("torch.manual_seed(0)", "x = torch.randn(2, 5, 8)")  # code that answers nothing, before the construction


def read_case(name: str) -> tuple[str, list[tuple[int, str]]]:
    """A file of tests/data/answer_scan: its text after the ``# ---`` line, and its header's ``# find: LINE EXERCISE``."""
    header, text = (DATA / name).read_text(encoding="utf-8").split("# ---\n", 1)
    finds = [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^# find: (\d+) (\S+)$", header, re.M)]
    assert finds, f"{name}: its header names nothing the scan must find"
    return text.rstrip("\n"), finds


def notebook(*cells: nbformat.NotebookNode) -> bytes:
    return nbformat.writes(nbformat.v4.new_notebook(cells=list(cells))).encode()


def where(found: list[answers.AnswerLine]) -> set[tuple[str, int | None, int, str]]:
    return {(f.path, f.cell, f.line, f.exercise) for f in found}


# --- today's release ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.txt")))
def test_the_scan_finds_the_answers_the_548a009_release_wrote_in_its_notebooks(name):
    """The cells `grader release` wrote at 548a009 (kept verbatim under tests/data/answer_scan), each as the
    third cell of a notebook: the scan names the notebook, the cell and the line of each answer."""
    text, finds = read_case(name)
    nb = notebook(nbformat.v4.new_markdown_cell("# A lesson"), nbformat.v4.new_code_cell("import torch"),
                  nbformat.v4.new_code_cell(text))
    found = answers.scan({"attention_modules.ipynb": nb})
    assert where(found) == {("attention_modules.ipynb", 3, line, exercise) for line, exercise in finds}
    assert all(str(f).startswith(f"attention_modules.ipynb: cell 3, line {f.line}: {f.exercise}: ") for f in found)
    assert answers.refusal(found) is not None


# --- the family: each construction in each container ------------------------------------------------

def _code_cell(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    return "demo.ipynb", notebook(nbformat.v4.new_markdown_cell("intro"), nbformat.v4.new_code_cell("\n".join(lines))), 2, 1


def _markdown_cell_fence(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    text = "Compare with this:\n\n```python\n" + "\n".join(lines) + "\n```\n\nThen run it."
    return "demo.ipynb", notebook(nbformat.v4.new_markdown_cell(text)), 1, 4


def _markdown_cell_indented(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    text = "Compare with this:\n\n" + "\n".join("    " + line for line in lines) + "\n\nThen run it."
    return "demo.ipynb", notebook(nbformat.v4.new_code_cell("import torch"), nbformat.v4.new_markdown_cell(text)), 2, 3


def _readme_fence(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    text = "# Kit\n\nInstall it.\n\n~~~python\n" + "\n".join(lines) + "\n~~~\n"
    return "README.md", text.encode(), None, 6


def _readme_fence_in_a_list(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    text = "# Kit\n\n1. Install it:\n\n   ```\n" + "\n".join("   " + line for line in lines) + "\n   ```\n"
    return "docs/notes.md", text.encode(), None, 6


def _readme_indented(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    text = "# Kit\n\nRun:\n\n" + "\n".join("    " + line for line in lines) + "\n"
    return "README.md", text.encode(), None, 5


def _yaml_block(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    text = "# a lesson\nsteps:\n  demo:\n    code: |\n" + "\n".join("      " + line for line in lines) + "\n    tags: [demo]\n"
    return "grader/course/lesson.yaml", text.encode(), None, 5


def _python(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    return "grader/figures.py", ("import torch\n\n\ndef f(x):\n" + "\n".join("    " + line for line in lines)).encode(), None, 5


def _other_text(lines: list[str]) -> tuple[str, bytes, int | None, int]:
    return "scripts/setup.cfg", ("[demo]\nrun =\n" + "\n".join("  " + line for line in lines)).encode(), None, 3


CODE = [_code_cell, _markdown_cell_fence, _markdown_cell_indented, _readme_fence, _readme_fence_in_a_list,
        _readme_indented, _yaml_block, _python, _other_text]


@pytest.mark.parametrize("container", CODE, ids=lambda c: c.__name__.strip("_"))
@pytest.mark.parametrize("filler", [0, 1, 2])
def test_an_answer_written_as_code_is_found_where_it_is(container, filler):
    """Each construction, after ``filler`` lines of neutral code, is found at its own line (and cell)."""
    missed = []
    for exercise, construction in FAMILY:
        path, data, cell, first = container([*FILLER[:filler], *construction])
        found = where(answers.scan({path: data}))
        if (path, cell, first + filler, exercise) not in found:
            missed.append(f"{exercise}: {construction} -> {sorted(found)}")
    assert not missed, "\n".join(missed)


def _comment_in_a_code_cell(lines: list[str]) -> tuple[str, bytes]:
    return "demo.ipynb", notebook(nbformat.v4.new_code_cell("\n".join(f"x = 1  # {line}" for line in lines)))


def _prose_string_in_a_code_cell(lines: list[str]) -> tuple[str, bytes]:
    return "demo.ipynb", notebook(nbformat.v4.new_code_cell(
        "\n".join(f"print({json.dumps(line)})" for line in lines) + '\n"""' + "\n".join(lines) + '\n"""'))


def _markdown_cell_prose(lines: list[str]) -> tuple[str, bytes]:
    text = "The answer is\n" + "\n".join(lines) + "\n\nor, inline, " + " ".join(f"`{line}`" for line in lines)
    return "demo.ipynb", notebook(nbformat.v4.new_markdown_cell(text))


def _readme_prose(lines: list[str]) -> tuple[str, bytes]:
    text = "# Kit\n\n" + "\n".join(lines) + "\n\n- in a list: " + " ".join(f"`{line}`" for line in lines) + "\n"
    return "README.md", text.encode()


def _yaml_comment_and_sentence(lines: list[str]) -> tuple[str, bytes]:
    text = "".join(f"# {line}\nhint{i}: {json.dumps('write ' + line)}\n" for i, line in enumerate(lines))
    return "grader/course/assignments.yaml", text.encode()


def _python_comment_and_prose(lines: list[str]) -> tuple[str, bytes]:
    body = "\n".join(f"    # {line}\n    raise AssertionError({json.dumps('use ' + line)})" for line in lines)
    return "grader/checks/test_x.py", f"def test_x():\n{body}\n".encode()


PROSE = [_comment_in_a_code_cell, _prose_string_in_a_code_cell, _markdown_cell_prose, _readme_prose,
         _yaml_comment_and_sentence, _python_comment_and_prose]


@pytest.mark.parametrize("container", PROSE, ids=lambda c: c.__name__.strip("_"))
def test_the_same_answer_in_prose_or_a_comment_is_not_a_finding(container):
    assert all(" " in line for _, construction in FAMILY for line in construction)
    wrongly = []
    for exercise, construction in FAMILY:
        path, data = container(list(construction))
        found = answers.scan({path: data})
        if found:
            wrongly.append(f"{exercise}: {construction} -> {[str(f) for f in found]}")
    assert not wrongly, "\n".join(wrongly)


# --- what is text, and what a file that is not what its name says gets -------------------------------

def test_a_file_that_does_not_decode_is_skipped_whatever_its_name_and_any_text_is_read():
    answer = b"s = s.masked_fill(~m, float('-inf'))\n"
    files = {"a.py": b"\xff\xfe" + answer, "b.md": answer + b"\x00\x01", "c.bin": answer, "d": answer,
             "e.sh": b"#!/bin/sh\n" + answer, "f.toml": answer, "g.json": json.dumps({"x": answer.decode()}).encode()}
    found = {f.path for f in answers.scan(files)}
    assert found == {"c.bin", "d", "e.sh", "f.toml", "g.json"}


def test_a_notebook_that_nbformat_cannot_read_is_scanned_as_plain_text():
    found = answers.scan({"broken.ipynb": b'{"cells": [ s = s.masked_fill(~m, 0)'})
    assert where(found) == {("broken.ipynb", None, 1, "apply_mask")}


def test_a_code_cell_that_does_not_tokenize_is_scanned_whole():
    """A cell Python's tokenizer gives up on (a bracket never closed, a triple quote never ended) is not told
    into code and prose: no line of it is prose, so the comment's answer is found."""
    for opened in ("print((1,", "%%bash\necho '''"):
        cell = f"{opened}\nx = 1  # s = s.masked_fill(~m, 0)"
        found = answers.scan({"a.ipynb": notebook(nbformat.v4.new_code_cell(cell))})
        assert where(found) == {("a.ipynb", 1, cell.count("\n") + 1, "apply_mask")}, opened


def test_a_rule_of_several_lines_does_not_join_two_cells():
    """``exp(`` at the end of one cell and ``sum(`` at the start of the next are two cells, not a softmax."""
    split = notebook(nbformat.v4.new_code_cell("e = x.exp()"), nbformat.v4.new_code_cell("t = e.sum(-1)"))
    joined = notebook(nbformat.v4.new_code_cell("e = x.exp()\nt = e.sum(-1)"))
    assert answers.scan({"a.ipynb": split}) == []
    assert where(answers.scan({"a.ipynb": joined})) == {("a.ipynb", 1, 1, "softmax")}


def test_python_code_is_read_without_comments_and_prose_strings():
    source = ('x = 1  # q @ k.transpose(-2, -1)\n'
              'raise AssertionError("use scores.masked_fill(~mask, float(\'-inf\'))")\n'
              'doc = """e = x.exp()\nreturn e / e.sum(-1)"""\n'
              'w = s.masked_fill(~m, float("-inf"))\n')
    assert where(answers.scan({"a.py": source.encode()})) == {("a.py", None, 5, "apply_mask")}


def test_the_refusal_is_one_line_that_names_the_first_finding_and_counts_the_rest():
    allowed_path, allowed_exercise = next(iter(answers.ALLOWED_SITES))
    allowed = answers.AnswerLine(allowed_path, 3, allowed_exercise, "x")
    assert answers.refusal([allowed]) is None and answers.refusal([]) is None
    first = answers.AnswerLine("a.ipynb", 2, "apply_mask", "s = s.masked_fill(m, 0)", cell=4)
    second = answers.AnswerLine("README.md", 9, "softmax", "e = x.exp()")
    line = answers.refusal([allowed, first, second])
    assert line is not None and "\n" not in line
    assert "a.ipynb: cell 4, line 2: apply_mask: s = s.masked_fill(m, 0) (and 1 more)" in line


@pytest.mark.parametrize("exercise,construction", [(e, c[0]) for e, c in FAMILY if len(c) == 1 and '"' not in c[0]],
                         ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_an_f_strings_expressions_are_code_and_its_text_is_prose(exercise, construction):
    """As Python 3.12's tokenizer splits an f-string, on every Python: an answer in a replacement field is
    found, the same answer in its text is not, and ``{{`` does not open a field."""
    value = construction.split(" = ", 1)[-1].removeprefix("return ")
    code = f'print(f"the weights: {{{value}}} and more")\n'
    text = f'print(f"write {value} and more: {{{{{value}}}}} {{x:>4}}")\n'
    assert (("a.py", None, 1, exercise) in where(answers.scan({"a.py": code.encode()}))), code
    assert answers.scan({"a.py": text.encode()}) == [], text
