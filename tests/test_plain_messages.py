"""A check's message is the one it wrote for the student, even when this project's tests grade in-process.

Here the outer pytest's assertion-rewriting hook is in ``sys.meta_path``; the check modules carry no
``PYTEST_DONT_REWRITE`` marker, and the judge still imports them as written (``session.PlainImports``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader import api
from grader.config import CHECKS_ROOT
from tests.conftest import ROOT

CHECK = "test_mask_is_bool_lower_triangular_with_diagonal"
FLOAT_MASK = "\n\ndef causal_mask(T, device=None):\n    return torch.ones(T, T, device=device).tril()\n"


def test_a_check_without_the_marker_gives_the_plain_message_when_graded_in_process(server, tmp_path: Path):
    assert any(type(f).__module__ == "_pytest.assertion.rewrite" for f in sys.meta_path)  # the outer hook is there
    assert not [p for p in CHECKS_ROOT.rglob("*.py") if "PYTEST_DONT_REWRITE" in p.read_text()]
    path = tmp_path / "attention.py"
    path.write_text((ROOT / "solutions/attention.py").read_text() + FLOAT_MASK)
    with api.Grader("attention", server=server, select=CHECK) as grader:
        card = grader.grade(path)
    [row] = [c for c in card.checks if c.id == f"{CHECK}[1]"]
    # The message the check wrote: assert got.dtype == torch.bool, f"`causal_mask({t})` has dtype ..."
    assert row.status == "failed" and row.message == "`causal_mask(1)` has dtype torch.float32; it must be a bool tensor", \
        row.message
    module = sys.modules.get("grader.checks.attention.test_scores_and_mask")
    assert module is not None and "@py_builtins" not in vars(module)  # imported as written, not rewritten


def test_the_device_check_never_blames_the_device_for_an_error_the_cpu_raises_too(corpus_cards):
    """causal_mask_float breaks attention on every device (``~`` on a float mask): the device check says the
    CPU raises it too, not that the device is at fault; a real device bug is still named as one."""
    card = corpus_cards["attention/mutants/causal_mask_float"]
    stays = [c for c in card.checks if c.id.startswith("test_stays_on_the_inputs_device[") and c.status == "failed"]
    assert stays, "causal_mask_float should break attention's device check too"
    for c in stays:
        assert "on CPU inputs as well" in c.message and "another device than the CPU" not in c.message, c.message
    on_cpu = corpus_cards["attention/mutants/attention_mask_on_cpu"]
    device = [c.message for c in on_cpu.checks if c.id == "test_stays_on_the_inputs_device[attention]"]
    assert device and "device" in device[0] and "as well" not in device[0], device


def test_noise_on_attentions_output_is_named_as_noise_not_as_a_wrong_mix(corpus_cards):
    """attention_adds_noise gets its weights right and adds noise after the mix: the checks that compare its
    output with a known answer say that a second call differs, not how to weight or mix the values."""
    card = corpus_cards["attention/mutants/attention_adds_noise"]
    for check in ("test_zero_scores_give_mean_of_past", "test_worked_example_fluffy_blue_cat"):
        message = next(c.message for c in card.checks if c.id == check)
        assert "something random is added" in message, message
        assert "gets weight 1/(t+1)" not in message and "weights @ v" not in message, message
