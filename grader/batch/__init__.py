"""``grader grade-all`` and ``grader merge``: a whole class through warm grader processes, resumable,
nothing lost.

The flow, one module each: ``intake`` (with ``lms``, ``roster``) finds who submitted what -> ``run``
plans (shard, roster, what is unchanged since the last run: ``layout``'s records and card key) ->
``pool`` grades in ``--jobs`` grader processes -> each card made ``final`` as it arrives (the staff
``overrides``, then the late policy: one stage), then written with its record and ``reports``, once ->
``changes`` since the last run -> ``outputs``: the gradebook, ``summary``, the ``cohort`` views
(``similarity``), all drawn from the final cards.
``merge`` joins shards (through the same ``final`` stage). ``progress`` is what the terminal shows meanwhile.
"""

from grader.batch.layout import Layout, fingerprint, read_record, write_record  # noqa: F401 - the package's API
from grader.batch.merge import MergeError, merge  # noqa: F401
from grader.batch.pool import BatchStopped, GraderPool  # noqa: F401
from grader.batch.run import MISSING, BatchOptions, BatchResult, Counts, grade_all  # noqa: F401
