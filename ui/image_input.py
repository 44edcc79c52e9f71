"""The one image-input component every image page reuses: bundled samples or an upload."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.images import (
    DEFAULT_MAX_SIDE,
    UPLOAD_EXTENSIONS,
    DecodedImage,
    ImageDecodeError,
    decode_image,
    list_samples,
    load_sample,
)
from core.text import N_
from ui.caching import SHARED_TTL_S, bounded_cache
from ui.i18n import _, tr, translator
from ui.links import BOUND
from ui.markdown import plain
from ui.pictures import upload_digest

SAMPLE = N_("Bundled sample")
UPLOAD = N_("Upload a file")


@bounded_cache(max_entries=32, ttl=SHARED_TTL_S)
def _cached_sample(name: str, max_side: int) -> DecodedImage:
    return load_sample(name, max_side=max_side)


#: A decoded upload (at most 2048 x 2048 x 3 bytes, 12 MB) is kept this long unused.
UPLOAD_TTL = "30m"


@bounded_cache(max_entries=8, ttl=UPLOAD_TTL)
def _cached_upload(digest: str, max_side: int, _data: bytes) -> DecodedImage | ImageDecodeError:
    """The upload whose bytes ``_data`` have the SHA-256 ``digest``, decoded once: a rerun (any
    widget change) and every session uploading the same file get it from here. A refusal is
    kept too, returned rather than raised (Streamlit keeps only return values)."""
    try:
        return decode_image(_data, max_side=max_side)
    except ImageDecodeError as error:
        return error


def _decode_upload(uploaded, max_side: int) -> DecodedImage | None:
    # getvalue() gives the bytes Streamlit already holds in memory; nothing touches the disk.
    data = uploaded.getvalue()
    decoded = _cached_upload(upload_digest(uploaded), max_side, data)
    if isinstance(decoded, ImageDecodeError):
        # The message can quote the file (Pillow's error text): shown as written, not markdown.
        st.error(
            _("Could not use this upload: {error}").format(error=plain(tr(decoded))),
            icon=":material/broken_image:",
        )
        return None
    return decoded


def image_input(
    key: str,
    *,
    max_side: int = DEFAULT_MAX_SIDE,
    default_sample: str = "chelsea.png",
    label: str = N_("Image"),
) -> np.ndarray | None:
    """Let the user pick a bundled sample or upload an image; return it as RGB uint8 (H, W, 3).

    Widget keys are ``<key>.source``, ``<key>.sample`` and ``<key>.upload``. Errors and
    notices (downscaled, converted, EXIF-rotated ...) are shown in the page; the return
    value is ``None`` whenever there is no usable image.
    """
    samples = list_samples()
    # The source and sample choice are in the URL and survive page switches; an upload cannot be.
    source = st.radio(
        _(label),
        [SAMPLE, UPLOAD],
        format_func=translator(),
        horizontal=True,
        key=f"{key}.source",
        **BOUND,
        help=_("Samples ship inside the scikit-image package, so they work offline."),
    )
    if source == SAMPLE:
        if not samples:
            st.error(_("No bundled samples were found: is scikit-image installed?"))
            return None
        index = samples.index(default_sample) if default_sample in samples else 0
        name = st.selectbox(
            _("Sample image"), samples, index=index, key=f"{key}.sample", **BOUND
        )
        decoded = _cached_sample(name, max_side)
    else:
        uploaded = st.file_uploader(
            _("Upload an image (PNG, JPEG, WebP, BMP, TIFF, GIF)"),
            type=list(UPLOAD_EXTENSIONS),
            key=f"{key}.upload",
        )
        if uploaded is None:
            st.info(_("Choose an image file to continue."), icon=":material/upload:")
            return None
        decoded = _decode_upload(uploaded, max_side)
        if decoded is None:
            return None
    for note in decoded.notes:
        st.info(plain(tr(note)), icon=":material/info:")  # a note can quote the file's header
    return decoded.rgb
