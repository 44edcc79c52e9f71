"""Serialization errors: loading a whole pickled model, a GPU checkpoint on a CPU, old pickles.

All three run here: each snippet writes its checkpoint into a temporary directory and loads it.
"""

from __future__ import annotations

from core.text import N_
from lessons.errors.entry import LIVE, Entry

ENTRIES: tuple[Entry, ...] = (
    Entry(
        key="load-whole-model",
        kind="serialization",
        title=N_("torch.load of a whole pickled model (weights_only)"),
        where="000:63",
        notes_message="model = torch.load('asd.pth')",
        notes_cause="model.load_state_dict(torch.load('asd.pth'))",
        notes_gloss=N_(
            "Save the whole model with torch.save(model, 'asd.pth') and load it with "
            "model = torch.load('asd.pth'); or save only the parameters, the recommended way, and "
            "load them into a model the code builds: model.load_state_dict(torch.load('asd.pth'))."
        ),
        cause=N_(
            "Since torch 2.6 torch.load defaults to weights_only=True: it unpickles only tensors, "
            "numbers, strings and plain containers, because unpickling anything else can run "
            "arbitrary code from the file. A whole model is pickled as its class "
            "(torch.nn.modules.container.Sequential, or your own), which is not on that list."
        ),
        fix=N_(
            "Save and load the state_dict, as the notes recommend: the code builds the model and "
            "model.load_state_dict(torch.load(path)) fills in the weights, with weights_only "
            "left on. For a file you made yourself or otherwise trust, torch.load(path, "
            "weights_only=False) still loads a whole model; never do that for a downloaded file. "
            "torch.serialization.add_safe_globals([YourClass]) allows named classes one by one."
        ),
        run=LIVE,
        broken=(
            "import os\n"
            "import tempfile\n"
            "\n"
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))\n"
            "with tempfile.TemporaryDirectory() as tmp:\n"
            '    path = os.path.join(tmp, "model.pth")\n'
            "    torch.save(model, path)\n"
            "    model = torch.load(path)\n"
            "print(model)\n"
        ),
        fixed=(
            "import os\n"
            "import tempfile\n"
            "\n"
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))\n"
            "with tempfile.TemporaryDirectory() as tmp:\n"
            '    path = os.path.join(tmp, "model.pth")\n'
            "    torch.save(model.state_dict(), path)\n"
            "    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))\n"
            "    print(model.load_state_dict(torch.load(path)))\n"
        ),
        # torch writes the middle of this line in bold with terminal escape codes.
        today=(
            "_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to "
            "do so you have two options, \x1b[1mdo those steps only if you trust the source of "
            "the checkpoint\x1b[0m. "
        ),
        notes_differ=N_(
            "model = torch.load('asd.pth') worked when the notes were written; since torch 2.6 "
            "(weights_only=True by default) it fails for a whole model. The state_dict way the "
            "notes recommend still works."
        ),
        also=(
            # The traceback's literal last line.
            "Check the documentation of torch.load to learn more about types accepted by "
            "default with weights_only",
            "WeightsUnpickler error: Unsupported global: GLOBAL "
            "torch.nn.modules.container.Sequential was not an allowed global by default. Please "
            "use `torch.serialization.add_safe_globals([torch.nn.modules.container.Sequential])` "
            "or the `torch.serialization.safe_globals([torch.nn.modules.container.Sequential])` "
            "context manager to allowlist this global if you trust this class/function.",
            "_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` with "
            "`weights_only` set to `False` will likely succeed, but it can result in arbitrary "
            "code execution. Do it only if you got the file from a trusted source.",
        ),
        also_notes=(
            ("000:60", "保存整个模型：torch.save(model, 'asd.pth')"),
            ("000:61", "保存模型参数：torch.save(model.state_dict(), 'asd.pth') （ Recommended ）"),
        ),
    ),
    Entry(
        key="load-map-location",
        kind="serialization",
        title=N_("A checkpoint saved on a GPU, loaded where there is none"),
        where="000:63",
        notes_message="",
        notes_cause=(
            "torch.load 函数首先会将模型反序列化到 CPU 然后将模型移动到保存模型时该模型所处的设备，"
            "若没有该设备则报错，需要用 map_location 参数来进行映射"
        ),
        notes_gloss=N_(
            "torch.load first deserialises to the CPU, then moves each tensor to the device it was "
            "on when saved; without that device it raises an error, and map_location maps the "
            "devices. Take care with this in distributed training."
        ),
        cause=N_(
            "A checkpoint records, for each tensor's storage, the device it was saved from "
            "('cuda:0'). torch.load puts it back there, and on a machine without CUDA there is "
            "nowhere to put it. The snippet writes that record as a GPU machine would (it is the "
            "only trace of the GPU in the file), so it runs here."
        ),
        fix=N_(
            "Say where the tensors go: torch.load(path, map_location='cpu') (or "
            "torch.device('cpu'), or a dict {'cuda:1': 'cuda:0'} to move between GPUs). In "
            "distributed training give each rank map_location=f'cuda:{local_rank}', or every rank "
            "loads onto GPU 0."
        ),
        run=LIVE,
        broken=(
            "import os\n"
            "import tempfile\n"
            "import zipfile\n"
            "\n"
            "import torch\n"
            "\n"
            "with tempfile.TemporaryDirectory() as tmp:\n"
            '    path = os.path.join(tmp, "x.pth")\n'
            "    torch.save(torch.arange(4.0), path)\n"
            "    # Write the file as a GPU machine would: its storage's location says cuda:0.\n"
            "    with zipfile.ZipFile(path) as archive:\n"
            "        parts = {name: archive.read(name) for name in archive.namelist()}\n"
            '    pkl = next(name for name in parts if name.endswith("/data.pkl"))\n'
            '    parts[pkl] = parts[pkl].replace(b"X\\x03\\x00\\x00\\x00cpu", '
            'b"X\\x06\\x00\\x00\\x00cuda:0")\n'
            '    with zipfile.ZipFile(path, "w") as archive:\n'
            "        for name, data in parts.items():\n"
            "            archive.writestr(name, data)\n"
            "    x = torch.load(path)\n"
            "print(x)\n"
        ),
        fixed=(
            "import os\n"
            "import tempfile\n"
            "import zipfile\n"
            "\n"
            "import torch\n"
            "\n"
            "with tempfile.TemporaryDirectory() as tmp:\n"
            '    path = os.path.join(tmp, "x.pth")\n'
            "    torch.save(torch.arange(4.0), path)\n"
            "    # Write the file as a GPU machine would: its storage's location says cuda:0.\n"
            "    with zipfile.ZipFile(path) as archive:\n"
            "        parts = {name: archive.read(name) for name in archive.namelist()}\n"
            '    pkl = next(name for name in parts if name.endswith("/data.pkl"))\n'
            '    parts[pkl] = parts[pkl].replace(b"X\\x03\\x00\\x00\\x00cpu", '
            'b"X\\x06\\x00\\x00\\x00cuda:0")\n'
            '    with zipfile.ZipFile(path, "w") as archive:\n'
            "        for name, data in parts.items():\n"
            "            archive.writestr(name, data)\n"
            '    x = torch.load(path, map_location="cpu")\n'
            "print(x)\n"
        ),
        today=(
            "RuntimeError: Attempting to deserialize object on a CUDA device but "
            "torch.cuda.is_available() is False. If you are running on a CPU-only machine, please "
            "use torch.load with map_location=torch.device('cpu') to map your storages to the CPU."
        ),
        also=(
            "RuntimeError: Attempting to deserialize object on CUDA device 1 but "
            "torch.cuda.device_count() is 1. Please use torch.load with map_location to map your "
            "storages to an existing device.",
        ),
        lesson=(
            "memory?memory.notes_tab=map_location+%28000%3A63%29",
            N_("CUDA memory monitor: map_location, each DDP worker"),
        ),
    ),
    Entry(
        key="load-latin1",
        kind="serialization",
        title=N_("A checkpoint pickled by Python 2"),
        where="000:76",
        notes_message=(
            "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xa4 in position 2: invalid "
            "start byte"
        ),
        notes_cause=(
            "读取老版本 pytorch 模型时出现的问题，"
            "添加编码参数就好 torch.load(xxx, encoding='latin1')"
        ),
        notes_gloss=N_(
            "It happens reading a model saved by an old PyTorch; adding the encoding argument "
            "fixes it: torch.load(xxx, encoding='latin1')."
        ),
        cause=N_(
            "Python 2's str is a string of bytes, and a pickle made by Python 2 stores it as "
            "bytes with no encoding. Python 3 must decode them to str, and torch.load decodes "
            "them as UTF-8, which fails on bytes that are not UTF-8 text (Latin-1 text, or the raw "
            "data of a NumPy array pickled in Python 2)."
        ),
        fix=N_(
            "torch.load(path, encoding='latin1'): Latin-1 maps every byte to one character, so "
            "nothing fails and the bytes survive. (torch 2.14 warns that pickle_load_args only "
            "work with weights_only=False, but its weights-only loader does use the encoding.) "
            "Save it again from Python 3 to be rid of it."
        ),
        run=LIVE,
        broken=(
            "import os\n"
            "import pickle\n"
            "import tempfile\n"
            "\n"
            "import torch\n"
            "\n"
            "# A checkpoint as torch.save wrote it under Python 2: five pickles in a row (a magic\n"
            "# number, the format version, system info, the object, its storages). The object is\n"
            "# written by hand: Python 2 stores a str as bytes (opcode U), here Latin-1 text.\n"
            'header = [0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001}]\n'
            'py2_object = b"\\x80\\x02}q\\x00(U\\x04nameq\\x01U\\x05ca\\xa4feq\\x02'
            'U\\x05epochq\\x03K\\x07u."\n'
            "with tempfile.TemporaryDirectory() as tmp:\n"
            '    path = os.path.join(tmp, "old.pth")\n'
            '    with open(path, "wb") as f:\n'
            "        for part in header:\n"
            "            pickle.dump(part, f, protocol=2)\n"
            "        f.write(py2_object)\n"
            "        pickle.dump([], f, protocol=2)\n"
            "    checkpoint = torch.load(path)\n"
            "print(checkpoint)\n"
        ),
        fixed=(
            "import os\n"
            "import pickle\n"
            "import tempfile\n"
            "\n"
            "import torch\n"
            "\n"
            "# A checkpoint as torch.save wrote it under Python 2: five pickles in a row (a magic\n"
            "# number, the format version, system info, the object, its storages). The object is\n"
            "# written by hand: Python 2 stores a str as bytes (opcode U), here Latin-1 text.\n"
            'header = [0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001}]\n'
            'py2_object = b"\\x80\\x02}q\\x00(U\\x04nameq\\x01U\\x05ca\\xa4feq\\x02'
            'U\\x05epochq\\x03K\\x07u."\n'
            "with tempfile.TemporaryDirectory() as tmp:\n"
            '    path = os.path.join(tmp, "old.pth")\n'
            '    with open(path, "wb") as f:\n'
            "        for part in header:\n"
            "            pickle.dump(part, f, protocol=2)\n"
            "        f.write(py2_object)\n"
            "        pickle.dump([], f, protocol=2)\n"
            '    checkpoint = torch.load(path, encoding="latin1")\n'
            "print(checkpoint)\n"
        ),
        today=(
            "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xa4 in position 2: invalid "
            "start byte"
        ),
        also=(
            "UnicodeDecodeError: 'ascii' codec can't decode byte 0xe9 in position 3: ordinal not "
            "in range(128)",
        ),
    ),
)
