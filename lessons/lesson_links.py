"""The app's ready-made lessons: links that open a page in a state that makes one point.

One list, :data:`LESSON_LINKS`, is the only place a lesson is written: the Home page draws it,
the README lists it (a test keeps the two in step), and the browser test opens every link cold
and checks that the page shows :attr:`LessonLink.shows`. Parameter names are the pages' widget
keys (``ui/links.py`` binds each control to the URL under its key).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from core.indexing import PRESETS_BY_KEY
from core.text import N_, T


@dataclass(frozen=True)
class LessonLink:
    """One lesson: a page (``slug``), the query parameters that set it up, a short title, one
    sentence saying what it shows, and ``shows``: text the page then displays that proves the
    point (a number the real operation computed; tests look for it on the page)."""

    slug: str
    params: tuple[tuple[str, str], ...]
    title: str
    sentence: str
    shows: str

    @property
    def query(self) -> str:
        """The URL's query string, ``key=value&...``, encoded."""
        return urlencode(self.params)

    @property
    def path(self) -> str:
        """The link relative to the app's root, e.g. ``/warp?warp.notes=true``."""
        return f"/{self.slug}?{self.query}"


def _preset(key: str) -> tuple[str, str]:
    """The indexing page's preset menu as a link names it (its label; see Preset.menu_label)."""
    return ("indexing.preset", PRESETS_BY_KEY[key].menu_label)


LESSON_LINKS: tuple[LessonLink, ...] = (
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


def _keep(text: str) -> str:
    return text


def lessons_markdown(
    base: str, page_titles: Mapping[str, str], translate: Callable[[str], str] = _keep
) -> str:
    """Every lesson as a markdown list item, ``- **[title](base + path)** (page): sentence``.

    ``base`` prefixes each link: ``""`` gives relative links (``warp?...``, the Home page: they
    keep working when the app is served under a path prefix), ``"http://localhost:8501/"`` the
    README's. ``page_titles`` maps a slug to its page's title (as it should be shown).
    ``translate`` (default: none, English) translates each title and sentence and the item's
    layout; the links' targets stay as they are. Titles and sentences are this module's own
    text, never a visitor's.
    """
    item = translate(N_("- **[{title}]({link})** ({page}): {sentence}"))
    return "\n".join(
        item.format(
            title=translate(lesson.title),
            link=f"{base}{lesson.slug}?{lesson.query}",
            page=page_titles.get(lesson.slug, lesson.slug),
            sentence=_sentence(lesson.sentence, translate),
        )
        for lesson in LESSON_LINKS
    )


def _sentence(sentence: str, translate: Callable[[str], str]) -> str:
    if isinstance(sentence, T) and sentence.args:
        return translate(sentence.template).format(**sentence.args)
    return translate(sentence)
