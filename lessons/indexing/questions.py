"""The indexing page's "predict, then reveal" questions, answered by running the page's views.

The page passes the traces it draws (:func:`~lessons.indexing.cases.run_case` and
:func:`~lessons.indexing.cases.run_index_case`, cached there), so every answer is what the real
torch call gave for the tensors on the page, and every distractor is read from that run or from
a real call with one thing changed (another ``dim``, no ``reduce``, the other ``include_self``).

- gather: ``gather-value`` (what ``out[p]`` holds), ``gather-source`` (which ``input`` cell it
  reads), ``gather-shape`` (out takes index's shape) and, when ``index`` repeats a value along
  ``dim``, ``gather-repeats`` (the notes, 002:1056, say the values in a row must be unique);
- scatter: ``scatter-value`` (what ``out[q]`` holds after the scatter), ``scatter-target`` (which
  cell a write lands in), ``scatter-untouched`` (how many cells no write reaches: collisions
  make fewer cells than index entries) and, for a plain ``scatter_`` whose duplicate writes
  carry different values, ``scatter-winner`` (the notes, 002:940, say the later write wins;
  torch leaves it unspecified);
- ``x[...]``: ``index-view`` (view or copy, measured on the storages; the notes, 002:537, say a
  second level of indexing never changes the tensor).

Choices that would show the right value twice are left out; the cell a question asks about is
the one whose distractors are most distinct. Pure: no Streamlit. Texts are English and marked
(``N_`` / ``T``); the page translates them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from core.questions import Choice, Question, check_questions
from core.text import N_, T
from lessons.indexing.explanation import explain_element
from lessons.indexing.parsing import Pos, format_pos, format_value
from lessons.indexing.tracing import REDUCE_MODES, Trace, dest_pos, positions, trace_scatter

#: The page's parts that give the answers away: the gather/scatter picture with its formula and
#: collision notes (the shared layout's figure column), and the x[...] tab's picture and storage.
FIGURE_PART = "lesson-figure"
INDEX_PART = "indexing-index-view"
#: A question offers its right choice and up to this many distractors.
MAX_DISTRACTORS = 3
#: The sentence of torch's own ``scatter_`` docs about duplicate indices (read live).
_DOCS_DUPLICATES = re.compile(r"When indices are not unique,.*?\)", re.S)


@dataclass(frozen=True)
class _Option:
    """A choice before it is ordered: ``same`` is what makes two options one answer to a
    learner (a number, a cell), ``order`` where it sits among the choices."""

    text: str
    why: str
    same: object
    order: tuple = ()
    notes: str | None = None


def _question(key: str, prompt: str, right: _Option, wrong: Iterable[_Option], proof: str,
              hides: str | None) -> Question:  # fmt: skip
    """A question from its right option and distractors: a distractor that is the same answer
    as one kept before (or has its text) is left out, at most :data:`MAX_DISTRACTORS` stay,
    and the choices are sorted by ``order``."""
    kept = [right]
    for option in wrong:
        if len(kept) > MAX_DISTRACTORS:
            break
        if all(option.same != k.same and str(option.text) != str(k.text) for k in kept):
            kept.append(option)
    ordered = sorted(kept, key=lambda option: option.order)
    choices = tuple(Choice(o.text, o.why, o.notes) for o in ordered)
    return Question(key, prompt, choices, ordered.index(right), proof, hides)


# --- reading a run ----------------------------------------------------------------------------


def _number(value: float | int | bool) -> object:
    """What makes two numbers one answer: their value (NaN is NaN)."""
    value = float(value)
    return "nan" if math.isnan(value) else value


def _at(t: torch.Tensor, pos: Pos) -> float | int | bool:
    """The element of CPU tensor ``t`` at ``pos`` (``()`` for a 0-d tensor) as a Python value."""
    return t[pos].item() if pos else t.item()


def _inside(pos: Pos, shape: Sequence[int]) -> bool:
    return len(pos) == len(shape) and all(0 <= p < s for p, s in zip(pos, shape, strict=True))


def _cell(name: str, pos: Pos) -> str:
    return f"{name}{format_pos(pos)}"


def _value_option(value: float | int | bool, why: str, notes: str | None = None) -> _Option:
    """A choice that is a number: its text is the value as the page prints it."""
    return _Option(f"`{format_value(value)}`", why, _number(value),
                   (0, _number(value) if _number(value) != "nan" else math.inf), notes)  # fmt: skip


def _off_by_one(right: float | int | bool) -> _Option:
    """A near miss every number question can offer: one more (or the other truth value)."""
    near = (not right) if isinstance(right, bool) else right + 1
    return _value_option(near, T("one off: the run gave {right}", right=format_value(right)))


def _cell_option(name: str, pos: Pos, why: str) -> _Option:
    return _Option(f"`{_cell(name, pos)}`", why, pos, (0, pos))


def _along(pos: Pos, dim: int, value: int, shape: Sequence[int]) -> Pos | None:
    """``pos`` with coordinate ``dim`` replaced by ``value``, if that is a cell of ``shape``."""
    moved = dest_pos(pos, dim, value)
    return moved if _inside(moved, shape) else None


def _other_dim(pos: Pos, dim: int, value: int, shape: Sequence[int]) -> tuple[int, Pos] | None:
    """The first other dim ``e`` along which ``value`` names another cell than along ``dim``:
    ``(e, that cell)``."""
    for e in range(len(shape)):
        moved = _along(pos, e, value, shape) if e != dim else None
        if moved is not None and moved != dest_pos(pos, dim, value):
            return e, moved
    return None


def _neighbour(pos: Pos, dim: int, value: int, shape: Sequence[int]) -> Pos | None:
    """The cell one step from ``pos``'s ``dim`` := ``value`` along ``dim`` (next, else previous)."""
    return _along(pos, dim, value + 1, shape) or _along(pos, dim, value - 1, shape)


def _best(options_at: Iterable[tuple[Pos, list]]) -> Pos:
    """The position whose questions keep the most distinct choices (the first on a tie)."""
    best, score = None, -1
    for pos, options in options_at:
        kept = len({o.same for o in options})
        if kept > score:
            best, score = pos, kept
    assert best is not None, "a trace has at least one position"
    return best


# --- gather -----------------------------------------------------------------------------------


def _gather_cells(trace: Trace, p: Pos) -> tuple[Pos, list[_Option]]:
    """The cell ``out[p]`` reads, and the cells a learner might read instead (with why not)."""
    d, shape = trace.dim or 0, tuple(trace.operands["input"].shape)
    k = int(trace.operands["index"].cpu()[p])
    src, wrong = dest_pos(p, d, k), []
    if _inside(p, shape) and p != src:
        wrong.append(_cell_option("input", p, T(
            "that is out's own position; gather replaces coordinate {d} by `index{p}` = {k}",
            d=d, p=format_pos(p), k=k)))  # fmt: skip
    if (other := _other_dim(p, d, k, shape)) is not None:
        wrong.append(_cell_option("input", other[1], T(
            "that reads `index{p}` = {k} along dim {e}; this gather reads along dim {d}",
            p=format_pos(p), k=k, e=other[0], d=d)))  # fmt: skip
    if (near := _neighbour(p, d, k, shape)) is not None:
        wrong.append(_cell_option("input", near, T(
            "one cell off along dim {d}: `index{p}` = {k} names `{src}`",
            d=d, p=format_pos(p), k=k, src=_cell("input", src))))  # fmt: skip
    return src, wrong


def _gather_values(trace: Trace, p: Pos) -> tuple[float | int | bool, list[_Option]]:
    """``out[p]``, and the values of the cells in :func:`_gather_cells` plus the index value."""
    inp, right = trace.operands["input"].cpu(), _at(trace.result.cpu(), p)
    k = int(trace.operands["index"].cpu()[p])
    src, cells = _gather_cells(trace, p)
    wrong = [_value_option(_at(inp, cell.same), T("that is `{cell}`, not `{src}`: {reason}",
                                                  cell=_cell("input", cell.same),
                                                  src=_cell("input", src), reason=cell.why))
             for cell in cells]  # fmt: skip
    if inp.dtype != torch.bool:
        as_value = torch.tensor(k).to(inp.dtype).item()
        wrong.append(_value_option(as_value, T(
            "{k} is `index{p}`: where gather reads along dim {d}, not the value it reads",
            k=k, p=format_pos(p), d=trace.dim or 0)))  # fmt: skip
    return right, wrong


def _gather_questions(trace: Trace) -> list[Question]:
    index = trace.operands["index"].cpu()
    p = _best((pos, _gather_values(trace, pos)[1] + _gather_cells(trace, pos)[1])
              for pos in positions(index.shape))  # fmt: skip
    d, k, at = trace.dim or 0, int(index[p]), format_pos(p)
    src, cells = _gather_cells(trace, p)
    right_value, values = _gather_values(trace, p)
    formula = explain_element(trace, p).formula
    proof = T("The run gave `{formula}`.", formula=formula)
    read = T("`index{p}` = {k} replaces coordinate {d} of {p}: gather reads `{src}`",
             p=at, k=k, d=d, src=_cell("input", src))  # fmt: skip
    value = _question(
        "gather-value", T("After `torch.gather(input, {d}, index)`, what is `out{p}`?", d=d, p=at),
        _value_option(right_value, read), [*values, _off_by_one(right_value)],
        proof, FIGURE_PART)  # fmt: skip
    source = _question(
        "gather-source", T("Which cell of `input` does `torch.gather(input, {d}, index)` read "
                           "for `out{p}`?", d=d, p=at),
        _cell_option("input", src, read),
        [*cells, _Option(T("`index{p}` itself", p=at), T(
            "gather returns values of input; `index{p}` = {k} only says where to read",
            p=at, k=k), "index", (1,))],
        proof, FIGURE_PART)  # fmt: skip
    questions = [value, source, _gather_shape(trace)]
    if (repeats := _gather_repeats(trace)) is not None:
        questions.append(repeats)
    return questions


def _shape_option(shape: Sequence[int], why: str) -> _Option:
    shape = tuple(int(s) for s in shape)
    return _Option(f"`{shape}`", why, shape, (len(shape), shape))


def _gather_shape(trace: Trace) -> Question:
    """``gather-shape``: out has index's shape, whatever input's shape."""
    d = trace.dim or 0
    in_shape, ix_shape = tuple(trace.operands["input"].shape), tuple(trace.operands["index"].shape)
    out_shape = tuple(trace.result.shape)
    mixed = dest_pos(in_shape, d, ix_shape[d])
    n = len(ix_shape)
    wrong = [
        _shape_option(in_shape, T("that is input's shape; out has one cell per cell of index: "
                                  "{shape}", shape=str(out_shape))),
        _shape_option(mixed, T("only dim {d} follows index there; every dim of out follows "
                               "index: {shape}", d=d, shape=str(out_shape))),
        _shape_option((int(trace.operands["index"].numel()),), T(
            "gather does not flatten: out keeps index's {n} dim(s)", n=n)),
        _shape_option(ix_shape[:d] + ix_shape[d + 1:], T(
            "gather does not reduce dim {d}: out keeps index's {n} dim(s)", d=d, n=n)),
        _shape_option((*ix_shape, 1), T("gather adds no dim: out keeps index's {n} dim(s)", n=n)),
    ]  # fmt: skip
    return _question(
        "gather-shape", T("`input` has shape {input}, `index` has shape {index}. What shape does "
                          "`torch.gather(input, {d}, index)` give?",
                          input=str(in_shape), index=str(ix_shape), d=d),
        _shape_option(out_shape, T("out takes index's shape: each index cell picks one value")),
        wrong, T("The run gave out of shape {shape}.", shape=str(out_shape)),
        FIGURE_PART)  # fmt: skip


def _repeat(index: torch.Tensor, d: int) -> tuple[Pos, Pos] | None:
    """Two positions of ``index`` that differ only along ``d`` and hold the same value."""
    for p in positions(index.shape):
        for j in range(p[d] + 1, index.shape[d]):
            q = dest_pos(p, d, j)
            if int(index[q]) == int(index[p]):
                return p, q
    return None


def _gather_repeats(trace: Trace) -> Question | None:
    """``gather-repeats``: a value repeated along dim is read twice (the notes: must be unique)."""
    d, index = trace.dim or 0, trace.operands["index"].cpu()
    if (pair := _repeat(index, d)) is None:
        return None
    p, q = (format_pos(pos) for pos in pair)
    k = int(index[pair[0]])
    src, out = _cell("input", dest_pos(pair[0], d, k)), trace.result.cpu()
    value = format_value(_at(out, pair[0]))
    ran = T("torch ran it just now: `out{p}` = `out{q}` = {value}", p=p, q=q, value=value)
    right = _Option(T("It runs: `out{p}` and `out{q}` both read `{src}`", p=p, q=q, src=src),
                    T("gather only reads, so reading a cell twice is fine: {ran}", ran=ran),
                    "runs", (0,))  # fmt: skip
    wrong = [
        _Option(T("It refuses: along dim {d} the values in a row of index must be unique", d=d),
                T("{ran}; uniqueness is an old rule of scatter_'s docs, copied under gather",
                  ran=ran), "refuses", (1,), "002:1056"),
        _Option(T("It runs, but reads `{src}` once: out has fewer cells than index", src=src),
                T("out has index's shape {shape}: one cell per index cell, repeats included",
                  shape=str(tuple(out.shape))), "once", (2,)),
    ]  # fmt: skip
    return _question(
        "gather-repeats", T("`index{p}` and `index{q}` are both {k}: index repeats a value along "
                            "dim {d}. What does `torch.gather(input, {d}, index)` do?",
                            p=p, q=q, k=k, d=d),
        right, wrong, T("The run gave `out{p}` = `out{q}` = {value}, both `{src}`.",
                        p=p, q=q, value=value, src=src), FIGURE_PART)  # fmt: skip


# --- scatter ----------------------------------------------------------------------------------


def _writers(trace: Trace) -> dict[Pos, list[Pos]]:
    """Every written cell of out -> the index positions that write it, in the run's order."""
    written: dict[Pos, list[Pos]] = {}
    for s, q in trace.links:
        written.setdefault(q, []).append(s)
    return written


def _src_value(trace: Trace, s: Pos) -> float | int | bool:
    src = trace.operands["src"].cpu().to(trace.result.dtype)
    return _at(src, () if trace.scalar_src else s)


def _scatter_target(trace: Trace) -> Question:
    """``scatter-target``: which cell of out the write from one index position lands in."""
    d, shape, index = trace.dim or 0, tuple(trace.result.shape), trace.operands["index"].cpu()

    def options(s: Pos) -> tuple[_Option, list[_Option]]:
        k, at = int(index[s]), format_pos(s)
        target = dest_pos(s, d, k)
        right = _cell_option("out", target, T(
            "`index{s}` = {k} replaces coordinate {d} of {s}: the write lands in `{target}`",
            s=at, k=k, d=d, target=_cell("out", target)))  # fmt: skip
        wrong = []
        if _inside(s, shape) and s != target:
            wrong.append(_cell_option("out", s, T(
                "that is the write's own position; scatter replaces coordinate {d} by "
                "`index{s}` = {k}", d=d, s=at, k=k)))  # fmt: skip
        if (other := _other_dim(s, d, k, shape)) is not None:
            wrong.append(_cell_option("out", other[1], T(
                "that puts `index{s}` = {k} on dim {e}; this scatter writes along dim {d}",
                s=at, k=k, e=other[0], d=d)))  # fmt: skip
        if (near := _neighbour(s, d, k, shape)) is not None:
            wrong.append(_cell_option("out", near, T(
                "one cell off along dim {d}: `index{s}` = {k} names `{target}`",
                d=d, s=at, k=k, target=_cell("out", target))))  # fmt: skip
        wrong.append(_Option(T("none: `index{s}` = {k} is out of range, so torch raises",
                               s=at, k=k),
                             T("{k} lies in 0..{high}: torch wrote into `{target}`", k=k,
                               high=shape[d] - 1, target=_cell("out", target)),
                             "raises", (1,)))  # fmt: skip
        return right, wrong

    s = _best((pos, options(pos)[1]) for pos in positions(index.shape))
    right, wrong = options(s)
    k, at = int(index[s]), format_pos(s)
    prompt = (T("In this scatter along dim {d}, `index{s}` = {k}. Which cell of `out` does "
                "the write of `src{s}` land in?", d=d, s=at, k=k)
              if not trace.scalar_src else
              T("In this scatter of a scalar along dim {d}, `index{s}` = {k}. Which cell of "
                "`out` does the write from position {s} land in?", d=d, s=at, k=k))  # fmt: skip
    proof = T("The run linked position {s} of index to `{target}`.", s=at,
              target=_cell("out", dest_pos(s, d, k)))
    return _question("scatter-target", prompt, right, wrong, proof, FIGURE_PART)


def _determinate(trace: Trace, writers: list[Pos]) -> bool:
    """Whether the value written into a cell is fixed: one write, a reduce, or equal writes."""
    return (trace.reduce is not None or len(writers) == 1
            or len({_number(_src_value(trace, s)) for s in writers}) == 1)  # fmt: skip


def _variants(trace: Trace) -> list[tuple[torch.Tensor, str]]:
    """The same scatter run again with one thing changed, each with why it is not this call:
    no reduce, the other ``include_self``, a sum for a mean (results on the CPU)."""
    if trace.reduce is None:
        return []
    src = trace.operands["src"]
    src = _at(src.cpu(), ()) if trace.scalar_src else src
    dest, index, reduce = trace.operands["dest"], trace.operands["index"], trace.reduce
    d = trace.dim or 0

    def run(mode: str | None, include_self: bool) -> torch.Tensor:
        return trace_scatter(dest, d, index, src, mode, include_self=include_self).result.cpu()

    found = [(run(None, True), T(
        "plain `scatter_` (no reduce) keeps one write; reduce={reduce} combines every write "
        "into the cell", reduce=reduce))]  # fmt: skip
    if reduce in REDUCE_MODES:
        flipped = not trace.include_self
        found.append((run(reduce, flipped), T(
            "that is include_self={flipped}; this call has include_self={include_self}",
            flipped=flipped, include_self=trace.include_self)))  # fmt: skip
    if reduce == "mean":
        found.append((run("sum", trace.include_self), N_(
            "that is the sum; mean divides it by the number of values combined")))
    return found


def _scatter_value(trace: Trace) -> Question | None:
    """``scatter-value``: what a written cell of out holds (a cell whose value is fixed)."""
    written, d = _writers(trace), trace.dim or 0
    dest, src, index = (trace.operands[name].cpu() for name in ("dest", "src", "index"))
    out, variants = trace.result.cpu(), _variants(trace)

    def options(q: Pos) -> list[_Option]:
        writers, cell = written[q], _cell("out", q)
        first = writers[0]
        wrong = [_value_option(_at(result, q), why) for result, why in variants]
        wrong.append(_value_option(_at(dest, q), T(
            "that is `dest{q}` before the scatter; `index{s}` = {k} sends a write into `{cell}`",
            q=format_pos(q), s=format_pos(first), k=q[d], cell=cell)))  # fmt: skip
        if not trace.scalar_src and _inside(q, tuple(src.shape)) and q not in writers:
            wrong.append(_value_option(_at(src, q), T(
                "that is `src{q}`, at out's own position; the write into `{cell}` comes from "
                "`{writer}`", q=format_pos(q), cell=cell, writer=_cell("src", first))))
        near = [dest_pos(first, e, first[e] + step) for e in range(len(first)) for step in (1, -1)]
        near = [n for n in near if _inside(n, tuple(index.shape)) and n not in writers]
        if not trace.scalar_src and near:
            target = dest_pos(near[0], d, int(index[near[0]]))
            wrong.append(_value_option(_at(src, near[0]), T(
                "that is `src{near}`, beside `{writer}`; its write goes to `{target}`",
                near=format_pos(near[0]), writer=_cell("src", first),
                target=_cell("out", target))))  # fmt: skip
        return wrong

    fixed = [q for q in written if _determinate(trace, written[q])]
    if not fixed:
        return None
    if trace.reduce is not None and any(len(written[q]) > 1 for q in fixed):
        fixed = [q for q in fixed if len(written[q]) > 1]  # a reduce: ask where writes meet
    q = _best((pos, options(pos)) for pos in fixed)
    right = _at(out, q)
    formula = explain_element(trace, q).formula
    call = trace.call.replace("dest.clone().", "dest.")
    return _question(
        "scatter-value", T("After `{call}`, what is `out{q}`?", call=call, q=format_pos(q)),
        _value_option(right, T("the run wrote `{formula}`", formula=formula)),
        [*options(q), _off_by_one(right)],
        T("The run gave `{formula}`.", formula=formula), FIGURE_PART)  # fmt: skip


def _scatter_untouched(trace: Trace) -> Question:
    """``scatter-untouched``: how many cells of out no write reaches (collisions share cells)."""
    d, dest, index = trace.dim or 0, trace.operands["dest"], trace.operands["index"].cpu()
    marks = torch.zeros(tuple(dest.shape), dtype=torch.int64).scatter_(d, index, 1)
    cells, writes = int(dest.numel()), int(index.numel())
    written = int(marks.sum())
    right = cells - written
    counted = T("cells written: {written} of {cells}; not written: {right}",
                written=written, cells=cells, right=right)  # fmt: skip

    def count(n: int, why: str) -> _Option:
        return _Option(str(n), why, n, (n,))

    wrong = [
        count(cells - writes, T("that counts each of the {writes} writes as a new cell; "
                                "{dup} of them land on a cell written before",
                                writes=writes, dup=writes - written)),
        count(0, T("0 would mean every cell is written; {counted}", counted=counted)),
        *(count(right + step, T("off by {off}: {counted}", off=abs(step), counted=counted))
          for step in (1, -1, 2)),
    ]  # fmt: skip
    return _question(
        "scatter-untouched", T("`dest.numel()` = {cells}, `index.numel()` = {writes}. After this "
                               "scatter along dim {d}, how many cells of `out` does no write "
                               "reach (they keep dest's values)?",
                               cells=cells, writes=writes, d=d),
        count(right, counted), [o for o in wrong if 0 <= int(o.same) <= cells],
        T("`torch.zeros({shape}).scatter_({d}, index, 1)` marks the cells written: {written} "
          "of {cells} are 1, {right} stay 0.", shape=str(tuple(dest.shape)), d=d,
          written=written, cells=cells, right=right), FIGURE_PART)  # fmt: skip


def _docs_on_duplicates() -> str:
    """What torch's own ``scatter_`` docs say about duplicate indices (one sentence)."""
    found = _DOCS_DUPLICATES.search(torch.Tensor.scatter_.__doc__ or "")
    return " ".join(found.group(0).replace("``", "`").split()) if found else "?"


def _scatter_winner(trace: Trace) -> Question | None:
    """``scatter-winner``: plain scatter_, duplicate writes of different values: which stays."""
    if trace.reduce is not None or trace.scalar_src:
        return None
    written = _writers(trace)
    cells = [q for q, w in written.items() if len(w) > 1 and not _determinate(trace, w)]
    if not cells:
        return None
    q = cells[0]
    writers = written[q]
    values = [_src_value(trace, s) for s in writers]
    kept = _at(trace.result.cpu(), q)
    cell, kept_text = _cell("out", q), format_value(kept)
    first, last = (format_value(values[i]) for i in (0, -1))
    no_order = T("torch documents no order for duplicate writes: this run kept {kept}, and on "
                 "CUDA another write may win", kept=kept_text)  # fmt: skip
    right = _Option(T("Unspecified: this run kept `{kept}`, but torch does not say which "
                      "write wins", kept=kept_text), T(
        "this run kept {kept}; torch's docs of `scatter_`: '{docs}'", kept=kept_text,
        docs=_docs_on_duplicates()), "unspecified", (0,))  # fmt: skip
    wrong = [
        _Option(T("`{value}` from `{writer}`, always: the later write overwrites the earlier one",
                  value=last, writer=_cell("src", writers[-1])), no_order, "last", (1,),
                "002:940"),
        _Option(T("`{value}` from `{writer}`, always: the first write stays",
                  value=first, writer=_cell("src", writers[0])), no_order, "first", (2,)),
    ]  # fmt: skip
    total = sum(values)
    if _number(total) != _number(kept):
        wrong.append(_Option(T("`{value}`: duplicate writes add up", value=format_value(total)),
                             T("adding is `scatter_add_` (or reduce='sum'); plain `scatter_` "
                               "keeps one write: {kept}", kept=kept_text), "sum", (3,)))
    listed = ", ".join(f"`{_cell('src', s)}` = {format_value(v)}"
                       for s, v in zip(writers, values, strict=True))  # fmt: skip
    return _question(
        "scatter-winner", T("With plain `scatter_` (no reduce), {listed} all write into `{cell}`. "
                            "Which value does `{cell}` keep?", listed=listed, cell=cell),
        right, wrong, T("The run gave `{formula}`.", formula=explain_element(trace, q).formula),
        FIGURE_PART)  # fmt: skip


def _scatter_questions(trace: Trace) -> list[Question]:
    found = [_scatter_value(trace), _scatter_target(trace), _scatter_untouched(trace),
             _scatter_winner(trace)]  # fmt: skip
    return [question for question in found if question is not None]


# --- x[...] -----------------------------------------------------------------------------------


def _index_view(trace: Trace) -> Question:
    """``index-view``: whether ``x[...]`` shares x's storage, as the run measured it."""
    storage = trace.storage
    if storage is None or trace.is_view is None:
        raise ValueError(f"index-view needs an x[...] trace, got a {trace.op} trace")
    view, index = trace.is_view, trace.index_text
    measured = T("the run measured it: same data_ptr is {same}", same=storage.same_storage)
    choices = [
        _Option(N_("A view: it shares `x`'s storage, so writing into it changes `x`"),
                measured if view else T(
                    "{measured}: an index tensor or a mask makes new storage", measured=measured),
                "view", (0,)),
        _Option(N_("A copy: it has its own storage, so writing into it leaves `x` unchanged"),
                measured if not view else T(
                    "{measured}: ints, slices, `None` and `...` only make views, and a write "
                    "through `x[{index}][...]` changes `x`", measured=measured, index=index),
                "copy", (1,), None if not view else "002:537"),
        _Option(N_("A view while you read it, a copy once you write into it"),
                T("torch never copies on write: {measured} before any write", measured=measured),
                "cow", (2,)),
    ]  # fmt: skip
    right = choices[0] if view else choices[1]
    return _question(
        "index-view", T("Is `x[{index}]` a view of `x` or a copy?", index=index), right,
        [c for c in choices if c is not right],
        T("`out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()` is {same} "
          "(storage_offset {offset}, stride {stride}).", same=storage.same_storage,
          offset=storage.result_offset, stride=str(storage.result_stride)),
        INDEX_PART if trace.result.numel() else None)  # fmt: skip


def questions(case: Trace | None, index_case: Trace | None = None,
              case_error: Exception | None = None) -> tuple[Question, ...]:  # fmt: skip
    """The page's questions about its views: the gather/scatter ``case`` trace (``None`` when
    the case did not run, ``case_error`` saying why) and the ``x[...]`` trace ``index_case``
    (``None`` when that expression did not run).

    Every question's answer comes from those runs (tensors of any shape the page allows, on
    any device). At least three questions whenever the case ran: ``ValueError`` naming the
    case's error otherwise, or naming a trace that is not a gather or scatter.
    """
    if case is None:
        reason = case_error.args[0] if case_error is not None and case_error.args else None
        raise ValueError(T("the gather & scatter_ case did not run ({error}): fix it first",
                           error=reason if isinstance(reason, str) else str(case_error)))
    if case.op == "gather":
        found = _gather_questions(case)
    elif case.op == "scatter":
        found = _scatter_questions(case)
    else:
        raise ValueError(f"the case is a gather or scatter trace, got a {case.op!r} trace")
    if index_case is not None:
        found.append(_index_view(index_case))
    return check_questions(found)
