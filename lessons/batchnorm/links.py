"""The batchnorm lesson's ready-made links: each opens the page set up to make one point.

:class:`~lessons.registry.LessonLink` says what a link holds; ``lessons.registry.lesson_links``
puts every lesson's links together, in menu order.
"""

from __future__ import annotations

from core.text import N_
from lessons.registry import LessonLink

LINKS: tuple[LessonLink, ...] = (
    LessonLink(
        "batchnorm",
        (("batchnorm.steps", "1"),),
        N_("BatchNorm in eval() after 1 step"),
        N_(
            "eval() normalizes with running_mean/var, which start at 0 and 1: after one step the "
            "running mean is far from the data's mean of 2 (notes 000:11)."
        ),
        "running_mean 0.2134",
    ),
    LessonLink(
        "batchnorm",
        (("batchnorm.steps", "10"),),
        N_("BatchNorm in eval() after 10 steps"),
        N_("Ten steps at momentum 0.1 bring the running mean only two thirds of the way to 2."),
        "running_mean 1.302",
    ),
    LessonLink(
        "batchnorm",
        (("batchnorm.steps", "100"),),
        N_("BatchNorm in eval() after 100 steps"),
        N_("After 100 steps the running statistics have caught up and eval() output is centred."),
        "running_mean 1.939",
    ),
    LessonLink(
        "batchnorm",
        (
            ("batchnorm.momentum", "0.01"),
            ("batchnorm.steps", "100"),
            ("batchnorm.module_tab", "Keras momentum"),
        ),
        N_("PyTorch's momentum is Keras' upside down"),
        N_(
            "PyTorch's momentum weighs the new batch and Keras' the old average: Keras' default "
            "0.99 is PyTorch's 0.01, and after 100 steps its running mean is still far behind."
        ),
        "running_mean 1.261",
    ),
    LessonLink(
        "batchnorm",
        (("batchnorm.steps", "1"), ("batchnorm.track", "false")),
        N_("track_running_stats=False: eval() is train()"),
        N_(
            "Without running statistics eval() normalizes with the batch's own, exactly like "
            "train() (notes 002:791)."
        ),
        "max |train − eval| 0",
    ),
)
