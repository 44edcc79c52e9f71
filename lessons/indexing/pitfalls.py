"""Indexing pitfalls the notes teach, as live demos (the "More pitfalls from the notes" tab).

Each demo is a snippet that runs as-is in a Python shell; :func:`core.notes.run_live` runs it
now, and the demo's verdict is read from what it printed or raised, never written in advance.
The snippets print one ``label -> result`` line per step (a multi-line tensor continues on the
following lines), so a reader sees each expression beside its result and the verdict can be
parsed from the same text the page shows.

Where the notes' printed output is reproduced, the demo compares it with a transcription of
the notes (whitespace ignored) and says whether every printed result matches.

Demos (notes references are ``FILE:LINE`` in ``shared/seeds``):

- :func:`item_on_empty_demo` -- ``.item()`` on an empty tensor (002:142-160).
- :func:`chained_comparison_demo` -- ``0 < a < 2`` and ``a > 0 & a < 2`` (002:186-190).
- :func:`zero_dim_index_demo` -- boolean masks on a 0-d tensor (002:591-654).
- :func:`view_order_demo` -- ``view(-1)`` reads row by row (002:311-361).
- :func:`view_or_reshape` -- ``view`` vs ``reshape`` on a permuted tensor (004:117-132).
- :func:`inplace_autograd_demo` -- "modified by an inplace operation" (000:76, 002:1332-1341).
- :func:`new_zeros_demo` -- ``new_zeros`` plus slice assignment (002:516-532).

:func:`notes_callouts` lists the places where the notes are wrong or out of date here.
Pure: no Streamlit.

>>> item_on_empty_demo().result("tmp_2_inds.shape")
'torch.Size([0, 1])'
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.notes import LiveRun, NotesCallout, NotesRef, run_live, verdict_if
from core.text import N_, T

_LABEL_RE = re.compile(r"^(?P<label>\S.*?) -> (?P<value>.*)$")


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PitfallDemo:
    """One live demo.

    ``code`` runs as-is; ``run`` is what it did just now; ``results`` are its
    ``(label, result)`` lines in order; ``verdict`` is one or two sentences chosen from those
    results. ``matches_notes`` says whether every result the notes print came out the same
    (``None`` when the demo does not reproduce printed output). ``verbatim`` is true when the
    snippet uses the notes' own inputs.
    """

    key: str
    title: str
    ref: NotesRef
    verbatim: bool
    code: str
    run: LiveRun
    results: tuple[tuple[str, str], ...]
    verdict: str
    matches_notes: bool | None = None
    #: The sentences of ``verdict`` (each a :class:`core.text.T` or marked string), for a page
    #: that translates them one by one; empty when ``verdict`` is one sentence.
    verdict_parts: tuple[str, ...] = ()

    def result(self, label: str) -> str:
        """The result printed for ``label``; ``KeyError`` if the snippet printed none."""
        for name, value in self.results:
            if name == label:
                return value
        raise KeyError(f"the {self.key} demo printed no result for {label!r}")

    @property
    def transcript(self) -> str:
        """What the snippet printed (and raised), as a console shows it."""
        return self.run.transcript


@dataclass(frozen=True)
class ViewReshapeDemo:
    """``x = arange(n).reshape(shape).permute(perm)``, then ``x.view(new_shape)`` and
    ``x.reshape(new_shape)``.

    ``stride`` is ``x.stride()``; ``view_error`` is ``"RuntimeError: ..."`` when ``view``
    refused (``None`` when it worked); ``reshape_shares_storage`` compares
    ``untyped_storage().data_ptr()`` of ``x`` and the reshape result (True: a view, False: a
    copy). All fields are read from the snippet's live run.
    """

    shape: tuple[int, ...]
    perm: tuple[int, ...]
    new_shape: tuple[int, ...]
    code: str
    run: LiveRun
    results: tuple[tuple[str, str], ...]
    is_contiguous: bool
    stride: tuple[int, ...]
    view_error: str | None
    reshape_shares_storage: bool
    verdict: str
    title: str = N_("view vs reshape on a permuted tensor")
    ref: NotesRef = NotesRef("004", 117, 132)

    #: Like :class:`PitfallDemo`'s, so that a page draws every demo alike: a variation of the
    #: notes' example (theirs permutes a torch.rand tensor), with no printed output to match.
    verbatim: bool = False
    matches_notes: bool | None = None
    verdict_parts: tuple[str, ...] = ()

    @property
    def view_ok(self) -> bool:
        return self.view_error is None

    @property
    def transcript(self) -> str:
        """What the snippet printed (and raised), as a console shows it."""
        return self.run.transcript


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def parse_results(output: str) -> tuple[tuple[str, str], ...]:
    """Split a demo's printed text into ``(label, result)`` pairs.

    A line ``label -> result`` starts a pair; a line without the arrow (the rest of a
    multi-line tensor) continues the previous result. ``Warning: ...`` lines that
    :func:`core.notes.run_live` appends become pairs labelled ``"Warning"``.

    >>> parse_results("a -> tensor([[1],\\n        [2]])\\nb -> 3")
    (('a', 'tensor([[1],\\n        [2]])'), ('b', '3'))
    """
    pairs: list[list[str]] = []
    for line in output.splitlines():
        if line.startswith("Warning: "):
            pairs.append(["Warning", line[len("Warning: ") :]])
            continue
        match = _LABEL_RE.match(line)
        if match and not line.startswith(" "):
            pairs.append([match["label"], match["value"]])
        elif pairs:
            pairs[-1][1] += "\n" + line
        else:
            pairs.append(["", line])
    return tuple((label, value) for label, value in pairs)


def same_print(a: str, b: str) -> bool:
    """Whether two printed results are the same once all whitespace is ignored."""
    return re.sub(r"\s+", "", a) == re.sub(r"\s+", "", b)


def _compare(results: tuple[tuple[str, str], ...], expected: dict[str, str]) -> list[str]:
    """Labels whose printed result differs from ``expected`` (missing ones count as differing)."""
    got = dict(results)
    return [label for label, want in expected.items() if not same_print(got.get(label, ""), want)]


def _sentence(text: str) -> str:
    """``text`` ending in exactly one full stop (error messages often bring their own)."""
    return text.rstrip().rstrip(".") + "."


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text


def _try_loop(exprs: Sequence[str]) -> str:
    """Snippet lines that print ``expr -> result`` (or the exception) for each expression."""
    listed = ",\n    ".join(repr(e) for e in exprs)
    return (
        f"for expr in [\n    {listed},\n]:\n"
        "    try:\n"
        '        print(expr, "->", eval(expr))\n'
        "    except Exception as e:\n"
        '        print(expr, "->", f"{type(e).__name__}: {e}")\n'
    )


def _run(code: str) -> tuple[LiveRun, tuple[tuple[str, str], ...]]:
    """Run a demo snippet live and parse its ``label -> result`` lines."""
    run = run_live(code)
    return run, parse_results(run.output)


def _raised(result: str) -> str | None:
    """The exception type when a printed result is ``"SomeError: ..."``, else ``None``."""
    match = re.match(r"^([A-Z]\w*(?:Error|Exception)): ", result)
    return match[1] if match else None


# --------------------------------------------------------------------------------------------
# 002:142-160  .item() on an empty tensor
# --------------------------------------------------------------------------------------------

ITEM_REF = NotesRef("002", 142, 160)
#: What the notes print when they call ``.item()`` on the empty result (002:148, 002:160).
NOTES_ITEM_ERROR = "ValueError: only one element tensors can be converted to Python scalars"

ITEM_CODE = (
    "import torch\n\n"
    "tmp_a = torch.arange(0, 20)\n"
    "tmp_2_inds = torch.nonzero(tmp_a < -2, as_tuple=False)  # no element is < -2\n"
    + _try_loop(
        [
            "tmp_2_inds",
            "tmp_2_inds.shape",
            "tmp_2_inds.numel()",
            "tmp_2_inds.item()",
            "tmp_2_inds.squeeze(1).shape",
            "tmp_2_inds.squeeze(1).item()",
            "float(tmp_2_inds)",
            "tmp_2_inds.squeeze(1).tolist()",
        ]
    )
)


def item_on_empty_demo() -> PitfallDemo:
    """``.item()`` on the ``(0, 1)`` result of ``nonzero`` when nothing matches (002:142-160).

    The notes' own ``tmp_a = torch.arange(0, 20)`` (002:111) and mask. The verdict says what
    ``.item()`` raises today, compared with the notes' ``ValueError``; ``matches_notes`` is
    false while the error differs from what the notes print.
    """
    run, results = _run(ITEM_CODE)
    got = dict(results)
    item = got.get("tmp_2_inds.item()", "")
    as_float = got.get("float(tmp_2_inds)", "")
    notes_printed = {
        "tmp_2_inds": "tensor([], size=(0, 1), dtype=torch.int64)",
        "tmp_2_inds.shape": "torch.Size([0, 1])",
        "tmp_2_inds.numel()": "0",
        "tmp_2_inds.squeeze(1).shape": "torch.Size([0])",
        "tmp_2_inds.item()": NOTES_ITEM_ERROR,
        "tmp_2_inds.squeeze(1).item()": NOTES_ITEM_ERROR,
    }
    differs = _compare(results, notes_printed)
    if _raised(item):
        if same_print(item, NOTES_ITEM_ERROR):
            verdict = T(
                ".item() needs exactly one element; on this empty tensor it raises {item}, "
                "as the notes show.",
                item=item,
            )
        elif same_print(as_float, NOTES_ITEM_ERROR):
            verdict = T(
                ".item() needs exactly one element; on this empty tensor it raises {item} "
                "today, not the notes' ValueError (float(t) still raises the notes' "
                "ValueError). Check t.numel() == 1 first, or use t.tolist().",
                item=item,
            )
        else:
            verdict = T(
                ".item() needs exactly one element; on this empty tensor it raises {item} "
                "today, not the notes' ValueError (float(t) raises {as_float}). Check "
                "t.numel() == 1 first, or use t.tolist().",
                item=item,
                as_float=as_float,
            )
    else:
        verdict = T(".item() on the empty tensor returned {item} instead of raising.", item=item)
    return PitfallDemo(
        "item_empty",
        N_(".item() on an empty tensor"),
        ITEM_REF,
        True,
        ITEM_CODE,
        run,
        results,
        verdict,
        matches_notes=not differs,
    )


# --------------------------------------------------------------------------------------------
# 002:186-190  0 < a < 2 and a > 0 & a < 2
# --------------------------------------------------------------------------------------------

COMPARISON_REF = NotesRef("002", 186, 190)
#: Values offered for the one-element tensor ``one`` (the first is the default).
ONE_VALUES: tuple[int, ...] = (3, 1, 0, -1)


def comparison_code(one_value: int = 3) -> str:
    """The chained-comparison snippet; ``one_value`` fills the one-element tensor ``one``."""
    return (
        "import torch\n\n"
        "# one draw of the notes' torch.randint(0, 5, (2, 5)), written out\n"
        "tmp_a = torch.tensor([[0, 1, 4, 1, 2], [3, 1, 0, 4, 2]])\n"
        f"one = torch.tensor([{one_value}])  # a one-element tensor\n"
        + _try_loop(
            [
                "tmp_a",
                "0 < tmp_a < 2",
                "tmp_a > 0 & tmp_a < 2",
                "0 & tmp_a",
                "(tmp_a > 0) & (tmp_a < 2)",
                "torch.nonzero((tmp_a > 0) & (tmp_a < 2), as_tuple=False)",
                "0 < one < 2",
                "one > 0 & one < 2",
                "(one > 0) & (one < 2)",
            ]
        )
    )


def chained_comparison_demo(one_value: int = 3) -> PitfallDemo:
    """The notes' two wrong ways to write ``0 < a < 2`` and the right one (002:186-190).

    ``tmp_a`` is one draw of the notes' ``randint(0, 5, (2, 5))``, written out (a variation:
    the notes draw it at random). ``one_value`` (an int in -9..9) fills a one-element tensor, on
    which the wrong forms do not raise and ``a > 0 & a < 2`` can silently be wrong.
    """
    if isinstance(one_value, bool) or not isinstance(one_value, int) or abs(one_value) > 9:
        raise ValueError(f"one_value must be an int in -9..9, got {one_value!r}")
    code = comparison_code(one_value)
    run, results = _run(code)
    got = dict(results)
    chained = got.get("0 < tmp_a < 2", "")
    amp = got.get("tmp_a > 0 & tmp_a < 2", "")
    parts: list[str] = []
    if _raised(chained):
        parts.append(
            T(
                "0 < tmp_a < 2 raised {chained}: Python runs it as (0 < tmp_a) and (tmp_a < 2), "
                "and `and` needs bool() of a 10-element tensor.",
                chained=chained,
            )
        )
    else:
        parts.append(T("0 < tmp_a < 2 gave {result} without raising.", result=_first_line(chained)))
    if _raised(amp):
        parts.append(
            T(
                "tmp_a > 0 & tmp_a < 2 raised {error} too: & binds tighter than >, so it "
                "is tmp_a > (0 & tmp_a) < 2, another chained comparison "
                "(0 & tmp_a is all zeros).",
                error=_raised(amp),
            )
        )
    else:
        parts.append(
            T("tmp_a > 0 & tmp_a < 2 gave {result} without raising.", result=_first_line(amp))
        )
    one_amp = got.get("one > 0 & one < 2", "")
    one_right = got.get("(one > 0) & (one < 2)", "")
    if not _raised(one_amp) and not same_print(one_amp, one_right):
        parts.append(
            T(
                "On one = tensor([{one_value}]) nothing raises and one > 0 & one < 2 gives "
                "{one_amp} where the right form gives {one_right}: silently wrong.",
                one_value=one_value,
                one_amp=one_amp,
                one_right=one_right,
            )
        )
    elif not _raised(one_amp):
        parts.append(
            T(
                "On one = tensor([{one_value}]) nothing raises, and one > 0 & one < 2 happens "
                "to agree with the right form ({one_right}).",
                one_value=one_value,
                one_right=one_right,
            )
        )
    parts.append(N_("Write (tmp_a > 0) & (tmp_a < 2), as the notes' 正确写法 does."))
    return PitfallDemo(
        "chained_comparison",
        N_("0 < a < 2 and a > 0 & a < 2"),
        COMPARISON_REF,
        False,
        code,
        run,
        results,
        " ".join(parts),
        verdict_parts=tuple(parts),
    )


# --------------------------------------------------------------------------------------------
# 002:591-654  boolean masks on a 0-d tensor
# --------------------------------------------------------------------------------------------

ZERO_DIM_REF = NotesRef("002", 591, 654)
#: ``tmp_a`` values that reproduce every result the notes print (tmp_a[0] == 5 occurs once).
NOTES_ZERO_DIM_TMP_A: tuple[int, ...] = (5, 3, 8, 1, 7)
#: The same with tmp_a[0] occurring twice: the notes' recommended recipe fails too.
TWO_MATCHES_TMP_A: tuple[int, ...] = (5, 3, 5, 1, 7)

#: What the notes print at 002:622-654 (Out[1]..Out[11] and the IndexError).
NOTES_ZERO_DIM_PRINTED: dict[str, str] = {
    "tmp_sub_a_1.shape": "torch.Size([])",
    "mask_sub_a_1.shape": "torch.Size([])",
    "mask_sub_a_2.shape": "torch.Size([1])",
    "mask_sub_a_3.shape": "torch.Size([])",
    "mask_sub_a_1": "tensor(True)",
    "mask_sub_a_2": "tensor([True])",
    "mask_sub_a_3": "tensor(True)",
    "tmp_sub_a_1[mask_sub_a_1]": "tensor([5])",
    "tmp_sub_a_1[mask_sub_a_2]": "IndexError: too many indices for tensor of dimension 0",
    "tmp_sub_a_1[mask_sub_a_3]": "tensor([5])",
    "torch.tensor([tmp_sub_a_1])[mask_sub_a_1]": "tensor([[5]])",
    "torch.tensor([tmp_sub_a_1])[mask_sub_a_2]": "tensor([5])",
    "torch.tensor([tmp_sub_a_1])[mask_sub_a_3]": "tensor([[5]])",
}


def zero_dim_code(tmp_a: Sequence[int] = NOTES_ZERO_DIM_TMP_A) -> str:
    """The 0-d indexing snippet (the notes' steps, with ``tmp_a`` written out)."""
    values = ", ".join(str(v) for v in tmp_a)
    return (
        "import torch\n\n"
        f"tmp_a = torch.tensor([{values}])\n"
        "mask_a = tmp_a == tmp_a[0]\n"
        "inds_a = mask_a.nonzero().squeeze()\n"
        "tmp_sub_a_1 = tmp_a[0]  # a 0-d tensor: shape torch.Size([])\n"
        "mask_sub_a_1 = tmp_sub_a_1 == tmp_a[0]\n"
        "mask_sub_a_2 = tmp_a[mask_a] == tmp_a[0]  # boolean-mask indexing keeps one dim\n"
        "mask_sub_a_3 = tmp_a[inds_a] == tmp_a[0]  # the notes' recommended form\n"
        + _try_loop(
            ["inds_a", "tmp_sub_a_1.shape"]
            + [f"mask_sub_a_{i}.shape" for i in (1, 2, 3)]
            + [f"mask_sub_a_{i}" for i in (1, 2, 3)]
            + [f"tmp_sub_a_1[mask_sub_a_{i}]" for i in (1, 2, 3)]
            + [f"torch.tensor([tmp_sub_a_1])[mask_sub_a_{i}]" for i in (1, 2, 3)]
            + ["tmp_sub_a_1[torch.tensor(False)]", "tmp_sub_a_1[0]"]
        )
    )


def _check_tmp_a(tmp_a: Sequence[int]) -> tuple[int, ...]:
    values = tuple(tmp_a)
    if not 1 <= len(values) <= 8 or any(
        isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 99 for v in values
    ):
        raise ValueError(f"tmp_a must be 1 to 8 whole numbers in 0..99, got {tmp_a!r}")
    return values


def zero_dim_index_demo(tmp_a: Sequence[int] = NOTES_ZERO_DIM_TMP_A) -> PitfallDemo:
    """Indexing a 0-d tensor with a boolean mask (002:591-654).

    ``tmp_a`` (1..8 ints in 0..99) stands in for the notes' ``randint(0, 10, (5,))``; with
    :data:`NOTES_ZERO_DIM_TMP_A` every printed result equals the notes'. With
    :data:`TWO_MATCHES_TMP_A` (``tmp_a[0]`` twice) the notes' recommended ``tmp_a[inds_a]``
    raises the same IndexError.
    """
    values = _check_tmp_a(tmp_a)
    code = zero_dim_code(values)
    run, results = _run(code)
    got = dict(results)
    differs = _compare(results, NOTES_ZERO_DIM_PRINTED)
    bad_mask = got.get("tmp_sub_a_1[mask_sub_a_2]", "")
    recipe = got.get("tmp_sub_a_1[mask_sub_a_3]", "")
    parts: list[str] = []
    if _raised(bad_mask):
        parts.append(
            T(
                "tmp_sub_a_1 has shape torch.Size([]); a mask of shape {shape} asks it for a "
                "dimension it lacks: {error}.",
                shape=got.get("mask_sub_a_2.shape", "?"),
                error=bad_mask,
            )
        )
    else:
        parts.append(T("tmp_sub_a_1[mask_sub_a_2] gave {result}.", result=_first_line(bad_mask)))
    if _raised(recipe):
        parts.append(
            T(
                "Here tmp_a[0] occurs {count} times, so the notes' recommended tmp_a[inds_a] "
                "gives a mask of shape {shape} and raises as well: {error}.",
                count=values.count(values[0]),
                shape=got.get("mask_sub_a_3.shape", "?"),
                error=recipe,
            )
        )
    else:
        parts.append(
            T(
                "The notes' recommended tmp_a[inds_a] gives a 0-d mask here ({shape}), so "
                "tmp_sub_a_1[mask_sub_a_3] = {result}.",
                shape=got.get("mask_sub_a_3.shape", "?"),
                result=recipe,
            )
        )
    parts.append(N_("A 0-d tensor accepts only a 0-d mask (tensor(True) or tensor(False))."))
    if not differs:
        parts.append(T("All {n} results the notes print match.", n=len(NOTES_ZERO_DIM_PRINTED)))
    else:
        parts.append(
            T(
                "{n} of the {total} results the notes print differ for this tmp_a.",
                n=len(differs),
                total=len(NOTES_ZERO_DIM_PRINTED),
            )
        )
    return PitfallDemo(
        "zero_dim_index",
        N_("Boolean masks on a 0-d tensor"),
        ZERO_DIM_REF,
        False,
        code,
        run,
        results,
        " ".join(parts),
        matches_notes=not differs,
        verdict_parts=tuple(parts),
    )


# --------------------------------------------------------------------------------------------
# 002:311-361  view(-1) reads row by row
# --------------------------------------------------------------------------------------------

VIEW_ORDER_REF = NotesRef("002", 311, 361)
_NOTES_TMP_A_ROWS = ((5, 9, 6, 1, 6, 3), (15, 9, 7, 7, 14, 2), (13, 11, 16, 5, 3, 12))
_FLAT = [v for row in _NOTES_TMP_A_ROWS for v in row]
_COLUMNWISE = [row[c] for c in range(6) for row in _NOTES_TMP_A_ROWS]


def _tensor_text(values: Sequence[int] | Sequence[Sequence[int]]) -> str:
    return f"tensor({[list(v) if isinstance(v, tuple) else v for v in values]})"


#: What the notes print at 002:324-361, transcribed.
NOTES_VIEW_PRINTED: dict[str, str] = {
    "tmp_a.view(-1)": _tensor_text(_FLAT),
    "tmp_a.view(-1, 1)": _tensor_text([[v] for v in _FLAT]),
    "tmp_a.view(1, -1)": _tensor_text([_FLAT]),
    "tmp_a.transpose(1, 0).contiguous().view(-1)": _tensor_text(_COLUMNWISE),
    "tmp_b.view(1, -1).expand(num_dim0, num_dim1).contiguous().view(-1)": _tensor_text(
        list(_NOTES_TMP_A_ROWS[0]) * 3
    ),
    "tmp_a.view(-1).view(num_dim0, -1)": _tensor_text([list(r) for r in _NOTES_TMP_A_ROWS]),
}

VIEW_ORDER_CODE = (
    "import torch\n\n"
    "num_dim0, num_dim1 = (3, 6)\n"
    "# the values the notes' torch.randint(18, (num_dim0, num_dim1)) drew\n"
    "tmp_a = torch.tensor([[5, 9, 6, 1, 6, 3], [15, 9, 7, 7, 14, 2], [13, 11, 16, 5, 3, 12]])\n"
    "tmp_b = tmp_a[0]\n" + _try_loop(list(NOTES_VIEW_PRINTED) + ["tmp_a.transpose(1, 0).view(-1)"])
)


def view_order_demo() -> PitfallDemo:
    """The notes' ``view(-1)`` examples with their own ``tmp_a`` (002:311-361).

    Adds ``tmp_a.transpose(1, 0).view(-1)`` (without ``.contiguous()``) to show why the
    notes call ``contiguous`` first. The verdict compares each result with the notes.
    """
    run, results = _run(VIEW_ORDER_CODE)
    differs = _compare(results, NOTES_VIEW_PRINTED)
    no_contig = dict(results).get("tmp_a.transpose(1, 0).view(-1)", "")
    if not differs:
        first = T(
            "All {n} results match the notes: view(-1) reads row by row.",
            n=len(NOTES_VIEW_PRINTED),
        )
    else:
        first = T(
            "{n} results differ from the notes: {labels}.",
            n=len(differs),
            labels=", ".join(differs),
        )
    if _raised(no_contig):
        second = T(
            "Without .contiguous(), tmp_a.transpose(1, 0).view(-1) raises {error} The "
            "column-wise order exists only in a copy.",
            error=_sentence(no_contig),
        )
    else:
        second = T("tmp_a.transpose(1, 0).view(-1) gave {result}.", result=_first_line(no_contig))
    return PitfallDemo(
        "view_order",
        N_("view(-1) reads row by row"),
        VIEW_ORDER_REF,
        True,
        VIEW_ORDER_CODE,
        run,
        results,
        f"{first} {second}",
        matches_notes=not differs,
        verdict_parts=(first, second),
    )


# --------------------------------------------------------------------------------------------
# 004:117-132  view vs reshape
# --------------------------------------------------------------------------------------------

#: Starting shapes offered on the page (the first is the notes' ``torch.rand(2, 3, 4)``).
VIEW_SHAPES: tuple[tuple[int, ...], ...] = ((2, 3, 4), (3, 6), (6, 4), (2, 3, 2, 2))
_MAX_NUMEL = 256


def _check_shape(shape: Sequence[int], name: str) -> tuple[int, ...]:
    dims = tuple(shape)
    if not 1 <= len(dims) <= 4 or any(
        isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 16 for d in dims
    ):
        raise ValueError(f"{name} must be 1 to 4 dims, each 1..16, got {shape!r}")
    if math.prod(dims) > _MAX_NUMEL:
        raise ValueError(f"{name} must have at most {_MAX_NUMEL} elements, got {shape!r}")
    return dims


def permutations_of(ndim: int) -> list[tuple[int, ...]]:
    """Every ``permute`` order of ``ndim`` dims: first the swap of dims 0 and 1 (the notes'
    ``transpose(1, 0)``), then the rest in lexicographic order (identity included)."""
    if isinstance(ndim, bool) or not isinstance(ndim, int) or not 1 <= ndim <= 4:
        raise ValueError(f"ndim must be 1..4, got {ndim!r}")
    orders = list(itertools.permutations(range(ndim)))
    if ndim >= 2:
        swap = (1, 0, *range(2, ndim))
        orders.remove(swap)
        orders.insert(0, swap)
    return orders


def reshape_targets(shape: Sequence[int]) -> list[tuple[int, ...]]:
    """New shapes worth trying on a tensor of ``shape``: each merge of two adjacent dims
    (first dims first, so ``(3, 2, 4)`` offers the notes' ``(6, 4)`` first), flatten
    ``(-1,)``, and each split of one dim into its smallest factor and the rest."""
    dims = _check_shape(shape, "shape")
    targets: list[tuple[int, ...]] = []
    for i in range(len(dims) - 1):
        targets.append(dims[:i] + (dims[i] * dims[i + 1],) + dims[i + 2 :])
    targets.append((-1,))
    for i, d in enumerate(dims):
        factor = next((f for f in range(2, d) if d % f == 0), None)
        if factor is not None and len(dims) < 4:
            targets.append(dims[:i] + (factor, d // factor) + dims[i + 1 :])
    unique: list[tuple[int, ...]] = []
    for t in targets:
        if t not in unique and t != dims:
            unique.append(t)
    return unique


def _shape_code(shape: Sequence[int]) -> str:
    return ", ".join(str(d) for d in shape)


def view_reshape_code(shape: Sequence[int], perm: Sequence[int], new_shape: Sequence[int]) -> str:
    """The view-vs-reshape snippet for these arguments."""
    numel = math.prod(shape)
    s, p, n = _shape_code(shape), _shape_code(perm), _shape_code(new_shape)
    return (
        "import torch\n\n"
        f"x = torch.arange({numel}).reshape({s}).permute({p})\n"
        'print("x.shape ->", tuple(x.shape))\n'
        'print("x.stride() ->", x.stride())\n'
        'print("x.is_contiguous() ->", x.is_contiguous())\n'
        "try:\n"
        f"    v = x.view({n})\n"
        "    same = v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()\n"
        f'    print("x.view({n}) ->", "a view, shares x\'s storage:", same)\n'
        "except RuntimeError as e:\n"
        f'    print("x.view({n}) ->", f"RuntimeError: {{e}}")\n'
        f"r = x.reshape({n})\n"
        "shares = r.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()\n"
        f'print("x.reshape({n}) shares x\'s storage ->", shares)\n'
    )


def _tuple_of_ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in re.findall(r"-?\d+", text))


def view_or_reshape(
    shape: Sequence[int] = (2, 3, 4),
    perm: Sequence[int] = (1, 0, 2),
    new_shape: Sequence[int] = (6, 4),
) -> ViewReshapeDemo:
    """``arange(n).reshape(shape).permute(perm)``, then ``view``/``reshape`` to ``new_shape``.

    ``shape``: 1..4 dims, each 1..16, at most 256 elements; ``perm``: a permutation of its
    dims; ``new_shape``: same number of elements (one ``-1`` allowed). The default is the
    notes' 004:124-132 case: ``torch.rand(2, 3, 4)`` transposed, then shape ``(6, 4)``.
    Raises ``ValueError`` naming the bad argument.
    """
    dims = _check_shape(shape, "shape")
    order = tuple(perm)
    if sorted(order) != list(range(len(dims))):
        raise ValueError(
            T(
                "perm must be a permutation of 0..{high}, got {perm!r}",
                high=len(dims) - 1,
                perm=perm,
            )
        )
    target = tuple(new_shape)
    if not target or any(isinstance(d, bool) or not isinstance(d, int) for d in target):
        raise ValueError(
            T("new_shape must be whole numbers, got {new_shape!r}", new_shape=new_shape)
        )
    if target.count(-1) > 1 or any(d < -1 or d == 0 for d in target):
        raise ValueError(
            T(
                "new_shape may hold one -1 and otherwise sizes >= 1, got {new_shape!r}",
                new_shape=new_shape,
            )
        )
    known = math.prod(d for d in target if d != -1)
    numel = math.prod(dims)
    if (-1 in target and numel % known) or (-1 not in target and known != numel):
        raise ValueError(
            T(
                "new_shape {new_shape!r} does not hold {numel} elements",
                new_shape=new_shape,
                numel=numel,
            )
        )
    code = view_reshape_code(dims, order, target)
    run = run_live(code)
    results = parse_results(run.output)
    got = dict(results)
    n = _shape_code(target)
    view_text = got.get(f"x.view({n})", "")
    view_error = view_text if _raised(view_text) else None
    shares = got.get(f"x.reshape({n}) shares x's storage", "") == "True"
    contiguous = got.get("x.is_contiguous()", "") == "True"
    stride = _tuple_of_ints(got.get("x.stride()", ""))
    permuted = tuple(dims[p] for p in order)
    if run.raised:
        verdict = T("The snippet raised {error}.", error=run.error)
    elif view_error is None:
        template = {
            (True, True): N_(
                "view({n}) worked on a contiguous tensor (shape {shape}, stride {stride}): "
                "every new dim is a piece of one old dim, or spans old dims laid out one after "
                "the other. reshape returned a view (same storage)."
            ),
            (True, False): N_(
                "view({n}) worked on a contiguous tensor (shape {shape}, stride {stride}): "
                "every new dim is a piece of one old dim, or spans old dims laid out one after "
                "the other. reshape returned a copy."
            ),
            (False, True): N_(
                "view({n}) worked on this non-contiguous tensor (shape {shape}, stride "
                "{stride}): every new dim is a piece of one old dim, or spans old dims laid out "
                "one after the other. reshape returned a view (same storage)."
            ),
            (False, False): N_(
                "view({n}) worked on this non-contiguous tensor (shape {shape}, stride "
                "{stride}): every new dim is a piece of one old dim, or spans old dims laid out "
                "one after the other. reshape returned a copy."
            ),
        }[(contiguous, shares)]
        verdict = T(template, n=n, shape=permuted, stride=stride)
    else:
        template = (
            N_(
                "view({n}) refused: {error} reshape({n}) shared the storage: reshape is a view "
                "when it can be, and copies otherwise."
            )
            if shares
            else N_(
                "view({n}) refused: {error} reshape({n}) made a copy (new storage): reshape is "
                "a view when it can be, and copies otherwise."
            )
        )
        verdict = T(template, n=n, error=_sentence(_first_line(view_error)))
    return ViewReshapeDemo(
        dims, order, target, code, run, results, contiguous, stride, view_error, shares, verdict
    )


# --------------------------------------------------------------------------------------------
# 000:76, 002:1332-1341  "modified by an inplace operation"
# --------------------------------------------------------------------------------------------

INPLACE_REF = NotesRef("002", 1332, 1341)
INPLACE_REF_000 = NotesRef("000", 76)
#: The end of the notes' error text (002:1338-1341).
NOTES_INPLACE_HINT = "with torch.autograd.set_detect_anomaly(True)."

#: variant key -> (forward line, modification line, label). The first is the default.
INPLACE_VARIANTS: dict[str, tuple[str, str, str]] = {
    "sigmoid_iadd": ("y = torch.sigmoid(x)", "y += 1", N_("sigmoid, then y += 1")),
    "sigmoid_slice": ("y = torch.sigmoid(x)", "y[0] = 0", N_("sigmoid, then y[0] = 0")),
    "mul_iadd": ("y = x * 2", "y += 1", N_("x * 2, then y += 1")),
    "sigmoid_out_of_place": ("y = torch.sigmoid(x)", "y = y + 1", N_("sigmoid, then y = y + 1")),
}


def inplace_code(variant: str = "sigmoid_iadd") -> str:
    """The in-place autograd snippet for one of :data:`INPLACE_VARIANTS`."""
    forward, modify, _ = INPLACE_VARIANTS[variant]
    return (
        "import torch\n\n"
        "x = torch.ones(3, requires_grad=True)\n"
        f"{forward}\n"
        "saved = y  # the tensor the forward op produced\n"
        'print("saved._version before ->", saved._version)\n'
        f"{modify}\n"
        'print("saved._version after ->", saved._version)\n'
        "try:\n"
        "    y.sum().backward()\n"
        '    print("backward ->", "ok, x.grad =", x.grad)\n'
        "except RuntimeError as e:\n"
        '    print("backward ->", f"RuntimeError: {e}")\n'
    )


def inplace_autograd_demo(variant: str = "sigmoid_iadd") -> PitfallDemo:
    """Modify a forward op's output, then ``backward`` (000:76, 002:1332-1341).

    ``variant`` is a key of :data:`INPLACE_VARIANTS`. Backward fails only when the op kept
    the modified tensor for its gradient (sigmoid keeps its output; ``x * 2`` keeps nothing).
    """
    if variant not in INPLACE_VARIANTS:
        raise ValueError(f"variant must be one of {list(INPLACE_VARIANTS)}, got {variant!r}")
    forward, modify, label = INPLACE_VARIANTS[variant]
    code = inplace_code(variant)
    run, results = _run(code)
    got = dict(results)
    before = got.get("saved._version before", "?")
    after = got.get("saved._version after", "?")
    backward = got.get("backward", "")
    if _raised(backward):
        op = re.search(r"which is output \d+ of ([\w:]+)", backward)
        new_hint = NOTES_INPLACE_HINT not in backward and "check_nan=False" in backward
        parts: list[str] = [
            T(
                "backward raised: `{modify}` moved the saved tensor from version {before} to "
                "{after}, and `{forward}` needs that tensor unchanged for its gradient.",
                modify=modify,
                before=before,
                after=after,
                forward=forward,
            )
        ]
        if op:
            parts.append(T("Today's message names the op: output of {op}.", op=op[1]))
        if new_hint:
            parts.append(N_("Its hint now reads set_detect_anomaly(True, check_nan=False)."))
        parts.append(N_("Fix: write it out of place (y = y + 1), or modify a clone."))
        verdict = " ".join(parts)
    elif before != after:
        verdict = T(
            "backward ran ({backward}) although `{modify}` changed the tensor (version "
            "{before} -> {after}): `{forward}` keeps nothing of y for its gradient, so the "
            "in-place change is harmless here.",
            backward=backward,
            modify=modify,
            before=before,
            after=after,
            forward=forward,
        )
    else:
        verdict = T(
            "backward ran ({backward}): `{modify}` makes a new tensor and the saved one "
            "stays at version {after}.",
            backward=backward,
            modify=modify,
            after=after,
        )
    return PitfallDemo(
        "inplace_autograd",
        f"In-place change before backward: {label}",
        INPLACE_REF,
        False,
        code,
        run,
        results,
        verdict,
        verdict_parts=tuple(parts) if _raised(backward) else (),
    )


# --------------------------------------------------------------------------------------------
# 002:516-532  new_zeros + slice assignment
# --------------------------------------------------------------------------------------------

NEW_ZEROS_REF = NotesRef("002", 516, 532)
#: Rows offered on the page; the first (2) is the notes' own.
NEW_ZEROS_ROWS: tuple[int, ...] = (2, 0, 1)
#: What the notes print for ``tmp_b`` at 002:529-532 (row 2 copied).
NOTES_NEW_ZEROS_PRINTED = (
    "tensor([[ 0,  0,  0,  0,  0], [ 0,  0,  0,  0,  0], [10, 11, 12, 13, 14]])"
)


def new_zeros_code(row: int = 2) -> str:
    """The new_zeros snippet copying ``row`` of the notes' 3x5 ``tmp_a``."""
    return (
        "import torch\n\n"
        "tmp_a = torch.arange(0, 15).reshape(3, 5)\n"
        "tmp_b = tmp_a.new_zeros(tmp_a.shape)  # same dtype and device as tmp_a, all zeros\n"
        f"tmp_b[{row}, :] = tmp_a[{row}, :]\n"
        'print("tmp_b ->", tmp_b)\n'
        'print("tmp_b.dtype ->", tmp_b.dtype)\n'
        'print("tmp_a unchanged ->", torch.equal(tmp_a, torch.arange(0, 15).reshape(3, 5)))\n'
        "ptr = tmp_a.untyped_storage().data_ptr()\n"
        'print("tmp_b shares tmp_a\'s storage ->", tmp_b.untyped_storage().data_ptr() == ptr)\n'
        f'print("tmp_a[{row}, :] shares tmp_a\'s storage ->", '
        f"tmp_a[{row}, :].untyped_storage().data_ptr() == ptr)\n"
    )


def new_zeros_demo(row: int = 2) -> PitfallDemo:
    """Copy one row of ``tmp_a`` into a fresh ``new_zeros`` tensor (002:516-532).

    ``row`` in 0..2; row 2 is the notes' example, whose printed ``tmp_b`` is compared.
    """
    if isinstance(row, bool) or not isinstance(row, int) or not 0 <= row <= 2:
        raise ValueError(f"row must be 0, 1 or 2 (tmp_a has 3 rows), got {row!r}")
    code = new_zeros_code(row)
    run, results = _run(code)
    got = dict(results)
    tmp_b = got.get("tmp_b", "")
    own = got.get("tmp_b shares tmp_a's storage", "") == "False"
    unchanged = got.get("tmp_a unchanged", "") == "True"
    slice_shares = got.get(f"tmp_a[{row}, :] shares tmp_a's storage", "") == "True"
    matches = same_print(tmp_b, NOTES_NEW_ZEROS_PRINTED) if row == 2 else None
    first = {
        (True, True): N_(
            "tmp_b is a new {dtype} tensor with its own storage, and tmp_a is unchanged."
        ),
        (True, False): N_("tmp_b is a new {dtype} tensor with its own storage, and tmp_a changed!"),
        (False, True): N_(
            "tmp_b is a new {dtype} tensor that shares tmp_a's storage, and tmp_a is unchanged."
        ),
        (False, False): N_(
            "tmp_b is a new {dtype} tensor that shares tmp_a's storage, and tmp_a changed!"
        ),
    }[(own, unchanged)]
    parts: list[str] = [T(first, dtype=got.get("tmp_b.dtype", "?"))]
    if slice_shares:
        parts.append(
            T(
                "tmp_a[{row}, :] itself is a view of tmp_a: writing into it would change tmp_a, "
                "which is why the notes copy into a new tensor.",
                row=row,
            )
        )
    if matches is not None:
        parts.append(
            N_("tmp_b prints exactly as in the notes.")
            if matches
            else N_("tmp_b differs from the notes.")
        )
    return PitfallDemo(
        "new_zeros",
        N_("new_zeros + slice assignment"),
        NEW_ZEROS_REF,
        row == 2,
        code,
        run,
        results,
        " ".join(parts),
        matches_notes=matches,
        verdict_parts=tuple(parts),
    )


# --------------------------------------------------------------------------------------------
# Where the notes are wrong or out of date
# --------------------------------------------------------------------------------------------

VIEW_CONTIGUOUS_CODE = (
    "import torch\n\n"
    "a = torch.arange(12).reshape(3, 4).t()  # transposed: not contiguous\n"
    'print("a.is_contiguous() ->", a.is_contiguous())\n'
    "for shape in [(2, 2, 3), (4, 3, 1), (12,)]:\n"
    "    try:\n"
    "        v = a.view(shape)\n"
    "        same = v.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()\n"
    '        print(f"a.view{shape}", "->", "a view, shares a\'s storage:", same)\n'
    "    except RuntimeError as e:\n"
    '        print(f"a.view{shape}", "->", f"RuntimeError: {e}")\n'
)

#: The notes' 004:124-132 lines as written, plus two lines that print what happened.
NOTES_VIEW_EXAMPLE_CODE = (
    "import torch\n\n"
    "tensor = torch.rand(2,3,4)\n"
    "shape = (6, 4)\n"
    "tensor = torch.reshape(tensor, shape)\n"
    "tensor= tensor.view(6,-1) #和上面一样\n"
    "# 如果tensor 经过了转换\n"
    "tensor=torch.transpose(tensor,1,0)\n"
    "print(tensor.size())\n"
    "tensor = torch.reshape(tensor, shape)# 可运行通过\n"
    "tensor= tensor.view(6,-1) # 不能通过会有异常：view size is not compatible with input "
    "tensor's size ...\n"
    'print("the notes\' last line ->", "ran; tensor.shape =", tuple(tensor.shape))\n'
    "t = torch.transpose(torch.rand(6, 4), 1, 0)\n"
    "try:\n"
    "    t.reshape(shape).view(6, -1)\n"
    '    print("view after reshape ->", "ok")\n'
    "    t.view(6, -1)\n"
    '    print("view on the transposed tensor itself ->", "ok")\n'
    "except RuntimeError as e:\n"
    '    print("view on the transposed tensor itself ->", f"RuntimeError: {e}")\n'
)


def _item_callout() -> NotesCallout:
    demo = item_on_empty_demo()
    item = demo.result("tmp_2_inds.item()")
    as_float = demo.result("float(tmp_2_inds)")
    # Out of date only when .item() raises something other than the notes' printed error.
    confirmed = _raised(item) and not same_print(item, NOTES_ITEM_ERROR)
    if same_print(item, NOTES_ITEM_ERROR):
        today = N_(".item() still raises {item}, as the notes show.")
        today_args = (("item", str(item)),)
    elif _raised(item):
        today = N_(
            ".item() on the empty tensor now raises {item}; the notes' ValueError is what "
            "float(t) raises today ({as_float}). An `except ValueError` around .item() no longer "
            "catches it: check t.numel() == 1 first."
        )
        today_args = (
            ("item", str(item)),
            ("as_float", str(as_float)),
        )
    else:
        today = N_(".item() on the empty tensor returned {item} instead of raising.")
        today_args = (("item", str(item)),)
    return NotesCallout(
        key="item_empty_error",
        title=N_(".item() on an empty tensor: the error has changed"),
        ref=NotesRef("002", 148),
        quote_zh=NOTES_ITEM_ERROR,
        gloss_en=(
            "Calling .item() on the empty result of nonzero raises ValueError: only "
            "one element tensors can be converted to Python scalars."
        ),
        verdict=verdict_if(confirmed, "out of date"),
        today=today,
        today_args=today_args,
        run=demo.run,
    )


def _view_contiguous_callout() -> NotesCallout:
    run = run_live(VIEW_CONTIGUOUS_CODE)
    got = dict(parse_results(run.output))
    worked = [k for k, v in got.items() if k.startswith("a.view") and not _raised(v)]
    refused = [k for k, v in got.items() if k.startswith("a.view") and _raised(v)]
    confirmed = got.get("a.is_contiguous()") == "False" and bool(worked)
    if confirmed:
        today = (
            N_(
                "view works on this transposed, non-contiguous tensor for {worked}, returning a "
                "view of the same storage. Since PyTorch 0.4 (pytorch/pytorch#4062) view needs "
                "only strides compatible with the new shape: splitting a dim always is, merging "
                "dims only when they lie one after the other in memory; {refused} is refused."
            )
            if refused
            else N_(
                "view works on this transposed, non-contiguous tensor for {worked}, returning a "
                "view of the same storage. Since PyTorch 0.4 (pytorch/pytorch#4062) view needs "
                "only strides compatible with the new shape: splitting a dim always is, merging "
                "dims only when they lie one after the other in memory."
            )
        )
        today_args = (("worked", " and ".join(worked)), ("refused", ", ".join(refused)))
    else:
        today = N_("view refused every new shape on the transposed tensor, as the notes say.")
        today_args = ()
    return NotesCallout(
        key="view_needs_contiguous",
        title=N_("view after transpose: not always refused"),
        ref=NotesRef("004", 119),
        quote_zh=(
            "view 函数只能用于 contiguous 后的 tensor 上，也就是只能用于内存中连续存储的 "
            "tensor。如果对 tensor 调用过 transpose, permute 等操作的话会使该 tensor "
            "在内存中变得不再连续，此时就不能再调用 view 函数。"
        ),
        gloss_en=(
            "view can only be used on a contiguous tensor; after transpose or permute the "
            "tensor is no longer contiguous and view can no longer be called."
        ),
        verdict=verdict_if(confirmed, "out of date"),
        today=today,
        today_args=today_args,
        run=run,
    )


def _view_example_callout() -> NotesCallout:
    run = run_live(NOTES_VIEW_EXAMPLE_CODE)
    got = dict(parse_results(run.output))
    last = got.get("the notes' last line", "")
    itself = got.get("view on the transposed tensor itself", "")
    confirmed = not run.raised and last.startswith("ran")
    if confirmed:
        today = (
            N_(
                "Run as written, the last line does not raise ({last}): line 131 rebinds "
                "`tensor` to reshape's result, a contiguous copy, so view(6, -1) on it works. "
                "The error needs view on the transposed tensor itself: {itself}"
            )
            if _raised(itself)
            else N_(
                "Run as written, the last line does not raise ({last}): line 131 rebinds "
                "`tensor` to reshape's result, a contiguous copy, so view(6, -1) on it works."
            )
        )
        today_args = (("last", last), ("itself", _sentence(itself)))
    else:
        today = N_("The notes' last line raises as they say: {error}.")
        today_args = (("error", str(run.error or last)),)
    return NotesCallout(
        key="view_example_never_raises",
        title=N_("The notes' view example does not raise"),
        ref=NotesRef("004", 131, 132),
        quote_zh="tensor= tensor.view(6,-1) # 不能通过会有异常",
        gloss_en=(
            "After tensor = torch.reshape(tensor, shape), the line tensor = tensor.view(6,-1) "
            "fails with 'view size is not compatible with input tensor's size'."
        ),
        verdict=verdict_if(confirmed, "wrong"),
        today=today,
        today_args=today_args,
        run=run,
    )


def _zero_dim_callout() -> NotesCallout:
    demo = zero_dim_index_demo(TWO_MATCHES_TMP_A)
    recipe = demo.result("tmp_sub_a_1[mask_sub_a_3]")
    shape = demo.result("mask_sub_a_3.shape")
    if _raised(recipe):
        today = N_(
            "With tmp_a = tensor({tmp_a}) (tmp_a[0] occurs twice), inds_a holds two indices, "
            "mask_sub_a_3 has shape {shape}, and tmp_sub_a_1[mask_sub_a_3] raises the same "
            "{recipe}. The recipe helps only when exactly one element matches: a 0-d tensor "
            "takes only a 0-d mask."
        )
        today_args = (
            ("tmp_a", str(list(TWO_MATCHES_TMP_A))),
            ("shape", str(shape)),
            ("recipe", str(recipe)),
        )
    else:
        today = N_(
            "With tmp_a[0] occurring twice, tmp_sub_a_1[mask_sub_a_3] gives {result}: the recipe "
            "holds here too."
        )
        today_args = (("result", str(_first_line(recipe))),)
    return NotesCallout(
        key="zero_dim_mask_recipe",
        title=N_("tmp_a[inds_a] avoids the 0-d IndexError only for a single match"),
        ref=NotesRef("002", 618),
        quote_zh=(
            "建议使用tmp_a[inds_a] > thr 而不是tmp_a[mask_a] > thr, 以免报错IndexError: "
            "too many indices for tensor of dimension 0"
        ),
        gloss_en=(
            "Use tmp_a[inds_a] > thr rather than tmp_a[mask_a] > thr, to avoid IndexError: "
            "too many indices for tensor of dimension 0."
        ),
        verdict="incomplete",
        today=today,
        today_args=today_args,
        run=demo.run,
    )


def notes_callouts() -> list[NotesCallout]:
    """Where this part of the notes is wrong or out of date, each decided by a live run."""
    return [
        _item_callout(),
        _zero_dim_callout(),
        _view_contiguous_callout(),
        _view_example_callout(),
    ]
