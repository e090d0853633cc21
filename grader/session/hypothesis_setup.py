"""How the judge's property checks (hypothesis) are configured: nothing written, nothing read back,
and every example drawn from the student's seed alone.

Kept apart from the judge (``session.py``) so that it imports neither torch nor pytest.
"""

from __future__ import annotations

from pathlib import Path


# Where hypothesis keeps its files (example database, constants and charmap caches): a path that can
# never be a folder, so every write fails quietly (hypothesis catches it) and nothing is read back.
HYPOTHESIS_HOME = Path("/dev/null/grader-hypothesis")


def quiet_hypothesis() -> None:
    """Make the property checks (hypothesis) write nothing: ``grader grade`` leaves only its outputs.

    The ``grader`` settings profile has ``database=None`` (no example database), and hypothesis's
    other caches (the constants it reads from a check's source) point at ``HYPOTHESIS_HOME``, where
    nothing can be created; otherwise both land in ``.hypothesis/`` in whatever folder grading ran
    from, and a cache a student left there would be read back. A kit without hypothesis (its
    checks do not use it) has nothing to configure.
    """
    try:
        from hypothesis import settings
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:
        return
    settings.register_profile("grader", database=None)
    settings.load_profile("grader")
    set_hypothesis_home_dir(HYPOTHESIS_HOME)
    ignore_local_constants()


def ignore_local_constants() -> bool:
    """Draw a student's examples from their seed alone, not from the constants in the grader's own source.

    On its first draw hypothesis parses every "local" module loaded (neither stdlib nor site-packages)
    and mixes their literals into what it draws. Installed from a wheel, ``grader`` is in site-packages
    and not scanned; installed editable (``pip install -e``, as CI does), every ``grader`` module is:
    the same seed would then give other examples, and the first grade pays the scan (~0.17 s of CPU,
    ``bench/README.md``). The judge's property checks test a student's code in another process, so
    those literals find nothing. hypothesis has no setting for this: its provider's private hook is
    replaced, when there is one (True); a hypothesis without it keeps its own behaviour.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return False
    if not callable(getattr(providers, "_get_local_constants", None)) or not hasattr(providers, "Constants"):
        return False
    none = providers.Constants()
    providers._get_local_constants = lambda: none  # noqa: SLF001 - see the docstring
    return True
