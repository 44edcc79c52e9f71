"""The error doctor's ready-made links: each opens the page on one entry that makes a point.

:class:`~lessons.registry.LessonLink` says what a link holds; ``lessons.registry.lesson_links``
puts every lesson's links together, in menu order.
"""

from __future__ import annotations

from core.text import N_
from lessons.registry import LessonLink

LINKS: tuple[LessonLink, ...] = (
    LessonLink(
        "errors",
        (("errors.query", "CUDA error: device-side assert triggered"),),
        N_("A device-side assert, explained on a CPU"),
        N_(
            "The notes blame a shape mismatch; on a CPU the same mistake names itself: a class "
            "label past the last class (notes 000:76)."
        ),
        "Target 3 is out of bounds.",
    ),
    LessonLink(
        "errors",
        (("errors.entry", "load-whole-model"),),
        N_("torch.load of a whole model fails today"),
        N_(
            "The notes save and load a whole model; since torch 2.6 torch.load refuses pickled "
            "code by default (weights_only=True) and the state_dict way runs (notes 000:63)."
        ),
        "Weights only load failed",
    ),
)
