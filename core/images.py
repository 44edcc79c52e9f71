"""Decode user images into one canonical form: RGB ``uint8`` arrays of shape (H, W, 3).

Pillow does the decoding because it can read an image's size from the header
without touching the pixels (the decompression-bomb check needs that), applies
EXIF orientation, and knows every mode we have to normalise (grayscale, RGBA,
palette, 16-bit, CMYK, animated). OpenCV then does the resizing.
Everything happens in memory: uploads are never written to disk.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageOps

from core.text import T

DEFAULT_MAX_SIDE = 2048
# 25 Mpx (e.g. 6000 x 4000, a high-end phone or camera photo): every photo a learner uploads
# fits, and decoding one stays near 200 MB of memory at most, shared by a whole class on one
# server. Larger files are refused from their header, before any pixel is decoded.
DEFAULT_MAX_PIXELS = 25_000_000
#: Rows of a 16-bit image converted at once: the wide temporary stays a few MB, never full-size.
_BAND_PIXELS = 1 << 20
ACCEPTED_FORMATS = ("PNG", "JPEG", "WEBP", "BMP", "TIFF", "GIF")
UPLOAD_EXTENSIONS = ("png", "jpg", "jpeg", "webp", "bmp", "tif", "tiff", "gif")
SAMPLE_NAMES = (
    "chelsea.png",
    "coffee.png",
    "astronaut.png",
    "rocket.jpg",
    "horse.png",
    "motorcycle_left.png",
    "motorcycle_right.png",
    "camera.png",
)


class ImageDecodeError(ValueError):
    """The bytes are not an image this app can use; the message says why and what to do."""


@dataclass(frozen=True)
class DecodedImage:
    """A decoded image and what was done to it on the way.

    Attributes:
        rgb: (H, W, 3) uint8, C-contiguous, RGB order.
        original_size: (width, height) as stored in the file, before EXIF rotation.
        format: the container format Pillow detected, e.g. ``"PNG"``.
        mode: the Pillow mode of the file, e.g. ``"RGBA"`` or ``"I;16"``.
        notes: plain-language notices for the page (downscaled, converted, rotated ...).
    """

    rgb: np.ndarray
    original_size: tuple[int, int]
    format: str
    mode: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def downscaled(self) -> bool:
        return any(note.startswith("Downscaled") for note in self.notes)


def _open_header(data: bytes) -> Image.Image:
    """Open lazily: Pillow parses only the header here, not the pixel data."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ImageDecodeError(T("expected the file's bytes, got {kind}", kind=type(data).__name__))
    if len(data) == 0:
        raise ImageDecodeError(T("The file is empty (0 bytes). Choose an image file with content."))
    try:
        with warnings.catch_warnings():
            # Our own, stricter size check runs right after; Pillow's warning would be noise.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(bytes(data)))
    except Image.DecompressionBombError as error:
        # Pillow refuses headers above 2x its own limit (about 179 Mpx) inside Image.open, so
        # the width and height never reach us; its message still gives the pixel count.
        found = re.search(r"\((\d+) pixels\)", str(error))
        raise ImageDecodeError(
            _too_large_message(int(found.group(1)) if found else None, DEFAULT_MAX_PIXELS)
        ) from error
    except (OSError, SyntaxError, ValueError) as error:
        # Pillow's "cannot identify image file <_io.BytesIO object at 0x...>" helps nobody.
        accepted = ", ".join(ACCEPTED_FORMATS)
        if "cannot identify" in str(error):
            message = T(
                "This file is not an image that can be read (accepted: {accepted}).",
                accepted=accepted,
            )
        else:
            message = T(
                "This file is not an image that can be read (accepted: {accepted}). "
                "Details: {error}",
                accepted=accepted,
                error=str(error),
            )
        raise ImageDecodeError(message) from error
    if image.format not in ACCEPTED_FORMATS:
        raise ImageDecodeError(
            T(
                "{format} images are not supported; use one of {accepted}.",
                format=image.format,
                accepted=", ".join(ACCEPTED_FORMATS),
            )
        )
    return image


def read_image_size(data: bytes) -> tuple[int, int]:
    """``(width, height)`` as the file's header declares them, before EXIF rotation, without
    decoding a pixel.

    Raises:
        ImageDecodeError: (a ``ValueError``) for empty, non-image or unsupported files, and
            headers far beyond Pillow's own limit.
    """
    return _open_header(data).size


def _check_pixel_budget(image: Image.Image, max_pixels: int) -> None:
    width, height = image.size
    if width <= 0 or height <= 0:
        raise ImageDecodeError(
            T(
                "The image header declares an empty size {width}x{height}.",
                width=width,
                height=height,
            )
        )
    if width * height > max_pixels:
        raise ImageDecodeError(_too_large_message(width * height, max_pixels, (width, height)))


def _megapixels(pixels: int) -> str:
    """``25_000_000`` -> ``"25"``, ``158_760_000`` -> ``"158.8"``, ``100`` -> ``"0.0001"``."""
    return f"{pixels / 1e6:.4g}" if pixels < 1_000_000 else f"{pixels / 1e6:.1f}".removesuffix(".0")


def _too_large_message(pixels: int | None, limit: int, size: tuple[int, int] | None = None) -> T:
    """The refusal of an image whose header declares more than ``limit`` pixels."""
    hint = T("Resize it to at most {limit_mpx} Mpx (for example 6000x4000) and upload it again.",
             limit_mpx=_megapixels(limit))
    if size is not None:
        return T(
            "The image is too large: its header declares {width}x{height} = {pixels:,} pixels "
            "({mpx} Mpx), more than the limit of {limit_mpx} Mpx ({limit:,} pixels). Files "
            "like this are often decompression bombs. {hint}",
            width=size[0], height=size[1], pixels=pixels, mpx=_megapixels(pixels),
            limit_mpx=_megapixels(limit), limit=limit, hint=hint,
        )
    if pixels is not None:
        return T(
            "The image is too large: its header declares {pixels:,} pixels ({mpx} Mpx), far "
            "more than the limit of {limit_mpx} Mpx ({limit:,} pixels). Files like this are "
            "often decompression bombs. {hint}",
            pixels=pixels, mpx=_megapixels(pixels), limit_mpx=_megapixels(limit), limit=limit,
            hint=hint,
        )
    return T(
        "The image is too large: its header declares a size far beyond the limit of "
        "{limit_mpx} Mpx ({limit:,} pixels). Files like this are often decompression bombs. "
        "{hint}",
        limit_mpx=_megapixels(limit), limit=limit, hint=hint,
    )


def _load_first_frame(image: Image.Image) -> tuple[Image.Image, list[str]]:
    notes = []
    frames = getattr(image, "n_frames", 1)
    if frames > 1:
        image.seek(0)
        notes.append(
            T("Animated image with {frames} frames: using the first frame.", frames=frames)
        )
    try:
        image.load()
    except (OSError, SyntaxError, ValueError, EOFError) as error:
        raise ImageDecodeError(
            T(
                "The {format} file is damaged or truncated and cannot be decoded ({error}). "
                "Re-export or re-download the image and try again.",
                format=image.format,
                error=str(error),
            )
        ) from error
    return image, notes


def _bands(image: Image.Image) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, (rows, W) array)`` for consecutive bands of rows of a one-channel image,
    each about :data:`_BAND_PIXELS` pixels, so no full-size NumPy copy of the image is made."""
    width, height = image.size
    rows = max(1, _BAND_PIXELS // max(width, 1))
    for top in range(0, height, rows):
        bottom = min(height, top + rows)
        yield top, np.asarray(image.crop((0, top, width, bottom)))


def _high_bit_depth_to_8bit(image: Image.Image) -> tuple[Image.Image, str]:
    """Scale 16-bit integer or float grayscale to 0..255 without clipping the useful range.

    Works band by band into one (H, W) uint8 array: 16-bit values become
    ``round(v / 65535 * 255)`` in integer arithmetic (``(v + 128) // 257``, exactly equal for
    integers); other ranges are stretched in float32 (within one level of float64).
    """
    width, height = image.size
    gray = np.empty((height, width), np.uint8)
    note = T("Converted 16-bit grayscale to 8-bit.")
    sixteen_bit = image.mode.startswith("I;16")
    low = high = 0.0
    if not sixteen_bit:  # "I" (32-bit int) or "F" (float): the range decides the scaling
        lows, highs = [], []
        for _, band in _bands(image):
            finite = band[np.isfinite(band)] if image.mode == "F" else band
            if finite.size:
                lows.append(float(finite.min()))
                highs.append(float(finite.max()))
        low, high = (min(lows), max(highs)) if lows else (0.0, 0.0)
        sixteen_bit = image.mode == "I" and low >= 0 and high <= 65535
    if sixteen_bit:
        for top, band in _bands(image):
            scaled = (band.astype(np.uint32) + 128) // 257
            gray[top : top + band.shape[0]] = scaled
    else:
        span = high - low if high > low else 1.0
        for top, band in _bands(image):
            values = np.nan_to_num(band.astype(np.float32), nan=low, posinf=high, neginf=low)
            scaled = np.rint((values - np.float32(low)) * np.float32(255.0 / span))
            gray[top : top + band.shape[0]] = np.clip(scaled, 0, 255)
        note = T(
            "Converted {mode}-mode (range {low:g}..{high:g}) grayscale to 8-bit.",
            mode=image.mode,
            low=low,
            high=high,
        )
    return Image.fromarray(gray, mode="L"), note


def _to_rgb(image: Image.Image, max_side: int) -> tuple[np.ndarray, list[str], float]:
    """(H, W, 3) uint8 RGB shrunk to ``max_side`` (:func:`fit_longest_side`), the notes, and
    the scale applied."""
    notes = []
    mode = image.mode
    if mode in ("I", "I;16", "I;16B", "I;16L", "I;16N", "F"):
        image, note = _high_bit_depth_to_8bit(image)
        notes.append(note)
    if mode == "P":
        has_alpha = "transparency" in image.info
        image = image.convert("RGBA" if has_alpha else "RGB")
    if image.mode in ("RGBA", "LA", "PA", "La", "RGBa"):
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, rgba)
        notes.append(T("Transparent areas were composited on white."))
    if image.mode in ("L", "1"):
        notes.append(T("Grayscale image: the single channel is repeated as R, G and B."))
        # Shrinking the one channel, then repeating it, gives the very pixels that shrinking
        # the RGB copy would (INTER_AREA treats each channel alone), without a full-size
        # RGB copy (Pillow's is 4 bytes a pixel, NumPy's 3 more).
        gray, scale = fit_longest_side(np.asarray(image.convert("L"), dtype=np.uint8), max_side)
        return cv2.cvtColor(gray, cv2.COLOR_GRAY2RGB), notes, scale
    rgb = np.ascontiguousarray(np.asarray(image.convert("RGB"), dtype=np.uint8))
    rgb, scale = fit_longest_side(rgb, max_side)
    return rgb, notes, scale


def fit_longest_side(rgb: np.ndarray, max_side: int) -> tuple[np.ndarray, float]:
    """Shrink ``rgb`` (H, W, C) so that max(H, W) <= ``max_side``; never enlarge.

    Returns:
        The (possibly) resized image and the scale factor applied (1.0 if unchanged).
    """
    if max_side < 1:
        raise ValueError(
            T("max_side must be a positive number of pixels, got {max_side}", max_side=max_side)
        )
    height, width = rgb.shape[:2]
    longest = max(height, width)
    if longest <= max_side:
        return rgb, 1.0
    scale = max_side / longest
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    # INTER_AREA averages the source pixels under each output pixel: no aliasing on shrink.
    return cv2.resize(rgb, size, interpolation=cv2.INTER_AREA), scale


def decode_image(
    data: bytes,
    *,
    max_side: int = DEFAULT_MAX_SIDE,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> DecodedImage:
    """Decode image file bytes to RGB uint8 (H, W, 3).

    Applies EXIF orientation, takes the first frame of animations, composites
    transparency on white, expands grayscale/palette/16-bit to 8-bit RGB and
    shrinks the result so its longest side is at most ``max_side``.

    Args:
        data: the raw file content (PNG, JPEG, WebP, BMP, TIFF or GIF).
        max_side: longest side allowed after decoding, in pixels.
        max_pixels: refuse files whose *header* declares more pixels than this,
            before any pixel data is decoded.

    Returns:
        A :class:`DecodedImage`.

    Raises:
        ImageDecodeError: (a ``ValueError``) for empty, non-image, truncated,
            unsupported or oversized files; the message is meant for the user.
        ValueError: for a non-positive ``max_side`` or ``max_pixels``.
    """
    if max_side < 1:
        raise ValueError(
            T("max_side must be a positive number of pixels, got {max_side}", max_side=max_side)
        )
    if max_pixels < 1:
        raise ValueError(T("max_pixels must be positive, got {max_pixels}", max_pixels=max_pixels))
    image = _open_header(data)
    _check_pixel_budget(image, max_pixels)
    original_size, file_format, file_mode = image.size, image.format, image.mode
    image, notes = _load_first_frame(image)
    orientation = image.getexif().get(0x0112, 1)
    if orientation not in (None, 1):
        image = ImageOps.exif_transpose(image)
        notes.append(
            T(
                "Applied EXIF orientation {orientation} (the camera's rotation flag).",
                orientation=orientation,
            )
        )
    shown_width, shown_height = image.size  # after EXIF rotation, unlike original_size
    rgb, convert_notes, scale = _to_rgb(image, max_side)
    notes += convert_notes
    if scale != 1.0:
        notes.append(
            T(
                "Downscaled from {width}x{height} to "
                "{new_width}x{new_height} so the longest side is at most {max_side} px.",
                width=shown_width,
                height=shown_height,
                new_width=rgb.shape[1],
                new_height=rgb.shape[0],
                max_side=max_side,
            )
        )
    return DecodedImage(rgb, original_size, file_format, file_mode, tuple(notes))


def sample_dir() -> Path:
    """The ``data/`` folder inside the installed scikit-image wheel (no download needed)."""
    import skimage  # imported lazily: only the sample list needs it

    return Path(skimage.__file__).resolve().parent / "data"


def list_samples() -> list[str]:
    """Bundled sample image names that exist in this scikit-image install."""
    folder = sample_dir()
    return [name for name in SAMPLE_NAMES if (folder / name).is_file()]


def read_sample_bytes(name: str) -> bytes:
    """Raw bytes of a bundled sample image.

    Raises:
        ValueError: if ``name`` is not one of :func:`list_samples`.
    """
    if name not in SAMPLE_NAMES:
        raise ValueError(
            T(
                "unknown sample image {name!r}; choose one of {names}",
                name=name,
                names=", ".join(SAMPLE_NAMES),
            )
        )
    path = sample_dir() / name
    if not path.is_file():
        raise ValueError(
            T(
                "sample image {name!r} is missing from scikit-image's data folder {path}",
                name=name,
                path=str(path),
            )
        )
    return path.read_bytes()


def load_sample(name: str, *, max_side: int = DEFAULT_MAX_SIDE) -> DecodedImage:
    """Decode a bundled sample image exactly as an upload would be decoded."""
    return decode_image(read_sample_bytes(name), max_side=max_side)
