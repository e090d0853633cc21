"""The documentation site builds with ``mkdocs build --strict``: no broken link or anchor, every page in
the nav (issue 40). mkdocs.yml turns each of those into a warning, and --strict makes a warning fail."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

DOCS = ROOT / "docs"


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about its successor, not a warning of ours
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "--site-dir", str(site)],
                          capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)


def _nav_pages(nav: list) -> list[str]:
    """Every page the nav lists, at any depth."""
    found: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        found += _nav_pages(value) if isinstance(value, list) else [value]
    return found


def test_the_site_builds_strict_with_no_warning(tmp_path: Path):
    built = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    output = built.stdout + built.stderr
    assert built.returncode == 0 and "WARNING" not in output, output
    for page in DOCS.glob("*.md"):  # each page became its own HTML page
        html = tmp_path / "site" / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert html.is_file(), page.name


def test_the_nav_lists_every_page_once_and_only_pages_that_exist():
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    assert len(nav) == len(set(nav)), nav
    assert set(nav) == {p.name for p in DOCS.glob("*.md")}


def _broken_copy(tmp_path: Path, page: str, kind: str) -> Path:
    """A copy of the site whose ``page`` carries one defect of ``kind``; its config, with docs_dir pointing at it."""
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    other = next(p for p in sorted(DOCS.glob("*.md")) if p.name != page).name
    defect = {"missing anchor": f"[see]({other}#no-such-heading-here)",
              "missing page": "[see](no-such-page.md)",
              "link out of the site": "[see](../README.md)",
              "page not in the nav": ""}[kind]
    with (docs / page).open("a", encoding="utf-8") as f:
        f.write(f"\n\n{defect}\n")
    if kind == "page not in the nav":
        (docs / f"stray-{page}").write_text("# A page nobody lists\n", encoding="utf-8")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["docs_dir"] = str(docs)
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return tmp_path / "mkdocs.yml"


@pytest.mark.slow
@pytest.mark.parametrize("page", ["index.md", "instructors.md"])
@pytest.mark.parametrize("kind", ["missing anchor", "missing page", "link out of the site", "page not in the nav"])
def test_a_broken_link_or_anchor_or_an_unlisted_page_fails_the_build(tmp_path: Path, page: str, kind: str):
    built = _build(_broken_copy(tmp_path, page, kind), tmp_path / "site")
    output = built.stdout + built.stderr
    assert built.returncode != 0 and "WARNING" in output and "strict mode" in output, output


def misindented_list_lines(text: str) -> list[int]:
    """Lines indented by 1 to 3 spaces under a numbered item after a blank line: Python-Markdown (MkDocs's
    reader) nests a list item's later paragraphs, code blocks and tables only at 4 spaces, so these end the
    list, and the numbering starts again at 1 (the build gives no warning)."""
    found, in_list, blank = [], False, False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            blank = True
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            in_list = bool(re.match(r"\d+\. ", line))
        elif in_list and blank and indent < 4:
            found.append(number)
        blank = False
    return found


def test_every_numbered_list_keeps_its_code_blocks_and_paragraphs_inside():
    bad = {p.name: misindented_list_lines(p.read_text(encoding="utf-8")) for p in DOCS.glob("*.md")}
    assert not {name: lines for name, lines in bad.items() if lines}, bad


@pytest.mark.parametrize("indent", [1, 2, 3])
@pytest.mark.parametrize("inner", ["```bash\n{p}x\n{p}```", "Another paragraph.", "| a | b |\n{p}|---|---|"])
def test_a_list_item_indented_less_than_four_spaces_is_found(indent, inner):
    pad = " " * indent
    page = f"1. Step one:\n\n{pad}{inner.format(p=pad)}\n\n2. Step two.\n"
    assert misindented_list_lines(page) and not misindented_list_lines(page.replace(f"\n{pad}", "\n    "))
