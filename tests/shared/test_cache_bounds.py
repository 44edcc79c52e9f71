"""Every Streamlit cache in the UI layer is bounded in entries, in time and in bytes.

A class of 50 shares one server process. A cache that takes arguments keeps one entry per
distinct call, so without ``max_entries`` it grows with every value any student tries, without a
``ttl`` it holds them for the life of the server, and without a byte bound one huge result (a
4096x4096 warp) stays for everyone. Such caches go through :func:`ui.caching.bounded_cache`. A
cache without arguments holds a single entry and is bounded by construction. This reads the
source (no Streamlit run), so it also catches a cache on a page no other test opens.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from tests.sources import streamlit_sources
from ui.caching import MAX_SHARED_BYTES, NotCached, bounded_cache, held_in_cache, size_in_bytes

ROOT = Path(__file__).resolve().parents[2]
UI_SOURCES = streamlit_sources()
CACHES = {"cache_data", "cache_resource", "bounded_cache"}


def _cache_decorators(tree: ast.AST):
    """(function, decorator call or attribute) for every ``@st.cache_*`` in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if _cache_name(deco) in CACHES:
                    yield node, deco


def _cache_name(deco: ast.expr) -> str | None:
    """``cache_data`` for ``@st.cache_data(...)``, ``bounded_cache`` for ``@bounded_cache(...)``."""
    target = deco.func if isinstance(deco, ast.Call) else deco
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else None


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


def _has_ttl(deco: ast.expr) -> bool:
    """A ``ttl=`` that is not ``None`` (a number, a string such as "1h" or a constant's name)."""
    return isinstance(deco, ast.Call) and any(
        kw.arg == "ttl" and not (isinstance(kw.value, ast.Constant) and kw.value.value is None)
        for kw in deco.keywords
    )


def _unbounded(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line name`` of each cache in ``path`` that takes arguments but lacks a bound: a
    ``max_entries``, a ``ttl``, and the byte bound of :func:`ui.caching.bounded_cache` (a plain
    ``st.cache_*`` has none)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(root)}:{func.lineno} {func.name}"
        for func, deco in _cache_decorators(tree)
        if _takes_arguments(func)
        and not (_max_entries(deco) and _has_ttl(deco) and _cache_name(deco) == "bounded_cache")
    ]


def test_the_scan_finds_the_caches():
    found = sum(len(list(_cache_decorators(ast.parse(p.read_text())))) for p in UI_SOURCES)
    assert found >= 20, found  # the pages hold about 30: a scan that finds none proves nothing


@pytest.mark.parametrize("path", UI_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_caches_with_arguments_are_bounded_in_entries_time_and_bytes(path):
    assert _unbounded(path) == []


def test_an_unbounded_cache_is_reported(tmp_path):
    page = tmp_path / "page.py"
    page.write_text(
        "import streamlit as st\n"
        "@st.cache_data(show_spinner=False)\n"
        "def grows(x):\n    return x\n"
        "@st.cache_data(max_entries=4, ttl=60)\n"
        "def no_byte_bound(x):\n    return x\n"
        "@bounded_cache(max_entries=4)\n"
        "def forever(x):\n    return x\n"
        "@bounded_cache(max_entries=4, ttl=None)\n"
        "def forever_too(x):\n    return x\n"
        "@caching.bounded_cache(max_entries=4, ttl='1h', kind='resource')\n"
        "def bounded(x):\n    return x\n"
        "@st.cache_resource\n"
        "def single():\n    return 1\n"
    )
    assert _unbounded(page, root=tmp_path) == [
        "page.py:3 grows", "page.py:6 no_byte_bound", "page.py:9 forever", "page.py:12 forever_too"
    ]


# ------------------------------------------------------------------------------ the byte bound
def _counting_cache(kind: str, max_bytes: int):
    calls: list[int] = []

    @bounded_cache(max_entries=8, ttl=60, max_bytes=max_bytes, kind=kind)
    def make(n: int, _unhashed: object = None) -> np.ndarray:
        calls.append(n)
        return np.zeros(n, np.uint8)

    make.clear()
    return make, calls


@pytest.mark.parametrize("kind", ["data", "resource"])
def test_a_small_result_is_served_from_the_cache(kind):
    make, calls = _counting_cache(kind, max_bytes=1000)
    first, second = make(100), make(100)
    assert calls == [100] and second.nbytes == 100
    assert np.array_equal(first, second)


@pytest.mark.parametrize("kind", ["data", "resource"])
def test_an_oversize_result_is_returned_but_computed_again(kind):
    make, calls = _counting_cache(kind, max_bytes=1000)
    assert make(5000).nbytes == 5000
    assert make(5000).nbytes == 5000
    assert calls == [5000, 5000]  # not kept: the second call computed it again
    make(10), make(10)
    assert calls == [5000, 5000, 10]


def test_pages_bound_their_caches_at_32_mb():
    assert MAX_SHARED_BYTES == 32 * 2**20


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.zeros((64, 64, 3), np.uint8), 64 * 64 * 3),
        (torch.zeros(1000, dtype=torch.float32), 4000),
        (torch.zeros(1000)[:10], 4000),  # a view keeps its whole storage alive
        (b"x" * 5000, 5000),
        ((np.zeros(100, np.uint8), [np.zeros(200, np.uint8)], {"k": b"y" * 300}), 600),
        (torch.nn.Linear(100, 10), (100 * 10 + 10) * 4),
    ],
)
def test_size_in_bytes_counts_the_large_parts(value, expected):
    assert expected <= size_in_bytes(value) <= expected + 2000


def test_size_in_bytes_counts_a_shared_array_once_and_sees_dataclasses_and_figures():
    big = np.zeros(10_000, np.uint8)

    @dataclasses.dataclass(frozen=True)
    class Pair:
        a: np.ndarray
        b: np.ndarray

    assert 10_000 <= size_in_bytes(Pair(big, big)) < 12_000
    fig = go.Figure(go.Scatter(x=np.arange(100_000.0), y=np.zeros(100_000)))
    assert size_in_bytes(fig) >= 1_600_000
    assert size_in_bytes([np.zeros(1000, np.uint8)] * 1000) < 2_000_000  # one array, counted once


def test_a_shared_figure_above_the_bound_is_built_again(monkeypatch):
    from ui import charts

    monkeypatch.setattr(charts, "SHARED_FIGURE_MAX_BYTES", 200_000)  # 50_000 float64: 400 kB
    built: list[int] = []

    @charts.shared_figure(max_entries=4)
    def points(n: int) -> go.Figure:
        built.append(n)
        return go.Figure(go.Scatter(y=np.zeros(n)))

    points.clear()
    points(10), points(10)
    assert built == [10]
    points(50_000), points(50_000)
    assert built == [10, 50_000, 50_000]


#: Calls of the function in :func:`_session_app`, across AppTest sessions in this process.
SESSION_CALLS: list[int] = []


def _session_app():
    import numpy as np
    import streamlit as st

    from tests.shared import test_cache_bounds as here
    from ui.caching import bounded_cache

    @bounded_cache(max_entries=4, ttl=60, max_bytes=1000)
    def make(n: int) -> np.ndarray:
        here.SESSION_CALLS.append(n)
        return np.zeros(n, np.uint8)

    st.write(int(make(int(st.query_params.get("n", "5000"))).nbytes))


def test_an_oversize_result_is_kept_by_its_session_only():
    """A result too large to share is computed once per session that asks (its rerun reads it
    back), not once per rerun; a small one is computed once for every session."""
    from streamlit.testing.v1 import AppTest

    SESSION_CALLS.clear()
    first = AppTest.from_function(_session_app, default_timeout=30)
    first.query_params["n"] = "5000"
    first.run(), first.run()
    assert not first.exception and first.markdown[0].value == "`5000`"
    assert SESSION_CALLS == [5000]  # the rerun read the session's own copy
    # AppTest gives every app the same session id: end the first session as Streamlit does
    # when a tab closes, so the next app is another session
    from streamlit.runtime.caching import cache_resource_api

    cache_resource_api._resource_caches.clear_session("test session id")
    second = AppTest.from_function(_session_app, default_timeout=30)
    second.query_params["n"] = "5000"
    second.run()
    assert SESSION_CALLS == [5000, 5000]  # not shared: the other session computed it
    for app in (first, second):
        app.query_params["n"] = "10"
        app.run()
    assert SESSION_CALLS == [5000, 5000, 10]  # small: shared by both sessions
    cache_resource_api._resource_caches.clear_session("test session id")


def test_held_in_cache_asks_and_never_computes():
    def miss() -> int:
        raise NotCached

    def broken() -> int:
        raise RuntimeError("not a miss")

    assert held_in_cache(lambda: 7) == 7
    assert held_in_cache(miss) is None
    with pytest.raises(RuntimeError, match="not a miss"):  # only a miss means "not held"
        held_in_cache(broken)
