"""Pictures for ``st.image``, encoded once per process: every session gets the same PNG bytes.

Given an array, ``st.image`` encodes it on every run of every session (a JPEG unless it has an
alpha channel, and resized again when a ``width`` is smaller). A class of 50 opening a page
paid that for every picture, 2-10 ms each on the server's one GIL. Pages name a picture by
what determines it (an image digest, a warp case) and show the cached PNG bytes as they are;
pictures a page made itself go side by side with :func:`side_by_side`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import cv2
import numpy as np
import streamlit as st

from core.figure_style import png_bytes
from ui.caching import bounded_cache
from ui.i18n import tr

#: A shared PNG lives at most this long without being asked for again (a lesson's hour).
SHARED_PNG_TTL_S = 3600


def digest(pixels: np.ndarray) -> str:
    """A name for ``pixels``' values, shape and dtype (SHA-256): equal pictures, equal names."""
    header = f"{pixels.shape}{pixels.dtype}".encode()
    return hashlib.sha256(header + np.ascontiguousarray(pixels).tobytes()).hexdigest()


def file_digest(data: bytes) -> str:
    """A name for a file's bytes (SHA-256): uploads are cached under it, so Streamlit never
    hashes the bytes themselves on a rerun."""
    return hashlib.sha256(data).hexdigest()


#: Session state: Streamlit's file_id -> the SHA-256 of that uploaded file's bytes.
_UPLOAD_DIGESTS = "_upload_digests"


def upload_digest(uploaded) -> str:
    """:func:`file_digest` of an ``st.file_uploader`` file, taken once per uploaded file
    (Streamlit gives each upload its own ``file_id``), not on every rerun: hashing a 30 MB flow
    file costs tens of ms. The session remembers its last few uploads only."""
    known: dict[str, str] = st.session_state.setdefault(_UPLOAD_DIGESTS, {})
    if uploaded.file_id not in known:
        while len(known) >= 8:
            known.pop(next(iter(known)))
        known[uploaded.file_id] = file_digest(uploaded.getvalue())
    return known[uploaded.file_id]


@bounded_cache(kind="resource", max_entries=128, ttl=SHARED_PNG_TTL_S)  # PNGs > 32 MB: not kept
def shared_png(key: tuple, max_width: int | None, _pixels: np.ndarray) -> bytes:
    """PNG bytes of the (H, W[, 3]) uint8 ``_pixels`` that ``key`` names, scaled down to at
    most ``max_width`` pixels wide (area averaging) first. ``_pixels`` is not hashed: two
    sessions with the same key get the first one's picture, so the key must determine it."""
    pixels = _pixels
    height, width = pixels.shape[:2]
    if max_width is not None and width > max_width:
        size = (max_width, max(1, round(height * max_width / width)))
        pixels = cv2.resize(np.ascontiguousarray(pixels), size, interpolation=cv2.INTER_AREA)
    return png_bytes(pixels)


def show_image(pixels: np.ndarray, key: tuple | None = None, *, where: Any = st,
               **kwargs: Any) -> None:  # fmt: skip
    """``where.image(pixels, **kwargs)`` from :func:`shared_png`: ``key`` names the picture
    (default: its :func:`digest`), an integer ``width`` is also the PNG's width. Anything but
    a uint8 picture goes to ``st.image`` as it is."""
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8 or pixels.ndim not in (2, 3):
        where.image(pixels, **kwargs)
        return
    width = kwargs.get("width")
    max_width = width if isinstance(width, int) else None
    png = shared_png(key if key is not None else (digest(pixels),), max_width, pixels)
    where.image(png, output_format="PNG", **kwargs)


def side_by_side(columns: Iterable[Any], pictures: Iterable[Any],
                 captions: Iterable[tuple[object, object]], **kwargs: Any) -> None:  # fmt: skip
    """Pictures side by side: each in its column, as wide as the column, with its ``(caption,
    alt)`` (marked texts, translated here); ``kwargs`` go to ``image`` (``output_format="PNG"``
    for PNG bytes). Raises ValueError when the three are not as long as each other."""
    for column, picture, (caption, alt) in zip(columns, pictures, captions, strict=True):
        column.image(picture, caption=tr(caption), alt=tr(alt), width="stretch", **kwargs)
