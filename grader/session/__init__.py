"""Stage 3: run the hidden checks (pytest) against the student proxy.

The checks live in ``grader/checks/<assignment>/`` and are ordinary pytest tests. ``session`` keeps
one pytest session open for many submissions (the ``Judge``); ``runner`` runs each check's phases
through pytest's fixture machinery and keeps what ended it; ``plugin`` gives the checks their fixtures
and turns that ending into a ``Verdict`` in the lesson's words (``verdicts``). ``tape`` holds the reference's recorded answers for the student kit.
"""

from grader.session.plugin import ChecksBroken, Context, ReferenceFor, load_reference  # noqa: F401 - the API
from grader.session.session import Judge, cuda_available  # noqa: F401
from grader.session.verdicts import NO_CUDA_MESSAGE, CollectedCheck, Verdict, clip, unjudged_message  # noqa: F401
