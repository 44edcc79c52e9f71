"""AppTest for the Home page: environment panel, shared sidebar, and the shared image input."""

from __future__ import annotations

import html
import io
import re

import numpy as np
import pytest
import torch
from PIL import Image

from core import environment, seeding
from core.environment import available_devices
from core.seeding import seed_everything
from tests.app.conftest import open_expanders
from tests.deterministic_docstring import docstring_sections
from ui.image_input import SAMPLE, UPLOAD
from ui.markdown import plain

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
        frames = [t.value for t in at.table if "why / note" in t.value.columns]
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
        before = torch.random.get_rng_state()
        at.number_input(key="sidebar.seed").set_value(7).run()
        assert not at.exception
        assert at.number_input(key="sidebar.seed").value == 7
        assert any("seed `7`" in text for text in texts(at.caption))
        # the seed is this session's: the process-wide generator is not reseeded by a run
        assert torch.equal(torch.random.get_rng_state(), before)

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


# ------------------------------------------------------------------------------------------
# use_deterministic_algorithms wording, the cuDNN option, GPUs, collect_env, notes
# ------------------------------------------------------------------------------------------


def deterministic_bullet(at) -> str:
    (bullet,) = [
        m.value for m in at.markdown if "use_deterministic_algorithms(True)`** goes" in m.value
    ]
    return bullet


class TestDeterministicFlagWording:
    def test_every_op_is_in_the_list_the_page_puts_it_in(self, open_page):
        at = open_page("home")
        bullet = deterministic_bullet(at)
        made_text, raise_text = docstring_sections()
        made_part, raise_part = bullet.split("**raise a RuntimeError**")
        made_part = made_part.split("**switch to a deterministic algorithm**")[1]

        def ops(part: str) -> list[str]:
            body = part.split("among them:", 1)[1].split(". ", 1)[0]
            return [re.sub(r"`([^`]+)`", r"\1", op).strip() for op in body.split(";")]

        made, raises = ops(made_part), ops(raise_part)
        assert raises and made
        for op in raises:
            assert op.split(":")[0] in raise_text and op.split(":")[0] not in made_text, op
        for op in made:
            assert op.split(":")[0] in made_text and op.split(":")[0] not in raise_text, op
        # the wrong lesson to teach: scatter_add_ / index_add on CUDA do not raise
        assert not any("scatter_add_" in op or "index_add" in op for op in raises)
        assert "torch.Tensor.scatter_add_ when called on a CUDA tensor" in made
        assert f"According to its docstring in torch {torch.__version__}" in bullet

    def test_full_lists_are_shown(self, open_page):
        at = open_page("home")
        assert not [df for df in at.dataframe if "when" in df.value.columns]  # lazy: closed
        open_expanders(at, "home.ops_box")
        made_text, raise_text = docstring_sections()
        frames = {len(df.value): df.value for df in at.dataframe if "when" in df.value.columns}
        assert set(frames) == {made_text.count("* "), raise_text.count("* ")}


class TestCudnnOption:
    def test_toggle_sets_the_flags(self, open_page):
        saved = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
        try:
            at = open_page("home")
            assert at.toggle(key="sidebar.cudnn_deterministic").value is False
            assert torch.backends.cudnn.deterministic is False
            at.toggle(key="sidebar.cudnn_deterministic").set_value(True).run()
            assert not at.exception
            text = " ".join(texts(at.markdown))
            assert "**cuDNN deterministic** toggle (now on)" in text
            if torch.cuda.is_available():
                assert torch.backends.cudnn.deterministic is True
                assert torch.backends.cudnn.benchmark is False
                assert "Read now: `deterministic = True`, `benchmark = False`" in text
            else:  # cuDNN is not used: the process-wide flags are left alone, and Home says so
                assert torch.backends.cudnn.deterministic is False
                assert "Read now: `deterministic = False`, `benchmark = False`" in text
                assert "Without a GPU cuDNN is not used and the app does not set them" in text
            snippet = next(c.value for c in at.code if c.value.startswith("import random"))
            assert "torch.backends.cudnn.deterministic = True" in snippet
            at.toggle(key="sidebar.cudnn_deterministic").set_value(False).run()
            assert torch.backends.cudnn.deterministic is False
            if not torch.cuda.is_available():
                assert any("cuDNN is not used" in c for c in texts(at.caption))
        finally:
            torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved

    def test_app_snippet_runs_and_matches(self, open_page):
        import random

        at = open_page("home")
        at.number_input(key="sidebar.seed").set_value(5).run()
        snippet = next(c.value for c in at.code if c.value.startswith("import random"))
        printed = []
        exec(snippet, {"print": lambda *a: printed.append(a)})
        seed_everything(5)
        assert printed == [(random.random(), float(np.random.rand()), float(torch.rand(1)))]


class TestNotesOnHome:
    def test_notes_code_and_citations(self, open_page):
        at = open_page("home")
        codes = [c.value.strip() for c in at.code]
        assert seeding.NOTES_SEEDING_CODE.strip() in codes
        assert seeding.NOTES_INIT_SEEDS_CODE.strip() in codes
        assert environment.NOTES_VISIBLE_DEVICES_CODE.strip() in codes
        assert environment.NOTES_VISIBLE_DEVICES_SHELL in codes
        captions = " ".join(texts(at.caption))
        for ref in ("004:14-26", "004:32-34", "004:36"):
            assert f"From the notes {ref}, verbatim" in captions
        assert "From the notes 000:32" in captions
        assert "notes 002:1289-1330" in " ".join(texts(at.markdown))

    def test_collapsed_notes_are_not_drawn_until_opened(self, open_page):
        at = open_page("home")
        assert not [m for m in texts(at.markdown) if m.startswith("**The notes say**")]
        open_expanders(at, "home.gpus_box")
        said = [m for m in texts(at.markdown) if m.startswith("**The notes say**")]
        assert len(said) == 1, said  # the one callout of the opened section

    def test_callouts_shown_with_their_verdicts(self, open_page):
        at = open_expanders(
            open_page("home"), "home.recipes_box", "home.gpus_box", "home.collect_env_box"
        )
        body = " ".join(texts(at.markdown))
        for title, ref in (
            ("init_seeds seeds torch only, and cuDNN only for seed 0", "000:32"),
            ("torch.manual_seed is not just for the CPU", "004:20"),
            ("cudnn.deterministic plus a seed is not the whole recipe", "004:22"),
            ("GPU 0 first, then GPU 1? No: one current device", "004:33"),
            ("collect_env: no need to cd into site-packages", "002:1289"),
        ):
            # Titles go through ui.markdown.plain, so "init_seeds" is sent as "init\_seeds".
            assert f"**{plain(title)}**" in body
            assert f"**The notes say** (notes {ref})" in body
        shown = " ".join(texts(at.text))
        shown += " ".join(html.unescape(h.value) for h in at.html)  # the notes' quotes
        assert "Only torch's draws repeat; random and numpy do not" in shown
        assert "PyTorch does not move on to GPU 1" in shown
        # The notes' code quote reads as code: their literal \n escapes become line breaks.
        assert "def init_seeds(seed=0):\n torch.manual_seed(seed)\n" in shown
        assert "\\n" not in shown


class TestLiveProcesses:
    def test_visible_devices_and_collect_env(self, open_page):
        at = open_page("home")
        assert not [df for df in at.dataframe if "device_count()" in df.value.columns]
        at.button(key="home.visible_devices").click().run(timeout=300)
        assert not at.exception and not at.error
        (table,) = [df.value for df in at.dataframe if "device_count()" in df.value.columns]
        assert list(table["case"]) == [
            "-1: hide every GPU",
            '"" (empty): hide every GPU',
            "set in the script, before CUDA starts",
            "set in the script, after CUDA started",
        ]
        assert list(table["device_count()"])[:3] == ["0", "0", "0"]
        body = " ".join(texts(at.markdown))
        if not torch.cuda.is_available():
            assert "Every count is 0: this machine has no GPU PyTorch can use" in body
        at.button(key="home.collect_env").click().run(timeout=300)
        assert not at.exception and not at.error
        report = [c.value for c in at.code if c.value.startswith("Collecting environment")]
        assert len(report) == 1
        assert f"PyTorch version: {torch.__version__}" in report[0]
        # both stay shown on the next rerun (cached for the process)
        at.number_input(key="sidebar.seed").set_value(3).run()
        assert [c.value for c in at.code if c.value.startswith("Collecting environment")]


# ------------------------------------------------------------------------------------------
# Accessibility and layout: alt text, link labels that fit, environment notes that wrap
# ------------------------------------------------------------------------------------------


class TestReadsAtAGlance:
    def test_sample_image_has_alt_text(self, open_page):
        """axe-core's critical image-alt: the Home image had no alt attribute."""
        at = open_page("home")
        alts = [img.alt for element in at.image for img in element.proto.imgs]
        assert alts and all(alt.strip() for alt in alts)
        assert "451x300" in alts[0]

    def test_page_links_are_titles_with_the_summary_below(self, open_page):
        """A whole sentence as a link label was cut off at 1280 px: the label is the title, and
        the summary is text that wraps."""
        from lessons.registry import available_lessons

        at = open_page("home")
        labels = [link.proto.label for link in at.get("page_link")]
        lessons = available_lessons()
        assert labels == [f"**{page.title}**" for page in lessons]
        body = [m.value for m in at.markdown]
        for page in lessons:
            assert page.summary in body

    def test_environment_notes_wrap(self, open_page):
        """The notes sat in one-line dataframe cells, cut at the edge; a static table wraps."""
        at = open_page("home")
        assert not [df for df in at.dataframe if "why / note" in df.value.columns]
        (table,) = [t.value for t in at.table if "why / note" in t.value.columns]
        assert table["why / note"].str.len().max() > 40  # long notes, shown whole

    def test_code_blocks_wrap(self, open_page):
        """A code block that scrolls sideways is a scroll region a keyboard cannot reach."""
        at = open_page("home")
        assert at.code and all(code.proto.wrap_lines for code in at.code)


# ------------------------------------------------------------------------------------------
# 中文 / English: Home in Chinese
# ------------------------------------------------------------------------------------------


class TestHomeInChinese:
    def test_every_text_is_chinese_and_the_links_are_unchanged(self):
        from lessons.registry import lesson_links

        LESSON_LINKS = lesson_links()
        from tests.app.conftest import open_cold
        from tests.app.i18n_checks import untranslated, visible_texts

        at = open_cold("home", {"lang": "zh"})
        assert not at.exception, at.exception
        open_expanders(at, "home.ops_box", "home.recipes_box", "home.gpus_box")
        assert untranslated(visible_texts(at)) == []
        assert at.title[0].value == "Torch Playground"
        (lessons,) = [m.value for m in at.markdown if m.value.startswith("- **[")]
        assert "（笔记 002:926）" in lessons
        for lesson in LESSON_LINKS:  # a link's target is the same in both languages
            assert f"]({lesson.slug}?{lesson.query})**" in lessons
        (table,) = [t.value for t in at.table if "原因 / 说明" in t.value.columns]
        assert list(table.columns) == ["组", "项", "值", "原因 / 说明"]
        assert "torch.__version__" in list(table["项"])

    def test_image_notices_and_errors_are_translated(self):
        from tests.app.conftest import open_cold

        at = open_cold("home", {"lang": "zh"})
        at.selectbox(key="home.image.sample").select("camera.png").run()
        assert any("灰度图" in text for text in texts(at.info))
        at.radio(key=SOURCE).set_value(UPLOAD).run()
        at.file_uploader(key=UPLOAD_KEY).set_value(("e.png", b"", "image/png")).run()
        assert not at.exception, at.exception
        (message,) = [e.value for e in at.error]
        assert message.startswith("无法使用这个上传的文件：") and "0 字节" in message
