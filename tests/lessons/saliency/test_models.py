"""lessons.saliency.models: the offline EfficientNet-Lite0, the torchvision registry and
safe custom uploads."""

from __future__ import annotations

import io
import json
import math
import pickle
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import tests.hostile_models as hostile
from core.images import load_sample
from lessons.saliency import models as M

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def lite0() -> M.LoadedModel:
    return M.load_model("efficientnet_lite0", device="cpu")


def sample(name: str) -> np.ndarray:
    return load_sample(name).rgb


class TinyNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(F.adaptive_avg_pool2d(torch.relu(self.conv(x)), 1).flatten(1))


def saved(obj: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


class TestEfficientNetLite0:
    def test_smoke(self, lite0: M.LoadedModel) -> None:
        assert not lite0.model.training
        assert all(not m.training for m in lite0.model.modules())
        assert len(lite0.categories) == 1000
        assert lite0.categories[285] == "Egyptian cat"
        x = lite0.preprocess(sample("chelsea.png"))
        assert x.shape == (1, 3, 224, 224) and x.dtype == torch.float32
        assert all(not p.requires_grad for p in lite0.model.parameters())
        assert "(pixel - 127) / 128" in lite0.describe_preprocessing()

    def test_weights_layout_matches_the_package_file(self, lite0: M.LoadedModel) -> None:
        state = torch.load(M.efficientnet_lite0_weights_path(), weights_only=True)
        assert len(state) == 296
        assert set(state) == set(lite0.model.state_dict())
        n_params = sum(p.numel() for p in lite0.model.parameters())
        assert math.isclose(n_params / 1e6, 4.65, abs_tol=0.05)

    @pytest.mark.parametrize(("name", "expected"), [("chelsea.png", 285), ("coffee.png", 967)])
    def test_matches_reference(self, lite0: M.LoadedModel, name: str, expected: int) -> None:
        with torch.no_grad():
            logits = lite0.model(lite0.preprocess(sample(name)))
        top = M.top_k(logits, lite0.categories, 5)
        assert top[0][0] == expected, top
        assert top[0][2] > 0.5

    def test_preprocessing_is_minus_127_over_128(self, lite0: M.LoadedModel) -> None:
        image = np.random.default_rng(0).integers(0, 256, (224, 224, 3), dtype=np.uint8)
        expected = (torch.from_numpy(image).permute(2, 0, 1).float() - 127) / 128
        torch.testing.assert_close(lite0.preprocess(image)[0], expected, atol=1e-5, rtol=0)
        black = lite0.black_level().flatten()
        torch.testing.assert_close(black, torch.full((3,), -127 / 128))

    def test_same_padding_matches_tensorflow(self) -> None:
        conv = M.Conv2dSame(2, 3, 3, stride=2, bias=False)
        x = torch.randn(1, 2, 8, 8)
        # TF SAME for k=3, s=2, even input: 0 rows/cols before, 1 after.
        expected = F.conv2d(F.pad(x, [0, 1, 0, 1]), conv.weight, stride=2)
        torch.testing.assert_close(conv(x), expected)
        conv1 = M.Conv2dSame(2, 3, 5, stride=1, bias=False)
        torch.testing.assert_close(conv1(x), F.conv2d(x, conv1.weight, padding=2))

    @settings(max_examples=10, deadline=None)
    @given(h=st.integers(1, 40), w=st.integers(1, 40), stride=st.sampled_from([1, 2]))
    def test_same_padding_output_size(self, h: int, w: int, stride: int) -> None:
        conv = M.Conv2dSame(1, 1, 3, stride=stride)
        out = conv(torch.zeros(1, 1, h, w))
        assert out.shape[-2:] == (math.ceil(h / stride), math.ceil(w / stride))

    def test_exception(self, lite0: M.LoadedModel) -> None:
        with pytest.raises(ValueError, match="Unknown model 'alexnet'.*efficientnet_lite0"):
            M.load_model("alexnet")
        with pytest.raises(ValueError, match=r"shape \(H, W, 3\)"):
            lite0.preprocess(np.zeros((10, 10), np.uint8))
        with pytest.raises(ValueError, match="uint8"):
            lite0.preprocess(np.zeros((10, 10, 3), np.float32))
        with pytest.raises(ValueError, match="device"):
            M.load_model(device="tpu:0")


class TestSmallImages:
    def test_tiny_image_is_upscaled_with_notice(self) -> None:
        tiny = np.zeros((10, 20, 3), np.uint8)
        bigger, notice = M.ensure_min_side(tiny)
        assert min(bigger.shape[:2]) >= 32 and bigger.shape[2] == 3
        assert notice is not None and "20x10" in notice and "upscaled" in notice
        assert notice.template.startswith("The image is only {w}x{h} px")  # translatable
        assert (notice.args["w"], notice.args["h"]) == (20, 10)

    def test_normal_image_is_untouched(self) -> None:
        image = np.zeros((40, 33, 3), np.uint8)
        same, notice = M.ensure_min_side(image)
        assert same is image and notice is None

    def test_tiny_image_still_classifies(self, lite0: M.LoadedModel) -> None:
        x = lite0.preprocess(np.full((5, 5, 3), 200, np.uint8))
        assert x.shape == (1, 3, 224, 224)


class TestTorchvisionRegistry:
    def test_unavailable_offline_names_exact_path(self, monkeypatch, tmp_path) -> None:
        monkeypatch.setenv("TORCH_HOME", str(tmp_path))
        entry = M.model_availability("resnet18")
        expected = tmp_path / "hub" / "checkpoints" / "resnet18-f37072fd.pth"
        assert not entry.available
        assert entry.weights_path == expected
        assert str(expected) in entry.reason
        with pytest.raises(ValueError, match="not available offline.*resnet18-f37072fd.pth"):
            M.load_model("resnet18")
        names = [e.spec.name for e in M.list_models()]
        assert names[0] == "efficientnet_lite0" and "vit_b_16" in names

    def test_loads_from_local_hub_cache(self, monkeypatch, tmp_path) -> None:
        import torchvision

        monkeypatch.setenv("TORCH_HOME", str(tmp_path))
        reference = torchvision.models.resnet18(weights=None).eval()
        path = M.expected_weights_path("resnet18")
        assert path is not None
        path.parent.mkdir(parents=True)
        torch.save(reference.state_dict(), path)
        assert M.model_availability("resnet18").available
        loaded = M.load_model("resnet18")
        assert loaded.preprocessing.resize == 256 and loaded.preprocessing.crop == 224
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            torch.testing.assert_close(loaded.model(x), reference(x))

    def test_download_only_on_request(self, monkeypatch, tmp_path) -> None:
        import torchvision

        monkeypatch.setenv("TORCH_HOME", str(tmp_path))
        calls: list[str] = []

        def offline(url: str, **kwargs):
            calls.append(url)
            raise OSError("no network")

        monkeypatch.setattr(torch.hub, "load_state_dict_from_url", offline)
        with pytest.raises(ValueError, match="not available offline"):
            M.load_model("resnet18")
        assert calls == []  # nothing is fetched unless asked
        with pytest.raises(
            ValueError, match=r"Downloading .* failed \(no network\).*copy the file"
        ):
            M.load_model("resnet18", allow_download=True)
        assert calls == [torchvision.models.ResNet18_Weights.DEFAULT.url]

        state = torchvision.models.resnet18(weights=None).state_dict()
        monkeypatch.setattr(torch.hub, "load_state_dict_from_url", lambda url, **kw: state)
        loaded = M.load_model("resnet18", allow_download=True)
        assert "downloaded" in loaded.source and len(loaded.categories) == 1000

    def test_preprocessing_matches_torchvision_transforms(self) -> None:
        import torchvision

        weights = torchvision.models.ResNet18_Weights.DEFAULT
        prep = M._preprocessing_from_weights(weights)
        image = sample("astronaut.png")
        ours = M.preprocess_image(image, prep)[0]
        theirs = weights.transforms()(torch.from_numpy(image).permute(2, 0, 1))
        # torchvision resizes the uint8 tensor (rounding to integers); we resize floats.
        assert (ours - theirs).abs().max() < 0.5 / 255 / 0.224 + 1e-4


class TestCustomUpload:
    """Uploads are weights only: nothing from the file runs, nothing is expanded unchecked."""

    def test_state_dict_for_lite0(self, lite0: M.LoadedModel) -> None:
        # the package's file is in torch's legacy format, refused as a plain pickle; re-saved
        # with a current torch.save it is what an upload looks like
        state = torch.load(M.efficientnet_lite0_weights_path(), weights_only=True)
        data = saved(state)
        loaded = M.load_custom_model(data, filename="lite0.pth", architecture="efficientnet_lite0")
        x = loaded.preprocess(sample("chelsea.png"))
        with torch.no_grad():
            torch.testing.assert_close(loaded.model(x), lite0.model(x))

    def test_matches_reference_pt_and_safetensors(self) -> None:
        import torchvision
        from safetensors.torch import save as save_safetensors

        torch.manual_seed(0)
        original = torchvision.models.resnet18(weights=None).eval()
        x = torch.rand(1, 3, 224, 224)
        with torch.no_grad():
            expected = original(x)
        state = original.state_dict()
        for name, data in (("r18.pt", saved(state)), ("r18.safetensors", save_safetensors(state))):
            loaded = M.load_custom_model(data, filename=name, architecture="resnet18")
            with torch.no_grad():
                torch.testing.assert_close(loaded.model(x), expected)
            assert loaded.source == f"uploaded state_dict for resnet18: {name}"

    def test_upload_cap_is_streamlits(self) -> None:
        import tomllib

        config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
        assert config["server"]["maxUploadSize"] == M.MAX_UPLOAD_MB
        assert M.MAX_UPLOAD_BYTES == M.MAX_UPLOAD_MB * 1024 * 1024

    def test_exception_not_a_model_file(self, monkeypatch) -> None:
        with pytest.raises(ValueError, match="neither a torch.save file .* nor a safetensors"):
            M.load_custom_model(b"this is not a model", filename="notes.txt")
        with pytest.raises(ValueError, match="empty"):
            M.load_custom_model(b"", filename="empty.pt")
        data = saved(TinyNet().state_dict())
        monkeypatch.setattr(M, "MAX_UPLOAD_BYTES", len(data) - 1)
        with pytest.raises(ValueError, match="uploads are limited to 200 MB"):
            M.load_custom_model(data, filename="tiny.pt", architecture="resnet18")

    def test_exception_torchscript_is_refused_and_runs_nothing(self, tmp_path) -> None:
        marker = tmp_path / "created-by-the-upload"
        data = hostile.torchscript_writing(marker)
        with pytest.raises(ValueError, match="TorchScript archive") as refused:
            M.load_custom_model(data, filename="evil.pt", architecture="resnet18")
        message = str(refused.value)
        assert "would run the uploader's code on this server" in message
        assert M.SAVE_STATE_DICT in message and M.SAVE_SAFETENSORS in message
        assert not marker.exists()
        # the file is a working proof of concept: run as TorchScript, it creates the marker
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            torch.jit.load(io.BytesIO(data))(torch.zeros(1, 3, 8, 8))
        assert marker.exists()

    def test_exception_pickled_code_is_refused(self) -> None:
        # a whole module pickles its class: unpickling would import and call the uploader's code
        with pytest.raises(ValueError, match="pickled Python objects") as refused:
            M.load_custom_model(saved(TinyNet()), filename="module.pt", architecture="resnet18")
        assert "would run the uploader's code" in str(refused.value)
        assert "(first tests.lessons.saliency.test_models.TinyNet)" in str(refused.value)
        assert "do those steps only if you trust" not in str(refused.value)  # torch's advice
        assert M.SAVE_STATE_DICT in str(refused.value)
        with pytest.raises(ValueError, match="plain pickle"):
            M.load_custom_model(pickle.dumps({"a": 1}), filename="plain.pkl")
        legacy = io.BytesIO()
        torch.save(TinyNet().state_dict(), legacy, _use_new_zipfile_serialization=False)
        with pytest.raises(ValueError, match="legacy pre-1.6 format"):
            M.load_custom_model(legacy.getvalue(), filename="old.pt", architecture="resnet18")

    def test_exception_deflate_bomb_is_refused_before_expansion(self, monkeypatch) -> None:
        bomb = hostile.deflate_bomb()
        assert len(bomb) < 1 << 20  # 0.5 MB that expands to 512 MiB

        def expanded(*args, **kwargs):
            raise AssertionError("torch.load was reached")

        monkeypatch.setattr(torch, "load", expanded)
        tracemalloc.start()
        try:
            with pytest.raises(ValueError, match="is compressed .*decompression bomb") as refused:
                M.load_custom_model(bomb, filename="bomb.pt", architecture="resnet18")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert "536,870,912" in str(refused.value)
        assert peak < 50 << 20

    def test_deflate_bomb_memory_in_a_fresh_process(self, tmp_path) -> None:
        # torch inflates in C++, which tracemalloc does not see: measure the peak RSS of a
        # process that only imports the loader and is handed the bomb (it grew 512 MiB before).
        path = tmp_path / "bomb.pt"
        path.write_bytes(hostile.deflate_bomb())
        script = (
            "import resource, sys\n"
            "from lessons.saliency import models as M\n"
            "data = open(sys.argv[1], 'rb').read()\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n"
            "    M.load_custom_model(data, filename='bomb.pt', architecture='resnet18')\n"
            "except ValueError as error:\n"
            "    print('refused:', error)\n"
            "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "print('peak_growth_kib', after - before)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        assert "refused:" in done.stdout and "decompression bomb" in done.stdout
        growth_kib = int(done.stdout.split("peak_growth_kib")[-1])
        assert growth_kib < 50 * 1024, done.stdout

    def test_exception_forged_archives(self) -> None:
        valid = saved(TinyNet().state_dict())
        with pytest.raises(ValueError, match="more than the 200 MB upload limit"):
            M.load_custom_model(
                hostile.with_declared_sizes(valid, 300 << 20),
                filename="f.pt",
                architecture="resnet18",
            )
        with pytest.raises(ValueError, match="more than the .* bytes of the file"):
            M.load_custom_model(
                hostile.with_declared_sizes(valid, len(valid)),
                filename="f.pt",
                architecture="resnet18",
            )
        many = hostile.stored_zip({f"archive/data/{i}": b"" for i in range(M.MAX_ENTRIES + 1)})
        with pytest.raises(ValueError, match="declares 4,097 entries"):
            M.load_custom_model(many, filename="many.pt", architecture="resnet18")
        for name in ("archive/../data.pkl", "/archive/data.pkl", "archive\\data.pkl"):
            odd = hostile.stored_zip({name: b"", "archive/data.pkl": b""})
            with pytest.raises(ValueError, match="not a plain relative path"):
                M.load_custom_model(odd, filename="odd.pt", architecture="resnet18")
        with pytest.raises(ValueError, match="not all in one folder"):
            M.load_custom_model(
                hostile.stored_zip({"notes.txt": b"hello"}),
                filename="n.pt",
                architecture="resnet18",
            )
        with pytest.raises(ValueError, match="no data.pkl record"):
            M.load_custom_model(
                hostile.stored_zip({"a/notes.txt": b"hi"}), filename="n.pt", architecture="resnet18"
            )
        with pytest.raises(ValueError, match="zip directory is not at the end"):
            M.load_custom_model(valid + b"trailer", filename="t.pt", architecture="resnet18")
        with pytest.raises(ValueError, match="could not be read with torch.load"):
            M.load_custom_model(
                hostile.stored_zip({"a/data.pkl": b"not a pickle"}),
                filename="p.pt",
                architecture="resnet18",
            )

    def test_exception_forged_safetensors(self) -> None:
        from safetensors.torch import save as save_safetensors

        valid = save_safetensors(TinyNet().state_dict())
        size = int.from_bytes(valid[:8], "little")
        header = json.loads(valid[8 : 8 + size])

        def forged(header_bytes: bytes, rest: bytes = b"") -> bytes:
            return len(header_bytes).to_bytes(8, "little") + header_bytes + rest

        with pytest.raises(ValueError, match="declares 1,099,511,627,776 bytes, more than"):
            M.load_custom_model((1 << 40).to_bytes(8, "little") + b"{}", filename="h.safetensors")
        with pytest.raises(ValueError, match="declares 100 bytes but the file has"):
            M.load_custom_model((100).to_bytes(8, "little") + b"{}", filename="h.safetensors")
        with pytest.raises(ValueError, match="not JSON"):
            M.load_custom_model(forged(b'{"a": ' + b"[" * 100_000), filename="h.safetensors")
        header["conv.weight"]["data_offsets"] = [0, 1 << 40]
        body = valid[8 + size :]
        with pytest.raises(ValueError, match="'conv.weight' has data_offsets"):
            M.load_custom_model(forged(json.dumps(header).encode(), body), filename="h.safetensors")

    def test_exception_mismatched_keys(self) -> None:
        from safetensors.torch import save as save_safetensors

        state = TinyNet().state_dict()
        with pytest.raises(ValueError, match=r"does not match.*missing key.*unexpected key"):
            M.load_custom_model(saved(state), filename="tiny.pt", architecture="resnet18")
        with pytest.raises(ValueError, match=r"does not match.*missing key.*unexpected key"):
            M.load_custom_model(
                save_safetensors(state), filename="tiny.safetensors", architecture="resnet18"
            )

    def test_exception_wrong_head_shape(self) -> None:
        import torchvision

        state = torchvision.models.resnet18(weights=None, num_classes=10).state_dict()
        with pytest.raises(ValueError, match=r"wrong shape.*fc\.weight.*1000-class"):
            M.load_custom_model(saved(state), filename="r18_10.pt", architecture="resnet18")

    def test_exception_state_dict_needs_architecture(self) -> None:
        with pytest.raises(ValueError, match="choose the architecture"):
            M.load_custom_model(saved(TinyNet().state_dict()), filename="tiny.pt")
        with pytest.raises(ValueError, match="Unknown architecture 'lenet'"):
            M.load_custom_model(
                saved(TinyNet().state_dict()), filename="tiny.pt", architecture="lenet"
            )
        with pytest.raises(ValueError, match="holds a list, not a state_dict"):
            M.load_custom_model(saved([1, 2]), filename="list.pt", architecture="resnet18")


class TestTensorsThatCannotBeWeights:
    """torch.load(weights_only=True) gives back meta and sparse tensors as the file says: their
    keys and shapes match, and load_state_dict then failed with a RuntimeError (a traceback on
    the page). They are refused with a message instead."""

    @pytest.mark.parametrize(
        ("kind", "make"),
        [("meta", lambda: torch.empty(2, 3, device="meta")),
         ("sparse_coo", lambda: torch.zeros(2, 3).to_sparse())],
    )  # fmt: skip
    def test_refused_with_a_message(self, kind, make):
        state = dict(nn.Linear(3, 2).state_dict(), weight=make())
        buffer = io.BytesIO()
        torch.save(state, buffer)
        with warnings.catch_warnings(), pytest.raises(ValueError, match="plain dense tensors"):
            warnings.simplefilter("ignore", UserWarning)  # torch's sparse-invariants notice
            M.read_weights(buffer.getvalue(), filename="odd.pt")
