"""``grader grade-all`` and ``grader merge``: a whole class through warm grader processes, resumable,
nothing lost.

The flow, one module each: ``intake`` (with ``lms``, ``roster``) finds who submitted what -> ``run``
plans (shard, roster, what is unchanged since the last run: ``layout``'s records and card key) ->
``pool`` grades in ``--jobs`` grader processes -> cards and records written by this process, atomically,
as results arrive (``reports`` beside them) -> ``outputs``: ``overrides``, the ``late`` policy, the
gradebook, ``summary``, the ``cohort`` views (``similarity``), ``changes`` since the last run.
``merge`` joins shards. ``progress`` is what the terminal shows meanwhile.
"""

from grader.batch.layout import Layout, fingerprint, read_record, write_record  # noqa: F401 - the package's API
from grader.batch.merge import MergeError, merge  # noqa: F401
from grader.batch.pool import BatchStopped, GraderPool  # noqa: F401
from grader.batch.run import MISSING, BatchOptions, BatchResult, Counts, grade_all  # noqa: F401
