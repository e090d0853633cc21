"""How often a check fails for a property the submission did not break: the project's mutants and alternatives.

Usage: python bench/blame.py [--json FILE] [--top N]

Grades every corpus mutant and correct alternative through one warm grader per
assignment, then sorts each failing check (status not passed/skipped) by
``tests/blame.py``: a mutant may fail the output checks of its own exercise and
of the exercises that call it, and what its ``# may_fail:`` header lines list;
anything else it fails is an out-of-set failure (blame). An alternative may fail
nothing. Prints the out-of-set failures in total and per mutant (case id, check,
the start of its message), how many mutants have any, the most common
(check, message start) pairs, the catch rate (mutants losing points in their own
exercise / all mutants; it must not fall) and the alternatives failing any check.
Targets: 0 out-of-set failures, 0 alternatives failing, catch rate 100 %.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests import blame  # noqa: E402
from tests.corpus_cases import corpus, grade_corpus  # noqa: E402


def _start(message: str, n: int) -> str:
    return " ".join(message.split())[:n]


def _pattern(message: str) -> str:
    """A message's start with its numbers blanked, so the same failure on other values groups together."""
    return re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", _start(message, 70))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the per-case results here")
    parser.add_argument("--top", type=int, default=10, help="how many of the most common out-of-set pairs to print")
    args = parser.parse_args()
    cases = corpus("mutants") + corpus("alternatives")
    results: dict[str, dict] = {}
    started = time.monotonic()
    for case, card in grade_corpus(cases):
        by_key = {blame.key(c): c for c in card.checks}
        outside = blame.out_of_set(case, card)
        failing = [k for k, c in by_key.items() if blame.failing(c)]
        allowed = blame.allowed(case, card)
        output = {k for k in allowed if blame.is_output_check(case.assignment, by_key[k])}
        results[case.id] = {
            "kind": case.kind,
            "exercise": case.header.get("exercise"),
            "grader_error": card.grader_error,
            "states_may_fail": blame.has_may_fail(case),
            "caught": blame.catch(case, card) if case.kind == "mutants" else None,
            "failing": len(failing),
            "excused_by_header": sorted(k for k in failing if k in allowed and k not in output),
            "out_of_set": [{"check": k, "status": by_key[k].status, "message": by_key[k].message}
                           for k in outside],
        }
    elapsed = time.monotonic() - started
    report(results, args.top)
    print(f"graded {len(results)} cases in {elapsed:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


def report(results: dict[str, dict], top: int) -> None:
    mutants = {k: v for k, v in results.items() if v["kind"] == "mutants"}
    alternatives = {k: v for k, v in results.items() if v["kind"] == "alternatives"}
    total = sum(len(v["out_of_set"]) for v in mutants.values())
    affected = {k: v for k, v in mutants.items() if v["out_of_set"]}
    print(f"out-of-set failures: {total} in {len(affected)} of {len(mutants)} mutants")
    for case_id, v in sorted(affected.items()):
        print(f"  {case_id} ({v['exercise']}): {len(v['out_of_set'])}")
        for f in v["out_of_set"]:
            print(f"    {f['check']}: {f['status']}: {_start(f['message'], 100)}")
    if total:
        pairs = Counter((f["check"], _pattern(f["message"])) for v in mutants.values() for f in v["out_of_set"])
        print(f"most common out-of-set (check, message start), top {top}:")
        for (check, start), n in pairs.most_common(top):
            print(f"  {n:3}  {check}  \"{start}\"")
        checks = Counter(f["check"].split("[")[0] for v in mutants.values() for f in v["out_of_set"])
        print("out-of-set failures by check: " + ", ".join(f"{c} {n}" for c, n in checks.most_common()))
    excused = sum(len(v["excused_by_header"]) for v in mutants.values())
    print(f"property-check failures the may_fail headers allow: {excused}")
    missing = sorted(k for k, v in mutants.items() if not v["states_may_fail"])
    if missing:
        print(f"mutants without a may_fail line ({len(missing)}): {', '.join(missing)}")
    caught = [k for k, v in mutants.items() if v["caught"]]
    print(f"catch rate: {len(caught)}/{len(mutants)} mutants lose points in their own exercise "
          f"({len(caught) / max(len(mutants), 1):.1%})")
    for case_id in sorted(set(mutants) - set(caught)):
        print(f"  not caught: {case_id}")
    errors = sorted(k for k, v in results.items() if v["grader_error"])
    if errors:
        print(f"cards with a grader error: {', '.join(errors)}")
    failing = {k: v for k, v in alternatives.items() if v["out_of_set"]}
    print(f"alternatives failing any check: {len(failing)} of {len(alternatives)}")
    for case_id, v in sorted(failing.items()):
        for f in v["out_of_set"]:
            print(f"  {case_id}: {f['check']}: {f['status']}: {_start(f['message'], 100)}")


if __name__ == "__main__":
    main()
