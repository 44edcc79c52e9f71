"""The lesson registry: every page the app can show, and every lesson's ready-made links.

A page is offered only once its script (``lessons/<slug>/page.py``) exists, so the Home page never
advertises a lesson that has not been built yet. Each lesson writes its links in its own
``lessons/<slug>/links.py``; :func:`lesson_links` puts them together in menu order: the Home page
draws them, the README lists them (a test keeps the two in step), and the browser test opens
every link cold and checks that the page shows :attr:`LessonLink.shows`. Parameter names are the
pages' widget keys (``ui/links.py`` binds each control to the URL under its key).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from core.notes import NotesCallout
from core.text import N_, T

ROOT = Path(__file__).resolve().parent.parent
LESSONS_DIR_NAME = "lessons"  # not "pages/": that name triggers Streamlit's legacy auto-discovery


@dataclass(frozen=True)
class PageSpec:
    """One page of the app: its URL slug, title, icon, one-line summary and script."""

    slug: str
    title: str
    icon: str
    summary: str

    @property
    def script(self) -> Path:
        return ROOT / LESSONS_DIR_NAME / self.slug / "page.py"

    @property
    def relative_script(self) -> str:
        return f"{LESSONS_DIR_NAME}/{self.slug}/page.py"

    def exists(self) -> bool:
        return self.script.is_file()


HOME = PageSpec(
    slug="home",
    title=N_("Home & environment"),
    icon=":material/home:",
    summary=N_("What each page teaches, live software/hardware facts, reproducibility switches."),
)

LESSONS: tuple[PageSpec, ...] = (
    PageSpec(
        "indexing",
        N_("Indexing explainer"),
        ":material/grid_on:",
        N_(
            "scatter_, gather and advanced indexing: which input cell feeds every output cell, "
            "views vs copies, and eight classic pitfalls."
        ),
    ),
    PageSpec(
        "batchnorm",
        N_("BatchNorm explorer"),
        ":material/equalizer:",
        N_(
            "Running statistics, train() vs eval(), momentum, affine and track_running_stats, "
            "checked against nn.BatchNorm."
        ),
    ),
    PageSpec(
        "warp",
        N_("Affine warp playground"),
        ":material/transform:",
        N_(
            "An OpenCV matrix turned into F.affine_grid + F.grid_sample, compared pixel by pixel "
            "with cv2.warpAffine."
        ),
    ),
    PageSpec(
        "saliency",
        N_("Saliency"),
        ":material/visibility:",
        N_(
            "Which pixels drive a real ImageNet classifier's decision (input gradients), offline, "
            "with sanity checks."
        ),
    ),
    PageSpec(
        "flow",
        N_("Flow hole filling"),
        ":material/water:",
        N_(
            "Optical flow with NaN holes filled by multi-scale masked means, with window-size "
            "controls and timing."
        ),
    ),
    PageSpec(
        "memory",
        N_("CUDA memory monitor"),
        ":material/memory:",
        N_(
            "Live allocated / reserved / device memory, and a faithful caching-allocator simulator "
            "for machines without a GPU."
        ),
    ),
    PageSpec(
        "errors",
        N_("Error doctor"),
        ":material/healing:",
        N_(
            "Paste a PyTorch error or traceback: the notes' entry, the message torch prints today, "
            "the cause and the fix, both run live."
        ),
    ),
)


#: Every page (Home and each lesson) by its URL slug.
PAGES_BY_SLUG: dict[str, PageSpec] = {spec.slug: spec for spec in (HOME, *LESSONS)}


def available_lessons() -> list[PageSpec]:
    """The lesson pages whose scripts exist, in menu order."""
    return [page for page in LESSONS if page.exists()]


def available_pages() -> list[PageSpec]:
    """Home followed by every available lesson page."""
    return [HOME, *available_lessons()]


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


@functools.cache
def lesson_links() -> tuple[LessonLink, ...]:
    """Every lesson's ready-made links (``lessons/<slug>/links.py``'s ``LINKS``), in menu order.

    Imported on first use: a lesson's links module imports this one for :class:`LessonLink`."""
    found: list[LessonLink] = []
    for page in available_lessons():
        module = f"lessons.{page.slug}.links"
        if (ROOT / "lessons" / page.slug / "links.py").is_file():
            found.extend(importlib.import_module(module).LINKS)
    return tuple(found)


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
        for lesson in lesson_links()
    )


def _sentence(sentence: str, translate: Callable[[str], str]) -> str:
    if isinstance(sentence, T) and sentence.args:
        return translate(sentence.template).format(**sentence.args)
    return translate(sentence)


_DEFINES_CALLOUTS = re.compile(r"^def notes_callouts\(", re.M)


def callout_modules() -> tuple[str, ...]:
    """Every module that defines ``notes_callouts()``: ``core``'s first (the Home page shows
    them), then each lesson's in menu order. Found by reading the sources, so a module that is
    added, split or renamed is found without a list to keep up to date."""
    folders = [ROOT / "core", *(ROOT / "lessons" / page.slug for page in (HOME, *LESSONS))]
    found = []
    for folder in folders:
        for path in sorted(folder.glob("*.py")):
            if _DEFINES_CALLOUTS.search(path.read_text(encoding="utf-8")):
                found.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return tuple(found)


def lesson_of_module(module: str) -> str:
    """The slug of the page that shows a module's callouts: ``lessons.<slug>.*`` is that lesson,
    a shared module (``core.environment``) is shown on Home."""
    parts = module.split(".")
    return parts[1] if parts[0] == "lessons" else HOME.slug


def all_callouts() -> list[NotesCallout]:
    """Every callout of every module in :func:`callout_modules` (computed live, a few seconds)."""
    callouts: list[NotesCallout] = []
    for name in callout_modules():
        callouts.extend(importlib.import_module(name).notes_callouts())
    return callouts
