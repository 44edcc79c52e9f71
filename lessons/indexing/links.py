"""The indexing lesson's ready-made links: each opens the page set up to make one point.

:class:`~lessons.registry.LessonLink` says what a link holds; ``lessons.registry.lesson_links``
puts every lesson's links together, in menu order.
"""

from __future__ import annotations

from core.text import N_
from lessons.indexing.presets import PRESETS_BY_KEY
from lessons.registry import LessonLink


def _preset(key: str) -> tuple[str, str]:
    """The page's preset menu as a link names it (its label; see Preset.menu_label)."""
    return ("indexing.preset", PRESETS_BY_KEY[key].menu_label)


LINKS: tuple[LessonLink, ...] = (
    LessonLink(
        "indexing",
        (_preset("scatter_y2"),),
        N_("y2: two writes to one cell"),
        N_(
            "In the notes' y2 two index entries send x[0][0] and x[1][0] to the same cell: one of "
            "them wins, and which one is unspecified (notes 002:926)."
        ),
        "out[0][0] = src[0][0] = 0.3992 or src[1][0] = 0.5735 -> 0.5735",
    ),
    LessonLink(
        "indexing",
        (_preset("gather_out_of_range"),),
        N_("gather with an index out of range"),
        N_(
            "Index 3 on a dimension of size 3 is refused by torch with an error naming the bad "
            "index, instead of reading whatever lies past the row (notes 002:1041)."
        ),
        "index 3 is out of bounds for dimension 1 with size 3",
    ),
)
