"""The shape of the code: one room per lesson, thin pages, modules and functions a person can read.

These are promises about the source itself, checked by reading it (``ast``), so a change that
breaks one fails here with the file and line to look at.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

from lessons.registry import HOME, LESSONS
from tests.sources import ROOT, imports_of, pure_sources, sources

MAX_PAGE_LINES = 400
MAX_MODULE_LINES = 1200
MAX_FUNCTION_LINES = 120
MAX_PAGE_STRETCH = 120  # module-level lines of a page between two function boundaries
#: Code the app and its tools run (tests may hold long tables of cases; they are not in here).
CODE = ("app.py", "core/**/*.py", "ui/**/*.py", "lessons/**/*.py", "testing/**/*.py",
        "tools/**/*.py", "deploy/**/*.py", "benchmarks/**/*.py")  # fmt: skip
SLUGS = [HOME.slug, *(page.slug for page in LESSONS)]


def _where(path: Path, line: int | None = None) -> str:
    relative = path.relative_to(ROOT)
    return f"{relative}:{line}" if line else str(relative)


def test_every_lesson_is_a_package_named_by_its_slug():
    for slug in SLUGS:
        room = ROOT / "lessons" / slug
        assert (room / "page.py").is_file(), f"lessons/{slug}/page.py is missing"
        assert (room / "__init__.py").is_file(), f"lessons/{slug} is not a package"
        assert (ROOT / "tests" / "lessons" / slug).is_dir(), f"tests/lessons/{slug} is missing"


def test_only_pages_and_ui_import_streamlit_and_pure_modules_never_import_ui():
    offending = [
        f"{_where(path, line)} imports {module}"
        for path in pure_sources()
        for line, module in imports_of(path)
        if module.split(".")[0] in ("streamlit", "ui")
    ]
    assert offending == []


def test_a_lesson_imports_no_other_lessons_modules():
    """A room's doors open onto core/ and ui/, not into another room (the registry excepted)."""
    offending = []
    for slug in SLUGS:
        for path in sources(f"lessons/{slug}/**/*.py"):
            for line, module in imports_of(path):
                parts = module.split(".")
                if parts[0] == "lessons" and len(parts) > 1 and parts[1] not in (slug, "registry"):
                    offending.append(f"{_where(path, line)} imports {module}")
    assert offending == []


def test_benchmarks_import_no_tests_and_patch_no_path():
    offending = []
    for path in sources("benchmarks/*.py"):
        for line, module in imports_of(path):
            if module.split(".")[0] == "tests":
                offending.append(f"{_where(path, line)} imports {module}")
        if re.search(r"^sys\.path\.(insert|append)", path.read_text(encoding="utf-8"), re.M):
            offending.append(f"{_where(path)} patches sys.path")
    assert offending == []


def test_no_page_is_longer_than_a_sitting():
    long_pages = {
        _where(path): n
        for path in sources("lessons/*/page.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_PAGE_LINES
    }
    assert long_pages == {}, f"pages over {MAX_PAGE_LINES} lines"


def _module_level_stretches(tree: ast.Module) -> list[tuple[int, int]]:
    """(first line, line count) of each run of module-level statements between definitions."""
    stretches, start, end = [], None, None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if start is not None:
                stretches.append((start, end - start + 1))
            start = None
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        start = first if start is None else start
        end = node.end_lineno
    if start is not None:
        stretches.append((start, end - start + 1))
    return stretches


def test_no_page_has_a_long_straight_stretch():
    long_stretches = [
        f"{_where(path, first)}: {n} lines"
        for path in sources("lessons/*/page.py")
        for first, n in _module_level_stretches(ast.parse(path.read_text(encoding="utf-8")))
        if n > MAX_PAGE_STRETCH
    ]
    assert long_stretches == []


def test_the_stretch_measure_finds_a_long_stretch():
    code = "import streamlit as st\n" + "st.write(1)\n" * 130 + "def f():\n    pass\nx = 1\n"
    assert _module_level_stretches(ast.parse(code)) == [(1, 131), (134, 1)]


def test_no_module_is_the_size_of_a_library():
    long_modules = {
        _where(path): n
        for path in sources(*CODE)
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long_modules == {}, f"modules over {MAX_MODULE_LINES} lines"


def test_no_function_is_longer_than_a_screenful_or_two():
    long_functions = []
    for path in sources(*CODE):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long_functions.append(f"{_where(path, node.lineno)} {node.name}: {n} lines")
    assert long_functions == []


def test_no_two_classes_share_a_name():
    defined: dict[str, list[str]] = defaultdict(list)
    for path in sources("core/**/*.py", "ui/**/*.py", "lessons/**/*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                defined[node.name].append(_where(path, node.lineno))
    assert {name: where for name, where in defined.items() if len(where) > 1} == {}


def test_no_core_module_shares_a_name_with_a_ui_module():
    core = {path.name for path in sources("core/*.py")} - {"__init__.py"}
    ui = {path.name for path in sources("ui/*.py")} - {"__init__.py"}
    assert core & ui == set()


ISSUE_NUMBER = re.compile(r"\bissues?\s*#?\d+|\bbug \(issue", re.I)


@pytest.mark.parametrize("where", ["code", "tests"])
def test_no_issue_numbers_in_the_source(where):
    """Comments say why the code is as it is today; the history is in git."""
    patterns = CODE if where == "code" else ("tests/**/*.py",)
    found = [
        f"{_where(path, n)}: {line.strip()[:80]}"
        for path in sources(*patterns)
        if path != Path(__file__)  # the examples of the pattern's own test below
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE_NUMBER.search(line) and "github.com" not in line
    ]
    assert found == []


def test_the_issue_pattern_finds_issue_numbers():
    assert ISSUE_NUMBER.search("# the legend moved (issue 12)")
    assert ISSUE_NUMBER.search('"""Issue 13: results are shared')
    assert not ISSUE_NUMBER.search("see pytorch/pytorch#4062")


@pytest.mark.parametrize("spec", [HOME, *LESSONS], ids=lambda spec: spec.slug)
def test_every_page_asks_its_own_questions_and_its_reference_lists_them(spec):
    package = ROOT / "lessons" / spec.slug
    tree = ast.parse((package / "questions.py").read_text(encoding="utf-8"))
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert "questions" in functions, f"lessons/{spec.slug}/questions.py defines questions()"
    page = (package / "page.py").read_text(encoding="utf-8")
    assert re.search(rf'predict_panel\([^)]*"{spec.slug}"', page), \
        f"lessons/{spec.slug}/page.py shows its questions with ui.predict.predict_panel"
    readme = (package / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^#+ .*Questions", readme, re.M), \
        f"lessons/{spec.slug}/README.md lists its questions"



def _question_keys(rows: str, column: int, *, first_only: bool = False) -> set[str]:
    """The question keys a markdown table's rows name in cell ``column`` (1: the first): its
    backticked words shaped like a key (lowercase, digits and dashes); with ``first_only``,
    only a cell's first (the rest of the cell may quote code)."""
    keys = set()
    for line in rows.splitlines():
        cells = line.split("|")
        if line.startswith("| ") and len(cells) > column + 1:
            found = re.findall(r"`([a-z0-9][a-z0-9-]*)`", cells[column])
            keys |= set(found[:1] if first_only else found)
    return keys


def _section(text: str, heading: str) -> str:
    """The text under the first heading that starts with ``heading``, to the next heading of
    level 1 to 3."""
    match = re.search(rf"^#+ {heading}.*?$(.*?)(?=^#{{1,3}} |\Z)", text, re.M | re.S)
    assert match, f"no heading {heading!r}"
    return match.group(1)


@pytest.mark.parametrize("spec", [HOME, *LESSONS], ids=lambda spec: spec.slug)
def test_the_readme_lists_every_question_a_lesson_asks(spec):
    """Each key in the lesson's reference table is one its questions.py asks, and the README's
    "The questions" names it on a row of the page's title."""
    package = ROOT / "lessons" / spec.slug
    reference = _section((package / "README.md").read_text("utf-8"), "Questions")
    lesson_keys = _question_keys(reference, 1, first_only=True)
    assert len(lesson_keys) >= 3, f"lessons/{spec.slug}/README.md lists >= 3 question keys"
    source = (package / "questions.py").read_text("utf-8")
    assert [key for key in sorted(lesson_keys) if f'"{key}"' not in source] == []
    listed = _section((ROOT / "README.md").read_text("utf-8"), "The questions")
    rows = "\n".join(line for line in listed.splitlines() if line.startswith(f"| {spec.title} |"))
    assert sorted(lesson_keys - _question_keys(rows, 2)) == []
