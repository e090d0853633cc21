"""Render a student notebook as a finished student would see it, to look at its pictures.

Builds the release notebook for one assignment, puts the reference solution into
its exercise cells, runs it top to bottom with nbclient, and writes the executed
``.ipynb`` and every PNG it drew to ``--out``; prints the PNG paths.

    .venv/bin/python bench/render_notebook.py --assignment attention --out /tmp/nb_preview
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
from pathlib import Path

import nbformat
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.release.notebooks import LESSON_DIR, build_notebook, fill_exercises  # noqa: E402

INLINE_BACKEND = "module://matplotlib_inline.backend_inline"  # draws PNG outputs; Agg would draw none


def assignment_files(assignment: str) -> tuple[Path, Path, Path]:
    """(stub, reference, lesson) of an assignment, as assignments.yaml names them."""
    config = yaml.safe_load((ROOT / "assignments.yaml").read_text(encoding="utf-8"))
    entry = config["assignments"][assignment]
    stub = ROOT / entry["stub"]
    return stub, ROOT / entry["reference"], LESSON_DIR / f"{stub.stem}.yaml"


def execute(text: str, workdir: Path, timeout: int = 120) -> nbformat.NotebookNode:
    """Run every cell in a fresh python3 kernel; a cell that fails raises CellExecutionError."""
    nb = nbformat.reads(text, as_version=4)
    os.environ["MPLBACKEND"] = INLINE_BACKEND  # the kernel inherits it
    NotebookClient(nb, kernel_name="python3", timeout=timeout,
                   resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def write_pngs(nb: nbformat.NotebookNode, out: Path, stem: str) -> list[Path]:
    """Every image/png output, named by cell id and its order in the cell."""
    paths = []
    for cell in nb.cells:
        pngs = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        for n, data in enumerate(pngs, start=1):
            path = out / f"{stem}-{cell.id}-{n}.png"
            path.write_bytes(base64.b64decode(data))
            paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", choices=["attention", "attention-modules"], required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    stub, reference, lesson = assignment_files(args.assignment)
    filled = fill_exercises(build_notebook(stub, lesson), reference.read_text(encoding="utf-8"))
    nb = execute(filled, args.out)
    (args.out / f"{stub.stem}.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
    for path in write_pngs(nb, args.out, stub.stem):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
