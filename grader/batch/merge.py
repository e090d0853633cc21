"""``grader merge``: join ``grade-all --shard`` outputs into one folder (cards, records, reports,
overrides), make every card final again through the same stage grade-all uses (``grader.batch.final``:
the joined overrides, then the late policy each shard recorded), then write the class's views once."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from grader import files
from grader.batch import cohort, final, overrides, similarity
from grader.export.gradebook import Row
from grader.batch.layout import Layout, read_record, write_record
from grader.coursedata.lms_files import NotGraded
from grader.batch.outputs import write_outputs


class MergeError(Exception):
    """Shard outputs that cannot be joined (one line; the CLI's exit 2)."""


def merge(dirs: Sequence[Path], out: Path, similarity_threshold: float = similarity.DEFAULT_THRESHOLD) -> list[Row]:
    """Join ``grade-all --shard`` outputs into one folder: cards, records, gradebook, summary, cohort views.

    Every shard must come from the same assignment, checks and grader (its
    ``batch.json``). A student found in two shards is kept once when both
    rows agree and becomes an error row when they do not.
    """
    manifests = []
    for d in dirs:
        try:
            manifests.append(json.loads(Layout(d).manifest.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise MergeError(f"{d}: not a finished grade-all output folder (batch.json: "
                             f"{getattr(exc, 'strerror', None) or exc}); run grade-all there again to finish it") from None
    if any(out.resolve() == d.resolve() for d in dirs):
        raise MergeError(f"--out {out} is one of the folders to merge; give a new folder")
    first = manifests[0]
    for d, m in zip(dirs, manifests):
        if (m.get("assignment"), m.get("fingerprint")) != (first.get("assignment"), first.get("fingerprint")):
            raise MergeError(f"{d} was graded with a different assignment, config, checks or grader than {dirs[0]}; "
                             "re-grade it, then merge")
    layout = Layout(out)
    layout.prepare()
    rows: dict[str, tuple[Row, str, Path]] = {}
    for d in dirs:
        for record in sorted((d / "records").glob("*.json")):
            found = read_record(Layout(d), record.stem)
            if found is None:
                raise MergeError(f"{record}: unreadable record; re-run grade-all on that shard")
            row, key = found
            if row.student in rows and (rows[row.student][0], rows[row.student][1]) != (row, key):
                other = rows[row.student][2]
                rows[row.student] = (Row(row.student, "error", row.file, row.sha256,
                                         message=f"graded differently in {other} and {d}; grade it again"), "", d)
                continue
            rows[row.student] = (row, key, d)
    for row, key, d in rows.values():
        if row.card:
            files.write_atomically(layout.root / row.card, (d / row.card).read_text(encoding="utf-8"))
            shard = Layout(d)  # a shard graded with --report: its page or pytest-json report comes along
            for theirs, ours in ((shard.report(row.student), layout.report(row.student)),
                                 (shard.pytest_report(row.student), layout.pytest_report(row.student))):
                if theirs.is_file():
                    layout.reports.mkdir(exist_ok=True)
                    files.write_atomically(ours, theirs.read_text(encoding="utf-8"))
        write_record(layout, row, key)
    cohort.merge_sources(out, dirs)  # the similarity report compares students across shards
    entries = _merge_overrides(out, dirs)
    fingerprints = first.get("check_fingerprints")
    stage = final.Stage(layout, final.Rules(final.group(entries), fingerprints, recorded_late=True))
    ordered = []
    for student in sorted(rows):
        row, key, _ = rows[student]
        if row.status == "graded" and row.card:
            new = stage.kept(row)
            if new != row:
                write_record(layout, new, key)
            row = new
        ordered.append(row)
    stage.close()
    warnings, not_graded = _said(dirs)
    write_outputs(layout, first["assignment"], first["exercises"], ordered, first["fingerprint"],
                  check_fingerprints=fingerprints, similarity_threshold=similarity_threshold, warnings=warnings,
                  not_graded=not_graded)
    return ordered


def _said(dirs: Sequence[Path]) -> tuple[list[str], list[NotGraded]]:
    """Each shard's ``warnings`` and ``not_graded`` (summary.json), each once: every shard read the whole
    download, so a refused zip member or a missing course secret is in all of them, and the merged
    summary must still say it. A shard whose summary cannot be read is refused (MergeError): merging
    without it would drop what it said in silence."""
    warnings: dict[str, None] = {}
    not_graded: dict[NotGraded, None] = {}
    for d in dirs:
        try:
            data = json.loads((d / "summary.json").read_text(encoding="utf-8"))
            warnings.update(dict.fromkeys(str(w) for w in data.get("warnings", [])))
            not_graded.update(dict.fromkeys(NotGraded(str(n["file"]), str(n["why"]), str(n.get("student", "")))
                                            for n in data.get("not_graded", [])))
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise MergeError(f"{d}: its summary.json cannot be read ({getattr(exc, 'strerror', None) or exc}); "
                             "run grade-all there again") from None
    return list(warnings), list(not_graded)


def _merge_overrides(out: Path, dirs: Sequence[Path]) -> list[overrides.OverrideEntry]:
    """The overrides (and their audit) in ``out`` and in every shard, each line once, oldest first: the
    merged folder applies all of them (returned). A bad line refuses the merge (MergeError, naming file and line)."""
    for name in (overrides.OVERRIDES, overrides.AUDIT):
        lines: dict[str, None] = {}
        for folder in (out, *dirs):
            try:
                if name == overrides.OVERRIDES:
                    overrides.load(folder / name)
                text = (folder / name).read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            except overrides.OverridesError as exc:
                raise MergeError(str(exc)) from None
            lines.update((line, None) for line in text.splitlines() if line.strip())
        if lines:
            ordered = sorted(lines, key=_when)
            files.write_atomically(out / name, "\n".join(ordered) + "\n")
    try:
        return overrides.load(out / overrides.OVERRIDES)
    except overrides.OverridesError as exc:
        raise MergeError(str(exc)) from None


def _when(line: str) -> str:
    """An audit line's time (when it was logged), else an entry's (when it was decided)."""
    data = json.loads(line)
    return str(data.get("logged_at") or data.get("at") or "")
