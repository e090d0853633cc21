"""Pairs of submissions that are near-identical once names, comments and formatting are gone.

A review aid for course staff, never a penalty: nothing here changes a
score, a card or the gradebook. It lists pairs for a human to read side by
side; a short assignment with one idiomatic answer per function makes honest
solutions alike, so a listed pair is a question, not a finding.

Method: copydetect (MOSS-style winnowing). Each submission's source (for a
notebook, the code the grader extracts from it) is tokenised by copydetect's
``filter_code``: comments and whitespace go, every identifier becomes ``V``
(``F`` for a defined function), every string or docstring ``S``. Fingerprints
are the hashes of every ``noise``-character run of that text; those that also
occur in the starter code are dropped (the assignment's stub, ``exercises/<file>``,
and the code of the release's notebook built from it: ``starter_tokens``), so
the starter code every student received does not count. A file's share is the
part of its own fingerprinted text that the other file also contains
(copydetect's ``compare_files``); a pair's score is the smaller of its two
shares, so a pair is listed only when each file is mostly the other.

Speed: copydetect's ``compare_files`` takes ~2 ms a pair (a loop of numpy
calls per shared fingerprint): 45,000 pairs, a class of 300, would take a
minute and a half. ``similarity_matrix`` computes the same two shares for
every pair at once with numpy, from copydetect's own fingerprints;
``tests/test_cohort.py`` checks that its numbers equal ``compare_files``'. Copies cost once: a file's
bytes are read and tokenised once however many students handed them in (~10 ms a 6 KB file,
pygments' lexer), and students with the same token stream share one fingerprint.

The token streams are kept per batch (``cohort/tokens.json``, student ->
sha256 and tokens, never source text), so a re-run re-tokenises only the
files that changed and ``grader merge`` can compare students across shards.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_THRESHOLD = 0.8
NOISE = 25  # copydetect's default: the shortest match, in normalised characters, that counts
MIN_OWN_CHARS = 100  # fewer normalised characters of its own (beyond the stub): too little to compare
MAX_SOURCE_CHARS = 200_000  # longer source (a pasted dataset...) is not tokenised (~2.5 ms/KB) nor compared
STORE_VERSION = 1
MAX_PAIRS = 500  # listed in similarity.json, highest first; `pairs_found` counts them all
_CHUNK_CELLS = 4_000_000  # files x positions compared at once: bounds the screen's memory
NOTE = ("A review aid for course staff: pairs whose normalised code (names, comments, formatting and the "
        "stub's starter code removed) is near-identical. No score changes; read the pair before concluding anything.")


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    score: float  # min(a_share, b_share)
    a_share: float  # the part of a's own code that b also contains
    b_share: float


def tokens(source: str) -> str:
    """``source`` as copydetect compares it: no comments or whitespace, names as V/F/O, strings as S."""
    from copydetect.utils import filter_code

    return str(filter_code(source, "submission.py", language="python")[0])


def source_of(path: Path) -> str:
    """The Python source the grader reads from ``path``: a .py file's text, a notebook's extracted code.

    '' when the file cannot be read as source at all (too big, not UTF-8, not a notebook).
    """
    from grader.submission import UnreadableSubmission, load_submission

    try:
        return load_submission(path).source
    except UnreadableSubmission:
        return ""


# ------------------------------------------------------------------ the store: tokens per student


def empty_store() -> dict[str, Any]:
    return {"version": STORE_VERSION, "boilerplate": "", "students": {}}


def read_store(path: Path) -> dict[str, Any]:
    """A stored ``tokens.json``, or an empty store when there is none (or an unreadable one: re-tokenise)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return empty_store()
    if not isinstance(data, dict) or data.get("version") != STORE_VERSION or not isinstance(data.get("students"), dict):
        return empty_store()
    return data


def build_store(submissions: Mapping[str, Path], stub: Path | None, previous: Mapping[str, Any]) -> dict[str, Any]:
    """Tokens for every student in ``submissions`` (student -> file), reusing ``previous`` where the
    file's sha256 is unchanged; students not in ``submissions`` are dropped (a shard keeps its slice).

    Each distinct file is read as source and tokenised once: a class holds copies
    (a file shared around, the stub handed in unchanged), and tokenising is most of this step's cost.
    """
    old = previous.get("students", {})
    made: dict[tuple[str, str], dict[str, str]] = {}  # (sha256, suffix) -> entry: ``source_of`` depends on both
    students: dict[str, dict[str, str]] = {}
    for student in sorted(submissions):
        sha = hashlib.sha256(submissions[student].read_bytes()).hexdigest()
        kept = old.get(student)
        if isinstance(kept, dict) and kept.get("sha256") == sha and isinstance(kept.get("tokens"), str):
            students[student] = kept
        else:
            key = (sha, submissions[student].suffix)
            if key not in made:
                made[key] = _entry(source_of(submissions[student]), sha)
            students[student] = dict(made[key])  # a dict of their own
    return {"version": STORE_VERSION, "boilerplate": starter_tokens(stub), "students": students}


def _entry(source: str, sha: str) -> dict[str, str]:
    if len(source) > MAX_SOURCE_CHARS:
        return {"sha256": sha, "tokens": "", "skipped": f"too long to compare ({len(source)} characters)"}
    return {"sha256": sha, "tokens": tokens(source)}


def starter_tokens(stub: Path | None) -> str:
    """The starter code every student received, as tokens: the stub file, then the code the grader
    extracts from the release's notebook of that stub (its imports, the stub's definitions and the
    lesson's given code: the worked example's constants, plotting helpers). A notebook handed in
    unchanged is thus all starter code, and a student's notebook is compared on their own code only.

    '' without a stub; the stub alone where the course has no lesson text for it (no notebook).
    """
    if stub is None or not stub.is_file():
        return ""
    parts = [tokens(stub.read_text(encoding="utf-8"))]
    notebook_code = release_notebook_code(stub)
    if notebook_code:
        parts.append(tokens(notebook_code))
    return "\n".join(parts)


def release_notebook_code(stub: Path) -> str:
    """The code the grader reads from the notebook ``grader release`` builds for ``stub`` ('' if none)."""
    from grader import notebook
    from grader.release.notebooks import LESSON_DIR, build_notebook

    lesson = LESSON_DIR / f"{stub.stem}.yaml"
    if not lesson.is_file():
        return ""
    code, _ = notebook.extract(build_notebook(stub, lesson))
    return code


def merge_stores(stores: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One store from shards' stores: every student once (the first shard that has them wins)."""
    merged = empty_store()
    for store in stores:
        merged["boilerplate"] = merged["boilerplate"] or store.get("boilerplate", "")
        for student, entry in store.get("students", {}).items():
            merged["students"].setdefault(student, entry)
    merged["students"] = dict(sorted(merged["students"].items()))
    return merged


# ------------------------------------------------------------------ comparing


@dataclass
class _Print:
    """One file's copydetect fingerprint, and its positions and hashes as arrays for the screen."""

    fingerprint: Any  # copydetect.CodeFingerprint
    positions: np.ndarray  # sorted positions of its (non-boilerplate) fingerprints
    hashes: np.ndarray  # the hash at each position
    coverage: int  # characters its fingerprints cover: the denominator of its share


def _fingerprints(texts: Mapping[str, str], boilerplate: str, noise: int) -> tuple[dict[str, _Print], dict[str, str]]:
    """Fingerprints of the files worth comparing, and why each other file is not compared.

    Students with the same token stream (copies, or files that differ only in names, comments and
    layout) share one ``_Print``, made once: named after the first of them, the same numbers for all.
    """
    from copydetect import CodeFingerprint

    stub = CodeFingerprint("stub.py", noise, 1, filter=False, fp=io.StringIO(boilerplate))
    stub_hashes = np.unique(np.array(sorted(stub.hashes), dtype=np.int64))
    made: dict[str, _Print | None] = {}  # token stream -> its print, None: too little code of its own
    prints: dict[str, _Print] = {}
    skipped: dict[str, str] = {}
    for student, text in texts.items():
        if text not in made:
            made[text] = _print(CodeFingerprint(f"{student}.py", noise, 1, boilerplate=stub_hashes, filter=False,
                                                fp=io.StringIO(text)))
        found = made[text]
        if found is None:
            skipped[student] = "too little code of its own beyond the stub"
        else:
            prints[student] = found
    return prints, skipped


def _print(fp: Any) -> _Print | None:
    """``fp``'s positions and hashes as sorted arrays; None when it covers too little to compare."""
    if fp.token_coverage < MIN_OWN_CHARS:
        return None
    pairs = sorted((int(p), int(h)) for h, ps in fp.hash_idx.items() for p in ps)
    positions = np.array([p for p, _ in pairs], dtype=np.int64)
    hashes = np.array([h for _, h in pairs], dtype=np.int64)
    return _Print(fp, positions, hashes, int(fp.token_coverage))


def similarity_matrix(prints: Mapping[str, _Print], noise: int) -> np.ndarray:
    """``shares[i, j]``: the part of file i's fingerprinted text that file j also contains.

    The same number as copydetect's ``compare_files`` (its ``similarities``),
    for every pair at once: a position of file i counts when its hash is one
    of file j's, and the copied text is the union of ``[p, p + noise)`` over
    those positions; the share divides that by file i's own coverage.
    """
    names = list(prints)
    n = len(names)
    shares = np.zeros((n, n))
    if n < 2:
        return shares
    vocabulary, seen_in = np.unique(np.concatenate([np.unique(prints[s].hashes) for s in names]), return_counts=True)
    shared = vocabulary[seen_in > 1]  # a hash in one file only can match nothing
    if not len(shared):
        return shares
    present = np.zeros((n, len(shared) + 1), dtype=bool)  # the last column: "not shared", never present
    ids = []
    for row, name in enumerate(names):
        where = np.searchsorted(shared, prints[name].hashes)
        hit = (where < len(shared)) & (shared[np.minimum(where, len(shared) - 1)] == prints[name].hashes)
        ids.append(np.where(hit, where, len(shared)))
        present[row, ids[-1][hit]] = True
    for i, name in enumerate(names):
        positions = prints[name].positions
        if not len(positions):
            continue
        step = max(1, _CHUNK_CELLS // len(positions))
        for start in range(0, n, step):
            matched = present[start:start + step][:, ids[i]]  # (files, positions of i)
            nxt = np.where(matched, positions, np.iinfo(np.int64).max)
            after = np.minimum.accumulate(nxt[:, ::-1], axis=1)[:, ::-1]  # the first matched position >= each one
            after = np.concatenate([after[:, 1:], np.full((len(after), 1), np.iinfo(np.int64).max)], axis=1)
            run = np.minimum(after - positions, noise)  # how far each matched position's k-gram reaches alone
            shares[i, start:start + step] = np.where(matched, run, 0).sum(axis=1) / prints[name].coverage
    np.fill_diagonal(shares, 0.0)
    return shares


def compare(texts: Mapping[str, str], boilerplate: str, threshold: float = DEFAULT_THRESHOLD,
            noise: int = NOISE) -> tuple[list[Pair], dict[str, str]]:
    """Pairs scoring at least ``threshold`` (highest first), and the students not compared with why."""
    prints, skipped = _fingerprints(texts, boilerplate, noise)
    names = list(prints)
    shares = similarity_matrix(prints, noise)
    found = []
    alike = np.minimum(shares, shares.T) >= threshold
    for i, j in ((i, j) for i, j in zip(*np.nonzero(alike)) if i < j):  # each pair once
        (a, a_share), (b, b_share) = sorted(((names[i], shares[i, j]), (names[j], shares[j, i])))
        found.append(Pair(a, b, round(float(min(a_share, b_share)), 4), round(float(a_share), 4),
                          round(float(b_share), 4)))
    found.sort(key=lambda p: (-p.score, p.a, p.b))
    return found, dict(sorted(skipped.items()))


def report(store: Mapping[str, Any], threshold: float = DEFAULT_THRESHOLD, noise: int = NOISE) -> dict[str, Any]:
    """``similarity.json``: the listed pairs, who was not compared and why, and what the numbers mean."""
    from importlib import metadata

    students = store.get("students", {})
    texts = {s: e["tokens"] for s, e in students.items() if not e.get("skipped")}
    pairs, skipped = compare(texts, store.get("boilerplate", ""), threshold, noise)
    skipped = dict(sorted({**skipped, **{s: e["skipped"] for s, e in students.items() if e.get("skipped")}}.items()))
    return {
        "note": NOTE,
        "method": f"copydetect {metadata.version('copydetect')}, noise {noise}, the stub's fingerprints removed; "
                  "score = the smaller of the two files' shares",
        "threshold": threshold,
        "compared": len(students) - len(skipped),
        "pairs_found": len(pairs),
        "pairs": [asdict(p) for p in pairs[:MAX_PAIRS]],
        "not_compared": [{"student": s, "why": why} for s, why in skipped.items()],
    }
