"""The "More pitfalls from the notes" tab as data: a tab per :mod:`lessons.indexing.pitfalls` demo.

Each :class:`NotesTab` names its tab, the sentence under it, the demo function it runs, the
choices a visitor makes for it (:class:`DemoControl`, whose options and label may follow the
choices before it, as the view vs reshape menus do) and the notes callouts drawn at its end;
the page draws every tab from these, with :func:`source_caption`, :func:`metrics` and
:func:`closing_caption` for what it shows around the demo's run. Widget keys start with
:data:`KEY`; every choice and the tab bar are bound to the URL, so a link can open one demo
with its choices. Pure: no Streamlit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.text import N_, T
from lessons.indexing import pitfalls as ip

#: The key every widget of the tab starts with.
KEY = "indexing.notes_demos"
#: The sentence under the tab's heading.
INTRO = N_(
    "Each snippet runs now in this PyTorch; the verdict is read from what it printed or "
    "raised. Where the notes are wrong or out of date, a box says so."
)

Demo = ip.PitfallDemo | ip.ViewReshapeDemo
Chosen = Mapping[str, Any]
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$:])")


@dataclass(frozen=True)
class DemoControl:
    """A menu (or, with ``radio``, a row of radio buttons) that picks one argument of a demo.

    ``name`` is the widget key after :data:`KEY`. ``label`` (marked text, or code shown as
    written) and ``options`` may be functions of the choices made before this one, by name.
    ``labels`` gives each option's text (a mapping or a function); ``arguments`` maps an option
    to the demo's argument where they differ (the URL carries the option); ``help`` is marked.
    """

    name: str
    label: str | Callable[[Chosen], str]
    options: Sequence[Any] | Callable[[Chosen], Sequence[Any]]
    labels: Mapping[Any, str] | Callable[[Any], str]
    arguments: Mapping[Any, Any] = field(default_factory=dict)
    radio: bool = False
    help: str = ""

    def label_for(self, chosen: Chosen) -> str:
        """The label, given the choices made before this one."""
        return self.label(chosen) if callable(self.label) else self.label

    def options_for(self, chosen: Chosen) -> list[Any]:
        """The options, given the choices made before this one."""
        return list(self.options(chosen) if callable(self.options) else self.options)

    def option_label(self, option: Any) -> str:
        """The text shown for ``option``."""
        return self.labels(option) if callable(self.labels) else self.labels[option]

    def argument(self, option: Any) -> Any:
        """The demo's argument for ``option``."""
        return self.arguments.get(option, option)


@dataclass(frozen=True)
class NotesTab:
    """One tab: its ``label``, the ``caption`` under it, the :mod:`~lessons.indexing.pitfalls`
    function ``demo`` it runs (with one argument per choice, in order), ``source``: a caption
    that replaces the usual citation, and the ``callouts`` drawn at its end."""

    label: str
    caption: str
    demo: str
    choices: tuple[DemoControl, ...] = ()
    source: str = ""
    callouts: tuple[str, ...] = ()

    def arguments(self, chosen: Chosen) -> tuple[Any, ...]:
        """The demo's arguments for the options ``chosen`` (by choice name)."""
        return tuple(choice.argument(chosen[choice.name]) for choice in self.choices)


def shape_label(shape: Sequence[int]) -> str:
    """``(2, 3, 4)`` -> ``"2x3x4"``."""
    return "x".join(str(d) for d in shape)


def args_text(values: Sequence[int]) -> str:
    """``(1, 0, 2)`` -> ``"1, 0, 2"``, the arguments of ``permute``/``view`` as written."""
    return ", ".join(str(v) for v in values)


def shape_after_permute(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    """The shape of ``arange(n).reshape(shape).permute(perm)``, which the view and reshape
    targets are offered for."""
    return tuple(shape[p] for p in perm)


def _permuted(chosen: Chosen) -> tuple[int, ...]:
    return shape_after_permute(chosen["view_shape"], chosen["view_perm"])


#: new_zeros row -> its label, one catalog message each (a link carries the label).
NEW_ZEROS_ROW_LABELS = {0: N_("row 0"), 1: N_("row 1"), 2: N_("row 2 (the notes' example)")}

TABS: tuple[NotesTab, ...] = (
    NotesTab(
        N_(".item() on empty"),
        N_("nonzero on a mask with no True gives shape (0, 1); .item() needs one element."),
        "item_on_empty_demo",
        callouts=("item_empty_error",),
    ),
    NotesTab(
        "0 < a < 2",
        N_("Python chains comparisons with `and`, and `&` binds tighter than `>`."),
        "chained_comparison_demo",
        (
            DemoControl(
                "one_value",
                N_("One-element tensor `one`"),
                ip.ONE_VALUES,
                lambda v: f"one = torch.tensor([{v}])",
                help=N_("On a one-element tensor the wrong forms do not raise: are they right?"),
            ),
        ),
    ),
    NotesTab(
        N_("0-d masks"),
        N_("tmp_a[0] is 0-d; a boolean mask must have exactly the shape it indexes."),
        "zero_dim_index_demo",
        (
            DemoControl(
                "zero_dim_case",
                "tmp_a",
                ("notes", "two_matches"),
                {
                    "notes": N_("tmp_a[0] occurs once (the notes' case)"),
                    "two_matches": N_("tmp_a[0] occurs twice"),
                },
                {"notes": ip.NOTES_ZERO_DIM_TMP_A, "two_matches": ip.TWO_MATCHES_TMP_A},
                radio=True,
            ),
        ),
        callouts=("zero_dim_mask_recipe",),
    ),
    NotesTab(
        N_("view(-1) order"),
        N_("view(-1) reads a contiguous tensor row by row; a transposed one needs a copy."),
        "view_order_demo",
    ),
    NotesTab(
        N_("view vs reshape"),
        N_(
            "view never copies: it works when the new shape fits the strides. reshape is a view "
            "when it can be and a copy otherwise (storage pointers compared below)."
        ),
        "view_or_reshape",
        (
            DemoControl("view_shape", "x = arange(n).reshape(...)", ip.VIEW_SHAPES, shape_label),
            DemoControl(
                "view_perm",
                N_("then .permute(...)"),
                lambda chosen: ip.permutations_of(len(chosen["view_shape"])),
                lambda perm: f"permute({args_text(perm)})",
            ),
            DemoControl(
                "view_target",
                lambda chosen: T(
                    "new shape for the {shape} tensor", shape=shape_label(_permuted(chosen))
                ),
                lambda chosen: ip.reshape_targets(_permuted(chosen)),
                lambda target: f"view / reshape({args_text(target)})",
            ),
        ),
        callouts=("view_needs_contiguous", "view_example_never_raises"),
    ),
    NotesTab(
        N_("in-place + backward"),
        N_(
            "Autograd counts in-place changes (tensor._version) and refuses a gradient that "
            "needs an old value. The notes (000:76) suspect += together with slicing; a plain "
            "+= is enough when the op kept its output."
        ),
        "inplace_autograd_demo",
        (
            DemoControl(
                "inplace_variant",
                N_("Forward op, then the change"),
                tuple(ip.INPLACE_VARIANTS),
                {key: label for key, (_, _, label) in ip.INPLACE_VARIANTS.items()},
            ),
        ),
        source=T(
            "The error the {ref} quote, which the {ref_000} blame on += with slicing; "
            "reproduced with a small example of our own.",
            ref=T("notes {ref}", ref=ip.INPLACE_REF),
            ref_000=T("notes {ref}", ref=ip.INPLACE_REF_000),
        ),
    ),
    NotesTab(
        "new_zeros",
        N_("Copy values into a new tensor instead of writing through a view of the old one."),
        "new_zeros_demo",
        (DemoControl("new_zeros_row", N_("Row to copy"), ip.NEW_ZEROS_ROWS, NEW_ZEROS_ROW_LABELS),),
    ),
)


def source_caption(tab: NotesTab, demo: Demo) -> str | None:
    """The caption that says where ``demo`` comes from when the usual citation (verbatim, or a
    variation) would not be true: the tab's own ``source``, or the notes' own inputs whose
    output today differs from what the notes print. ``None``: cite as usual."""
    if tab.source:
        return tab.source
    if demo.verbatim and demo.matches_notes is False:
        return T(
            "From the {ref}: the notes' own inputs; today's output differs from "
            "what the notes print (see the verdict).",
            ref=T("notes {ref}", ref=demo.ref),
        )
    return None


def metrics(demo: Demo) -> tuple[tuple[str, str], ...]:
    """``(label, value)`` figures shown above a demo's run: for view vs reshape, whether x is
    contiguous, whether view worked and whether reshape shared x's storage (values marked)."""
    if not isinstance(demo, ip.ViewReshapeDemo):
        return ()
    target = args_text(demo.new_shape)
    return (
        ("x.is_contiguous()", str(demo.is_contiguous)),
        (f"view({target})", N_("view") if demo.view_ok else N_("refused")),
        (
            f"reshape({target})",
            N_("view (same storage)") if demo.reshape_shares_storage else N_("copy"),
        ),
    )


def closing_caption(demo: Demo) -> str | None:
    """The caption under a demo's run: for view vs reshape, when it is the notes' own case; for
    the in-place demo, the way to the same error in the error doctor (a link relative to this
    page, so it works under a path prefix too)."""
    if isinstance(demo, ip.ViewReshapeDemo) and (demo.shape, demo.perm) == ((2, 3, 4), (1, 0, 2)):
        return N_("This is the notes' case: torch.rand(2, 3, 4) with dims 0 and 1 swapped.")
    if isinstance(demo, ip.PitfallDemo) and demo.key == "inplace_autograd":
        return N_(
            "The error doctor has this error beside the notes' other errors: "
            "[modified by an inplace operation](errors?errors.entry=inplace)."
        )
    return None


def escape_markdown(text: str) -> str:
    """Escape markdown so a verdict (which quotes torch's messages) shows as written."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", text)
