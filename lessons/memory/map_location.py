"""``torch.load`` and ``map_location`` (the notes, 000:63 and 000:76), reproduced.

A state_dict "saved on ``cuda:0``" (on a machine without one, saved on the CPU and its device
tag rewritten, byte for byte what a cuda:0 save records) is loaded with the notes' calls, and
:func:`map_location_demo` says where each DDP worker's copy lands without ``map_location``.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from core.text import N_, T
from lessons.memory.allocator_sim import format_size


@dataclass(frozen=True)
class LoadAttempt:
    """One ``torch.load`` call on the saved file: the call as written, where the tensor landed
    (``None`` when it raised) and the error (``"Type: message"``)."""

    call: str
    device: str | None
    error: str | None


@dataclass(frozen=True)
class WorkerLoad:
    """Where one DDP worker's copy of the state_dict lands, without and with ``map_location``."""

    rank: int
    default_device: str
    mapped_device: str
    nbytes: int


@dataclass(frozen=True)
class MapLocationDemo:
    """``torch.load`` of a state_dict saved on ``saved_device``.

    ``location_tags``: the device tags ``torch.load`` read from the file (through a
    ``map_location`` callable that records them); ``rewritten``: True when no such device exists
    here, so the file was saved on the CPU and its tags rewritten (see
    :func:`saved_state_dict`); ``attempts``: the notes' calls and their results;
    ``workers``: where each of ``world_size`` workers' copies land (nothing is allocated for
    this; the destination is the tag, as ``torch.load`` restores it).
    """

    saved_device: str
    rewritten: bool
    nbytes: int
    location_tags: tuple[str, ...]
    attempts: tuple[LoadAttempt, ...]
    workers: tuple[WorkerLoad, ...]

    @property
    def gpu0_bytes_without_map_location(self) -> int:
        return sum(w.nbytes for w in self.workers if w.default_device == self.saved_device)


def _state_dict() -> dict[str, torch.Tensor]:
    layer = nn.Linear(256, 256)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(256 * 256, dtype=torch.float32).reshape(256, 256) / 1e4)
        layer.bias.zero_()
    return layer.state_dict()


def retag_archive(raw: bytes, old: str, new: str) -> bytes:
    """Rewrite the device tag ``old`` to ``new`` in a ``torch.save`` archive (pickle protocol 2
    writes it as ``BINUNICODE``: ``b"X" + 4-byte length + text``); the data stays the same, so
    the file is what ``torch.save`` writes for tensors on ``new``."""

    def tag(text: str) -> bytes:
        data = text.encode()
        return b"X" + len(data).to_bytes(4, "little") + data

    source = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    found = False
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                found = tag(old) in data
                data = data.replace(tag(old), tag(new))
            target.writestr(info.filename, data)
    if not found:
        raise ValueError(f"no device tag {old!r} in the archive")
    return out.getvalue()


def saved_state_dict(device: str = "cuda:0") -> tuple[bytes, bool]:
    """The bytes ``torch.save(state_dict, f)`` writes for a small ``nn.Linear(256, 256)``
    state_dict on ``device``, saved into memory (``io.BytesIO``), and whether the device tag had
    to be rewritten because ``device`` does not exist here."""
    buffer = io.BytesIO()
    state = _state_dict()
    real = device == "cpu" or (
        device.startswith("cuda")
        and torch.cuda.is_available()
        and torch.device(device).index is not None
        and torch.device(device).index < torch.cuda.device_count()
    )
    if real:
        torch.save({k: v.to(device) for k, v in state.items()}, buffer)
        return buffer.getvalue(), False
    torch.save(state, buffer)
    return retag_archive(buffer.getvalue(), "cpu", device), True


#: The ``torch.load`` calls of the notes (000:63), plus the dict form; ``weights_only=True``
#: always (a state_dict needs nothing else, and it never runs pickled code).
LOAD_CALLS: tuple[tuple[str, Callable[[io.BytesIO], Any]], ...] = (
    ("torch.load(f, weights_only=True)", lambda f: torch.load(f, weights_only=True)),
    (
        "torch.load(f, map_location='cpu', weights_only=True)",
        lambda f: torch.load(f, map_location="cpu", weights_only=True),
    ),
    (
        "torch.load(f, map_location={'cuda:0': 'cpu'}, weights_only=True)",
        lambda f: torch.load(f, map_location={"cuda:0": "cpu"}, weights_only=True),
    ),
    (
        "torch.load(f, map_location=lambda storage, loc: storage, weights_only=True)",
        lambda f: torch.load(f, map_location=lambda storage, loc: storage, weights_only=True),
    ),
    (
        "torch.load(f, map_location=lambda storage, loc: storage.cuda(1), weights_only=True)",
        lambda f: torch.load(
            f, map_location=lambda storage, loc: storage.cuda(1), weights_only=True
        ),
    ),
)


def map_location_demo(world_size: int = 4, saved_device: str = "cuda:0") -> MapLocationDemo:
    """Save a state_dict "on ``saved_device``" and load it as the notes do (000:63), and say
    where ``world_size`` DDP workers' copies land without ``map_location`` (000:76).

    Raises ``ValueError`` for a world size outside 1..16 or a device other than ``cuda:N``.
    """
    if not 1 <= world_size <= 16:
        raise ValueError(f"world_size must be 1..16, got {world_size}")
    if re.fullmatch(r"cuda:\d+", saved_device) is None:
        raise ValueError(f"saved_device must look like 'cuda:0', got {saved_device!r}")
    raw, rewritten = saved_state_dict(saved_device)
    tags: list[str] = []

    def record(storage: Any, loc: str) -> Any:
        tags.append(loc)
        return storage

    state = torch.load(io.BytesIO(raw), map_location=record, weights_only=True)
    nbytes = sum(t.nbytes for t in state.values())
    attempts = []
    for call, load in LOAD_CALLS:
        try:
            loaded = load(io.BytesIO(raw))
        except Exception as exc:  # the demo shows what torch raises, as it raises it
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            attempts.append(LoadAttempt(call, None, f"{type(exc).__name__}: {first_line}"))
        else:
            attempts.append(LoadAttempt(call, str(next(iter(loaded.values())).device), None))
    workers = tuple(WorkerLoad(rank, tags[0], f"cuda:{rank}", nbytes) for rank in range(world_size))
    return MapLocationDemo(saved_device, rewritten, nbytes, tuple(tags), tuple(attempts), workers)


MAP_LOCATION_SNIPPET = """import io

import torch

# What torch.save writes for a state_dict on cuda:0 (here saved on the CPU and its device
# tag rewritten, when this machine has no cuda:0; see lessons.memory.map_location.saved_state_dict)
from lessons.memory.map_location import saved_state_dict

raw, rewritten = saved_state_dict("cuda:0")
seen = []
torch.load(io.BytesIO(raw), weights_only=True,
           map_location=lambda storage, loc: seen.append(loc) or storage)
print("device tags in the file:", sorted(set(seen)))
for kw in ({}, {"map_location": "cpu"}, {"map_location": lambda storage, loc: storage}):
    try:
        sd = torch.load(io.BytesIO(raw), weights_only=True, **kw)
        print(list(kw) or "no map_location", "->", sd["weight"].device)
    except RuntimeError as err:
        print(list(kw) or "no map_location", "->", str(err).splitlines()[0])

# In DDP every worker runs this line; without map_location each copy goes to cuda:0:
# sd = torch.load(path, map_location=f"cuda:{local_rank}", weights_only=True)
"""


# ---------------------------------------------------------------------------- the page's texts
#: What the notes say about torch.load, over the demo.
MAP_LOCATION_INTRO = N_(
    "The notes (000:63): `torch.load` first deserialises to the CPU, then moves each "
    "tensor to the device it was saved from, and fails if that device is missing; "
    "`map_location` maps it elsewhere. Below, a state_dict saved from `cuda:0` into an "
    "in-memory file is loaded with the notes' calls (always `weights_only=True`)."
)


#: The same errors in the error doctor (links relative to this page).
ERROR_DOCTOR_LINK = N_(
    "The error doctor has these errors beside the notes' others: [a GPU save loaded without "
    "one](errors?errors.entry=load-map-location) and [GPU 0's memory balloons under "
    "DDP](errors?errors.entry=gpu0-memory-spike)."
)


def rewritten_notice(load: MapLocationDemo) -> T:
    """Why a machine without the saved device still shows what its file holds."""
    return T(
        "No cuda:0 here: the file was written by torch.save on the CPU and its device "
        "tag set to 'cuda:0', byte for byte what a cuda:0 save records; torch.load "
        "below reads the tags {tags}.",
        tags=sorted(set(load.location_tags)),
    )


def attempt_rows(load: MapLocationDemo) -> list[dict[str, Any]]:
    """One table row per ``torch.load`` call: the call, where it landed or ``raises``, the error
    (headers and texts to translate are ``T``)."""
    return [
        {T("call"): a.call, T("lands on"): a.device or T("raises"), T("error"): a.error or ""}
        for a in load.attempts
    ]


def ballooning_text(load: MapLocationDemo) -> T:
    """The notes' "GPU 0 ballooning" (000:76) with the demo's numbers."""
    return T(
        "GPU 0 ballooning (000:76): in DDP each of the {world} worker processes loads the "
        "same {size} state_dict. Without `map_location` every copy is restored to its saved "
        "device `{device}`: GPU 0 receives **{gpu0}** (and every worker opens a CUDA "
        "context there too), while the other GPUs get nothing. "
        "`map_location=f'cuda:{{local_rank}}'` (or saving from the CPU, as the notes' fix "
        "does) puts each copy on its own worker's GPU.",
        world=len(load.workers),
        size=format_size(load.nbytes),
        device=load.saved_device,
        gpu0=format_size(load.gpu0_bytes_without_map_location),
    )


def worker_rows(load: MapLocationDemo) -> list[dict[str, Any]]:
    """One table row per DDP worker: where its copy lands without and with ``map_location``."""
    return [
        {
            "rank": w.rank,
            T("no map_location"): w.default_device,
            "map_location=f'cuda:{rank}'": w.mapped_device,
            T("bytes"): format_size(w.nbytes),
        }
        for w in load.workers
    ]
