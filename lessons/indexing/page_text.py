"""The indexing page's longer sentences: what to look at, help texts, hints and notices.

English, marked for the catalog (:func:`core.text.N_`); the page shows each in the visitor's
language (``ui.i18n._``) and fills in the ``{values}`` after translating. Kept here so that
the page reads as the story of its controls and pictures. Pure: no Streamlit.
"""

from __future__ import annotations

from core.text import N_

LOOK_AT = N_(
    "each cell of **out** takes the colour of the input cell its value came from. Click an "
    "out cell (or pick it in *Explain cell*): its sources get a black frame and its formula "
    "appears with the real numbers."
)

# ---- the controls beside the picture
PRESET_HELP = N_("The notes' examples, verbatim, and labelled variations of them.")
REDUCE_HELP = N_(
    "none = plain scatter_; scatter_add = scatter_add_; add/multiply = the "
    "deprecated scatter_(..., reduce=); the rest = scatter_reduce_."
)
INCLUDE_SELF_HELP = N_(
    "scatter_reduce_ modes only (sum, prod, mean, amax, amin): also combine "
    "the value already in dest."
)
RELOAD_HELP = N_("Restore the preset's tensors, dim and reduce after editing them.")
RANDOM_HELP = N_(
    "Its number of dims is set under the tensors; drawn from the global seed "
    "({seed}) in the sidebar."
)
CELL_HELP = N_("Or click a cell of the out picture: its sources get a black frame.")

# ---- the tensors and the picture
FIRST_HELP = N_("A nested list, {limits} (3-D shown as slices).")
INDEX_HELP = N_("Whole numbers, same number of dims as the tensor.")
SRC_HELP = N_("A nested list shaped at least like index, or one number such as 6 or 1.23.")
CASE_ERROR_HINT = N_(
    "Fix the value named above (the tensors are under the picture), pick another "
    "dim, or reload a preset: the rest of the page keeps working."
)
TORCH_WORDS = N_(
    "The text after *torch refused:* is **torch's own error message**, exactly what "
    "your program would see:\n\n`{error}`"
)

# ---- the x[...] tab
INDEX_INTRO = N_(
    "Type what goes between the brackets of `x[...]`: numbers, slices (`1:`, `::2`), "
    "`None`, `...`, integer lists and True/False masks."
)
INDEX_ERROR_HINT = N_("Change the expression or x; the rest of the page still works.")
SEEDED = N_("Tensors drawn from the global seed {seed}; change it in the sidebar.")


def editors(op: str) -> tuple[tuple[str, str, str, bool], ...]:
    """The case's three tensor editors for ``op`` (gather or scatter): ``(name, label, help,
    disabled)``; a help's ``{limits}`` takes the page's size limits. src is scatter's only."""
    first = "input" if op == "gather" else "dest"
    return (
        ("first", first, FIRST_HELP, False),
        ("index", "index", INDEX_HELP, False),
        ("src", N_("src (scatter only)"), SRC_HELP, op != "scatter"),
    )
