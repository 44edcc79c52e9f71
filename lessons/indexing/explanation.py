"""One output element explained: its formula with the real numbers, and the cells it came from.

:func:`explain_element` turns a :class:`~lessons.indexing.tracing.Trace` and a position of its
result into an :class:`Explanation` (``out[1][0] = input[1][index[1][0]] = input[1][2] = 6``,
a translatable note, and the source cells to frame); :func:`position_from_selection` reads the
clicked cell back from a chart's selection; :func:`cell_labels`, :func:`alt_texts` and
:func:`collision_listing` are the words the page shows around the pictures. Pure: no Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from core.text import N_, T
from lessons.indexing.parsing import IndexingError, Pos, format_pos, format_value
from lessons.indexing.tracing import (
    LEGACY_REDUCES,
    SCATTER_ADD,
    UNSPECIFIED_WINNER_NOTE,
    Trace,
    dest_pos,
    positions,
)


@dataclass(frozen=True)
class Explanation:
    """The story of one output element: a formula with real numbers and the cells to highlight.

    ``sources`` maps operand names (``"input"``, ``"index"``, ``"src"``, ``"dest"``, ``"x"``)
    to the positions that fed ``out_pos``.
    """

    out_pos: Pos
    formula: str
    note: str
    sources: dict[str, tuple[Pos, ...]]


def _val(t: torch.Tensor, pos: Pos) -> str:
    return format_value(t[pos].item() if pos else t.item())


def explain_element(trace: Trace, out_pos: Sequence[int]) -> Explanation:
    """The formula with real numbers for ``trace.result[out_pos]`` and the cells it came from.

    Gather example: ``out[1][0] = input[1][index[1][0]] = input[1][2] = 6``.

    Raises:
        IndexingError: ``out_pos`` is not a position of ``trace.result``.
    """
    pos = tuple(int(p) for p in out_pos)
    shape = tuple(trace.result.shape)
    if len(pos) != len(shape) or any(not 0 <= p < s for p, s in zip(pos, shape, strict=True)):
        raise IndexingError(
            T(
                "out{pos} is not an element of a result of shape {shape}",
                pos=format_pos(pos),
                shape=shape,
            )
        )
    res = trace.result.cpu()
    value = _val(res, pos)
    if trace.op == "gather":
        d = trace.dim or 0
        in_pos = dest_pos(pos, d, int(trace.operands["index"].cpu()[pos]))
        picked = "".join(
            f"[index{format_pos(pos)}]" if k == d else f"[{p}]" for k, p in enumerate(pos)
        )
        formula = f"out{format_pos(pos)} = input{picked} = input{format_pos(in_pos)} = {value}"
        note = T(
            "gather keeps every coordinate of out{pos} except dim {d}, which it "
            "reads from index{pos} = {value}.",
            pos=format_pos(pos),
            d=d,
            value=in_pos[d],
        )
        return Explanation(pos, formula, note, {"input": (in_pos,), "index": (pos,)})
    if trace.op == "index":
        in_pos = dict(trace.links)[pos]
        formula = f"out{format_pos(pos)} = x{format_pos(in_pos)} = {value}"
        template = (
            N_("x[{index}] maps out{pos} to x{in_pos}; the result is a view (same storage).")
            if trace.is_view
            else N_("x[{index}] maps out{pos} to x{in_pos}; the result is a copy (new storage).")
        )
        note = T(template, index=trace.index_text, pos=format_pos(pos), in_pos=format_pos(in_pos))
        return Explanation(pos, formula, note, {"x": (in_pos,)})
    return _explain_scatter(trace, pos, value)


def _explain_scatter(trace: Trace, pos: Pos, value: str) -> Explanation:
    d = trace.dim or 0
    dest, src = trace.operands["dest"].cpu(), trace.operands["src"].cpu()
    writers = [s for s, t in trace.links if t == pos]
    old = _val(dest, pos)

    def src_val(s: Pos) -> str:
        if not trace.scalar_src:
            return _val(src, s)
        text = format_value(src.item())
        if src.dtype.is_floating_point and not trace.result.dtype.is_floating_point:
            # torch casts the scalar to dest's dtype before writing it (1.23 -> 1 for int64)
            cast = src.to(trace.result.dtype)
            text += f" (cast to {str(trace.result.dtype).replace('torch.', '')}: {_val(cast, ())})"
        return text

    def src_name(s: Pos) -> str:
        return "scalar" if trace.scalar_src else f"src{format_pos(s)}"

    sources: dict[str, tuple[Pos, ...]] = {"index": tuple(writers)}
    if not trace.scalar_src:
        sources["src"] = tuple(writers)
    because = ", ".join(f"index{format_pos(w)} = {pos[d]}" for w in writers)
    if not writers:
        sources["dest"] = (pos,)
        formula = f"out{format_pos(pos)} = dest{format_pos(pos)} = {value}"
        note = N_("No index entry points at this cell, so it keeps dest's original value.")
        return Explanation(pos, formula, note, sources)
    r = trace.reduce
    if r is None:
        if len(writers) == 1:
            w = writers[0]
            formula = f"out{format_pos(pos)} = {src_name(w)} = {src_val(w)}"
            note = T("because {because} (scatter_ writes along dim {d}).", because=because, d=d)
        else:
            cands = " or ".join(f"{src_name(w)} = {src_val(w)}" for w in writers)
            formula = f"out{format_pos(pos)} = {cands} -> {value}"
            note = T(
                "COLLISION: {n} writes land here ({because}). Several index entries write to "
                "the same cell. With plain scatter_ (no reduce) the winner among these "
                "duplicate writes is unspecified: the CPU usually keeps the last one, but on "
                "CUDA it may differ from run to run (and the gradient flows to every "
                "duplicate). This run kept {value}.",
                n=len(writers),
                because=because,
                value=value,
            )
            assert note.endswith(f"{UNSPECIFIED_WINNER_NOTE} This run kept {value}.")
        return Explanation(pos, formula, note, sources)
    with_self = r in LEGACY_REDUCES or r == SCATTER_ADD or trace.include_self
    terms = [f"dest{format_pos(pos)}"] if with_self else []
    nums = [old] if with_self else []
    terms += [src_name(w) for w in writers]
    nums += [src_val(w) for w in writers]
    if with_self:
        sources["dest"] = (pos,)
    sym = {SCATTER_ADD: " + ", "add": " + ", "sum": " + ", "multiply": " * ", "prod": " * "}.get(r)
    if sym:
        formula = f"out{format_pos(pos)} = {sym.join(terms)} = {sym.join(nums)} = {value}"
    else:
        fn = {"mean": "mean", "amax": "max", "amin": "min"}[r]
        formula = (
            f"out{format_pos(pos)} = {fn}({', '.join(terms)}) = {fn}({', '.join(nums)}) = {value}"
        )
    many = len(writers) > 1
    if r == SCATTER_ADD:
        template = (
            N_(
                "because {because}; scatter_add_ adds every src value to dest's own. {n} writes "
                "meet here and are combined, so the order does not matter."
            )
            if many
            else N_("because {because}; scatter_add_ adds every src value to dest's own.")
        )
    elif r in LEGACY_REDUCES:
        template = (
            N_(
                "because {because}; reduce={r!r}. {n} writes meet here and are combined, so the "
                "order does not matter."
            )
            if many
            else N_("because {because}; reduce={r!r}.")
        )
    else:
        template = (
            N_(
                "because {because}; reduce={r!r}, include_self={include_self}. {n} writes meet "
                "here and are combined, so the order does not matter."
            )
            if many
            else N_("because {because}; reduce={r!r}, include_self={include_self}.")
        )
    note = T(template, because=because, r=r, include_self=trace.include_self, n=len(writers))
    return Explanation(pos, formula, note, sources)


def position_from_selection(selection: Any, shape: Sequence[int]) -> Pos | None:
    """The output position clicked in the page's chart, or ``None``.

    ``selection`` is what ``st.plotly_chart(..., on_select="rerun")`` stores: a mapping with
    ``selection.points[*].customdata`` holding the full position (the page's figures put it
    there). Stale or foreign selections (wrong length, out of range) give ``None``.
    """
    try:
        points = selection["selection"]["points"]
    except (KeyError, TypeError):
        return None
    if not points:
        return None
    point = points[-1]
    data = point.get("customdata") if isinstance(point, dict) else None
    if data is None:
        return None
    if not isinstance(data, (list, tuple)):
        data = [data]
    try:
        pos = tuple(int(v) for v in data)
    except (TypeError, ValueError):
        return None
    shape = tuple(int(s) for s in shape)
    if len(pos) != len(shape) or any(not 0 <= p < s for p, s in zip(pos, shape, strict=True)):
        return None
    return pos


@dataclass(frozen=True)
class StorageView:
    """What the page says about an ``x[...]`` result's storage: view or copy (a marked
    sentence), three ``(label, value)`` figures and the two data pointers."""

    message: T
    metrics: tuple[tuple[str, str], ...]
    pointers: str


def storage_view(trace: Trace) -> StorageView:
    """The storage facts of an ``x[...]`` trace (``trace.storage``), as the page shows them.

    Raises:
        ValueError: ``trace`` is not an ``x[...]`` trace (it has no storage report).
    """
    s = trace.storage
    if s is None:
        raise ValueError(f"a {trace.op} trace has no storage report; only x[...] traces do")
    template = (
        N_("`x[{index}]` is a **view**: it shares x's storage (measured, not guessed).")
        if trace.is_view
        else N_("`x[{index}]` is a **copy**: new storage (measured, not guessed).")
    )
    metrics = (
        (N_("same data_ptr"), str(s.same_storage)),
        ("storage_offset (out / x)", f"{s.result_offset} / {s.source_offset}"),
        ("out.stride()", str(s.result_stride)),
    )
    pointers = (
        f"x.untyped_storage().data_ptr() = {s.source_ptr:#x}, "
        f"out.untyped_storage().data_ptr() = {s.result_ptr:#x}"
    )
    return StorageView(T(template, index=trace.index_text), metrics, pointers)


def cell_labels(shape: Sequence[int]) -> dict[str, Pos]:
    """The "Explain cell" menu: ``"out[1][0]"`` -> ``(1, 0)`` for every position of ``shape``."""
    return {f"out{format_pos(p)}": p for p in positions(shape)}


def alt_texts(trace: Trace, names: Sequence[str], pos: Pos) -> dict[str, T]:
    """What each picture of ``trace`` shows, for a reader who cannot see it (axe image-alt):
    one text per operand in ``names`` and one for ``"out"`` with ``out[pos]`` framed."""
    alts = {
        name: T(
            "{name} tensor, shape {shape}, each cell's value printed and coloured like the cell "
            "it feeds",
            name=name,
            shape=tuple(trace.operands[name].shape),
        )
        for name in names
    }
    alts["out"] = T(
        "out tensor, shape {shape}: each cell coloured like the input cell its value came "
        "from; out{pos} and its sources framed in black",
        shape=tuple(trace.result.shape),
        pos=format_pos(pos),
    )
    return alts


def collision_listing(trace: Trace, scalar: str = "scalar") -> str:
    """The collided cells and their writers: ``"out[0][0] <- src[0][0], src[1][0]"``, joined
    by ``"; "`` (``scalar`` names the writer of a scalar ``src``, in the page's language)."""
    return "; ".join(
        f"out{format_pos(d)} <- "
        + ", ".join(scalar if trace.scalar_src else f"src{format_pos(s)}" for s in srcs)
        for d, srcs in trace.collisions.items()
    )


def collision_note(trace: Trace, scalar: str = "scalar") -> tuple[bool, tuple[T, ...]] | None:
    """What the page says under a scatter with collisions: ``(warn, sentences)``; ``warn`` is
    true for plain ``scatter_`` (one write wins, which one is unspecified), false when a
    reduce combines every write. ``None`` without collisions. ``scalar`` names the writer of a
    scalar ``src`` in the page's language (see :func:`collision_listing`)."""
    listed = collision_listing(trace, scalar)
    if not listed:
        return None
    if trace.reduce is None:
        collided = T("**Collisions** (dashed red frames): {listed}.", listed=listed)
        return True, (collided, T(UNSPECIFIED_WINNER_NOTE))
    combined = T(
        "**Collisions** (dashed red frames): {listed}. With reduce={reduce!r} "
        "all writes are combined, so nothing is lost.",
        listed=listed,
        reduce=trace.reduce,
    )
    return False, (combined,)
