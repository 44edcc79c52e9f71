"""What the Flow page's controls offer: each menu's choices with their labels, and the help
under the controls. Labels and help are catalog messages, translated where the page shows them.
"""

from __future__ import annotations

from core.text import N_

#: Uploaded image pairs are capped at this many pixels a side: Farneback and every method must
#: stay interactive.
IMAGE_CAP = 1024
IMAGE_TYPES = ("png", "jpg", "jpeg", "bmp")
SOURCE_LABELS = {
    "synthetic": N_("Synthetic (ground truth)"),
    "stereo": N_("Motorcycle stereo pair"),
    "affine": N_("Image + affine warp"),
    "upload_flow": N_("Upload a flow file"),
    "upload_pair": N_("Upload two images"),
}
#: Sources whose flow comes from two images: the forward-backward check applies to them only.
IMAGE_SOURCES = ("stereo", "affine", "upload_pair")
MASK_LABELS = {
    "random": N_("Random pixels"),
    "blobs": N_("Blobs"),
    "stripes": N_("Stripes"),
    "border": N_("Border band"),
    "fb": N_("Forward-backward check"),
}

#: The masks a hole fraction, and a hole width, apply to.
FRACTION_MASKS = ("random", "blobs", "stripes")
WIDTH_MASKS = ("blobs", "stripes", "border")
#: The synthetic motion fields' names, shown in the menu (the values stay the fill's names).
FIELD_LABELS = {
    "translation": N_("translation"),
    "rotation": N_("rotation"),
    "zoom": N_("zoom"),
    "shear": N_("shear"),
    "vortex": N_("vortex"),
    "piecewise": N_("piecewise"),
}
SIZES = {"240x320": (240, 320), "480x640": (480, 640), "720x1280": (720, 1280)}
WINDOW_CHOICES = [3, 5, 9, 17, 33, 65, 129]
#: The lazy tabs under the picture; only the open one runs (the first is open on arrival).
DETAIL_TABS = (N_("Window sizes"), N_("Accuracy and speed"), N_("The notes' NumPy loop"))

SOURCE_HELP = N_(
    "Synthetic: a known motion field, so the fill is scored against the ground truth. "
    "Motorcycle stereo pair: Farneback flow on scikit-image's pair. Image + affine warp: "
    "Farneback on an image and a copy warped by a known affine (ground truth). Uploads: a "
    ".flo / .npy flow file, or two images whose Farneback flow is computed here."
)
NOISE_HELP = N_("Gaussian noise on the observed flow; the ground truth stays clean.")
#: Formatted with ``max_side``.
FLOW_FILE_HELP = N_(
    "Middlebury .flo or a .npy of shape (H, W, 2) float, at most {max_side} px a side. NaN in "
    "the file are its holes; a file without NaN gets the mask below."
)
HOLE_WIDTH_HELP = N_("Blob radius, stripe width or border band width, in pixels.")
FB_THRESHOLD_HELP = N_("Hole where flow there and back misses by more than this.")
MAX_WINDOW_HELP = N_("Largest window; the sizes are 2**k + 1 up to it.")
#: Formatted with ``pixels``.
NOTES_SWITCH_HELP = N_(
    "Run and time the notes' vectorised avg_pool2d version (000:80) beside the fast backends, "
    "in the *Accuracy and speed* tab (switching it on opens that tab). It is slow on a CPU, so "
    "it is off by default above {pixels:,} pixels (240x320)."
)
NUMPY_SWITCH = N_("Run the notes' original NumPy loop (one hole at a time)")
#: Formatted with ``limit``.
NUMPY_SWITCH_HELP = N_(
    "The notes' first version (000:79): a Python loop over the hole pixels, a few hundred "
    "microseconds each, so it runs only up to {limit:,} hole pixels."
)


def mask_choices(source: str) -> list[str]:
    """The hole masks offered for ``source``: the forward-backward check needs two images."""
    return [m for m in MASK_LABELS if m != "fb" or source in IMAGE_SOURCES]
