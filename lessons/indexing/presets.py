"""The notes' scatter/gather examples as the page's presets, and their checks against the notes.

Each :class:`Preset` is one example from the notes (or a labelled variation of one): the
texts, dim and reduce the page loads, where the notes have it, the output they print and the
notes' own code, runnable as-is. :func:`run_preset` evaluates one exactly as the page does;
:func:`compare_with_notes` / :func:`notes_verdict` check a live result against the printed
one at its printed precision; :func:`preset_is_loaded` tells whether the page still shows a
preset unchanged (only then may it claim the notes' example). Pure: no Streamlit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch

from core.notes import LiveRun, NotesRef, cite, run_live
from core.text import N_, T
from lessons.indexing.cases import GROUP_MEANS_SNIPPET, GroupMeans, group_means, run_case
from lessons.indexing.parsing import IndexingError, Pos, format_pos, tensor_literal
from lessons.indexing.tracing import REDUCE_MODES, SCATTER_ADD, Trace, positions

#: The notes' ``x`` (002:919-920, a ``torch.rand(2, 5)``), as printed with 4 decimals.
_X_NOTES = "[[0.3992, 0.2908, 0.9044, 0.4850, 0.6004], [0.5735, 0.9006, 0.6797, 0.4152, 0.1732]]"
_X_NOTES_CODE = """# the notes' x = torch.rand(2, 5), as printed at 002:919-920
x = torch.tensor([[0.3992, 0.2908, 0.9044, 0.4850, 0.6004],
                  [0.5735, 0.9006, 0.6797, 0.4152, 0.1732]])
"""
_X_CHANGE = N_(
    "x = torch.rand(2, 5) is replaced by the values the notes print for it (002:919-920)."
)


def _zeros_text(rows: int, cols: int, *, floating: bool = True) -> str:
    cell = "0.0" if floating else "0"
    return "[" + ", ".join(["[" + ", ".join([cell] * cols) + "]"] * rows) + "]"


@dataclass(frozen=True)
class Preset:
    """An example from the notes (or a labelled variation of one), ready for the page.

    Attributes:
        key, title: identifier and the label of the page's preset menu.
        op, first, index, src, dim, reduce, include_self: what the page loads (``first`` is
            ``input`` for gather, ``dest`` for scatter; texts are nested lists).
        ref: where the example is in the notes, as ``FILE:LINE`` text (``"002:921"``).
        verbatim: ``True`` when inputs, dim and dtype are the notes' own: only then may the page
            say "from the notes". ``False``: a variation, labelled so on the page.
        expected: the output as a nested list, or ``None`` when the call raises.
        printed: whether the notes print ``expected`` (else it is what the notes' code gives,
            worked out from its inputs, because the notes print nothing there).
        decimals: the printed precision of ``expected`` (4 for ``0.3992``); ``None``: exact.
        expected_dtype: the dtype of the notes' result (``torch.zeros`` -> ``torch.float32``).
        notes_error: the error line the notes print for this call (``None`` if it runs).
        notes_code: the notes' code, runnable as-is; it leaves its result in ``notes_result``.
        notes_code_changes: what had to change in the notes' code for it to run ("" if nothing).
        note: a sentence the page shows under the preset.
        menu: the menu's label, written out (see :attr:`menu_label`).
    """

    key: str
    title: str
    op: Literal["gather", "scatter"]
    first: str
    index: str
    src: str
    dim: int
    ref: str
    verbatim: bool
    expected: Any = None
    printed: bool = True
    decimals: int | None = None
    expected_dtype: torch.dtype = torch.float32
    notes_error: str | None = None
    notes_code: str = ""
    notes_result: str = "out"
    notes_code_changes: str = ""
    reduce: str | None = None
    include_self: bool = True
    note: str = ""
    menu: str = ""

    def __post_init__(self) -> None:
        NotesRef.parse(self.ref)  # raises ValueError for a malformed reference
        source = cite(self.ref) if self.verbatim else f"variation of {cite(self.ref)}"
        if self.menu != f"{self.title} · {source}":  # a literal, so that the catalog holds it
            raise ValueError(f"menu of {self.key!r} must be {self.title} · {source}")

    @property
    def notes_ref(self) -> NotesRef:
        """:attr:`ref` as a :class:`core.notes.NotesRef`."""
        return NotesRef.parse(self.ref)

    def page_values(self) -> dict[str, Any]:
        """What picking the preset writes into the page's controls, by control name (the
        reduce menu calls plain ``scatter_`` ``"none"``)."""
        return {
            "op": self.op,
            "first": self.first,
            "index": self.index,
            "src": self.src,
            "dim": self.dim,
            "reduce": self.reduce or "none",
            "include_self": self.include_self,
        }

    @property
    def menu_label(self) -> str:
        """The preset menu's label, which is also the value a link carries for it
        (``?indexing.preset=...``): the title and where it comes from in the notes. One
        literal (:attr:`menu`, checked against both), so that it is one catalog message: a
        link's label is translated by exact lookup."""
        return self.menu


PRESETS: tuple[Preset, ...] = (
    Preset(
        "scatter_y1",
        "y1: zeros(3, 5).scatter_(0, index, x)",
        "scatter",
        _zeros_text(3, 5),
        "[[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]",
        _X_NOTES,
        0,
        ref="002:921",
        verbatim=True,
        expected=[
            [0.3992, 0.9006, 0.6797, 0.4850, 0.6004],
            [0.0000, 0.2908, 0.0000, 0.4152, 0.0000],
            [0.5735, 0.0000, 0.9044, 0.0000, 0.1732],
        ],
        decimals=4,
        notes_code="import torch\n\n"
        + _X_NOTES_CODE
        + "y1 = torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), x)"
        + "\nprint(y1)\n",
        notes_result="y1",
        notes_code_changes=_X_CHANGE,
        note=N_("Every x[i][j] goes to row index[i][j] of column j; no two land on the same cell."),
        menu=N_("y1: zeros(3, 5).scatter_(0, index, x) · notes 002:921"),
    ),
    Preset(
        "scatter_y2",
        "y2: the same x, index [[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]] (column 0 collides)",
        "scatter",
        _zeros_text(3, 5),
        "[[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]]",
        _X_NOTES,
        0,
        ref="002:926",
        verbatim=True,
        expected=[
            [0.5735, 0.9006, 0.6797, 0.4850, 0.6004],
            [0.0000, 0.2908, 0.0000, 0.4152, 0.0000],
            [0.0000, 0.0000, 0.9044, 0.0000, 0.1732],
        ],
        decimals=4,
        notes_code="import torch\n\n"
        + _X_NOTES_CODE
        + "y2 = torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]]), x)"
        + "\nprint(y2)\n",
        notes_result="y2",
        notes_code_changes=_X_CHANGE,
        note=N_(
            "Only column 0 collides (notes 002:940): index[0][0] and index[1][0] are both 0, "
            "so x[0][0] and x[1][0] both write y2[0][0], and the notes printed x[1][0] there. "
            "Which of two duplicate writes wins is unspecified (see the collision note below)."
        ),
        menu=N_(
            "y2: the same x, index [[0, 1, 2, 0, 0], [0, 0, 0, 1, 2]] (column 0 collides)"
            " · notes 002:926"
        ),
    ),
    Preset(
        "scatter_scalar_6",
        "zeros(3, 5).scatter_(0, index, 6): a scalar value",
        "scatter",
        _zeros_text(3, 5),
        "[[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]",
        "6",
        0,
        ref="002:946",
        verbatim=True,
        expected=[[6.0, 6.0, 6.0, 6.0, 6.0], [0.0, 6.0, 0.0, 6.0, 0.0], [6.0, 0.0, 6.0, 0.0, 6.0]],
        notes_code="import torch\n\n"
        "y1 = torch.zeros(3, 5).scatter_(0, torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]]), 6)"
        "\nprint(y1)\n",
        notes_result="y1",
        note=N_(
            "A scalar value is written at every place index names; dest is float (torch.zeros), "
            "so the 6 is stored as 6.0."
        ),
        menu=N_("zeros(3, 5).scatter_(0, index, 6): a scalar value · notes 002:946"),
    ),
    Preset(
        "scatter_scalar_123",
        "zeros(2, 4).scatter_(1, [[2], [3]], 1.23)",
        "scatter",
        _zeros_text(2, 4),
        "[[2], [3]]",
        "1.23",
        1,
        ref="002:964",
        verbatim=True,
        expected=[[0.0, 0.0, 1.23, 0.0], [0.0, 0.0, 0.0, 1.23]],
        decimals=4,
        notes_code="import torch\n\n"
        "z = torch.zeros(2, 4).scatter_(1, torch.tensor([[2], [3]]), 1.23)\nprint(z)\n",
        notes_result="z",
        note=N_("Row i gets 1.23 in column index[i][0]."),
        menu=N_("zeros(2, 4).scatter_(1, [[2], [3]], 1.23) · notes 002:964"),
    ),
    Preset(
        "one_hot_single",
        "one-hot of the single label 3: zeros(1, 10).scatter_(1, [[3]], 1)",
        "scatter",
        _zeros_text(1, 10),
        "[[3]]",
        "1",
        1,
        ref="002:980-992",
        verbatim=True,
        expected=[[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
        notes_code="""import numpy as np
import torch

index_a = np.array(3).astype('int64')
print("index_a的shape:", index_a.shape, "\\n", index_a)  # ()   3
index_a = index_a[np.newaxis, np.newaxis]
print("index_a的shape:", index_a.shape, "\\n", index_a)  # (1,1)   [[3]]
index_a = torch.from_numpy(index_a)  # torch.Size([1, 1])
one_hot = torch.zeros(1, 10).scatter_(1, index_a, 1)  # self[0][index[0][0]] = 1
print("one_hot的shape:", one_hot.shape, "\\n", one_hot)
""",
        notes_result="one_hot",
        note=N_("index has shape (1, 1), so one 1 goes to column index[0][0] = 3."),
        menu=N_(
            "one-hot of the single label 3: zeros(1, 10).scatter_(1, [[3]], 1) · notes 002:980-992"
        ),
    ),
    Preset(
        "one_hot",
        "one-hot of labels [[6], [0], [3], [2]], class_num 10",
        "scatter",
        _zeros_text(4, 10),
        "[[6], [0], [3], [2]]",
        "1",
        1,
        ref="002:997-1012",
        verbatim=True,
        expected=[
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ],
        notes_code="""import torch

class_num = 10
batch_size = 4
label = torch.tensor([[6], [0], [3], [2]])  # class_num
print("label的shape:", label.shape, "\\n", label)
one_hot = torch.zeros(batch_size, class_num).scatter_(1, label, 1)
print("one_hot的shape:", one_hot.shape, "\\n", one_hot)
""",
        notes_result="one_hot",
        note=N_("label has one column, so each row gets exactly one 1, in column label[i][0]."),
        menu=N_("one-hot of labels [[6], [0], [3], [2]], class_num 10 · notes 002:997-1012"),
    ),
    Preset(
        "gather",
        "gather(input, 1, [[0, 0], [2, 0]])",
        "gather",
        "[[1, 2, 3], [4, 5, 6]]",
        "[[0, 0], [2, 0]]",
        "",
        1,
        ref="002:1035",
        verbatim=True,
        expected=[[1, 1], [6, 4]],
        expected_dtype=torch.int64,
        notes_code="""import torch

input = torch.tensor([[1,2,3],[4,5,6]])
output = torch.gather(input, 1, torch.tensor([[0,0],[2,0]]))
print(output)
""",
        notes_result="output",
        note=N_("out[i][j] = input[i][index[i][j]]; row 0 reads input[0][0] twice."),
        menu=N_("gather(input, 1, [[0, 0], [2, 0]]) · notes 002:1035"),
    ),
    Preset(
        "gather_out_of_range",
        "gather(input, 1, [[0, 0], [3, 0]]): index 3 is out of range",
        "gather",
        "[[1, 2, 3], [4, 5, 6]]",
        "[[0, 0], [3, 0]]",
        "",
        1,
        ref="002:1041",
        verbatim=True,
        expected_dtype=torch.int64,
        notes_error="RuntimeError: Invalid index in gather",
        notes_code="""import torch

input = torch.tensor([[1,2,3],[4,5,6]])
try:
    output = torch.gather(input, 1, torch.tensor([[0,0],[3,0]]))  # input.size(1) - 1 = 2
except RuntimeError as exc:
    error = str(exc)
    print(error)
""",
        notes_result="error",
        notes_code_changes=N_("The call is wrapped in try/except so that the error is printed."),
        note=N_("Row 1 has only 3 columns (0, 1, 2): torch refuses index 3."),
        menu=N_("gather(input, 1, [[0, 0], [3, 0]]): index 3 is out of range · notes 002:1041"),
    ),
    Preset(
        "group_means",
        "group means: zeros(3).scatter_add(0, idx, x), x = arange(1, 7)",
        "scatter",
        "[0.0, 0.0, 0.0]",
        "[0, 1, 0, 1, 2, 2]",
        "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]",
        0,
        ref="002:204-211",
        verbatim=True,
        expected=[4.0, 6.0, 11.0],
        printed=False,
        reduce=SCATTER_ADD,
        notes_code="""import torch

x = torch.arange(1, 7, dtype=torch.float)
idx = torch.tensor([0, 1, 0, 1, 2, 2])
idx_unique = idx.unique(sorted=True)
idx_unique_count = torch.stack([(idx==idx_u).sum() for idx_u in idx_unique])
res = torch.zeros(len(idx_unique)).scatter_add(0, idx, x)
res /= idx_unique_count.float()
print(res)
""",
        notes_result="res",
        notes_code_changes=N_("import torch is added."),
        note=N_(
            "scatter_add sums x per group; dividing by the group sizes gives the means. "
            "(torch.unique has had return_counts=True since the forum post the notes quote.)"
        ),
        menu=N_(
            "group means: zeros(3).scatter_add(0, idx, x), x = arange(1, 7) · notes 002:204-211"
        ),
    ),
    Preset(
        "one_hot_long_src",
        "one-hot, int64: zeros(4, 4).long().scatter_(1, labels, ones(4, 4).long())",
        "scatter",
        _zeros_text(4, 4, floating=False),
        "[[0], [2], [1], [3]]",
        "[[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]",
        1,
        ref="004:219-225",
        verbatim=True,
        expected=[[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]],
        printed=False,
        expected_dtype=torch.int64,
        notes_code="""import torch

tensor = torch.tensor([0, 2, 1, 3])
N = tensor.size(0)
num_classes = 4
one_hot = torch.zeros(N, num_classes).long()
one_hot.scatter_(dim=1, index=torch.unsqueeze(tensor, dim=1),
                 src=torch.ones(N, num_classes).long())
print(one_hot)
""",
        notes_result="one_hot",
        notes_code_changes=N_("import torch is added; the long scatter_ line is broken in two."),
        note=N_(
            "A tensor src (all ones, int64) instead of the scalar 1: src[i][0] goes to "
            "column index[i][0]; the result stays int64."
        ),
        menu=N_(
            "one-hot, int64: zeros(4, 4).long().scatter_(1, labels, ones(4, 4).long())"
            " · notes 004:219-225"
        ),
    ),
    Preset(
        "one_hot_resize",
        "one-hot with label.resize_(batch_size, 1), fixed labels [3, 0, 2, 3]",
        "scatter",
        _zeros_text(4, 4),
        "[[3], [0], [2], [3]]",
        "1",
        1,
        ref="004:227-240",
        verbatim=False,
        expected=[
            [0.0, 0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
        printed=False,
        notes_code='''import torch


def one_hot(label):
    """
    将一维列表转换为独热编码
    """
    label = label.resize_(batch_size, 1)
    m_zeros = torch.zeros(batch_size, class_num)
    # 从 value 中取值，然后根据 dim 和 index 给相应位置赋值
    onehot = m_zeros.scatter_(1, label, 1)  # (dim,index,value)
    return onehot.numpy()  # Tensor -> Numpy


class_num = 4
batch_size = 4
# the notes: label = torch.LongTensor(batch_size).random_() % class_num  # 对随机数取余
label = torch.tensor([3, 0, 2, 3])
out = one_hot(label)
print(out)
''',
        notes_result="out",
        notes_code_changes=N_(
            "Indentation restored (the notes lost it); the random labels "
            "torch.LongTensor(batch_size).random_() % class_num are fixed to [3, 0, 2, 3] so the "
            "result can be checked; the result is kept in `out`."
        ),
        note=N_(
            "label.resize_(batch_size, 1) turns the 1-D labels into the (4, 1) index column "
            "in place. Labels 3 repeat: two rows get the same one-hot row."
        ),
        menu=N_(
            "one-hot with label.resize_(batch_size, 1), fixed labels [3, 0, 2, 3]"
            " · variation of notes 004:227-240"
        ),
    ),
)
PRESETS_BY_KEY: dict[str, Preset] = {p.key: p for p in PRESETS}


@dataclass(frozen=True)
class NotesComparison:
    """A traced result checked against a preset's expected output at its printed precision.

    ``atol`` is half a unit of the last printed decimal (``5e-5`` for 4 decimals), 0 for exact
    values; ``mismatches`` lists the positions outside it; ``only_at_collisions`` says every
    mismatch is a cell written by several scatter writes (whose winner is unspecified).
    """

    matches: bool
    atol: float
    shape_ok: bool
    dtype_ok: bool
    mismatches: tuple[Pos, ...]
    only_at_collisions: bool


def compare_with_notes(preset: Preset, trace: Trace) -> NotesComparison | None:
    """Compare ``trace.result`` with ``preset.expected`` (``None`` when the preset expects an
    error). Floats are compared at the printed precision, integers exactly; the dtype must be
    the notes' (``preset.expected_dtype``)."""
    if preset.expected is None:
        return None
    result = trace.result.detach().cpu()
    expected = torch.tensor(preset.expected, dtype=torch.float64)
    atol = 0.5 * 10.0**-preset.decimals if preset.decimals is not None else 0.0
    shape_ok = tuple(expected.shape) == tuple(result.shape)
    dtype_ok = result.dtype == preset.expected_dtype
    if not shape_ok:
        return NotesComparison(False, atol, False, dtype_ok, (), False)
    diff = (result.to(torch.float64) - expected).abs()
    bad = tuple(pos for pos in positions(result.shape) if float(diff[pos]) > atol)
    only_collisions = bool(bad) and all(pos in trace.collisions for pos in bad)
    return NotesComparison(dtype_ok and not bad, atol, shape_ok, dtype_ok, bad, only_collisions)


def _cite(ref: str) -> T:
    """``"notes 002:926"``, translatable (the page's word for the notes)."""
    return T("notes {ref}", ref=NotesRef.parse(ref))


def source_note(preset: Preset) -> T | None:
    """The caption under a verbatim preset whose check is not the notes' printed output: the
    notes print an error torch no longer uses, or print nothing. ``None``: the page's usual
    citation applies (verbatim with its printed output, or a variation)."""
    if not preset.verbatim:
        return None
    if preset.notes_error:
        return T(
            "From the {ref}, verbatim: the same call. The notes print an error message "
            "that torch no longer uses; both are shown below.",
            ref=_cite(preset.ref),
        )
    if not preset.printed:
        return T(
            "From the {ref}, verbatim: same inputs, dim and dtype. The notes print no "
            "output for it, so the page checks the result against what their code gives.",
            ref=_cite(preset.ref),
        )
    return None


def notes_verdict(preset: Preset, trace: Trace) -> tuple[bool, T] | None:
    """What the page says under a verbatim preset's live result: ``(matches, message)``.

    ``None`` for a variation (it claims nothing) or a preset that expects an error. The
    message names the precision and dtype compared, and the differing cells (noting when they
    are all collided cells, whose winner is unspecified).
    """
    cmp = compare_with_notes(preset, trace) if preset.verbatim else None
    if cmp is None:
        return None
    shown = tensor_literal(trace.result)
    ref = _cite(preset.ref)
    dtype = str(trace.result.dtype).replace("torch.", "")
    if cmp.matches:
        template = (
            N_(
                "Matches the documented output ({ref}), compared {precision}, dtype {dtype}: "
                "{shown}"
            )
            if preset.printed
            else N_(
                "Matches what the notes' code gives ({ref} prints no output), compared "
                "{precision}, dtype {dtype}: {shown}"
            )
        )
        precision = (
            T(
                "to the printed {decimals} decimals (atol {atol:g})",
                decimals=preset.decimals,
                atol=cmp.atol,
            )
            if preset.decimals is not None
            else T("exactly")
        )
        return True, T(template, ref=ref, precision=precision, dtype=dtype, shown=shown)
    cells = ", ".join(f"out{format_pos(q)}" for q in cmp.mismatches)
    if cmp.only_at_collisions:
        return False, T(
            "Differs from the notes' output only at collided cell(s) {cells}: which duplicate "
            "write wins is unspecified, so this run may keep another one. Result: {shown}",
            cells=cells,
            shown=shown,
        )
    expected = (
        cells
        if cmp.dtype_ok
        else T(
            "dtype {dtype} instead of {expected}",
            dtype=dtype,
            expected=str(preset.expected_dtype).replace("torch.", ""),
        )
    )
    return False, T(
        "Differs from the notes' output ({ref}): {expected}. Result: {shown}",
        ref=ref,
        expected=expected,
        shown=shown,
    )


def run_notes_code(preset: Preset | str) -> LiveRun:
    """Run the notes' own code of a preset (:attr:`Preset.notes_code`) and capture its output."""
    if isinstance(preset, str):
        preset = preset_by_key(preset)
    return run_live(preset.notes_code)


_UNCHECKED: Any = object()


def preset_is_loaded(
    preset: Preset,
    op: str,
    texts: Sequence[str],
    dim: int,
    reduce: str | None = _UNCHECKED,
    include_self: bool = _UNCHECKED,
) -> bool:
    """Whether the page still shows ``preset`` unchanged: op, the three texts, dim and, when
    given, the scatter ``reduce`` mode (and ``include_self`` where that mode uses it)."""
    first, index, src = (re.sub(r"\s+", "", t or "") for t in texts)
    same_src = preset.op == "gather" or src == re.sub(r"\s+", "", preset.src)
    same_reduce = preset.op == "gather" or reduce is _UNCHECKED or reduce == preset.reduce
    same_self = (
        preset.op == "gather"
        or include_self is _UNCHECKED
        or preset.reduce not in REDUCE_MODES
        or include_self == preset.include_self
    )
    return (
        op == preset.op
        and int(dim) == preset.dim
        and first == re.sub(r"\s+", "", preset.first)
        and index == re.sub(r"\s+", "", preset.index)
        and same_src
        and same_reduce
        and same_self
    )


@dataclass(frozen=True)
class PresetRun:
    """A preset evaluated: its trace (or the error torch raised) and the code that reproduces it."""

    preset: Preset
    trace: Trace | None
    error: IndexingError | None
    snippet: str
    group: GroupMeans | None = None


def preset_by_key(key: str) -> Preset:
    """The preset named ``key``; an IndexingError naming the known keys for any other."""
    if key not in PRESETS_BY_KEY:
        raise IndexingError(
            T(
                "unknown preset {key!r}; choose one of {keys}",
                key=key,
                keys=list(PRESETS_BY_KEY),
            )
        )
    return PRESETS_BY_KEY[key]


def run_preset(preset: Preset | str) -> PresetRun:
    """Evaluate one preset (or its key) exactly as the page does."""
    if isinstance(preset, str):
        preset = preset_by_key(preset)
    trace, error, snippet = run_case(
        preset.op,
        preset.first,
        preset.index,
        preset.src,
        preset.dim,
        preset.reduce,
        preset.include_self,
    )
    group = None
    if preset.key == "group_means" and trace is not None:
        group = group_means(trace.operands["src"], trace.operands["index"])
        snippet += GROUP_MEANS_SNIPPET
    return PresetRun(preset, trace, error, snippet, group)
