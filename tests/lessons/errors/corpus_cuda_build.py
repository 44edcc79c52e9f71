"""Matcher corpus for the CUDA, build and serialization entries that run on this machine.

``CASES`` = (expected entry key, how to run, program). Each program makes the entry's mistake
another way than the entry's own snippet: other modules and tensors sent to the GPU, other names
imported from the removed modules, other objects pickled whole, other tensors and device indices
in a GPU checkpoint, other bytes in a Python 2 pickle. Where torch's wording has something to
vary (a class name, a byte, a position, the error type of another way in) the message differs
from the entry's text; "Found no NVIDIA driver" and the map_location message are fixed texts.
Every program runs as-is, on a machine without a GPU, and raises.
"""

from __future__ import annotations

CASES: tuple[tuple[str, str, str], ...] = (
    # -- cuda: CUDA on a machine without a driver ------------------------------------------
    (
        "no-nvidia-driver",
        "live",
        "import torch\n"
        "from torch import nn\n"
        "model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten())\n"
        "model.to('cuda:0')\n",
    ),
    (
        "no-nvidia-driver",
        "live",
        "import torch\n"
        "batch = torch.randint(0, 255, (8, 3, 32, 32), dtype=torch.uint8)\n"
        "batch = batch.pin_memory()  # page-locked memory is a CUDA driver service\n",
    ),
    (
        "no-nvidia-driver",
        "live",
        "import torch\ncopy_stream = torch.cuda.Stream()\n",
    ),
    # -- build: torch.utils.ffi and torch._six are gone ------------------------------------
    (
        "utils-ffi",
        "live",
        "from torch.utils.ffi import create_extension\n"
        "ffi = create_extension(\n"
        "    '_ext.my_lib', headers=['src/my_lib.h'], sources=['src/my_lib.c'], with_cuda=False\n"
        ")\n",
    ),
    (
        "utils-ffi",
        "live",
        "import torch.utils\nbuild = torch.utils.ffi.create_extension\n",
    ),
    (
        "torch-six",
        "live",
        "from torch._six import string_classes, int_classes\n",
    ),
    (
        "torch-six",
        "live",
        "import torch\nupper = torch._six.inf\n",
    ),
    # -- serialization: a whole object under weights_only ----------------------------------
    (
        "load-whole-model",
        "live",
        "import io\n"
        "import torch\n"
        "params = [torch.nn.Parameter(torch.zeros(5))]\n"
        "buffer = io.BytesIO()\n"
        "torch.save(torch.optim.SGD(params, lr=0.1, momentum=0.9), buffer)\n"
        "buffer.seek(0)\n"
        "optimizer = torch.load(buffer)\n",
    ),
    (
        "load-whole-model",
        "live",
        "import os\n"
        "import tempfile\n"
        "import torch\n"
        "with tempfile.TemporaryDirectory() as run_dir:\n"
        "    ckpt = os.path.join(run_dir, 'epoch_5.ckpt')\n"
        "    torch.save({'epoch': 5, 'net': torch.nn.Conv2d(3, 8, kernel_size=3)}, ckpt)\n"
        "    state = torch.load(ckpt, map_location='cpu')\n",
    ),
    # -- serialization: a GPU checkpoint where there is no GPU -----------------------------
    (
        "load-map-location",
        "live",
        "import io\n"
        "import zipfile\n"
        "import torch\n"
        "saved = io.BytesIO()\n"
        "torch.save(torch.nn.Linear(5, 2).state_dict(), saved)\n"
        "# the record a save on the second GPU leaves: each storage's location is cuda:1\n"
        "with zipfile.ZipFile(saved) as archive:\n"
        "    parts = {name: archive.read(name) for name in archive.namelist()}\n"
        "pkl = next(name for name in parts if name.endswith('/data.pkl'))\n"
        "parts[pkl] = parts[pkl].replace(\n"
        "    b'X\\x03\\x00\\x00\\x00cpu', b'X\\x06\\x00\\x00\\x00cuda:1'\n"
        ")\n"
        "moved = io.BytesIO()\n"
        "with zipfile.ZipFile(moved, 'w') as archive:\n"
        "    for name, data in parts.items():\n"
        "        archive.writestr(name, data)\n"
        "moved.seek(0)\n"
        "linear_state = torch.load(moved, weights_only=True)\n",
    ),
    (
        "load-map-location",
        "live",
        "import os\n"
        "import tempfile\n"
        "import zipfile\n"
        "import torch\n"
        "with tempfile.TemporaryDirectory() as tmp:\n"
        "    path = os.path.join(tmp, 'features.pt')\n"
        "    torch.save({'step': 120, 'features': torch.ones(6, 2, dtype=torch.float16)}, path)\n"
        "    with zipfile.ZipFile(path) as archive:\n"
        "        parts = {name: archive.read(name) for name in archive.namelist()}\n"
        "    pkl = next(name for name in parts if name.endswith('/data.pkl'))\n"
        "    parts[pkl] = parts[pkl].replace(b'X\\x03\\x00\\x00\\x00cpu', "
        "b'X\\x06\\x00\\x00\\x00cuda:0')\n"
        "    with zipfile.ZipFile(path, 'w') as archive:\n"
        "        for name, data in parts.items():\n"
        "            archive.writestr(name, data)\n"
        "    features = torch.load(path)['features']\n",
    ),
    # -- serialization: a checkpoint pickled by Python 2 -----------------------------------
    (
        "load-latin1",
        "live",
        "import io\n"
        "import pickle\n"
        "import torch\n"
        "f = io.BytesIO()\n"
        "for part in (0x1950A86A20F9469CFC6C, 1001, {'little_endian': True}):\n"
        "    pickle.dump(part, f, protocol=2)\n"
        "# Python 2's str 'été' in Latin-1: three bytes, opcode U\n"
        "f.write(b'\\x80\\x02}q\\x00U\\x06seasonq\\x01U\\x03\\xe9t\\xe9q\\x02s.')\n"
        "pickle.dump([], f, protocol=2)\n"
        "f.seek(0)\n"
        "meta = torch.load(f)\n",
    ),
    (
        "load-latin1",
        "live",
        "import os\n"
        "import pickle\n"
        "import tempfile\n"
        "import torch\n"
        "with tempfile.TemporaryDirectory() as tmp:\n"
        "    path = os.path.join(tmp, 'resnet_py27.pth')\n"
        "    with open(path, 'wb') as f:\n"
        "        for part in (0x1950A86A20F9469CFC6C, 1001, {'protocol_version': 1001}):\n"
        "            pickle.dump(part, f, protocol=2)\n"
        "        # raw float32 bytes (1.0, 2.0) as Python 2 pickled a NumPy buffer: a str\n"
        "        f.write(\n"
        "            b'\\x80\\x02}q\\x00U\\x04dataq\\x01'\n"
        "            b'U\\x08\\x00\\x00\\x80?\\x00\\x00\\x00@q\\x02s.'\n"
        "        )\n"
        "        pickle.dump([], f, protocol=2)\n"
        "    weights = torch.load(path)\n",
    ),
)
