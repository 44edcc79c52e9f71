"""Hostile model files for the upload tests (core and page): each is a proof of concept that
the old loader ran or expanded, built small and fast here."""

from __future__ import annotations

import collections
import functools
import io
import pickle
import struct
import warnings
import zipfile
from pathlib import Path

import torch
from torch import nn


class FileWriter(nn.Module):
    """A model whose ``forward`` creates (or maps) the file ``path`` on whatever machine runs it:
    ``torch.from_file(shared=True)`` opens it with O_CREAT and sizes it to 1000 floats."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mapped = torch.from_file(self.path, shared=True, size=1000)
        return mapped.unsqueeze(0) + x.mean()


def torchscript_writing(marker: Path) -> bytes:
    """A TorchScript archive (torch.jit.save) that creates ``marker`` when its forward runs."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "torch.jit is deprecated"
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(FileWriter(str(marker))), buffer)
    return buffer.getvalue()


class _Storage:
    def __init__(self, numel: int) -> None:
        self.numel = numel


class _Tensor:
    """Pickles as a float32 tensor of ``numel`` elements whose bytes are record ``data/0``."""

    def __init__(self, numel: int) -> None:
        self.storage = _Storage(numel)

    def __reduce__(self):
        size, stride = (self.storage.numel,), (1,)
        args = (self.storage, 0, size, stride, False, collections.OrderedDict())
        return (torch._utils._rebuild_tensor_v2, args)


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: object):  # torch.save's reference to a storage record
        if isinstance(obj, _Storage):
            return ("storage", torch.FloatStorage, "0", "cpu", obj.numel)
        return None


@functools.lru_cache(maxsize=2)
def deflate_bomb(nbytes: int = 512 << 20) -> bytes:
    """A torch.save archive of ``{"w": zeros(nbytes // 4)}`` whose ``data/0`` record is deflated:
    about 0.5 MB on disk for 512 MiB expanded. ``torch.load`` reads it (the zip format allows
    compression, torch.save just never uses it). The zeros are written in 1 MiB chunks, so making
    it never holds more than one chunk."""
    pkl = io.BytesIO()
    _Pickler(pkl, protocol=2).dump({"w": _Tensor(nbytes // 4)})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("archive/data.pkl", pkl.getvalue())
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/version", "3\n")
        info = zipfile.ZipInfo("archive/data/0")
        info.compress_type = zipfile.ZIP_DEFLATED
        chunk = bytes(1 << 20)
        with archive.open(info, "w", force_zip64=True) as record:
            for _ in range(nbytes >> 20):
                record.write(chunk)
    return out.getvalue()


def with_declared_sizes(data: bytes, size: int) -> bytes:
    """The zip ``data`` with every central-directory record declaring ``size`` bytes (packed and
    expanded): a forged directory that still parses."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at != -1:
        struct.pack_into("<LL", out, at + 20, size, size)
        at = out.find(b"PK\x01\x02", at + 46)
    return bytes(out)


def stored_zip(entries: dict[str, bytes]) -> bytes:
    """A zip of ``entries`` stored uncompressed, as torch.save writes them."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return out.getvalue()
