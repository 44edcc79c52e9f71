"""The memory page's words: what to look at, control help, notices, and the numbers under the
live chart.

Pure module (no Streamlit). Each fixed text is marked with :func:`core.text.N_`, each sentence
with values is a :class:`core.text.T`; the page shows them through ``ui.i18n.tr``, which
translates the template and then fills in the values. The demos' texts live with the demos
(:mod:`~lessons.memory.eval_memory`, :mod:`~lessons.memory.map_location`,
:mod:`~lessons.memory.cudnn_error`), the figures' alt texts and captions with the figures.

>>> [label for label, _value, _help in metric_cells(SimulatedGpu(8).state())]
['allocated', 'reserved', 'device used', 'not reserved by PyTorch', 'segments']
"""

from __future__ import annotations

from core.text import N_, T
from lessons.memory.allocator_sim import format_size
from lessons.memory.backends import MemoryState, SimulatedGpu
from lessons.memory.figures import BAND_LABEL

LOOK_AT = N_(
    "the gap between **allocated** (your tensors, blue) and **reserved** (PyTorch's cache, "
    "purple), and the grey band on top: memory nvidia-smi also counts but PyTorch does not "
    "(the CUDA context)."
)
#: The device choice that is not a real GPU.
SIM_CHOICE = N_("simulated GPU")

# ------------------------------------------------------------------------------ control help
DEVICE_HELP = N_(
    "The real GPU chosen in the sidebar, or a simulated GPU that follows the same "
    "allocator rules."
)
SCENARIO_HELP = N_(
    "Each scenario frees this session's tensors and empties the cache first, then "
    "runs its steps; the table below the chart lists them."
)
UNIT_HELP = N_("Binary units: 1 KB = 1024 B, as torch reports them.")
LIVE_HELP = N_(
    "Redraw the chart every interval. Off by default on the simulated GPU, which "
    "changes only when you act."
)

#: In place of the snippet before this session has done anything.
NO_SNIPPET = N_(
    "# Allocate something or run a scenario: the snippet reproduces it with torch.cuda."
)

# ------------------------------------------------------------------------------ notices
#: Why a real GPU shared by a class runs no scenario and no Cache-tab call (TP_GPU_MEMORY).
SHARED_GPU_REFUSAL = N_(
    "This GPU is shared by every session of the server (TP_GPU_MEMORY=shared): guided scenarios "
    "and the Cache tab empty the cache, reset the peaks and cap memory for the whole process, "
    "so they run only on the simulated GPU here (choose it above). "
    "Allocate and Free still work on the real device, within this session's quota."
)
#: Where every number of the simulated GPU comes from, over the allocator's views.
SIMULATOR_MODEL = N_(
    "The simulated GPU is a model of PyTorch's caching allocator "
    "(c10/cuda/CUDACachingAllocator.cpp): rounding, pools, best fit, splitting, "
    "merging, empty_cache, retry and OOM. Every number on this page comes from it."
)


def simulated_notice(gpu: SimulatedGpu, *, has_gpu: bool) -> T:
    """The page's one notice that ``gpu`` is simulated (saying so when there is no GPU here).

    >>> simulated_notice(SimulatedGpu(8), has_gpu=True)
    '**SIMULATED** 8 GB GPU, 512.00 MiB CUDA context: nothing runs on hardware.'
    """
    template = (
        N_("**SIMULATED** {total} GB GPU, {context} CUDA context: nothing runs on hardware.")
        if has_gpu
        else N_(
            "**SIMULATED** {total} GB GPU, {context} CUDA context (no GPU here): nothing "
            "runs on hardware."
        )
    )
    return T(template, total=gpu.total_gb, context=format_size(gpu.context_bytes))


def real_device_notice(device: str) -> T:
    """The page's notice on a real ``device``: whose memory its numbers count."""
    return T(
        "Real device {device}: PyTorch's counters cover this server process (all "
        "sessions), NVML the whole device. Your tensors belong to your browser session.",
        device=device,
    )


# ------------------------------------------------------------------------------ the numbers
def metric_cells(current: MemoryState) -> list[tuple[str, str | int, str | None]]:
    """(label, value, help) of each number under the live chart, in the page's order; a value
    that is a text to translate ("n/a") is a ``T``, a size is formatted, the segments a count.
    """
    used, band = current.device_used, current.not_reserved_used
    return [
        (N_("allocated"), format_size(current.allocated), None),
        (N_("reserved"), format_size(current.reserved), None),
        (
            N_("device used"),
            T("n/a") if used is None else format_size(used),
            N_("NVML's number, what nvidia-smi shows (simulated)")
            if current.simulated
            else N_("NVML's number, what nvidia-smi shows"),
        ),
        (
            N_("not reserved by PyTorch"),
            T("n/a") if band is None else format_size(band),
            T("The grey band: {what}.", what=T(BAND_LABEL)),
        ),
        (N_("segments"), current.segments, None),
    ]
