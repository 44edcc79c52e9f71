"""AppTest: hostile uploads cannot hurt the server or the page (bombs, pickles, markup)."""

from __future__ import annotations

import io
import resource

import numpy as np
import torch

import tests.hostile_models as hostile
import ui.image_input as image_input
from lessons.flow.flow_files import save_flo
from lessons.saliency import models as M
from tests.lessons.saliency.test_page import upload_model
from tests.shared.test_images import sixteen_bit_png_bomb
from ui.image_input import UPLOAD

HOSTILE_NAME = "**bold**[x](javascript:alert(1))<img src=x onerror=alert(1)>"


def _markdown_texts(at) -> list[str]:
    """The markdown source of every element that renders markdown."""
    kinds = ("markdown", "caption", "info", "warning", "error", "success", "toast")
    return [str(element.value) for kind in kinds for element in getattr(at, kind)]


# ---------------------------------------------------------------- image bombs (shared input)
def test_sixteen_bit_png_bomb_refused_once(open_page, monkeypatch):
    decoded = []
    real = image_input.decode_image

    def counting(*args, **kwargs):
        decoded.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(image_input, "decode_image", counting)
    at = open_page("home")
    at.radio(key="home.image.source").set_value(UPLOAD).run()
    data = sixteen_bit_png_bomb()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    at.file_uploader(key="home.image.upload").set_value(("bomb.png", data, "image/png")).run()
    growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    assert not at.exception, at.exception
    errors = [element.value for element in at.error]
    assert len(errors) == 1 and "limit of 25 Mpx" in errors[0]
    assert "12600x12600" in errors[0] and not at.image
    assert growth_mb < 200, f"RSS grew {growth_mb:.0f} MB"
    at.run()  # a rerun (any widget change) does not decode the upload again
    assert not at.exception and len(at.error) == 1
    assert decoded == [1]


def test_image_error_text_is_not_markdown(open_page):
    at = open_page("home")
    at.radio(key="home.image.source").set_value(UPLOAD).run()
    # Pillow's error quotes the bytes it found; the page shows them as written
    at.file_uploader(key="home.image.upload").set_value(
        (f"{HOSTILE_NAME}.png", HOSTILE_NAME.encode() * 8, "image/png")).run()
    assert not at.exception, at.exception
    texts = _markdown_texts(at)
    assert any(text.startswith("Could not use this upload") for text in texts)
    for text in texts:
        assert "**bold**" not in text and "](javascript" not in text


# ---------------------------------------------------------------- flow files
def _hostile_npy() -> bytes:
    """A .npy whose header names a 'dtype' made of markup: the loader's error quotes it."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": HOSTILE_NAME, "fortran_order": False, "shape": (4, 4, 2)})
    return buf.getvalue()


def test_flow_file_header_and_name_are_not_markdown(open_page):
    at = open_page("flow")
    at.selectbox(key="flow.source").select("upload_flow").run()
    at.file_uploader(key="flow.file").upload(f"{HOSTILE_NAME}.npy", _hostile_npy()).run()
    assert not at.exception, at.exception
    errors = [str(element.value) for element in at.error]
    assert len(errors) == 1 and "not a readable .npy" in errors[0]
    assert "\\*\\*bold\\*\\*" in errors[0]  # shown escaped, as typed
    for text in _markdown_texts(at):
        assert "**bold**" not in text and "](javascript" not in text


def test_flow_file_huge_header_refused(open_page):
    at = open_page("flow")
    at.selectbox(key="flow.source").select("upload_flow").run()
    header = np.array([202021.25], "<f4").tobytes() + np.array([90_000, 90_000], "<i4").tobytes()
    at.file_uploader(key="flow.file").upload("big.flo", header + bytes(64)).run()
    assert not at.exception, at.exception
    assert any("over the size cap" in str(element.value) for element in at.error)


def test_flow_file_decoded_once_across_mask_changes(open_page, monkeypatch):
    import lessons.flow.flow_files

    calls = []
    real = lessons.flow.flow_files.load_flow_file

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(lessons.flow.flow_files, "load_flow_file", counting)
    import ui.pictures

    hashed = []
    real_digest = ui.pictures.file_digest
    monkeypatch.setattr(
        ui.pictures, "file_digest", lambda data: hashed.append(1) or real_digest(data)
    )
    flow = np.stack(np.meshgrid(np.linspace(-1, 1, 40), np.linspace(-1, 1, 30)), 2)
    at = open_page("flow")
    at.selectbox(key="flow.source").select("upload_flow").run()
    at.file_uploader(key="flow.file").upload("ok.flo", save_flo(flow.astype(np.float32))).run()
    at.slider(key="flow.fraction").set_value(0.45).run()
    assert not at.exception, at.exception
    assert not at.error
    assert len(calls) == 1
    assert len(hashed) == 1  # the file's SHA-256 is taken once, not on every rerun


# ---------------------------------------------------------------- model files (saliency)
def _errors(at) -> str:
    return " ".join(str(element.value) for element in at.error)


def test_torchscript_model_upload_runs_nothing(open_page, tmp_path):
    marker = tmp_path / "created-by-the-upload"
    data = hostile.torchscript_writing(marker)
    at = upload_model(open_page("saliency"), data, f"{HOSTILE_NAME}.pt")
    assert not at.exception, at.exception
    shown = _errors(at)
    assert "TorchScript archive" in shown and "run the uploader's code on this server" in shown
    assert "safetensors" in shown  # how to export the weights instead
    assert "\\*\\*bold\\*\\*" in shown  # the file's name is shown as typed
    for text in _markdown_texts(at):
        assert "**bold**" not in text and "](javascript" not in text
    assert not marker.exists()
    assert not at.dataframe  # no prediction: the page stopped at the message


def test_model_archive_bomb_is_refused_before_expansion(open_page):
    at = open_page("saliency")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    upload_model(at, hostile.deflate_bomb(), "bomb.pt")
    growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    assert not at.exception, at.exception
    assert "decompression bomb" in _errors(at)
    assert growth_mb < 200, f"RSS grew {growth_mb:.0f} MB"


def test_whole_pickled_model_upload_is_refused(open_page):
    buffer = io.BytesIO()
    torch.save(torch.nn.Linear(3, 2), buffer)
    at = upload_model(open_page("saliency"), buffer.getvalue(), "module.pt")
    assert not at.exception, at.exception
    assert "pickled Python objects" in _errors(at)


def test_safetensors_weights_upload_classifies(open_page):
    from safetensors.torch import save as save_safetensors

    state = torch.load(M.efficientnet_lite0_weights_path(), weights_only=True)
    state = {name: tensor.contiguous() for name, tensor in state.items()}  # as safetensors needs
    at = upload_model(
        open_page("saliency"), save_safetensors(state), "lite0.safetensors", "efficientnet_lite0"
    )
    assert not at.exception, at.exception
    assert not at.error, _errors(at)
    assert list(at.dataframe[0].value["class"])[0] == 285  # chelsea.png: Egyptian cat
