"""Flow files: Middlebury ``.flo`` and NumPy ``.npy``, read with their header checked first.

Uploads are untrusted: sizes are checked against the cap before any data is read, and a ``.npy``
is never unpickled. Holes (NaN, ``.flo``'s "unknown" values, infinities) come back as NaN.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from core.text import T
from lessons.flow.sources import MAX_SIDE

FLO_MAGIC = 202021.25
FLO_UNKNOWN = 1e9  # Middlebury marks unknown flow with values above 1e9; we turn them into NaN


def save_flo(flow: np.ndarray) -> bytes:
    """Encode (H, W, 2) flow as Middlebury ``.flo`` bytes (NaN written as the 'unknown' 1e10)."""
    arr = np.asarray(flow, np.float32)
    if arr.ndim != 3 or arr.shape[2] != 2:
        raise ValueError(f".flo holds (H, W, 2) flow, got shape {arr.shape}")
    h, w = arr.shape[:2]
    body = np.where(np.isnan(arr), np.float32(1e10), arr).astype("<f4").tobytes()
    return np.array([FLO_MAGIC], "<f4").tobytes() + np.array([w, h], "<i4").tobytes() + body


def load_flo(data: bytes, *, max_side: int = MAX_SIDE) -> np.ndarray:
    """Decode Middlebury ``.flo`` bytes into (H, W, 2) float32 flow.

    Layout: float32 magic 202021.25, int32 width, int32 height, then H*W*2 float32 (u, v
    interleaved, row-major), little-endian. Values above 1e9 mean "unknown" and become NaN.

    Raises:
        ValueError: wrong magic number, bad sizes, truncated or oversized data.
    """
    if len(data) < 12:
        raise ValueError(
            T("this .flo file is truncated: {n} bytes, but the header alone needs 12",
              n=len(data))
        )
    magic = float(np.frombuffer(data[:4], "<f4")[0])
    if magic != FLO_MAGIC:
        raise ValueError(
            T("not a Middlebury .flo file: the magic number is {magic!r}, expected {expected} "
              "(the bytes 'PIEH')", magic=magic, expected=FLO_MAGIC)
        )
    w, h = (int(v) for v in np.frombuffer(data[4:12], "<i4"))
    if w < 1 or h < 1:
        raise ValueError(T("this .flo file declares an invalid size {w}x{h} (width x height)",
                           w=w, h=h))
    if max(w, h) > max_side:
        raise ValueError(
            T("this .flo file is {h}x{w} pixels, over the size cap of {max_side} pixels per "
              "side", h=h, w=w, max_side=max_side)
        )
    expected = 12 + 8 * w * h
    if len(data) < expected:
        raise ValueError(
            T("this .flo file is truncated: {w}x{h} flow needs {expected} bytes, got {n}",
              w=w, h=h, expected=expected, n=len(data))
        )
    if len(data) > expected:
        raise ValueError(
            T("this .flo file has {extra} bytes more than its {w}x{h} header says",
              extra=len(data) - expected, w=w, h=h)
        )
    flow = np.frombuffer(data[12:], "<f4").reshape(h, w, 2).astype(np.float32)
    flow[~(np.abs(flow) < FLO_UNKNOWN)] = np.nan  # unknown (>1e9), inf and NaN -> hole
    return flow


def load_npy(data: bytes, *, max_side: int = MAX_SIDE) -> np.ndarray:
    """Decode ``.npy`` bytes holding (H, W, 2) float flow: the header (dtype, shape) is checked
    before any data is read, and nothing is ever unpickled.

    Returns (H, W, 2) float32; NaN marks holes, infinities become NaN too.

    Raises:
        ValueError: not a .npy file, object/non-float dtype, wrong shape, over the size cap.
    """
    if not data.startswith(b"\x93NUMPY"):
        raise ValueError(T("this is not a readable .npy file (it does not start with the NumPy "
                           "magic bytes); save the flow with np.save"))
    # The header (dtype, shape) is read and checked before any data: a few hundred bytes can
    # declare a shape of terabytes, which np.load would allocate before finding the file short.
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"format version {version[0]}.{version[1]} is not supported")
    except Exception as exc:  # malformed header text, unknown dtype, EOF from arbitrary bytes
        raise ValueError(T("this is not a readable .npy file: {exc}", exc=str(exc))) from None
    if dtype.hasobject:
        # Object arrays are stored as a pickle, which could run code: never read.
        raise ValueError(
            T("this .npy file holds Python objects (object dtype); only plain float arrays "
              "are accepted -- save it with np.save(path, flow.astype(np.float32))")
        )
    if len(shape) != 3 or shape[2] != 2:
        raise ValueError(
            T("a flow .npy must have shape (H, W, 2) (u, v per pixel), got shape {shape}",
              shape=str(shape))
        )
    if not np.issubdtype(dtype, np.floating):
        raise ValueError(T("a flow .npy must hold floats (NaN marks holes), got dtype {dtype}",
                           dtype=str(dtype)))
    if max(shape[:2]) > max_side:
        raise ValueError(
            T("this flow is {h}x{w} pixels, over the size cap of {max_side} pixels per side",
              h=shape[0], w=shape[1], max_side=max_side)
        )
    if min(shape[:2]) < 1:
        raise ValueError(T("this flow is empty: shape {shape}", shape=str(shape)))
    count = shape[0] * shape[1] * 2
    offset = stream.tell()
    if len(data) - offset != count * dtype.itemsize:
        raise ValueError(
            T("this .npy file holds {n} bytes of data, but its header declares {shape} {dtype}, "
              "{expected} bytes; save the flow again with np.save", n=len(data) - offset,
              shape=str(shape), dtype=str(dtype), expected=count * dtype.itemsize)
        )
    arr = np.frombuffer(data, dtype, count, offset=offset)
    arr = arr.reshape(shape[::-1]).transpose() if fortran else arr.reshape(shape)
    out = arr.astype(np.float32)
    out[np.isinf(out)] = np.nan
    return out


def load_flow_file(name: str, data: bytes, *, max_side: int = MAX_SIDE) -> np.ndarray:
    """Load an uploaded ``.flo`` or ``.npy`` flow file by its extension (see the loaders)."""
    suffix = Path(name).suffix.lower()
    if suffix == ".flo":
        return load_flo(data, max_side=max_side)
    if suffix == ".npy":
        return load_npy(data, max_side=max_side)
    raise ValueError(T("flow files must end in .flo or .npy, got {name!r}", name=name))
