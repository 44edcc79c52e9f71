"""The page registry: one place that lists every page the app can show.

A page is offered only once its script exists, so the Home page never advertises
a lesson that has not been built yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.text import N_

ROOT = Path(__file__).resolve().parent.parent
PAGE_DIR_NAME = "app_pages"  # not "pages/": that name triggers Streamlit's legacy auto-discovery


@dataclass(frozen=True)
class PageSpec:
    """One page of the app: its URL slug, title, icon, one-line summary and script."""

    slug: str
    title: str
    icon: str
    summary: str

    @property
    def script(self) -> Path:
        return ROOT / PAGE_DIR_NAME / f"{self.slug}.py"

    @property
    def relative_script(self) -> str:
        return f"{PAGE_DIR_NAME}/{self.slug}.py"

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
)


def available_lessons() -> list[PageSpec]:
    """The lesson pages whose scripts exist, in menu order."""
    return [page for page in LESSONS if page.exists()]


def available_pages() -> list[PageSpec]:
    """Home followed by every available lesson page."""
    return [HOME, *available_lessons()]
