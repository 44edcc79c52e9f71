"""The memory lesson's ready-made links: each opens the page set up to make one point.

:class:`~lessons.registry.LessonLink` says what a link holds; ``lessons.registry.lesson_links``
puts every lesson's links together, in menu order.
"""

from __future__ import annotations

from core.text import N_
from lessons.registry import LessonLink

LINKS: tuple[LessonLink, ...] = (
    LessonLink(
        "memory",
        (("memory.allocator_tab", "memory_stats"),),
        N_("A 4-byte tensor reserves 2 MiB"),
        N_(
            "torch.zeros(1) asks for 4 bytes; the caching allocator rounds the block up to 512 B "
            "and reserves a whole 2 MiB segment from the GPU for it."
        ),
        "512 B allocated, 2 MiB reserved",
    ),
    LessonLink(
        "memory",
        (
            ("memory.scenario", "Fragmentation OOM and retry"),
            ("memory.allocator_tab", "Fragmentation"),
        ),
        N_("Out of memory with memory free"),
        N_(
            "The free cached memory is split into pieces smaller than the request, so the "
            "allocation fails until the cache is released and the call retried."
        ),
        "(fragmentation 50%)",
    ),
    LessonLink(
        "memory",
        (
            ("memory.scenario", "empty_cache and a pinned segment"),
            ("memory.allocator_tab", "Fragmentation"),
        ),
        N_("empty_cache releases only whole free segments"),
        N_(
            "One live 4-byte tensor pins its 2 MiB segment: empty_cache() gives back 20 MiB and "
            "keeps the 2 MiB."
        ),
        "2.00 MiB",
    ),
)
