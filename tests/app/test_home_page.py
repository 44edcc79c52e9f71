"""AppTest for the Home page: environment panel, shared sidebar, and the shared image input."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from core.environment import available_devices
from ui.image_input import SAMPLE, UPLOAD

SOURCE = "home.image.source"
UPLOAD_KEY = "home.image.upload"


def png_bytes(height: int, width: int) -> bytes:
    rgb = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, "PNG")
    return buffer.getvalue()


def texts(elements) -> list[str]:
    return [str(element.value) for element in elements]


def shown_images(at) -> list[str]:
    """Captions of every image the page shows (st.image puts the caption on the image)."""
    return [caption for element in at.image for caption in element.captions]


@pytest.fixture
def upload(open_page):
    """Open Home, switch the image input to upload, and return ``send(name, data, mime)``."""
    at = open_page("home")
    at.radio(key=SOURCE).set_value(UPLOAD).run()
    assert not at.exception, at.exception

    def send(name: str, data: bytes, mime: str = "image/png"):
        at.file_uploader(key=UPLOAD_KEY).set_value((name, data, mime)).run()
        assert not at.exception, at.exception
        return at

    send.at = at
    return send


class TestHomePage:
    def test_renders(self, open_page):
        at = open_page("home")
        assert not at.exception
        assert not at.error
        assert at.title[0].value == "Torch Playground"

    def test_environment_panel(self, open_page):
        at = open_page("home")
        # a display-only st.dataframe carries no key in AppTest: find it by its columns
        frames = [df.value for df in at.dataframe if "why / note" in df.value.columns]
        assert len(frames) == 1
        frame = frames[0]
        assert list(frame.columns) == ["group", "item", "value", "why / note"]
        items = dict(zip(frame["item"], frame["value"], strict=True))
        assert items["torch.__version__"] == torch.__version__
        assert items["torch.cuda.is_available()"] == str(torch.cuda.is_available())
        for required in ("torch.version.cuda", "cuDNN", "torchvision", "OpenCV (cv2)"):
            assert required in items
        assert "driver version" in items and "torch.get_num_threads()" in items
        if not torch.cuda.is_available():
            row = frame[frame["item"] == "torch.cuda.is_available()"].iloc[0]
            assert row["why / note"]  # a reason, not just "False"

    def test_reproducibility_text(self, open_page):
        at = open_page("home")
        body = " ".join(texts(at.markdown))
        for switch in ("cudnn.deterministic", "cudnn.benchmark", "manual_seed"):
            assert switch in body


class TestSidebar:
    def test_seed_change_reruns(self, open_page):
        at = open_page("home")
        at.number_input(key="sidebar.seed").set_value(7).run()
        assert not at.exception
        assert at.number_input(key="sidebar.seed").value == 7
        assert any("seed `7`" in text for text in texts(at.caption))
        # the seed was applied in the run: torch's generator is at seed 7's start state
        assert torch.initial_seed() == 7

    def test_device_selector(self, open_page):
        at = open_page("home")
        device = at.selectbox(key="sidebar.device")
        assert device.options == available_devices()
        assert device.value == "cpu"
        device.select(available_devices()[-1]).run()
        assert not at.exception
        assert any(f"device `{available_devices()[-1]}`" in text for text in texts(at.caption))
        at.selectbox(key="sidebar.device").select("cpu").run()
        assert not at.exception


class TestImageInput:
    def test_default_sample_shown(self, open_page):
        at = open_page("home")
        assert at.radio(key=SOURCE).value == SAMPLE
        assert at.selectbox(key="home.image.sample").value == "chelsea.png"
        assert len(shown_images(at)) == 1
        assert any("451x300" in text for text in shown_images(at))

    def test_other_sample(self, open_page):
        at = open_page("home")
        at.selectbox(key="home.image.sample").select("camera.png").run()
        assert not at.exception and not at.error
        assert len(shown_images(at)) == 1
        assert any("Grayscale" in text for text in texts(at.info))

    def test_upload_prompt(self, upload):
        at = upload.at
        assert not at.error
        assert shown_images(at) == []
        assert any("Choose an image file" in text for text in texts(at.info))

    def test_upload_png(self, upload):
        at = upload("x.png", png_bytes(40, 60))
        assert not at.error
        assert len(shown_images(at)) == 1
        assert shown_images(at) == ["60x40 RGB, dtype uint8"]

    @pytest.mark.parametrize(
        ("name", "data", "expected"),
        [
            ("notes.png", b"this is a text file, not a picture\n" * 20, "not an image"),
            ("empty.png", b"", "empty (0 bytes)"),
            ("cut.png", png_bytes(64, 64)[:2000], "truncated"),
        ],
        ids=["text", "empty", "truncated"],
    )
    def test_bad_upload_shows_error(self, upload, name, data, expected):
        at = upload(name, data)
        assert len(at.error) == 1
        message = at.error[0].value
        assert message.startswith("Could not use this upload:")
        assert expected in message
        assert shown_images(at) == []
        # the page keeps working after the error: a good upload replaces it
        at = upload("ok.png", png_bytes(8, 8))
        assert not at.error and len(shown_images(at)) == 1

    def test_large_upload_is_downscaled(self, upload):
        at = upload("wide.png", png_bytes(20, 2100))
        assert not at.error
        notices = [text for text in texts(at.info) if text.startswith("Downscaled")]
        assert len(notices) == 1
        assert "2100x20" in notices[0] and "2048" in notices[0]
        assert shown_images(at) == ["2048x20 RGB, dtype uint8"]
