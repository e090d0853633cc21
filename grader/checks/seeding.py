"""Seeded inputs for the checks: the same seed gives the same tensor, and a student's salt gives their own.

Visible checks build their inputs from fixed seeds, the same for everyone; hidden checks mix in the
student's salt (``grader.seeds``) with ``seed``, and hypothesis property checks draw their examples from
it with ``seed_examples``. The checks reach these through ``grader.checks.helpers`` (``h.randn``, ``h.seed``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch


def randn(*shape: int, seed: int, dtype: torch.dtype = torch.float32, scale: float = 1.0) -> torch.Tensor:
    """Seeded normal input: the same seed gives the same tensor on every run."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(dtype)


SEED_SHIFT = 20  # a check's own seeds stay below 2**20, so salted seeds of different inputs never meet


def seed(n: int, salt: int) -> int:
    """A hidden check's seed ``n`` for the student whose hidden inputs are ``salt`` (the ``hidden_seed``
    fixture, ``grader.seeds``): ``n`` itself for salt 0 (the inputs written in the checks), and for
    another salt a seed of that student's own. Visible checks never call this: their inputs are the
    same for everyone."""
    return n if not salt else (salt << SEED_SHIFT) + n


def seed_examples(test: Callable[..., Any], salt: int) -> int:
    """Make a hypothesis property check draw this student's examples: ``hypothesis.seed(salt)`` on the
    check (salt 0: the seed ``derandomize`` draws from, so the examples every student got before). Called
    by a fixture of the check itself (``request.function``), before hypothesis draws; returns ``salt``."""
    from hypothesis import seed as hypothesis_seed

    hypothesis_seed(salt or derandomized_seed(test))(test)
    # The example database is off (``database=None``), so its key, a second digest of the check's source
    # hypothesis works out on every run, is never read: None says there is none to work out.
    test._hypothesis_internal_database_key = None  # type: ignore[attr-defined]  # noqa: SLF001
    return salt


@functools.cache
def derandomized_seed(test: Callable[..., Any]) -> int | None:
    """The seed a ``derandomize`` check draws its examples from: hypothesis works it out from a digest of the
    check's source (``inspect.getsource``, tokenised and parsed: ~0.6 ms) on every run, twice with the
    database key; here once per check and process. The same seed, so the same examples. None (hypothesis
    then works it out itself) where that digest is not where this hypothesis keeps it."""
    try:
        from hypothesis.internal.reflection import function_digest
    except ImportError:
        return None
    inner = getattr(getattr(test, "hypothesis", None), "inner_test", None)
    return None if inner is None else int.from_bytes(function_digest(inner), "big")
