"""The saliency lesson's ready-made links: each opens the page set up to make one point.

:class:`~lessons.registry.LessonLink` says what a link holds; ``lessons.registry.lesson_links``
puts every lesson's links together, in menu order.
"""

from __future__ import annotations

from core.text import N_, T
from lessons.registry import LessonLink

LINKS: tuple[LessonLink, ...] = (
    LessonLink(
        "saliency",
        (("saliency.sanity", "true"),),
        N_("The saliency randomisation test"),
        N_(
            "Re-draw the model's layers at random from the top: a map that explains what the model "
            "learned changes at once (Adebayo et al. 2018)."
        ),
        "Randomizing only the top layer (_fc) gives a rank correlation of 0.32",
    ),
    LessonLink(
        "saliency",
        (("saliency.method", "SmoothGrad"),),
        N_("SmoothGrad smooths the speckle"),
        # A template: a "%" right before "of" or "for" reads to gettext as a %-placeholder.
        T(
            "Averaging the gradients of 25 noisy copies spreads the map out: its brightest {top} "
            "of pixels hold {share} of the total saliency, against {vanilla} for one vanilla "
            "gradient.",
            top="1%",
            share="2.3%",
            vanilla="5.3%",
        ),
        "they hold 2.3% of the total saliency",
    ),
    LessonLink(
        "saliency",
        (("saliency.recipe", "The notes' (000:2)"),),
        N_("The notes' saliency recipe, reproduced"),
        N_(
            "The notes' loss gradient, summed over channels and stretched between P1 and P99, "
            "differs from the app's scaling by a few grey levels."
        ),
        "differ by up to 8 grey levels",
    ),
)
