"""The warp lesson's ready-made links: each opens the page set up to make one point.

:class:`~lessons.registry.LessonLink` says what a link holds; ``lessons.registry.lesson_links``
puts every lesson's links together, in menu order.
"""

from __future__ import annotations

from core.text import N_
from lessons.registry import LessonLink

LINKS: tuple[LessonLink, ...] = (
    LessonLink(
        "warp",
        (("warp.notes", "true"), ("warp.scale", "1.3")),
        N_("The notes' affine2theta is half a pixel off"),
        N_(
            "At 30° and scale 1.3 the notes' theta (align_corners=False) shifts every sample by "
            "about 0.36 px; the corrected theta matches OpenCV."
        ),
        "|shift| = 0.360 px",
    ),
    LessonLink(
        "warp",
        (("warp.notes", "true"), ("warp.align_corners", "true")),
        N_("align_corners=True moves the error"),
        N_(
            "With align_corners=True the notes' 2/W scaling stretches the sampling about the "
            "top-left corner instead of shifting it evenly."
        ),
        "misplaced by 0.372 px on average",
    ),
    LessonLink(
        "warp",
        (("warp.definition", "Matrix entries"), ("warp.matrix_text", "1 2 0\n2 4 0")),
        N_("A singular matrix cannot be inverted"),
        N_(
            "Proportional rows give determinant 0: grid_sample needs M's inverse, so nothing can "
            "be warped and the page says why."
        ),
        "has determinant 0",
    ),
)
