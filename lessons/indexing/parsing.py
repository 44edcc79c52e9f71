"""The page's tensor text, both ways: nested lists and ``x[...]`` expressions read into tensors
and index items, tensors written back as text and as ``torch.tensor(...)`` code.

Every module of the lesson raises :class:`IndexingError` (a ValueError with a message written
for a person) and names positions with :data:`Pos`; both live here, at the bottom of the
lesson's imports. Pure: no Streamlit.

- :func:`parse_tensor` / :func:`parse_src`: ``"[[1, 2], [3, 4]]"`` -> a tensor within
  :data:`PAGE_LIMITS` (``src`` may be a bare number);
- :func:`parse_index_expression`: what goes between the brackets of ``x[...]`` (no ``eval``);
- :func:`cells_to_tables` / :func:`apply_grid_edits`: the grid editors' view of the text;
- :func:`format_value`, :func:`tensor_literal`, :func:`tensor_code`: tensors back to text;
- :data:`LINK_CHECKS`: which text a link may put in each field.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import torch

from core.text import N_, T

Pos = tuple[int, ...]
Scalar = int | float
IndexItem = Any  # int | slice | None | Ellipsis | bool | torch.Tensor (int64 or bool)

#: Largest tensors the page accepts, by number of dims (3-D tensors are shown as slices).
#: 2-D allows 10 columns so that the notes' one-hot example (4 labels, class_num 10, 002:997) fits.
PAGE_LIMITS: dict[int, tuple[int, ...]] = {1: (8,), 2: (6, 10), 3: (3, 4, 4)}
#: Longest integer list / mask allowed inside an ``x[...]`` expression on the page.
MAX_INDEX_LIST = 64
#: Longest tensor text a field takes (a 6x10 of 8-digit floats fits) and a link may carry.
MAX_TENSOR_CHARS = 1000
#: Longest ``x[...]`` expression (:func:`parse_index_expression` refuses longer ones).
MAX_EXPR_CHARS = 400


class IndexingError(ValueError):
    """A bad input, with a message written for a person.

    ``torch_error`` holds torch's own error text when torch itself refused the call
    (``None`` when the input was stopped by our checks before calling torch); ``hint`` then
    holds the advice after it, a :class:`core.text.T` that is also a value of the message, so
    a page translates the message around torch's own words, which stay as torch wrote them.
    """

    def __init__(
        self, message: str, torch_error: str | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.torch_error = torch_error
        self.hint = hint


# --------------------------------------------------------------------------------------------
# Small formatting helpers
# --------------------------------------------------------------------------------------------


def format_pos(pos: Sequence[int]) -> str:
    """``(1, 0)`` -> ``"[1][0]"``; the empty position of a 0-d tensor -> ``""``."""
    return "".join(f"[{int(p)}]" for p in pos)


def format_value(value: Any) -> str:
    """One tensor element as the page prints it: ints as ints, floats with 4 significant digits."""
    if isinstance(value, torch.Tensor):
        value = value.item()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)
    text = f"{value:.4g}"
    if "e" not in text and "." not in text:
        text += ".0" if abs(value) < 1e4 else ""
    return text


def _literal_number(value: Any, dtype: torch.dtype) -> str:
    """Exact, round-tripping literal for one element of a tensor of ``dtype``."""
    if dtype == torch.bool:
        return str(bool(value))
    if dtype.is_floating_point:
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            return f"float('{v}')"
        if dtype == torch.float64:
            return repr(v)
        return np.format_float_positional(np.float32(v), unique=True, trim="0")
    return str(int(value))


def tensor_literal(t: torch.Tensor) -> str:
    """A nested list literal of ``t`` (no ``torch.tensor`` around it), exact for its dtype."""
    if t.dim() == 0:
        return _literal_number(t.item(), t.dtype)

    def rec(sub: torch.Tensor) -> str:
        if sub.dim() == 1:
            return "[" + ", ".join(_literal_number(v, t.dtype) for v in sub.tolist()) + "]"
        return "[" + ", ".join(rec(s) for s in sub) + "]"

    return rec(t)


def tensor_code(t: torch.Tensor) -> str:
    """``torch.tensor(...)`` source that rebuilds ``t`` exactly (values, shape and dtype)."""
    t = t.detach().cpu()
    lit = tensor_literal(t)
    if t.dtype in (torch.int64, torch.bool):
        if t.numel() == 0:
            return f"torch.tensor({lit}, dtype={t.dtype}).reshape({tuple(t.shape)})"
        return f"torch.tensor({lit})"
    text = f"torch.tensor({lit}, dtype={t.dtype})"
    if t.numel() == 0:
        text += f".reshape({tuple(t.shape)})"
    return text


# --------------------------------------------------------------------------------------------
# Parsing the page's text / grid input
# --------------------------------------------------------------------------------------------

_INT64_MIN, _INT64_MAX = torch.iinfo(torch.int64).min, torch.iinfo(torch.int64).max
_FLOAT32_MAX = float(torch.finfo(torch.float32).max)
_TOKEN = re.compile(r"\s*(\[|\]|,|[^\[\],]+)")


def parse_cells(text: str, name: str) -> Any:
    """Split a nested-list literal into nested lists of *cell strings* (no conversion yet).

    ``"[[1, 2], [3, x]]"`` -> ``[["1", "2"], ["3", "x"]]``; a bare ``"6"`` -> ``"6"``.

    Raises:
        IndexingError: unbalanced brackets or stray commas, with the place named.
    """
    text = (text or "").strip()
    if not text:
        raise IndexingError(
            T(
                "{name} is empty: type a value or a nested list like [[1, 2], [3, 4]]",
                name=name,
            )
        )
    if not text.startswith("["):
        if "]" in text or "," in text:
            raise IndexingError(
                T(
                    "{name}: {text!r} must start with '[' (or be a single number)",
                    name=name,
                    text=text,
                )
            )
        return text
    tokens = [m.group(1).strip() for m in _TOKEN.finditer(text)]
    if "".join(tokens).replace(" ", "") != re.sub(r"\s+", "", text):
        raise IndexingError(
            T(
                "{name}: could not read {text!r}",
                name=name,
                text=text,
            )
        )
    stack: list[list[Any]] = []
    root: list[Any] | None = None
    expect_item = True
    for tok in tokens:
        if tok == "[":
            if root is not None and not stack:
                raise IndexingError(
                    T(
                        "{name}: extra text after the closing ']' in {text!r}",
                        name=name,
                        text=text,
                    )
                )
            new: list[Any] = []
            if stack:
                if not expect_item:
                    raise IndexingError(
                        T(
                            "{name}: missing ',' before '[' in {text!r}",
                            name=name,
                            text=text,
                        )
                    )
                stack[-1].append(new)
            else:
                root = new
            stack.append(new)
            expect_item = True
        elif tok == "]":
            if not stack:
                raise IndexingError(
                    T(
                        "{name}: unbalanced ']' in {text!r}",
                        name=name,
                        text=text,
                    )
                )
            stack.pop()
            expect_item = False
        elif tok == ",":
            if expect_item or not stack:
                raise IndexingError(
                    T(
                        "{name}: stray ',' in {text!r}",
                        name=name,
                        text=text,
                    )
                )
            expect_item = True
        else:
            if not stack:
                raise IndexingError(
                    T(
                        "{name}: extra text {tok!r} outside the brackets",
                        name=name,
                        tok=tok,
                    )
                )
            if not expect_item:
                raise IndexingError(
                    T(
                        "{name}: missing ',' before {tok!r}",
                        name=name,
                        tok=tok,
                    )
                )
            stack[-1].append(tok)
            expect_item = False
    if stack:
        raise IndexingError(
            T(
                "{name}: missing ']' at the end of {text!r}",
                name=name,
                text=text,
            )
        )
    return root


def _cell_number(cell: str, name: str, pos: Pos) -> int | float | bool:
    s = cell.strip()
    if s in ("True", "False", "true", "false"):
        return s.lower() == "true"
    try:
        i = int(s)
    except ValueError:
        pass
    else:
        if not _INT64_MIN <= i <= _INT64_MAX:
            raise IndexingError(
                T(
                    "{name}{pos} = {s}: whole numbers must fit in int64 ({_INT64_MIN} to "
                    "{_INT64_MAX}); write a large value as a float such as 1e20",
                    name=name,
                    pos=format_pos(pos),
                    s=s,
                    _INT64_MIN=_INT64_MIN,
                    _INT64_MAX=_INT64_MAX,
                )
            )
        return i
    try:
        v = float(s)
    except ValueError:
        raise IndexingError(
            T(
                "{name}{pos} = {s!r} is not a number: every cell must hold a number",
                name=name,
                pos=format_pos(pos),
                s=s,
            )
        ) from None
    if math.isnan(v) or math.isinf(v):
        raise IndexingError(
            T(
                "{name}{pos} = {s!r}: use finite numbers only",
                name=name,
                pos=format_pos(pos),
                s=s,
            )
        )
    if abs(v) > _FLOAT32_MAX:
        raise IndexingError(
            T(
                "{name}{pos} = {s!r} is too large for float32 (the page's float dtype, largest "
                "{_FLOAT32_MAX:.4g}): use a smaller number",
                name=name,
                pos=format_pos(pos),
                s=s,
                _FLOAT32_MAX=_FLOAT32_MAX,
            )
        )
    return v


def cells_shape(cells: Any, name: str) -> tuple[int, ...]:
    """Shape of nested cell lists; raises IndexingError when ragged."""
    if not isinstance(cells, list):
        return ()
    if len(cells) == 0:
        return (0,)
    shapes = {cells_shape(c, name) for c in cells}
    if len(shapes) != 1:
        raise IndexingError(
            T(
                "{name} is ragged: its rows have different lengths or depths; every row along a "
                "dim must have the same length",
                name=name,
            )
        )
    return (len(cells), *shapes.pop())


def check_page_limits(shape: Sequence[int], name: str) -> None:
    """Raise if ``shape`` is empty or larger than the page shows (see :data:`PAGE_LIMITS`)."""
    shape = tuple(int(s) for s in shape)
    if len(shape) == 0:
        raise IndexingError(
            T(
                "{name} must be a list (1 to 3 dims), got a single number",
                name=name,
            )
        )
    if len(shape) not in PAGE_LIMITS:
        raise IndexingError(
            T(
                "{name} has {ndim} dims; the page shows 1 to 3 dims",
                name=name,
                ndim=len(shape),
            )
        )
    if 0 in shape:
        raise IndexingError(
            T(
                "{name} is empty (shape {shape}): give every dim at least one value",
                name=name,
                shape=shape,
            )
        )
    limit = PAGE_LIMITS[len(shape)]
    if any(s > m for s, m in zip(shape, limit, strict=True)):
        lim = "x".join(map(str, limit))
        raise IndexingError(
            T(
                "{name} has shape {shape}, over the page limit of {lim} for {ndim}-D tensors: "
                "use fewer rows or columns",
                name=name,
                shape="x".join(map(str, shape)),
                lim=lim,
                ndim=len(shape),
            )
        )


def tensor_from_cells(
    cells: Any, name: str, *, kind: Literal["values", "index", "mask"] = "values"
) -> torch.Tensor:
    """Convert nested cell strings to a tensor and check the page limits.

    Args:
        cells: nested lists of strings, as :func:`parse_cells` returns.
        name: operand name used in messages (``"index"``, ``"input"`` ...).
        kind: ``"values"`` -> int64 when every cell is an integer, else float32;
            ``"index"`` -> int64 (float cells are refused); ``"mask"`` -> bool.

    Returns:
        A tensor with 1 to 3 dims within :data:`PAGE_LIMITS`.
    """
    shape = cells_shape(cells, name)
    check_page_limits(shape, name)
    flat: list[int | float | bool] = []
    for pos in itertools.product(*(range(s) for s in shape)):
        c: Any = cells
        for p in pos:
            c = c[p]
        flat.append(_cell_number(c, name, pos))
    if kind == "index":
        for pos, v in zip(itertools.product(*(range(s) for s in shape)), flat, strict=True):
            if isinstance(v, (float, bool)):
                raise IndexingError(
                    T(
                        "{name}{pos} = {v!r}: an index must hold whole numbers (torch needs an "
                        "int64 index tensor); write 2, not 2.0 or True",
                        name=name,
                        pos=format_pos(pos),
                        v=v,
                    )
                )
        return torch.tensor(flat, dtype=torch.int64).reshape(shape)
    if kind == "mask":
        return torch.tensor([bool(v) for v in flat], dtype=torch.bool).reshape(shape)
    if any(isinstance(v, float) for v in flat):
        return torch.tensor([float(v) for v in flat], dtype=torch.float32).reshape(shape)
    return torch.tensor([int(v) for v in flat], dtype=torch.int64).reshape(shape)


def parse_tensor(
    text: str, name: str, *, kind: Literal["values", "index", "mask"] = "values"
) -> torch.Tensor:
    """Parse a nested list like ``"[[1, 2], [3, 4]]"`` into a tensor (:func:`tensor_from_cells`).

    >>> parse_tensor("[[0, 0], [2, 0]]", "index", kind="index").shape
    torch.Size([2, 2])
    """
    cells = parse_cells(text, name)
    if not isinstance(cells, list):
        raise IndexingError(
            T(
                "{name} must be a list such as [[0, 1], [2, 0]], got the single value {cells!r}",
                name=name,
                cells=cells,
            )
        )
    return tensor_from_cells(cells, name, kind=kind)


def parse_src(text: str) -> torch.Tensor | int | float:
    """``src`` of a scatter: a bare number (scalar, e.g. ``6`` or ``1.23``) or a nested list."""
    cells = parse_cells(text, "src")
    if isinstance(cells, list):
        return tensor_from_cells(cells, "src")
    v = _cell_number(cells, "src", ())
    return int(v) if isinstance(v, bool) else v


def format_tensor(t: torch.Tensor) -> str:
    """The page's editable text for a tensor: a nested list literal."""
    return tensor_literal(t)


_GRID_JUNK = re.compile(r"[\[\],]")


def cells_to_tables(cells: Any) -> list[list[list[str]]] | None:
    """2-D string tables for the page's grid editors: 1-D -> one row, 2-D -> itself,
    3-D -> one table per slice along dim 0. ``None`` when ``cells`` is no 1-3-D nested list."""
    if not isinstance(cells, list) or not cells:
        return None
    try:
        shape = cells_shape(cells, "tensor")
    except IndexingError:
        return None
    if 0 in shape:
        return None
    if len(shape) == 1:
        return [[[str(c) for c in cells]]]
    if len(shape) == 2:
        return [[[str(c) for c in row] for row in cells]]
    if len(shape) == 3:
        return [[[str(c) for c in row] for row in sl] for sl in cells]
    return None


def grid_tables(text: str, name: str, max_cells: int = 96) -> list[list[list[str]]] | None:
    """The grid editors' tables for a tensor's text (:func:`cells_to_tables`), or ``None`` when
    the text does not parse or the grids would hold more than ``max_cells`` cells."""
    try:
        tables = cells_to_tables(parse_cells(text, name))
    except IndexingError:
        return None
    if tables is None or sum(len(t) * len(t[0]) for t in tables) > max_cells:
        return None
    return tables


def apply_grid_edits(
    text: str, name: str, table: int, edited_rows: dict[Any, dict[Any, Any]]
) -> str:
    """Apply a ``st.data_editor`` edit (``edited_rows``: row -> {column: value}) made on grid
    ``table`` of the tensor whose text is ``text``; returns the new text.

    Brackets and commas typed into a cell are dropped and an emptied cell becomes ``"?"``, so the
    text stays a well-formed nested list and the bad cell is reported by :func:`parse_tensor`.
    """
    cells = parse_cells(text, name)
    tables = cells_to_tables(cells)
    if tables is None or not 0 <= table < len(tables):
        return text
    depth = len(cells_shape(cells, name))
    grid = tables[table]
    for row, changes in edited_rows.items():
        for col, value in changes.items():
            r, c = int(row), int(col)
            if 0 <= r < len(grid) and 0 <= c < len(grid[r]):
                cleaned = _GRID_JUNK.sub(" ", "" if value is None else str(value)).strip()
                grid[r][c] = cleaned or "?"
    new: Any = tables[0][0] if depth == 1 else (tables[0] if depth == 2 else tables)
    return cells_to_text(new)


def cells_to_text(cells: Any) -> str:
    """Inverse of :func:`parse_cells`: nested lists of cell strings -> nested list text."""
    if not isinstance(cells, list):
        return str(cells).strip()
    return "[" + ", ".join(cells_to_text(c) for c in cells) + "]"


# --------------------------------------------------------------------------------------------
# x[...] expressions
# --------------------------------------------------------------------------------------------


def parse_index_expression(text: str) -> tuple[IndexItem, ...]:
    """Parse what goes between the brackets of ``x[...]`` without ``eval``.

    Accepts ints, slices (``1:``, ``::2``, ``-2:``), ``None``, ``...``, ``True``/``False``,
    integer lists (-> int64 tensors) and boolean lists (-> masks), e.g. ``":, [0, 2]"``.

    Raises:
        IndexingError: float indices, names, calls or anything else.
    """
    text = (text or "").strip()
    if not text:
        raise IndexingError(N_("the index expression is empty: type e.g. ':, [0, 2]' or '1:, ::2'"))
    if len(text) > MAX_EXPR_CHARS:
        raise IndexingError(N_("the index expression is too long for this page (400 characters)"))
    try:
        node = ast.parse(f"_[{text}]", mode="eval").body
    except SyntaxError:
        raise IndexingError(
            T(
                "could not read the index expression {text!r}",
                text=text,
            )
        ) from None
    assert isinstance(node, ast.Subscript)
    sl = node.slice
    elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return tuple(_index_node(e, text) for e in elts)


def _int_node(n: ast.AST | None, text: str) -> int | None:
    if n is None:
        return None
    if isinstance(n, ast.Constant) and n.value is None:
        return None
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        v = _int_node(n.operand, text)
        return None if v is None else -v
    if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
        return n.value
    if isinstance(n, ast.Constant) and isinstance(n.value, float):
        raise IndexingError(
            T(
                "{value} is a float: indices must be whole numbers",
                value=n.value,
            )
        )
    piece = ast.get_source_segment(f"_[{text}]", n) if n is not None else None
    raise IndexingError(
        T(
            "in {text!r}: {piece!r} is not a whole number; slices and index lists take plain "
            "numbers such as 2 or -1 (lists may also hold True/False), no arithmetic",
            text=text,
            piece=piece or "this part",
        )
    )


def _list_values(n: ast.AST, text: str) -> Any:
    if isinstance(n, (ast.List, ast.Tuple)):
        return [_list_values(e, text) for e in n.elts]
    if isinstance(n, ast.Constant) and isinstance(n.value, bool):
        return n.value
    if isinstance(n, ast.Constant) and isinstance(n.value, float):
        raise IndexingError(
            T(
                "{value} is a float: an index list must hold whole numbers (or True/False)",
                value=n.value,
            )
        )
    v = _int_node(n, text)
    if v is None:
        raise IndexingError(
            T(
                "None is not allowed inside an index list in {text!r}",
                text=text,
            )
        )
    return v


def _index_node(n: ast.AST, text: str) -> IndexItem:
    if isinstance(n, ast.Slice):
        return slice(_int_node(n.lower, text), _int_node(n.upper, text), _int_node(n.step, text))
    if isinstance(n, ast.Constant):
        if n.value is None or n.value is Ellipsis:
            return n.value
        if isinstance(n.value, bool):
            return n.value
        if isinstance(n.value, int):
            return n.value
        if isinstance(n.value, float):
            raise IndexingError(
                T(
                    "{value} is a float: indices must be whole numbers",
                    value=n.value,
                )
            )
    if isinstance(n, ast.UnaryOp):
        return _int_node(n, text)
    if isinstance(n, (ast.List, ast.Tuple)):
        values = _list_values(n, text)
        flat = list(_flatten(values))
        if len(flat) > MAX_INDEX_LIST:
            raise IndexingError(
                T(
                    "index lists are limited to {MAX_INDEX_LIST} values on this page",
                    MAX_INDEX_LIST=MAX_INDEX_LIST,
                )
            )
        kinds = {type(v) for v in flat}
        too_big = [v for v in flat if type(v) is int and not _INT64_MIN <= v <= _INT64_MAX]
        if too_big:
            raise IndexingError(
                T(
                    "index value {value} does not fit in int64",
                    value=too_big[0],
                )
            )
        if kinds == {bool}:
            return _as_tensor(values, torch.bool)
        if bool in kinds:
            raise IndexingError(N_("an index list mixes True/False with numbers: use one kind"))
        return _as_tensor(values, torch.int64)
    raise IndexingError(
        T(
            "{piece!r} is not supported here: use numbers, slices like 1:3, None, ..., and lists "
            "of integers or of True/False",
            piece=ast.get_source_segment(f"_[{text}]", n) or text,
        )
    )


def _flatten(v: Any) -> Any:
    if isinstance(v, list):
        for e in v:
            yield from _flatten(e)
    else:
        yield v


def _as_tensor(values: Any, dtype: torch.dtype) -> torch.Tensor:
    try:
        return torch.tensor(values, dtype=dtype)
    except (ValueError, TypeError) as err:
        raise IndexingError(
            T(
                "an index list is ragged ({err}); make all rows the same length",
                err=err,
            )
        ) from None


def size_limits() -> list[T]:
    """The page limits as the editors' hint says them: ``"1-D up to 8"``, ``"2-D up to 6x10"``..."""
    return [
        T("{n}-D up to {shape}", n=n, shape="x".join(map(str, shape)))
        for n, shape in sorted(PAGE_LIMITS.items())
    ]


# --------------------------------------------------------------------------------------------
# What a link may put in a field
# --------------------------------------------------------------------------------------------


def link_check(parse: Callable[[str], object], limit: int) -> Callable[[str], bool]:
    """Whether a link's text for a field is usable: at most ``limit`` characters and read by
    ``parse`` (one of the parsers above; they raise ValueError). Text that parses but fails in
    torch (an out-of-range index) is kept: showing that error is a lesson."""

    def is_usable(text: str) -> bool:
        if len(text) > limit:
            return False
        try:
            parse(text)
        except ValueError:
            return False
        return True

    return is_usable


#: What a link's text must be for each text field (anything else opens the field at its default).
LINK_CHECKS: dict[str, Callable[[str], bool]] = {
    "first": link_check(lambda t: parse_tensor(t, "input"), MAX_TENSOR_CHARS),
    # values, not kind="index": a float index parses and the page explains why torch needs int64
    "index": link_check(lambda t: parse_tensor(t, "index"), MAX_TENSOR_CHARS),
    "src": link_check(parse_src, MAX_TENSOR_CHARS),
    "x": link_check(lambda t: parse_tensor(t, "x"), MAX_TENSOR_CHARS),
    "expr": link_check(parse_index_expression, MAX_EXPR_CHARS),
}
