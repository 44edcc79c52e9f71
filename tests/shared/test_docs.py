"""The documentation's shape: the README is a front door, the reference lives in docs/ and in
each lesson's README, every relative link lands, and nothing reads like a ticket log."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from lessons.registry import available_pages

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_MAX_LINES = 200
PICTURE_MAX_BYTES = 150_000
PICTURE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".svg"}
DOCS = ("pages", "links", "translations", "security", "serving", "testing", "performance")


def _ignored_dirs() -> set[str]:
    """Folder names .gitignore leaves out (build output, screenshots, environments)."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return {line.strip().strip("/") for line in lines if line.strip().endswith("/")}


def _repo_files(suffixes: set[str]) -> list[Path]:
    ignored = _ignored_dirs()
    found = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if any(part.startswith(".") or part in ignored for part in parts[:-1]):
            continue
        if path.is_file() and path.suffix.lower() in suffixes:
            found.append(path)
    return sorted(found)


def markdown_files() -> list[Path]:
    """README.md, README.zh-CN.md, docs/*.md and every lessons/<slug>/README.md."""
    files = [README, ROOT / "README.zh-CN.md", *sorted((ROOT / "docs").glob("*.md"))]
    return files + sorted((ROOT / "lessons").glob("*/README.md"))


def _without_code(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors for the headings of a markdown text (lower case, punctuation dropped,
    spaces to hyphens; a repeated heading gets -1, -2, ...)."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _without_code(text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        candidate, n = slug, 0
        while candidate in anchors:
            n += 1
            candidate = f"{slug}-{n}"
        anchors.add(candidate)
    return anchors


def test_heading_anchors_follow_github():
    text = "# Affine warp (`/warp`)\n## The notes say / PyTorch today does\n## A\n## A\n"
    assert heading_anchors(text) == {
        "affine-warp-warp", "the-notes-say--pytorch-today-does", "a", "a-1",
    }  # fmt: skip


def test_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README has {len(lines)} lines (at most 200)"
    headings = [line for line in lines if line.startswith("## ")]
    for needed in ("## The pages", "## Lessons", "## Layout", "## Dependencies"):
        assert any(h.startswith(needed) for h in headings), f"README lacks '{needed}'"


def test_the_only_picture_is_one_small_screenshot_in_docs():
    pictures = _repo_files(PICTURE_SUFFIXES)
    assert len(pictures) == 1, f"one committed picture, in docs/; found {pictures}"
    (picture,) = pictures
    assert picture.parent == ROOT / "docs" and picture.suffix == ".png", picture
    assert picture.stat().st_size <= PICTURE_MAX_BYTES, f"{picture.name} is over 150 KB"
    with Image.open(picture) as image:
        assert image.size == (1280, 720), f"{picture.name} is {image.size}, not a 1280x720 view"
    embedded = f"](docs/{picture.name})"
    assert embedded in README.read_text(encoding="utf-8"), "the README shows the screenshot"


@pytest.mark.parametrize("name", DOCS)
def test_docs_exist_and_the_readme_links_them(name):
    assert (ROOT / "docs" / f"{name}.md").is_file(), f"docs/{name}.md is missing"
    assert f"](docs/{name}.md)" in README.read_text(encoding="utf-8"), name


@pytest.mark.parametrize("page", available_pages(), ids=lambda page: page.slug)
def test_every_page_has_a_readme_with_its_tests_and_benchmark(page):
    path = ROOT / "lessons" / page.slug / "README.md"
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# "), "a lesson README opens with the page's title"
    assert f"tests/lessons/{page.slug}/" in text, "it names the lesson's tests"
    assert f"python -m pytest -m {page.slug}" in text, "it says how to run them"
    if (ROOT / "benchmarks" / f"{page.slug}.py").is_file():
        assert f"python -m benchmarks.{page.slug}" in text, "it names the lesson's benchmark"
    assert f"](lessons/{page.slug}/README.md)" in README.read_text(encoding="utf-8")


def test_every_relative_link_lands():
    broken = []
    for doc in markdown_files():
        text = _without_code(doc.read_text(encoding="utf-8"))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            path_part, _, anchor = target.partition("#")
            linked = (doc.parent / path_part).resolve() if path_part else doc
            where = f"{doc.relative_to(ROOT)} -> {target}"
            if not linked.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and anchor not in heading_anchors(linked.read_text(encoding="utf-8")):
                broken.append(f"{where} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_readme_layout_names_every_top_level_folder():
    text = README.read_text(encoding="utf-8")
    layout = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    tree = re.search(r"```\n(.*?)```", layout, re.S)[1]
    named = {line.split()[0] for line in tree.splitlines() if line and not line[0].isspace()}
    ignored = _ignored_dirs()
    folders = {
        f"{p.name}/"
        for p in ROOT.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name not in ignored
    }
    assert folders <= named, f"the layout does not name {sorted(folders - named)}"
    missing = [name for name in named if not (ROOT / name.rstrip("/")).exists()]
    assert not missing, f"the layout names what does not exist: {missing}"
    for part in ("page.py", "links.py", "README.md"):
        assert part in tree, f"the layout names a lesson's {part}"


def test_readme_says_why_each_dependency_is_there():
    text = README.read_text(encoding="utf-8")
    table = text.split("\n## Dependencies, and why each is there\n", 1)[1].split("\n## ", 1)[0]
    names = []
    for requirements in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / requirements).read_text(encoding="utf-8").splitlines():
            match = re.match(r"([A-Za-z0-9_.\-]+)", line.strip())
            if match and not line.startswith(("#", "-")):
                names.append(match[1])
    assert names, "no requirement was read"
    absent = [name for name in names if f"`{name}" not in table]
    assert not absent, f"the README's dependency table does not say why: {absent}"


def test_the_docs_carry_no_ticket_history():
    """Issue numbers and "before this round" stories belong to the tracker; dated figures stay in
    docs/performance.md with their machine."""
    pattern = re.compile(r"\bissues? \d+|\bbefore this (round|change)|\b(was|bugs?) fixed\b", re.I)
    found = [
        f"{doc.relative_to(ROOT)}: {match[0]!r}"
        for doc in markdown_files()
        for match in pattern.finditer(doc.read_text(encoding="utf-8"))
    ]
    assert not found, f"history in the docs: {found}"


CODE_PATH = re.compile(
    r"\b((?:app|lessons|core|ui|testing|tools|benchmarks|deploy|tests)(?:/[\w.-]+)*\.py)\b"
)
LESSON_MODULE = re.compile(r"\blessons\.(\w+)\.(\w+)\b")


def _stale_code_names(text: str) -> list[str]:
    """Source paths (``lessons/warp/page.py``) and lesson modules (``lessons.warp.affine``) that
    ``text`` names but the tree does not have."""
    stale = [path for path in CODE_PATH.findall(text) if not (ROOT / path).is_file()]
    for slug, name in LESSON_MODULE.findall(text):
        room = ROOT / "lessons" / slug
        if room.is_dir() and not ((room / f"{name}.py").is_file() or (room / name).is_dir()):
            stale.append(f"lessons.{slug}.{name}")
    return stale


def test_the_docs_name_only_files_and_modules_that_exist():
    """A move or a split must take the docs with it."""
    stale = {
        str(path.relative_to(ROOT)): names
        for path in markdown_files()
        if (names := _stale_code_names(path.read_text(encoding="utf-8")))
    }
    assert stale == {}


def test_stale_names_are_found():
    assert _stale_code_names("see `lessons/warp/nowhere.py` and lessons.warp.nowhere") == [
        "lessons/warp/nowhere.py", "lessons.warp.nowhere"
    ]
    assert _stale_code_names("`lessons/warp/page.py`, lessons.warp.page.story") == []
