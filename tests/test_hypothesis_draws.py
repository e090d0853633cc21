"""A student's property-check examples come from their seed alone, not from the grader's own source.

hypothesis mixes the literals of every "local" module it finds loaded into what it draws, so an
editable install of the grader (every ``grader`` module local) and a wheel (none) would draw other
examples for the same seed. Each side runs in a fresh interpreter with a local module full of
distinctive constants loaded or not; the judge's ``quiet_hypothesis`` must make the two agree.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

SETUP = ROOT / "grader" / "session" / "hypothesis_setup.py"

DRAW = """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "quiet":  # the judge's set-up, loaded by path: grader.session's package imports torch
        import importlib.util
        spec = importlib.util.spec_from_file_location("hypothesis_setup", sys.argv[4])
        setup = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(setup)
        setup.quiet_hypothesis()
    else:
        from hypothesis import settings
        settings.register_profile("bare", database=None)
        settings.load_profile("bare")
    if sys.argv[3] == "with-constants":
        import local_constants  # a module outside site-packages: hypothesis counts it as the user's code
    from hypothesis import given, seed, settings, strategies as st
    seen = []

    @seed(20261126)
    @settings(max_examples=20, derandomize=False)
    @given(st.integers(), st.floats(allow_nan=False))
    def draw(i, f):
        seen.append([i, f])

    draw()
    print(json.dumps(seen))
"""

CONSTANTS = "".join(f"C{k} = {987654321 + 7919 * k}\nF{k} = {k}.123456789e7\n" for k in range(40))


def draws(folder: Path, mode: str, constants: str) -> list:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(DRAW), str(folder), mode, constants, str(SETUP)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def local_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("user_code")
    (folder / "local_constants.py").write_text(CONSTANTS)
    return folder


def test_local_constants_change_hypothesis_draws_without_the_grader(local_folder: Path) -> None:
    """The control: the effect this module guards against is real with the hypothesis we install."""
    bare = draws(local_folder, "bare", "without-constants")
    assert bare != draws(local_folder, "bare", "with-constants")


def test_the_judges_draws_do_not_depend_on_which_modules_are_local(local_folder: Path) -> None:
    quiet = draws(local_folder, "quiet", "without-constants")
    assert quiet == draws(local_folder, "quiet", "with-constants")


def test_the_hook_replaced_exists_in_the_installed_hypothesis() -> None:
    """If a hypothesis release renames its private hook, this says so instead of quietly scanning again."""
    from grader.session.hypothesis_setup import ignore_local_constants

    assert ignore_local_constants() is True


def _derandomized_check(seen: list):
    """A property check as the judge's are written: derandomized, no database, a handful of examples."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st

    @settings(database=None, derandomize=True, deadline=None, max_examples=8,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(b=st.integers(1, 3), shape=st.lists(st.integers(1, 6), min_size=1, max_size=4))
    def check(b, shape):
        seen.append((b, tuple(shape)))

    return check


def test_salt_zero_draws_what_derandomize_draws_without_digesting_the_source_each_run(monkeypatch) -> None:
    """Without a course secret (salt 0) a check draws the examples ``derandomize`` gives, as before; the seed
    is worked out from the check's source once, not twice per run (``seeding.derandomized_seed``)."""
    import hypothesis.core

    from grader.checks.helpers import seed_examples

    before: list = []
    _derandomized_check(before)()
    digests = []
    real = hypothesis.core.function_digest
    monkeypatch.setattr(hypothesis.core, "function_digest", lambda f: digests.append(f) or real(f))
    now: list = []
    check = _derandomized_check(now)
    for _ in range(3):
        seed_examples(check, 0)
        check()
    assert now == before * 3
    assert digests == []  # hypothesis itself digested nothing: the seed and the (unused) database key were given


def test_a_students_salt_still_draws_their_own_examples() -> None:
    from grader.checks.helpers import seed_examples

    zero: list = []
    salted: list = []
    check_zero, check_salted = _derandomized_check(zero), _derandomized_check(salted)
    seed_examples(check_zero, 0)
    check_zero()
    seed_examples(check_salted, 12345)
    check_salted()
    assert zero != salted
