"""Issue 13: every Streamlit cache in the UI layer is bounded.

A class of 50 shares one server process. A cache that takes arguments keeps one entry per
distinct call, so without ``max_entries`` it grows with every value any student tries; a cache
without arguments holds a single entry and is bounded by construction. This reads the source
(no Streamlit run), so it also catches a cache on a page no other test opens.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UI_SOURCES = sorted([*ROOT.glob("app_pages/*.py"), *ROOT.glob("ui/*.py")])
CACHES = {"cache_data", "cache_resource"}


def _cache_decorators(tree: ast.AST):
    """(function, decorator call or attribute) for every ``@st.cache_*`` in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                if isinstance(target, ast.Attribute) and target.attr in CACHES:
                    yield node, deco


def _takes_arguments(func: ast.FunctionDef) -> bool:
    args = func.args
    return bool(args.posonlyargs or args.args or args.kwonlyargs or args.vararg or args.kwarg)


def _max_entries(deco: ast.expr) -> int | None:
    if not isinstance(deco, ast.Call):
        return None
    for kw in deco.keywords:
        if kw.arg == "max_entries" and isinstance(kw.value, ast.Constant):
            return kw.value.value
    return None


def _unbounded(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line name`` of each cache in ``path`` that takes arguments but has no bound."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(root)}:{func.lineno} {func.name}"
        for func, deco in _cache_decorators(tree)
        if _takes_arguments(func) and not _max_entries(deco)
    ]


def test_the_scan_finds_the_caches():
    found = sum(len(list(_cache_decorators(ast.parse(p.read_text())))) for p in UI_SOURCES)
    assert found >= 20, found  # the pages hold about 30: a scan that finds none proves nothing


@pytest.mark.parametrize("path", UI_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_caches_with_arguments_have_max_entries(path):
    assert _unbounded(path) == []


def test_an_unbounded_cache_is_reported(tmp_path):
    page = tmp_path / "page.py"
    page.write_text(
        "import streamlit as st\n"
        "@st.cache_data(show_spinner=False)\n"
        "def grows(x):\n    return x\n"
        "@st.cache_data(max_entries=4)\n"
        "def bounded(x):\n    return x\n"
        "@st.cache_resource\n"
        "def single():\n    return 1\n"
    )
    assert _unbounded(page, root=tmp_path) == ["page.py:3 grows"]
