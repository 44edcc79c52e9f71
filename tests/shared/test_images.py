"""Tests for core/images.py: decoding every accepted format and mode, EXIF, animation,
downscaling, refused inputs (with their messages) and the bundled samples."""

from __future__ import annotations

import builtins
import functools
import io
import resource
import struct
import tracemalloc
import warnings
import zlib

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageFile

from core.images import (
    ACCEPTED_FORMATS,
    DEFAULT_MAX_SIDE,
    SAMPLE_NAMES,
    DecodedImage,
    ImageDecodeError,
    decode_image,
    fit_longest_side,
    list_samples,
    load_sample,
    read_sample_bytes,
)

RED, GREEN, BLUE, YELLOW = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)


# ----------------------------------------------------------------------------- helpers
def encode(image: Image.Image, fmt: str, **params) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **params)
    return buffer.getvalue()


def quadrants(height: int = 16, width: int = 24) -> np.ndarray:
    """(H, W, 3) uint8 with four flat colours; H != W so a transposition is caught.

    Quadrant edges fall on multiples of 8, so JPEG blocks stay flat.
    """
    rgb = np.zeros((height, width, 3), np.uint8)
    h2, w2 = height // 2, width // 2
    rgb[:h2, :w2], rgb[:h2, w2:] = RED, GREEN
    rgb[h2:, :w2], rgb[h2:, w2:] = BLUE, YELLOW
    return rgb


def noise(height: int, width: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def png_header_only(width: int, height: int) -> bytes:
    """A ~60-byte PNG whose IHDR (valid CRC) declares width x height RGB, 8 bit.

    The IDAT holds a few compressed zero bytes, far from enough pixels: only a decoder
    that trusts the header and starts decoding would ever allocate the full image.
    """
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + png_chunk(b"IEND", b"")
    )


def jpeg_with_declared_size(width: int, height: int) -> bytes:
    """A real small JPEG whose SOF0 header is patched to claim width x height."""
    data = bytearray(encode(Image.fromarray(quadrants()), "JPEG"))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


@functools.lru_cache(maxsize=2)
def sixteen_bit_png_bomb(width: int = 12_600, height: int = 12_600) -> bytes:
    """A real, decodable 16-bit grayscale PNG of ``width`` x ``height`` zeros in about 0.3 MB
    (for 12600 x 12600: 318 MB of pixels, 2.5 GB as float64), built row by row in little
    memory and once per test session."""
    compressor = zlib.compressobj(9)
    row = bytes(1 + 2 * width)  # filter byte 0, then the row's 16-bit zeros
    body = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 16, 0, 0, 0, 0)  # 16-bit grayscale
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", body)
            + png_chunk(b"IEND", b""))


@pytest.fixture
def forbid_pixel_decoding(monkeypatch):
    """Return ``arm()``: once called, the test fails if Pillow is asked to decode pixel data."""

    def refuse(self, *args, **kwargs):
        raise AssertionError("pixel data was decoded although the header should have been refused")

    def arm() -> None:
        monkeypatch.setattr(Image.Image, "load", refuse)
        monkeypatch.setattr(ImageFile.ImageFile, "load", refuse)

    return arm


# ----------------------------------------------------------------------------- smoke
class TestDecodeImage:
    def test_smoke(self):
        decoded = decode_image(encode(Image.fromarray(quadrants()), "PNG"))
        assert isinstance(decoded, DecodedImage)
        assert decoded.rgb.shape == (16, 24, 3)
        assert decoded.rgb.dtype == np.uint8
        assert decoded.rgb.flags.c_contiguous
        assert decoded.original_size == (24, 16)
        assert (decoded.format, decoded.mode) == ("PNG", "RGB")
        assert decoded.notes == ()
        assert not decoded.downscaled

    def test_accepts_bytearray_and_memoryview(self):
        data = encode(Image.fromarray(quadrants()), "PNG")
        for wrapped in (bytearray(data), memoryview(data)):
            np.testing.assert_array_equal(decode_image(wrapped).rgb, quadrants())

    def test_result_is_frozen(self):
        decoded = decode_image(encode(Image.fromarray(quadrants()), "PNG"))
        with pytest.raises(AttributeError):
            decoded.format = "JPEG"  # type: ignore[misc]

    def test_never_touches_the_disk(self, monkeypatch):
        data = encode(Image.fromarray(quadrants()), "PNG")
        decode_image(data)  # warm up Pillow's plugin registry first

        def no_files(*args, **kwargs):
            raise AssertionError(f"decode_image opened a file: {args!r}")

        monkeypatch.setattr(builtins, "open", no_files)
        np.testing.assert_array_equal(decode_image(data).rgb, quadrants())


# ----------------------------------------------------------------------------- formats
class TestFormats:
    @pytest.mark.parametrize(
        ("fmt", "params"),
        [
            ("PNG", {}),
            ("WEBP", {"lossless": True}),
            ("BMP", {}),
            ("TIFF", {}),
            ("TIFF", {"compression": "tiff_lzw"}),
            ("GIF", {}),  # four colours: the palette is exact
        ],
    )
    def test_lossless_formats_match_reference(self, fmt, params):
        decoded = decode_image(encode(Image.fromarray(quadrants()), fmt, **params))
        assert decoded.format == fmt
        np.testing.assert_array_equal(decoded.rgb, quadrants())

    @pytest.mark.parametrize("fmt", ["JPEG", "WEBP"])
    def test_lossy_formats_are_close(self, fmt):
        decoded = decode_image(encode(Image.fromarray(quadrants()), fmt, quality=95))
        assert decoded.format == fmt
        assert decoded.rgb.shape == (16, 24, 3)
        # compare the centre of each flat quadrant (edges smear in lossy codecs)
        for (row, col), colour in zip(
            [(4, 6), (4, 18), (12, 6), (12, 18)], [RED, GREEN, BLUE, YELLOW], strict=True
        ):
            np.testing.assert_allclose(decoded.rgb[row, col], colour, atol=12)

    def test_jpeg_matches_cv2(self):
        data = encode(Image.fromarray(noise(32, 40)), "JPEG", quality=90)
        reference = cv2.cvtColor(cv2.imdecode(np.frombuffer(data, np.uint8), 1), cv2.COLOR_BGR2RGB)
        ours = decode_image(data).rgb
        assert ours.shape == reference.shape
        # libjpeg versions may differ in IDCT rounding by a grey level or two
        assert np.abs(ours.astype(int) - reference.astype(int)).max() <= 3

    def test_accepted_formats_constant(self):
        assert set(ACCEPTED_FORMATS) >= {"PNG", "JPEG", "WEBP", "BMP", "TIFF", "GIF"}


# ----------------------------------------------------------------------------- modes
class TestModes:
    def test_grayscale_l(self):
        gray = np.arange(48, dtype=np.uint8).reshape(6, 8) * 5
        decoded = decode_image(encode(Image.fromarray(gray, mode="L"), "PNG"))
        assert decoded.mode == "L"
        assert decoded.rgb.shape == (6, 8, 3)
        for channel in range(3):
            np.testing.assert_array_equal(decoded.rgb[..., channel], gray)
        assert any("Grayscale" in note for note in decoded.notes)

    def test_rgb(self):
        rgb = noise(7, 9)
        decoded = decode_image(encode(Image.fromarray(rgb), "PNG"))
        assert decoded.mode == "RGB"
        np.testing.assert_array_equal(decoded.rgb, rgb)

    def test_rgba_composited_on_white(self):
        rgba = np.zeros((2, 3, 4), np.uint8)
        rgba[0, 0] = (10, 20, 30, 0)  # fully transparent: must become white
        rgba[0, 1] = (10, 20, 30, 255)  # opaque: unchanged
        rgba[0, 2] = (255, 0, 0, 128)  # half-transparent red over white: pink
        rgba[1, :] = (0, 0, 0, 0)
        decoded = decode_image(encode(Image.fromarray(rgba, mode="RGBA"), "PNG"))
        assert decoded.mode == "RGBA"
        assert decoded.rgb.shape == (2, 3, 3)
        np.testing.assert_array_equal(decoded.rgb[0, 0], (255, 255, 255))
        np.testing.assert_array_equal(decoded.rgb[1], np.full((3, 3), 255))
        np.testing.assert_array_equal(decoded.rgb[0, 1], (10, 20, 30))
        # alpha 128/255: 0 * a + 255 * (1 - a) = 127 for G and B, R stays 255
        np.testing.assert_allclose(decoded.rgb[0, 2], (255, 127, 127), atol=1)
        assert any("white" in note for note in decoded.notes)

    @pytest.mark.parametrize("fmt", ["TIFF", "WEBP"])
    def test_rgba_other_containers(self, fmt):
        rgba = np.zeros((4, 4, 4), np.uint8)
        rgba[..., 3] = 0
        params = {"lossless": True} if fmt == "WEBP" else {}
        decoded = decode_image(encode(Image.fromarray(rgba, mode="RGBA"), fmt, **params))
        np.testing.assert_array_equal(decoded.rgb, np.full((4, 4, 3), 255))

    @staticmethod
    def _palette_image() -> Image.Image:
        image = Image.new("P", (3, 1))
        image.putpalette([*RED, *BLUE, *GREEN] + [0] * (256 - 3) * 3)
        for x, index in enumerate((0, 1, 2)):
            image.putpixel((x, 0), index)
        return image

    @pytest.mark.parametrize("fmt", ["PNG", "GIF", "BMP", "TIFF"])
    def test_palette_without_transparency(self, fmt):
        decoded = decode_image(encode(self._palette_image(), fmt))
        assert decoded.mode == "P"
        np.testing.assert_array_equal(decoded.rgb[0], [RED, BLUE, GREEN])
        assert not any("white" in note for note in decoded.notes)

    @pytest.mark.parametrize("fmt", ["PNG", "GIF"])
    def test_palette_with_transparency(self, fmt):
        decoded = decode_image(encode(self._palette_image(), fmt, transparency=0))
        assert decoded.mode == "P"
        # index 0 (red) is the transparent one: composited on white
        np.testing.assert_array_equal(decoded.rgb[0], [(255, 255, 255), BLUE, GREEN])
        assert any("white" in note for note in decoded.notes)

    def test_palette_with_per_entry_alpha(self):
        # PNG tRNS with one alpha per palette entry: index 1 (blue) fully transparent
        image = self._palette_image()
        decoded = decode_image(encode(image, "PNG", transparency=bytes([255, 0, 255])))
        np.testing.assert_array_equal(decoded.rgb[0], [RED, (255, 255, 255), GREEN])

    def test_la(self):
        la = np.array([[[0, 0], [100, 255], [200, 128]]], np.uint8)
        decoded = decode_image(encode(Image.fromarray(la, mode="LA"), "PNG"))
        assert decoded.mode == "LA"
        np.testing.assert_array_equal(decoded.rgb[0, 0], (255, 255, 255))
        np.testing.assert_array_equal(decoded.rgb[0, 1], (100, 100, 100))
        # 200 * 128/255 + 255 * 127/255 ~= 227.4
        np.testing.assert_allclose(decoded.rgb[0, 2], (227, 227, 227), atol=1)

    @pytest.mark.parametrize("fmt", ["PNG", "TIFF"])
    def test_16bit_grayscale_scaled(self, fmt):
        values = np.array([[0, 257, 32768, 65535]], np.uint16)
        image = Image.fromarray(values)
        assert image.mode == "I;16"
        decoded = decode_image(encode(image, fmt))
        assert decoded.mode.startswith("I;16")
        # v / 65535 * 255, rounded: not clipped (a naive astype(uint8) would give 0, 1, 0, 255)
        expected = np.array([0, 1, 128, 255], np.uint8)
        for channel in range(3):
            np.testing.assert_array_equal(decoded.rgb[0, :, channel], expected)
        assert any("16-bit" in note for note in decoded.notes)

    def test_16bit_grayscale_full_range_is_monotone(self):
        values = np.linspace(0, 65535, 256).astype(np.uint16).reshape(16, 16)
        decoded = decode_image(encode(Image.fromarray(values), "PNG"))
        flat = decoded.rgb[..., 0].ravel().astype(int)
        assert flat[0] == 0 and flat[-1] == 255
        assert np.all(np.diff(flat) >= 0)
        np.testing.assert_allclose(flat, values.ravel() / 257.0, atol=0.51)

    def test_16bit_near_budget_small_peak_same_values(self):
        # 5000 x 5000 = 25 Mpx (the budget) 16-bit: converted in bands, never as float64
        # (which alone is 8 bytes a pixel); values equal the float formula round(v/65535*255)
        height = width = 5_000
        rows = np.arange(height, dtype=np.uint32)[:, None]
        values = ((rows * 7919 + np.arange(width, dtype=np.uint32) * 13) % 65536)
        values = values.astype(np.uint16)
        data = encode(Image.fromarray(values), "PNG", compress_level=1)
        expected = np.rint(values.astype(np.float64) / 65535.0 * 255.0).astype(np.uint8)
        del values, rows
        tracemalloc.start()
        try:
            decoded = decode_image(data, max_side=width)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 6 * height * width, f"peak {peak / (height * width):.1f} bytes/pixel"
        assert decoded.rgb.shape == (height, width, 3)
        for channel in range(3):
            assert np.abs(decoded.rgb[..., channel].astype(int) - expected).max() <= 1

    def test_16bit_integer_formula_equals_float_for_every_value(self):
        values = np.arange(65536, dtype=np.uint32).astype(np.uint16).reshape(256, 256)
        decoded = decode_image(encode(Image.fromarray(values), "PNG"))
        expected = np.rint(values / 65535.0 * 255.0).astype(np.uint8)
        np.testing.assert_array_equal(decoded.rgb[..., 1], expected)

    @pytest.mark.parametrize("mode", ["I", "F"])
    def test_wide_range_stretched_within_one_level(self, mode):
        values = np.linspace(-1000.5, 300000.25, 64 * 64).reshape(64, 64)
        values = values.astype(np.int32 if mode == "I" else np.float32)
        decoded = decode_image(encode(Image.fromarray(values), "TIFF"))
        low, high = float(values.min()), float(values.max())
        expected = np.rint((values.astype(np.float64) - low) / (high - low) * 255.0)
        assert np.abs(decoded.rgb[..., 0].astype(int) - expected).max() <= 1
        assert any("range" in note for note in decoded.notes)

    def test_grayscale_shrunk_like_its_rgb_copy(self):
        # shrinking the one channel first gives the very pixels of shrinking the RGB copy
        gray = noise(300, 500)[..., 0]
        decoded = decode_image(encode(Image.fromarray(gray), "PNG"), max_side=128)
        expected, _ = fit_longest_side(np.repeat(gray[..., None], 3, axis=2), 128)
        np.testing.assert_array_equal(decoded.rgb, expected)
        assert decoded.rgb.flags["C_CONTIGUOUS"]

    def test_16bit_rgb_png(self):
        bgr16 = np.zeros((2, 2, 3), np.uint16)
        bgr16[0, 0] = (65535, 0, 32768)  # B, G, R for cv2
        ok, buffer = cv2.imencode(".png", bgr16)
        assert ok
        decoded = decode_image(buffer.tobytes())
        np.testing.assert_allclose(decoded.rgb[0, 0], (128, 0, 255), atol=1)
        np.testing.assert_array_equal(decoded.rgb[1, 1], (0, 0, 0))

    def test_float_tiff_range_stretched(self):
        values = np.array([[-1.0, 0.0, 3.0]], np.float32)
        decoded = decode_image(encode(Image.fromarray(values, mode="F"), "TIFF"))
        assert decoded.mode == "F"
        np.testing.assert_array_equal(decoded.rgb[0, :, 0], (0, 64, 255))

    def test_cmyk_jpeg(self):
        rgb = Image.fromarray(quadrants(16, 16))
        decoded = decode_image(encode(rgb.convert("CMYK"), "JPEG", quality=95))
        assert (decoded.format, decoded.mode) == ("JPEG", "CMYK")
        assert decoded.rgb.shape == (16, 16, 3)
        np.testing.assert_allclose(decoded.rgb[3, 3], RED, atol=12)
        np.testing.assert_allclose(decoded.rgb[12, 12], YELLOW, atol=12)

    @pytest.mark.parametrize("fmt", ["PNG", "BMP", "TIFF", "GIF"])
    def test_1bit(self, fmt):
        bits = np.array([[0, 255, 0], [255, 0, 255]], np.uint8)
        image = Image.fromarray(bits, mode="L").convert("1")
        decoded = decode_image(encode(image, fmt))
        assert decoded.rgb.shape == (2, 3, 3)
        assert set(np.unique(decoded.rgb)) <= {0, 255}
        np.testing.assert_array_equal(decoded.rgb[..., 1], bits)


# ----------------------------------------------------------------------------- EXIF
def corner_marked(height: int = 16, width: int = 32) -> np.ndarray:
    """Grey image with a red 8x8 block in the stored top-left corner."""
    rgb = np.full((height, width, 3), 128, np.uint8)
    rgb[:8, :8] = RED
    return rgb


def with_orientation(rgb: np.ndarray, orientation: int | None, fmt: str = "JPEG") -> bytes:
    image = Image.fromarray(rgb)
    params = {"quality": 95} if fmt == "JPEG" else {}
    if orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = orientation
        params["exif"] = exif
    return encode(image, fmt, **params)


class TestExifOrientation:
    # orientation tag -> how the viewer must turn the stored pixels (np.rot90 k)
    ROTATIONS = {3: 2, 6: -1, 8: 1}

    @pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
    @pytest.mark.parametrize("orientation", [3, 6, 8])
    def test_matches_rotated_reference(self, orientation, fmt):
        stored = corner_marked()
        plain = decode_image(with_orientation(stored, None, fmt))
        rotated = decode_image(with_orientation(stored, orientation, fmt))
        # the pixel data is identical; only the EXIF flag differs
        np.testing.assert_array_equal(
            rotated.rgb, np.rot90(plain.rgb, k=self.ROTATIONS[orientation])
        )
        assert rotated.rgb.flags.c_contiguous
        assert rotated.original_size == (32, 16)  # as stored, before rotation
        assert any(f"EXIF orientation {orientation}" in note for note in rotated.notes)

    def test_orientation_6_pixel_positions(self):
        decoded = decode_image(with_orientation(corner_marked(16, 32), 6))
        # stored 32 wide x 16 high; displayed rotated 90 degrees clockwise: 16 wide x 32 high
        assert decoded.rgb.shape == (32, 16, 3)
        np.testing.assert_allclose(decoded.rgb[2, 13], RED, atol=12)  # stored top-left -> top-right
        np.testing.assert_allclose(decoded.rgb[2, 2], (128, 128, 128), atol=12)
        np.testing.assert_allclose(decoded.rgb[29, 2], (128, 128, 128), atol=12)

    def test_orientation_3_pixel_positions(self):
        decoded = decode_image(with_orientation(corner_marked(16, 32), 3))
        assert decoded.rgb.shape == (16, 32, 3)
        np.testing.assert_allclose(decoded.rgb[13, 29], RED, atol=12)  # -> bottom-right
        np.testing.assert_allclose(decoded.rgb[2, 2], (128, 128, 128), atol=12)

    def test_orientation_1_is_a_no_op(self):
        stored = corner_marked()
        decoded = decode_image(with_orientation(stored, 1, "PNG"))
        np.testing.assert_array_equal(decoded.rgb, stored)
        assert not any("EXIF" in note for note in decoded.notes)

    def test_rotation_then_downscale(self):
        decoded = decode_image(with_orientation(corner_marked(16, 32), 6, "PNG"), max_side=8)
        assert decoded.rgb.shape == (8, 4, 3)
        assert decoded.downscaled
        # the notice describes the upright image (16 wide x 32 high), not the stored one
        assert any("from 16x32 to 4x8" in note for note in decoded.notes)


# ----------------------------------------------------------------------------- animation
class TestAnimated:
    FRAMES = (RED, BLUE, GREEN)

    @pytest.mark.parametrize(
        ("fmt", "params"),
        [("GIF", {}), ("WEBP", {"lossless": True}), ("PNG", {})],  # PNG + save_all = APNG
    )
    def test_first_frame(self, fmt, params):
        frames = [Image.new("RGB", (8, 6), colour) for colour in self.FRAMES]
        data = encode(
            frames[0], fmt, save_all=True, append_images=frames[1:], duration=100, **params
        )
        with Image.open(io.BytesIO(data)) as check:
            assert getattr(check, "n_frames", 1) == 3  # the fixture really is animated
        decoded = decode_image(data)
        assert decoded.rgb.shape == (6, 8, 3)
        np.testing.assert_array_equal(decoded.rgb, np.full((6, 8, 3), RED, np.uint8))
        assert any("3 frames" in note and "first frame" in note for note in decoded.notes)


# ----------------------------------------------------------------------------- downscaling
class TestDownscale:
    def test_default_limit(self):
        decoded = decode_image(encode(Image.fromarray(noise(10, DEFAULT_MAX_SIDE + 52)), "PNG"))
        assert DEFAULT_MAX_SIDE == 2048
        assert decoded.rgb.shape == (10, 2048, 3)
        assert decoded.original_size == (2100, 10)
        assert decoded.downscaled
        note = next(note for note in decoded.notes if note.startswith("Downscaled"))
        assert "2100x10" in note and "2048x10" in note and "2048 px" in note

    def test_configurable_limit_keeps_aspect(self):
        decoded = decode_image(encode(Image.fromarray(noise(300, 400)), "PNG"), max_side=100)
        assert decoded.rgb.shape == (75, 100, 3)
        assert decoded.downscaled
        assert any("at most 100 px" in note for note in decoded.notes)

    def test_portrait(self):
        decoded = decode_image(encode(Image.fromarray(noise(400, 100)), "PNG"), max_side=200)
        assert decoded.rgb.shape == (200, 50, 3)

    @pytest.mark.parametrize("shape", [(10, 20), (2048, 5), (64, 64)])
    def test_small_images_untouched(self, shape):
        rgb = noise(*shape)
        decoded = decode_image(encode(Image.fromarray(rgb), "PNG"), max_side=max(shape))
        np.testing.assert_array_equal(decoded.rgb, rgb)
        assert not decoded.downscaled
        assert not any("Downscaled" in note for note in decoded.notes)

    def test_fit_longest_side_returns_input_when_small(self):
        rgb = noise(5, 6)
        out, scale = fit_longest_side(rgb, 6)
        assert out is rgb and scale == 1.0

    def test_matches_block_mean_reference(self):
        # an exact factor-4 shrink with INTER_AREA is the mean of each 4x4 block
        rgb = noise(200, 400)
        out, scale = fit_longest_side(rgb, 100)
        assert scale == 0.25
        reference = rgb.reshape(50, 4, 100, 4, 3).astype(np.float64).mean(axis=(1, 3))
        assert out.shape == (50, 100, 3) and out.dtype == np.uint8
        assert np.abs(out.astype(np.float64) - reference).max() <= 1.0

    def test_flat_colour_survives(self):
        rgb = np.full((90, 301, 3), (12, 200, 77), np.uint8)
        out, _ = fit_longest_side(rgb, 37)
        assert np.all(out == (12, 200, 77))

    @settings(max_examples=60, deadline=None)
    @given(
        height=st.integers(1, 300),
        width=st.integers(1, 300),
        max_side=st.integers(1, 320),
    )
    def test_fit_longest_side_invariant(self, height, width, max_side):
        rgb = np.zeros((height, width, 3), np.uint8)
        out, scale = fit_longest_side(rgb, max_side)
        longest = max(height, width)
        out_h, out_w = out.shape[:2]
        assert out.shape[2] == 3 and out.dtype == np.uint8
        if longest <= max_side:
            assert (out_h, out_w, scale) == (height, width, 1.0)
        else:
            assert max(out_h, out_w) == max_side  # exactly the limit
            assert scale == pytest.approx(max_side / longest)
            # each side is the rounded scaled side (aspect kept), never below one pixel
            assert abs(out_h - height * scale) <= 0.5 + 1e-9 or out_h == 1
            assert abs(out_w - width * scale) <= 0.5 + 1e-9 or out_w == 1
            assert out_h >= 1 and out_w >= 1

    @settings(max_examples=25, deadline=None)
    @given(
        height=st.integers(1, 48),
        width=st.integers(1, 48),
        max_side=st.integers(1, 60),
    )
    def test_decode_downscale_invariant(self, height, width, max_side):
        decoded = decode_image(
            encode(Image.fromarray(noise(height, width)), "PNG"), max_side=max_side
        )
        out_h, out_w = decoded.rgb.shape[:2]
        assert max(out_h, out_w) == min(max_side, max(height, width))
        assert decoded.downscaled == (max(height, width) > max_side)
        assert decoded.original_size == (width, height)


# ----------------------------------------------------------------------------- refused input
class TestException:
    def test_text_file(self):
        with pytest.raises(ImageDecodeError) as info:
            decode_image(b"name,value\nalpha,1\nbeta,2\n" * 10)
        message = str(info.value)
        assert "not an image" in message
        assert "PNG" in message and "JPEG" in message  # tells what is accepted

    def test_error_is_a_value_error(self):
        assert issubclass(ImageDecodeError, ValueError)

    def test_empty_file(self):
        with pytest.raises(ImageDecodeError, match=r"empty \(0 bytes\)"):
            decode_image(b"")

    def test_not_bytes(self):
        with pytest.raises(ImageDecodeError, match="expected the file's bytes, got str"):
            decode_image("picture.png")  # type: ignore[arg-type]

    def test_raw_pixels_without_header(self):
        with pytest.raises(ImageDecodeError, match="not an image"):
            decode_image(noise(8, 8).tobytes())

    def test_unsupported_format(self):
        with pytest.raises(ImageDecodeError) as info:
            decode_image(encode(Image.fromarray(quadrants()), "PPM"))
        assert "PPM" in str(info.value) and "not supported" in str(info.value)
        assert "PNG" in str(info.value)

    @pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
    @pytest.mark.parametrize("fraction", [0.3, 0.5, 0.9])
    def test_truncated(self, fmt, fraction):
        data = encode(Image.fromarray(noise(64, 64)), fmt)
        with pytest.raises(ImageDecodeError) as info:
            decode_image(data[: int(len(data) * fraction)])
        message = str(info.value)
        assert "truncated" in message and fmt in message
        assert "try again" in message  # says what to do

    @pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
    def test_cut_inside_header(self, fmt):
        data = encode(Image.fromarray(noise(64, 64)), fmt)
        with pytest.raises(ImageDecodeError, match="not an image"):
            decode_image(data[:12])

    def test_truncation_is_not_silently_accepted_with_global_flag_off(self):
        # the check must not depend on a process-wide Pillow switch being in its default
        assert ImageFile.LOAD_TRUNCATED_IMAGES is False

    def test_decompression_bomb_png_30000(self, forbid_pixel_decoding):
        data = png_header_only(30_000, 30_000)
        assert len(data) < 100
        forbid_pixel_decoding()
        with pytest.raises(ImageDecodeError) as info:
            decode_image(data)
        message = str(info.value)
        assert "too large" in message and "decompression bomb" in message
        # Pillow refuses this one inside Image.open; its message gives the pixel count
        assert "900000000" in message.replace(",", "")

    def test_header_over_own_pixel_limit(self, forbid_pixel_decoding):
        forbid_pixel_decoding()
        # 13000 x 13000 = 169 M pixels: under Pillow's hard limit (2 x 89.5 M) but over ours
        with pytest.raises(ImageDecodeError) as info:
            decode_image(png_header_only(13_000, 13_000))
        message = str(info.value)
        assert "13000x13000" in message and "169,000,000" in message
        assert "decompression bomb" in message and "resize" in message.lower()
        assert "limit of 25 Mpx" in message  # the limit in a unit a person knows

    def test_sixteen_bit_bomb_refused_from_header(self):
        # 0.3 MB that would decode to 12600 x 12600 16-bit: refused before any pixel is
        # decoded, in a few MB (decoding it took 4.2 GB and 15 CPU-s)
        data = sixteen_bit_png_bomb()
        assert len(data) < 400_000
        with warnings.catch_warnings(), Image.open(io.BytesIO(data)) as image:
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            assert (image.size, image.mode) == ((12_600, 12_600), "I;16")
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        try:
            with pytest.raises(ImageDecodeError) as info:
                decode_image(data)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rss_growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
        assert peak < 100e6 and rss_growth_mb < 100
        message = str(info.value)
        assert "12600x12600" in message and "limit of 25 Mpx" in message
        assert "decompression bomb" in message and "Resize it" in message

    def test_between_our_limit_and_pillows_gets_our_message(self, forbid_pixel_decoding):
        # 6000 x 5000 = 30 Mpx: Pillow only warns (its limit is 89.5 Mpx); ours refuses
        forbid_pixel_decoding()
        with pytest.raises(ImageDecodeError) as info:
            decode_image(png_header_only(6_000, 5_000))
        message = str(info.value)
        assert "6000x5000 = 30,000,000 pixels (30 Mpx)" in message
        assert "limit of 25 Mpx" in message

    def test_beyond_pillows_limit_gets_our_message(self, forbid_pixel_decoding):
        forbid_pixel_decoding()
        with pytest.raises(ImageDecodeError) as info:
            decode_image(png_header_only(20_000, 20_000))
        message = str(info.value)
        assert "400,000,000 pixels (400 Mpx)" in message and "limit of 25 Mpx" in message

    def test_configurable_pixel_limit(self, forbid_pixel_decoding):
        forbid_pixel_decoding()
        with pytest.raises(ImageDecodeError, match=r"limit of .*\(100 pixels\)"):
            decode_image(png_header_only(20, 20), max_pixels=100)

    def test_jpeg_bomb(self, forbid_pixel_decoding):
        data = jpeg_with_declared_size(60_000, 60_000)
        forbid_pixel_decoding()
        with pytest.raises(ImageDecodeError) as info:
            decode_image(data)
        assert "too large" in str(info.value) or "decompression bomb" in str(info.value)

    def test_load_guard_can_fail(self, forbid_pixel_decoding):
        # guards the tests above: the armed guard really trips on an ordinary decode
        data = encode(Image.fromarray(quadrants()), "PNG")
        forbid_pixel_decoding()
        with pytest.raises(AssertionError, match="pixel data was decoded"):
            decode_image(data)

    def test_bomb_fixture_is_a_valid_header(self):
        # guards the tests above: Pillow reads the crafted header as a real PNG
        with Image.open(io.BytesIO(png_header_only(20, 30))) as image:
            assert (image.format, image.size, image.mode) == ("PNG", (20, 30), "RGB")

    @pytest.mark.parametrize("max_side", [0, -5])
    def test_bad_max_side(self, max_side):
        data = encode(Image.fromarray(quadrants()), "PNG")
        with pytest.raises(ValueError, match=f"max_side must be a positive .*got {max_side}"):
            decode_image(data, max_side=max_side)
        with pytest.raises(ValueError, match=f"got {max_side}"):
            fit_longest_side(quadrants(), max_side)

    def test_bad_max_pixels(self):
        data = encode(Image.fromarray(quadrants()), "PNG")
        with pytest.raises(ValueError, match="max_pixels must be positive, got 0"):
            decode_image(data, max_pixels=0)


# ----------------------------------------------------------------------------- samples
class TestSamples:
    def test_list_samples(self):
        samples = list_samples()
        assert samples, "scikit-image's data folder should ship sample images"
        assert set(samples) <= set(SAMPLE_NAMES)
        assert "chelsea.png" in samples

    @pytest.mark.parametrize("name", SAMPLE_NAMES)
    def test_each_sample_decodes(self, name):
        if name not in list_samples():
            pytest.skip(f"{name} is not in this scikit-image install")
        decoded = load_sample(name)
        assert decoded.rgb.ndim == 3 and decoded.rgb.shape[2] == 3
        assert decoded.rgb.dtype == np.uint8
        assert max(decoded.rgb.shape[:2]) <= DEFAULT_MAX_SIDE

    def test_matches_skimage(self):
        from skimage import data

        np.testing.assert_array_equal(load_sample("chelsea.png").rgb, data.chelsea())
        camera = load_sample("camera.png").rgb
        for channel in range(3):
            np.testing.assert_array_equal(camera[..., channel], data.camera())

    def test_load_sample_max_side(self):
        assert max(load_sample("chelsea.png", max_side=100).rgb.shape[:2]) == 100

    def test_read_sample_bytes(self):
        assert read_sample_bytes("chelsea.png").startswith(b"\x89PNG")

    @pytest.mark.parametrize("name", ["nope.png", "../__init__.py", "", "CHELSEA.PNG"])
    def test_rejects_unknown_names(self, name):
        with pytest.raises(ValueError) as info:
            read_sample_bytes(name)
        assert repr(name) in str(info.value)
        assert "chelsea.png" in str(info.value)  # lists the choices


def test_read_image_size_reads_the_header_only():
    from core.images import read_image_size

    assert read_image_size(png_header_only(5000, 4000)) == (5000, 4000)  # no pixels to decode
    with pytest.raises(ImageDecodeError, match="empty"):
        read_image_size(b"")
    with pytest.raises(ImageDecodeError, match="not an image"):
        read_image_size(b"definitely not an image")
