"""Per-student hidden inputs (``grader.seeds``): hidden checks draw from the student's seed, visible
checks do not, re-grades repeat, the reference passes whatever the seed, and students never see it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
import torch

from grader import api, seeds
from grader.export import views
from grader.cli import build_parser
from grader.sandbox.client import WorkerServer
from grader.sandbox.proxy import StudentProxy

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = {"attention": ("solutions/attention.py", "attention.py"),
              "attention-modules": ("solutions/attention_modules.py", "attention_modules.py")}
SECRET = b"tests/test_seeds.py"


# ------------------------------------------------------------------ the seed itself


def test_seed_is_a_32_bit_int_per_student_and_assignment() -> None:
    a = seeds.derive(SECRET, "attention", "alice")
    assert a == seeds.derive(SECRET, "attention", "alice") and 0 < a < 2**32
    assert len({a, seeds.derive(SECRET, "attention", "bob"), seeds.derive(SECRET, "attention-modules", "alice"),
                seeds.derive(b"another course", "attention", "alice")}) == 4


def test_without_a_secret_every_seed_is_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    assert seeds.course_secret(None, ROOT / "assignments.yaml") is None
    assert seeds.student_seed(None, "attention", "alice") == seeds.NO_SECRET == 0
    assert seeds.environment_entries(0, None) == {"input_seed": 0, "input_seed_note": seeds.NO_SECRET_NOTE}
    assert seeds.environment_entries(7, SECRET) == {"input_seed": 7}


def test_secret_from_env_file_and_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(seeds.SECRET_ENV, "from-env-0123456789")
    assert seeds.course_secret() == b"from-env-0123456789"
    secret = tmp_path / "secret"
    secret.write_text("from-file-0123456789\n")
    assert seeds.course_secret(secret) == b"from-file-0123456789"  # the file named on the command line wins
    monkeypatch.delenv(seeds.SECRET_ENV)
    config = tmp_path / "assignments.yaml"
    config.write_text("course_secret_file: secret\n")
    assert seeds.course_secret(None, config) == b"from-file-0123456789"  # relative to the config
    with pytest.raises(seeds.SecretError):
        seeds.course_secret(tmp_path / "missing")


@pytest.mark.parametrize("source", ["env", "file"])
def test_a_secret_under_16_bytes_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str) -> None:
    secret = tmp_path / "secret"
    secret.write_text("12345\n")
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    if source == "env":
        monkeypatch.setenv(seeds.SECRET_ENV, "12345")
    with pytest.raises(seeds.SecretError, match="holds 5 bytes: a course secret needs at least 16"):
        seeds.course_secret(secret if source == "file" else None)
    secret.write_text("0123456789abcdef\n")  # exactly 16: accepted
    monkeypatch.setenv(seeds.SECRET_ENV, "0123456789abcdef")
    assert seeds.course_secret(secret if source == "file" else None) == b"0123456789abcdef"


@pytest.mark.parametrize("value", ["", "   "])
def test_a_set_but_empty_secret_is_refused_not_read_as_none(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(seeds.SECRET_ENV, value)
    with pytest.raises(seeds.SecretError, match="GRADER_COURSE_SECRET is set but empty: nothing graded"):
        seeds.course_secret(None, ROOT / "assignments.yaml")
    monkeypatch.delenv(seeds.SECRET_ENV)
    assert seeds.course_secret(None, ROOT / "assignments.yaml") is None  # unset: shared inputs, on purpose


def test_grade_takes_student_and_secret_file() -> None:
    args = build_parser().parse_args(["grade", "a.py", "--assignment", "attention", "--out", "c.json",
                                      "--student", "s123", "--course-secret-file", "k"])
    assert args.student == "s123" and args.course_secret_file == Path("k")


def test_a_new_secret_changes_the_card_key_and_reveals_nothing() -> None:
    from grader import batch
    from grader.config import load_config

    assignment = load_config().assignment("attention")
    keys = {batch.fingerprint(assignment, secret) for secret in (None, SECRET, b"another course")}
    assert len(keys) == 3 and batch.fingerprint(assignment, SECRET) in keys
    assert seeds.secret_id(None) == "" and SECRET.decode() not in seeds.secret_id(SECRET)


def test_grade_all_gives_each_student_their_seed_from_the_secret_file(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    subs = tmp_path / "subs"
    subs.mkdir()
    for student in ("alice", "bob"):
        shutil.copy(ROOT / "solutions/attention.py", subs / f"{student}.py")
    first = tmp_path / "first.txt"
    first.write_text("course secret one\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != seeds.SECRET_ENV}

    def grade_all(secret: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "grader.cli", "grade-all", str(subs), "--assignment", "attention",
                               "--out", str(tmp_path / "out"), "--jobs", "1", "--course-secret-file", str(secret)],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)

    def seed(student: str) -> int:
        return json.loads((tmp_path / "out/cards" / f"{student}.json").read_text())["environment"]["input_seed"]

    assert grade_all(first).returncode == 0
    one = {s: seed(s) for s in ("alice", "bob")}
    assert one == {s: seeds.derive(b"course secret one", "attention", s) for s in one} and len(set(one.values())) == 2
    # a new secret re-grades the class: its card key changes (test_a_new_secret_changes_the_card_key_...)
    missing = grade_all(tmp_path / "none.txt")
    assert missing.returncode == 2 and "cannot read the course secret file" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------ graded


@pytest.fixture(scope="module")
def graders(server: WorkerServer) -> Iterator[dict[str, api.Grader]]:
    with api.Grader("attention", server=server) as a, api.Grader("attention-modules", server=server) as m:
        yield {"attention": a, "attention-modules": m}


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("seeds")
    out = {}
    for assignment, (source, name) in REFERENCES.items():
        out[assignment] = folder / assignment / name
        out[assignment].parent.mkdir()
        shutil.copy(ROOT / source, out[assignment])
    return out


def graded_requests(grader: api.Grader, path: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[Any, list]:
    """The card and, per check in run order, the requests it sent to the student (``StudentProxy.recorded``)."""
    segments: list[list] = []
    proxies: list[StudentProxy] = []
    start = StudentProxy.start_recording

    def recording(self: StudentProxy, check: str = "", salt: int = 0) -> None:
        if proxies:
            segments.append(self.recorded())
        proxies.append(self)
        start(self, check, salt)

    monkeypatch.setattr(StudentProxy, "start_recording", recording)
    card = grader.grade(path, **kw)
    monkeypatch.setattr(StudentProxy, "start_recording", start)
    assert proxies, f"no check ran: {card.grader_error}"
    segments.append(proxies[-1].recorded())  # the last check's (the pictures' requests after it: public inputs)
    return card, segments


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and a.device == b.device and (a.device.type == "meta" or torch.equal(a, b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


RNG_KEYS = ("seed", "build_seed")  # the RNG state a request starts from (grader.sandbox.rng): not an input


def sent(segment: list) -> list:
    """The inputs of each request: the request less its RNG state, so two students are compared by what
    their code is given, not by the state it starts from."""
    return [{k: v for k, v in request.items() if k not in RNG_KEYS} for request, _ in segment]


def cotangents(segment: list) -> list:
    """The upstream gradients a check sent: for a linear function the gradient depends on these alone."""
    return [request["vjp"]["cotangents"] for request, _ in segment if request.get("vjp")]


@pytest.mark.parametrize("assignment", sorted(REFERENCES))
def test_hidden_inputs_differ_between_students_and_visible_ones_do_not(
        graders: dict[str, api.Grader], references: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
        assignment: str) -> None:
    grader = graders[assignment]
    alice, bob = (seeds.derive(SECRET, assignment, s) for s in ("alice", "bob"))
    card_a, req_a = graded_requests(grader, references[assignment], monkeypatch, seed=alice)
    card_b, req_b = graded_requests(grader, references[assignment], monkeypatch, seed=bob)
    collected = grader._judge.collected()
    assert collected is not None and len(req_a) == len(req_b) == len(collected)
    hidden_seen = []
    for check, a, b in zip(collected, req_a, req_b):
        config = grader.assignment.check(check.exercise, check.test)
        hidden = config is not None and config.visibility != "visible"
        if hidden:
            hidden_seen.append(f"{check.exercise}/{check.check_id}")
            assert a and b, f"{check.exercise}/{check.check_id}: sent no request, so its inputs were nobody's own"
            assert not same(sent(a), sent(b)), f"{check.exercise}/{check.check_id}: the same inputs for two students"
            assert not same(cotangents(a), cotangents(b)) or not cotangents(a), (
                f"{check.exercise}/{check.check_id}: the same upstream gradient for two students")
        elif check is not collected[-1]:  # the last one's requests run on into the pictures'
            assert same(sent(a), sent(b)), f"{check.exercise}/{check.check_id}: visible inputs differ between students"
    # every hidden check of the config ran for both students, and none was skipped or failed on the reference
    configured = {(ex.name, c.name) for ex in grader.assignment.exercises for c in ex.checks if c.visibility != "visible"}
    hidden_ids = {f"{c.exercise}/{c.id}" for c in card_a.checks if (c.exercise, c.id.split("[", 1)[0]) in configured}
    assert sorted(hidden_seen) == sorted(hidden_ids) and len(hidden_ids) >= len(configured), (hidden_seen, hidden_ids)
    for card in (card_a, card_b):
        unjudged = [(c.exercise, c.id, c.status) for c in card.checks if f"{c.exercise}/{c.id}" in hidden_ids
                    and c.status != "passed"]
        assert not unjudged, unjudged
    assert card_a.environment["input_seed"] == alice and card_b.environment["input_seed"] == bob
    shown = views.student_view(card_a).environment
    assert "input_seed" not in shown and "input_seed_note" not in shown and "cuda" in shown


def test_same_student_twice_gets_the_same_card(graders: dict[str, api.Grader], references: dict[str, Path]) -> None:
    grader = graders["attention"]
    seed = seeds.derive(SECRET, "attention", "carol")
    one, two = (grader.grade(references["attention"], seed=seed) for _ in range(2))

    def stable(card: Any) -> Any:
        return ([(c.exercise, c.id, c.status, c.score, c.message) for c in card.checks],
                card.score, card.environment["input_seed"])

    assert stable(one) == stable(two)


def test_student_id_gives_the_seed_with_a_secret(server: WorkerServer, references: dict[str, Path],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(seeds.SECRET_ENV, SECRET.decode())
    with api.Grader("attention-modules", server=server) as grader:
        card = grader.grade(references["attention-modules"], "dave")
        default = grader.grade(references["attention-modules"])  # the file's stem
    assert card.environment["input_seed"] == seeds.derive(SECRET, "attention-modules", "dave")
    assert default.environment["input_seed"] == seeds.derive(SECRET, "attention-modules", "attention_modules")
    assert "input_seed_note" not in card.environment and card.score == card.max_score


@pytest.mark.parametrize("assignment", sorted(REFERENCES))
def test_reference_gets_full_marks_for_every_seed(graders: dict[str, api.Grader], references: dict[str, Path],
                                                  assignment: str) -> None:
    for i in range(10):
        seed = seeds.derive(SECRET, assignment, f"student-{i}")
        card = graders[assignment].grade(references[assignment], seed=seed)
        lost = [(c.exercise, c.id, c.message[:200]) for c in card.checks if c.score < c.max_score]
        assert card.score == card.max_score and not lost, f"seed {seed}: {card.grader_error or ''} {lost}"
