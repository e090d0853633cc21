"""``grader grade-all`` and ``grader merge``: a whole class through warm grader processes, resumable,
nothing lost.

The flow, one module each: ``intake`` (on ``grader.coursedata``'s ``lms``, ``roster``) finds who
submitted what -> ``run`` plans (shard, roster, what is unchanged since the last run: ``layout``'s records and card key) ->
``pool`` grades in ``--jobs`` grader processes -> each card made ``final`` as it arrives (the staff
``overrides``, then the late policy: one stage), then written with its record and ``reports``, once ->
``changes`` since the last run -> ``outputs``: the gradebook, ``summary``, the ``cohort`` views
(``similarity``), all drawn from the final cards.
``merge`` joins shards (through the same ``final`` stage). ``progress`` is what the terminal shows meanwhile.

The package's names (``batch.grade_all``, ``batch.Layout``...) load their module when first used, not
with the package: ``zygote``, which multiprocessing's fork server imports before torch, is a module of
this package, and the batch's own modules (yaml, jsonschema, numpy for the similarity report...) would
only delay every grader process's start (~0.2 s).
"""

from __future__ import annotations

import importlib
from typing import Any

_API = {
    "Layout": "layout", "fingerprint": "layout", "read_record": "layout", "write_record": "layout",
    "MergeError": "merge",
    "BatchStopped": "pool", "GraderPool": "pool",
    "MISSING": "run", "BatchOptions": "run", "BatchResult": "run", "Counts": "run", "grade_all": "run",
}
__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_API[name]}"), name)
