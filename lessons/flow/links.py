"""The flow lesson's ready-made links: each opens the page set up to make one point.

:class:`~lessons.registry.LessonLink` says what a link holds; ``lessons.registry.lesson_links``
puts every lesson's links together, in menu order.
"""

from __future__ import annotations

from core.text import N_
from lessons.registry import LessonLink

LINKS: tuple[LessonLink, ...] = (
    LessonLink(
        "flow",
        (("flow.mask", "Stripes"), ("flow.hole_size", "40"), ("flow.max_window", "9")),
        N_("A hole wider than the largest window stays a hole"),
        N_(
            "Stripes 40 px wide and windows up to 9x9: the middle of each stripe has no valid "
            "neighbour within reach, so those values stay NaN until max_window grows."
        ),
        "38,400 hole values stayed NaN",
    ),
)
