"""Tests for lessons.flow.flow_files: .flo and .npy files, their headers checked before their
data."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from lessons.flow.flow_files import FLO_MAGIC, load_flo, load_flow_file, load_npy, save_flo
from lessons.flow.sources import synthetic_flow


def test_flo_round_trip_and_bad_files():
    flow = synthetic_flow("rotation", 12, 16)[0]
    flow[3, 4] = np.nan
    data = save_flo(flow)
    np.testing.assert_array_equal(load_flo(data), flow)
    np.testing.assert_array_equal(load_flow_file("x.FLO", data), flow)
    with pytest.raises(ValueError, match=f"magic number.*{FLO_MAGIC}"):
        load_flo(b"XXXX" + data[4:])
    with pytest.raises(ValueError, match="truncated"):
        load_flo(data[:-5])
    with pytest.raises(ValueError, match="truncated"):
        load_flo(data[:7])
    with pytest.raises(ValueError, match="more than"):
        load_flo(data + b"\0" * 8)
    with pytest.raises(ValueError, match="invalid size"):
        load_flo(data[:4] + np.array([0, 5], "<i4").tobytes())
    with pytest.raises(ValueError, match="size cap"):
        load_flo(data[:4] + np.array([5000, 5], "<i4").tobytes())
    with pytest.raises(ValueError, match=".flo or .npy"):
        load_flow_file("flow.png", data)


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def test_npy_loading_and_bad_files():
    flow = synthetic_flow("zoom", 10, 12)[0].astype(np.float64)
    out = load_npy(_npy(flow))
    assert out.dtype == np.float32 and out.shape == (10, 12, 2)
    with pytest.raises(ValueError, match="object dtype"):
        load_npy(_npy(np.array([{"a": 1}, None], dtype=object)))
    with pytest.raises(ValueError, match=r"shape \(H, W, 2\).*\(2, 10, 12\)"):
        load_npy(_npy(np.zeros((2, 10, 12), np.float32)))
    with pytest.raises(ValueError, match="floats"):
        load_npy(_npy(np.zeros((10, 12, 2), np.int16)))
    with pytest.raises(ValueError, match="not a readable .npy"):
        load_npy(b"definitely not numpy")
    with pytest.raises(ValueError, match="size cap"):
        load_npy(_npy(np.zeros((3000, 2, 2), np.float32)))


def _npy_header_only(shape: tuple, descr: str = "<f4", body: bytes = b"") -> bytes:
    """A .npy whose header declares ``shape`` and ``descr`` followed by ``body`` only."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue() + body


def test_npy_huge_declared_shape_refused_from_the_header():
    # 120 bytes declaring 100000 x 100000 x 2 float64 (160 GB): np.load would allocate it
    data = _npy_header_only((100_000, 100_000, 2), "<f8", b"\0" * 64)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"100000x100000 pixels, over the size cap of 2048"):
            load_npy(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1e6


def test_npy_data_shorter_or_longer_than_its_header():
    with pytest.raises(ValueError, match=r"64 bytes of data, but its header declares"):
        load_npy(_npy_header_only((2048, 2048, 2), "<f4", b"\0" * 64))
    with pytest.raises(ValueError, match="header declares"):
        load_npy(_npy(np.zeros((4, 5, 2), np.float32)) + b"\0" * 8)


def test_npy_fortran_order_and_big_endian():
    flow = synthetic_flow("zoom", 10, 12)[0]
    np.testing.assert_array_equal(load_npy(_npy(np.asfortranarray(flow))), flow)
    np.testing.assert_array_equal(load_npy(_npy(flow.astype(">f8"))), flow)


class _Marker:
    """Unpickling this creates ``path``: a file that appears only if a pickle was run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def test_npy_object_dtype_refused_without_unpickling(tmp_path):
    marker = tmp_path / "ran"
    payload = np.empty((4, 4, 2), dtype=object)
    payload[...] = _Marker(marker)
    with pytest.raises(ValueError, match="object dtype"):
        load_npy(_npy(payload))
    assert not marker.exists()
    with pytest.raises(ValueError, match="object dtype"):  # the header alone says so
        load_npy(_npy_header_only((4, 4, 2), "|O"))


def test_npy_header_text_is_quoted_in_the_error():
    # the page shows this message escaped: it quotes the file's own header
    hostile = "**bold**[x](javascript:alert(1))"
    with pytest.raises(ValueError, match="not a readable .npy") as info:
        load_npy(_npy_header_only((4, 4, 2), hostile))
    assert hostile in str(info.value)


def test_flo_huge_declared_size_refused_from_the_header():
    data = np.array([202021.25], "<f4").tobytes() + np.array([100_000, 100_000], "<i4").tobytes()
    with pytest.raises(ValueError, match="100000x100000 pixels, over the size cap"):
        load_flo(data + b"\0" * 64)
