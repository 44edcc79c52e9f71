"""CUDA and driver errors: no driver, out of GPU memory, cuDNN, mismatched CUDA libraries.

Only the CPU-only mistake runs here (a CUDA tensor on a machine without a driver). The rest need
a GPU, a driver in a given state or a given set of libraries; out of memory runs where a GPU is.
"""

from __future__ import annotations

from core.text import N_
from lessons.errors.entry import DOCUMENTED, GPU, LIVE, Entry

ENTRIES: tuple[Entry, ...] = (
    Entry(
        key="no-nvidia-driver",
        kind="cuda",
        title=N_("CUDA on a machine without a GPU driver (or a CPU-only build)"),
        where="000:76",
        notes_message="torch._C._cuda_init() RuntimeError: Found no NVIDIA driver on your system.",
        notes_cause=(
            "在改了 cudnn 版本后出现的问题，"
            "在 import torch 后加上 torch.cuda.current_device() 即可解决"
        ),
        notes_gloss=N_(
            "It appeared after changing the cuDNN version; adding torch.cuda.current_device() "
            "right after import torch solved it."
        ),
        cause=N_(
            "The first CUDA call (a tensor on device 'cuda', .cuda(), torch.cuda.current_device()) "
            "initialises CUDA, and that needs the NVIDIA kernel driver. On a machine with no GPU, "
            "no driver, or a driver older than the CUDA that this torch was built with, it fails. "
            "A CPU-only torch wheel fails earlier, with 'Torch not compiled with CUDA enabled'."
        ),
        fix=N_(
            "Ask before you use it: device = 'cuda' if torch.cuda.is_available() else 'cpu', and "
            "create tensors and move models with device=device. If a GPU should be there, check "
            "nvidia-smi: no output means no working driver; install or update it, or install the "
            "torch build for the CUDA version your driver supports."
        ),
        run=LIVE,
        broken='import torch\nx = torch.zeros(1, device="cuda")\nprint(x)\n',
        fixed=(
            "import torch\n"
            'device = "cuda" if torch.cuda.is_available() else "cpu"\n'
            "x = torch.zeros(1, device=device)\n"
            "print(x.device, x)\n"
        ),
        today=(
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
            "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
        ),
        notes_differ=N_(
            "Calling torch.cuda.current_device() after import does not help without a driver: it "
            "is itself a CUDA call and raises the same error. Where it seemed to help, the driver "
            "was there and something else (the changed cuDNN) was at fault."
        ),
        also=(
            "AssertionError: Torch not compiled with CUDA enabled",
            "torch.AcceleratorError: CUDA error: CUDA driver version is insufficient for CUDA "
            "runtime version",
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). "
            "Please update your GPU driver by downloading and installing a new version from the "
            "URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
            "https://pytorch.org to install a PyTorch version that has been compiled with your "
            "version of the CUDA driver.",
        ),
        needs_no_gpu=True,
    ),
    Entry(
        key="cudnn-not-initialized",
        kind="cuda",
        title=N_("cuDNN could not be initialised"),
        where="000:76",
        notes_message="cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
        notes_cause="rm -rf ~/.nv",
        notes_gloss=N_("Delete ~/.nv (rm -rf ~/.nv)."),
        cause=N_(
            "cuDNN could not create its handle, which happens at the first convolution (or other "
            "cuDNN call). Usually the GPU has no memory left for it at that moment, or the cuDNN "
            "library that was loaded does not match the CUDA runtime torch uses (another cuDNN "
            "on LD_LIBRARY_PATH, a cuDNN changed by hand). ~/.nv holds the driver's cache of "
            "compiled GPU code; a stale one after a driver change can also break initialisation."
        ),
        fix=N_(
            "Check memory first: nvidia-smi for other processes, a smaller batch, "
            "torch.cuda.empty_cache() before the first convolution. Then check the libraries: "
            "torch.backends.cudnn.version() against the cuDNN torch was built for, and unset "
            "LD_LIBRARY_PATH entries that point at another CUDA or cuDNN. Deleting ~/.nv is safe "
            "(the cache is rebuilt) and fixes the stale-cache case."
        ),
        run=DOCUMENTED,
        notes_differ=N_(
            "rm -rf ~/.nv only clears the driver's compile cache. It helps when that cache is "
            "stale; today the usual causes are no GPU memory left for cuDNN or a cuDNN that "
            "does not match the CUDA runtime."
        ),
        also=("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",),
        needs=N_(
            "An NVIDIA GPU with a driver, in a failing state: nearly full GPU memory at the first "
            "convolution, or a mismatched cuDNN on the library path. There the first conv layer "
            "raises RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED."
        ),
    ),
    Entry(
        key="cuda-out-of-memory",
        kind="cuda",
        title=N_("CUDA out of memory"),
        where="000:76",
        notes_message=(
            "return torch._C._cuda_synchronize(): RuntimeError: CUDA error: out of memory"
        ),
        notes_cause="",
        notes_gloss=N_("The notes quote the message without a cause or a fix."),
        cause=N_(
            "An allocation asked the GPU for more memory than it had free: a large batch, "
            "activations kept for backward, tensors kept alive across iterations (a loss summed "
            "without .item()), or another process using the same GPU. The plain 'CUDA error: out "
            "of memory' (without 'Tried to allocate') comes from a CUDA call outside torch's "
            "allocator, such as creating the CUDA context on a full GPU; since it is reported "
            "asynchronously it may surface at a later synchronize."
        ),
        fix=N_(
            "Use less: a smaller batch, torch.no_grad() for evaluation, mixed precision, "
            "gradient checkpointing, .item() for numbers you log. Check nvidia-smi for other "
            "processes. torch.cuda.empty_cache() only returns torch's cached, unused blocks to "
            "the driver: it helps other processes, not your own next allocation. The message "
            "says how much was free and how much torch reserved; expandable_segments helps when "
            "reserved but unallocated memory is large (fragmentation)."
        ),
        run=GPU,
        broken=(
            "import torch\n"
            "# 1024**4 float32 numbers: 4 TiB, more than any GPU has.\n"
            'x = torch.empty(1024, 1024, 1024, 1024, device="cuda")\n'
            "print(x.shape)\n"
        ),
        fixed=(
            "import torch\n"
            "# 1024 * 1024 * 64 float32 numbers: 256 MiB.\n"
            'x = torch.empty(1024, 1024, 64, device="cuda")\n'
            'print(x.shape, torch.cuda.memory_allocated() // 2**20, "MiB allocated")\n'
        ),
        today=(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4096.00 GiB. GPU 0 has "
            "a total capacity of 79.19 GiB of which 78.68 GiB is free. Including non-PyTorch "
            "memory, this process has 518.00 MiB memory in use. Of the allocated memory 0 bytes "
            "is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If "
            "reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  "
            "(https://docs.pytorch.org/docs/stable/notes/cuda.html"
            "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
        ),
        also=(
            "RuntimeError: CUDA error: out of memory",
            "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total "
            "capacity; 6.50 GiB already allocated; 17.06 MiB free; 6.62 GiB reserved in total by "
            "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to "
            "avoid fragmentation.  See documentation for Memory Management and "
            "PYTORCH_CUDA_ALLOC_CONF",
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 "
            "has a total capacity of 11.91 GiB of which 406.38 MiB is free.",
        ),
        needs=N_(
            "A CUDA GPU. There torch's caching allocator refuses the 4 TiB request and raises "
            "torch.OutOfMemoryError with the GPU's total and free memory. The text under "
            "'today' is put together from torch 2.14's allocator source and its library's "
            "strings for an 80 GB GPU, not captured here (this server has no GPU); the sizes "
            "differ from GPU to GPU."
        ),
    ),
    Entry(
        key="cupy-undefined-symbol",
        kind="cuda",
        title=N_("CuPy: undefined symbol cuDevicePrimaryCtxRelease_v2"),
        where="000:76",
        notes_message="undefined symbol: cuDevicePrimaryCtxRelease_v2",
        notes_cause=(
            "安装 cupy 出错，用 ldd + objdump -xT 查看符号链接，需要安装的显卡 CUDA 版本大于 450，"
            "然后就是看看 libcuda.so 有没有链接错"
        ),
        notes_gloss=N_(
            "A broken CuPy install: look at the symbol links with ldd and objdump -xT; the GPU "
            "driver must be newer than 450; then check whether libcuda.so is linked wrongly. "
            "Nearby: importing after import torch; torch.cuda.current_device() makes the error go "
            "away, as if the two libraries were being mixed."
        ),
        cause=N_(
            "cuDevicePrimaryCtxRelease_v2 is a function of the driver's libcuda.so from driver "
            "450 (CUDA 11) on. A library built for CUDA 11 or later that loads an older "
            "libcuda.so, or the toolkit's stub libcuda.so (lib64/stubs, for linking only) found "
            "first on LD_LIBRARY_PATH, cannot find it. Importing torch first hides this: torch has "
            "already loaded the driver's own libcuda.so.1, and the later library reuses it."
        ),
        fix=N_(
            "Find which libcuda.so the library loads (ldd on its .so, or LD_DEBUG=libs), remove "
            "stub or old CUDA directories from LD_LIBRARY_PATH, and make sure the driver is 450 or "
            "newer (nvidia-smi). Install the CuPy wheel for your CUDA major version (cupy-cuda11x, "
            "cupy-cuda12x)."
        ),
        run=DOCUMENTED,
        also=(
            "ImportError: /opt/venv/lib/python3.8/site-packages/cupy_backends/cuda/api/"
            "driver.cpython-38-x86_64-linux-gnu.so: undefined symbol: cuDevicePrimaryCtxRelease_v2",
        ),
        also_notes=(
            (
                "000:76",
                "import torch; torch.cuda.current_device() 后再导入则没有这个错，"
                "是不是意味着某种程度上两个库被混着用了",
            ),
        ),
        needs=N_(
            "A machine whose libcuda.so is older than driver 450, or whose LD_LIBRARY_PATH puts "
            "the CUDA toolkit's stub libcuda.so first. There 'import cupy' (or its first GPU "
            "call) fails with ImportError: ...: undefined symbol: cuDevicePrimaryCtxRelease_v2."
        ),
    ),
    Entry(
        key="lstsq-cuda-rank",
        kind="cuda",
        title=N_("torch.linalg.lstsq on CUDA gives wrong values for rank-deficient input"),
        where="000:76",
        notes_message="torch.linalg.lstsq() 在 CUDA 使用时出现异常值",
        notes_cause=(
            "似乎是其 CUDA 实现的 driver gels 只支持输入是满秩的，"
            "否则会有问题（输入全为零时能复现），可以手动写伪逆实现，或者加正则项解决"
        ),
        notes_gloss=N_(
            "Its CUDA implementation, driver gels, seems to support only full-rank input, "
            "otherwise it misbehaves (an all-zero input reproduces it); write the pseudo-inverse "
            "by hand or add a regularisation term."
        ),
        cause=N_(
            "There is no exception: the results are just wrong (huge, inf or nan). On CUDA "
            "torch.linalg.lstsq has one driver, 'gels', a QR solve that assumes the matrix has "
            "full rank; torch's documentation says so. A rank-deficient matrix (repeated or zero "
            "columns, all zeros) breaks that assumption. On the CPU the default 'gelsy' handles "
            "rank deficiency."
        ),
        fix=N_(
            "For matrices that may be rank-deficient use torch.linalg.pinv(A) @ B (it drops tiny "
            "singular values), or solve the regularised normal equations "
            "(A^T A + lambda I) x = A^T B, or move that solve to the CPU with driver='gelsd'."
        ),
        run=DOCUMENTED,
        needs=N_(
            "A CUDA GPU. There torch.linalg.lstsq(A, B) with a rank-deficient A on device 'cuda' "
            "returns without an error, with values far from the CPU's answer (inf or nan for an "
            "all-zero A)."
        ),
    ),
    Entry(
        key="cuda-error-804",
        kind="cuda",
        title=N_("Error 804: forward compatibility on unsupported hardware"),
        where="000:76",
        notes_message=(
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
            "functions before calling NumCudaDevices() that might have already set an error? "
            "Error 804: forward compatibility was attempted on non supported HW"
        ),
        notes_cause="pytorch CUDA 无法使用",
        notes_gloss=N_(
            "CUDA cannot be used from PyTorch; the details are in another note on CUDA "
            "compatibility."
        ),
        cause=N_(
            "Error 804 (cudaErrorCompatNotSupportedOnDevice): the process loaded the CUDA "
            "forward-compatibility libcuda (the cuda-compat package, e.g. in NVIDIA's containers "
            "or from /usr/local/cuda/compat on LD_LIBRARY_PATH) on a GPU that does not support "
            "forward compatibility (GeForce and most workstation cards), or with a kernel driver "
            "that does not match it. It is a driver setup problem, not a torch one."
        ),
        fix=N_(
            "Remove the compat directory from LD_LIBRARY_PATH (or uninstall cuda-compat) so the "
            "driver's own libcuda is used, and install the torch build for a CUDA version that "
            "driver supports (nvidia-smi shows the highest), or update the driver. After a driver "
            "update, reboot so the kernel module and the libraries match."
        ),
        run=DOCUMENTED,
        also=(
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did "
            "you run some cuda functions before calling NumCudaDevices() that might have already "
            "set an error? Error 804: forward compatibility was attempted on non supported HW",
        ),
        needs=N_(
            "An NVIDIA GPU without forward-compatibility support whose process loads the "
            "cuda-compat libcuda. There torch.cuda.is_available() warns 'CUDA initialization: "
            "Unexpected error from cudaGetDeviceCount() ... Error 804' and returns False, and the "
            "first CUDA tensor raises the same text as a RuntimeError."
        ),
    ),
    Entry(
        key="ptx-toolchain",
        kind="cuda",
        title=N_("PTX compiled with an unsupported toolchain"),
        where="000:76",
        notes_message=(
            "RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain."
        ),
        notes_cause=(
            "在 notebook 上使用编译正常的自定义算子的 cuda 时出现的问题。似乎是 CUDA 版本兼容问题"
        ),
        notes_gloss=N_(
            "It happened in a notebook, running the CUDA code of a custom operator that had "
            "compiled fine; it seems to be a CUDA version compatibility problem."
        ),
        cause=N_(
            "cudaErrorUnsupportedPtxVersion: the kernel was shipped as PTX (GPU assembly that the "
            "driver compiles when it loads it) by an nvcc newer than the installed driver "
            "understands. The extension compiled fine because compiling needs only the toolkit; "
            "the driver meets the PTX only at run time. A notebook kernel often runs with another "
            "environment (another driver, another CUDA on the path) than the shell that built it."
        ),
        fix=N_(
            "Update the driver to one that supports the toolkit's CUDA version (nvidia-smi shows "
            "the highest), or build with a toolkit no newer than the driver supports. Building "
            'for the GPU\'s own architecture (TORCH_CUDA_ARCH_LIST="8.6" for sm_86, say) puts '
            "ready machine code in the extension, so the driver need not compile PTX."
        ),
        run=DOCUMENTED,
        also=(
            "torch.AcceleratorError: CUDA error: the provided PTX was compiled with an "
            "unsupported toolchain.",
        ),
        needs=N_(
            "An NVIDIA GPU whose driver is older than the CUDA toolkit that compiled an "
            "extension's PTX. There the extension's first kernel raises CUDA error: the provided "
            "PTX was compiled with an unsupported toolchain. (torch 2.14 raises CUDA errors as "
            "torch.AcceleratorError.)"
        ),
    ),
    Entry(
        key="bundled-cuda-conflict",
        kind="cuda",
        title=N_("torch's own CUDA libraries clash with the system's CUDA"),
        where="000:76",
        notes_message="CUDA error 相关问题",
        notes_cause=(
            "新版 pytorch 会自动安装 cuda 相关库，和自带的 cuda 冲突然后出现问题，"
            "再次安装降级版本后恢复正常"
        ),
        notes_gloss=N_(
            "CUDA errors: newer PyTorch installs its own CUDA libraries, which conflict with the "
            "system's CUDA; reinstalling an older version made it work again."
        ),
        cause=N_(
            "pip wheels of torch bring their CUDA libraries as nvidia-* packages (cuBLAS, cuDNN, "
            "cuSPARSE, nvJitLink) and need no system CUDA. When LD_LIBRARY_PATH points at a "
            "system CUDA of another version, some of them are loaded from there instead, and the "
            "mix fails at import or at the first GPU call, typically with an undefined symbol."
        ),
        fix=N_(
            "Let torch use its own libraries: remove system CUDA directories from "
            "LD_LIBRARY_PATH in the environment that runs torch (a system toolkit is only needed "
            "to compile extensions, through CUDA_HOME). Keep one torch and its nvidia-* packages "
            "from the same install (pip list | grep nvidia). Downgrading torch hides the clash "
            "only while the versions happen to agree."
        ),
        run=DOCUMENTED,
        notes_differ=N_(
            "Downgrading works only by luck; the conflict comes from the library path, and "
            "removing the system CUDA from LD_LIBRARY_PATH fixes it on any torch version."
        ),
        also=(
            "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/cusparse/"
            "lib/libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version "
            "libnvJitLink.so.12",
        ),
        needs=N_(
            "A machine with a system CUDA toolkit of another version on LD_LIBRARY_PATH. There "
            "import torch (or the first GPU call) fails with an undefined symbol from one of the "
            "CUDA libraries, e.g. libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1."
        ),
    ),
    Entry(
        key="cuda-unknown-error",
        kind="cuda",
        title=N_("CUDA unknown error (after suspend)"),
        where="000:76",
        notes_message="UserWarning: CUDA initialization: CUDA unknown error...",
        notes_cause="重启后恢复正常，有说安装 sudo apt install nvidia-modprobe 后正常",
        notes_gloss=N_(
            "A reboot made it work again; some say installing nvidia-modprobe fixes it. The notes "
            "add: the machine froze on suspend with nvidia-smi looking normal, and "
            "nvidia-modprobe -u, rmmod nvidia_uvm, modprobe nvidia_uvm helped, but only once."
        ),
        cause=N_(
            "The driver's unified memory module (nvidia_uvm) is in a bad state or not loaded, "
            "typically after the machine was suspended and resumed; nvidia-smi still works "
            "because it does not use that module. torch then finds no usable device: "
            "torch.cuda.is_available() warns and returns False. Changing CUDA_VISIBLE_DEVICES "
            "after CUDA started gives the same text."
        ),
        fix=N_(
            "Reload the module: sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm (stop GPU "
            "processes first), or reboot. nvidia-modprobe creates the device files when they are "
            "missing. To avoid it, enable the driver's suspend support (the "
            "nvidia-suspend/nvidia-resume services with NVreg_PreserveVideoMemoryAllocations=1) "
            "or do not suspend a machine that trains. Set CUDA_VISIBLE_DEVICES before the first "
            "CUDA call."
        ),
        run=DOCUMENTED,
        also=(
            "UserWarning: CUDA initialization: CUDA unknown error - this may be due to an "
            "incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES "
            "after program start. Setting the available devices to be zero.",
        ),
        also_notes=(
            (
                "000:76",
                "nvidia-smi 显示正常，但休眠时进入假死状态，显卡跑马灯还在亮，无法恢复系统只能重启",
            ),
            (
                "000:76",
                "sudo nvidia-modprobe -u、sudo rmmod nvidia_uvm、sudo modprobe nvidia_uvm "
                "后恢复正常。但只能解决一次，第二次发生就不行了",
            ),
        ),
        needs=N_(
            "A Linux machine with an NVIDIA GPU, suspended and resumed without the driver's "
            "suspend support. There torch.cuda.is_available() warns 'CUDA initialization: CUDA "
            "unknown error - this may be due to an incorrectly set up environment...' and "
            "returns False."
        ),
    ),
    Entry(
        key="cudnn-no-algorithm",
        kind="cuda",
        title=N_("No valid cuDNN algorithm for a convolution"),
        where="002:1360",
        notes_message="Unable to find a valid cuDNN algorithm to run convolution",
        notes_cause="",
        notes_gloss=N_("Very likely not enough GPU memory; a smaller batch_size solved it."),
        cause=N_(
            "torch asks cuDNN for convolution algorithms and keeps those whose workspace it can "
            "allocate; when none fits (the GPU is nearly full) none is left. Less often the "
            "cuDNN library does not support the convolution on this GPU (a cuDNN that does not "
            "match the CUDA or the card)."
        ),
        fix=N_(
            "Free GPU memory: a smaller batch, other processes off the GPU (nvidia-smi). "
            "Running the same step with torch.backends.cudnn.enabled = False often shows the "
            "real error (usually out of memory). If memory is not the reason, check "
            "torch.backends.cudnn.version() against the cuDNN torch was built for."
        ),
        run=DOCUMENTED,
        also=("RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",),
        also_notes=(
            ("002:1365", "很有可能是 GPU 显存不够的原因, 尝试把 batch_size 改小一点问题得以解决"),
        ),
        needs=N_(
            "An NVIDIA GPU with cuDNN and nearly no free memory at a convolution. There it "
            "raises RuntimeError: Unable to find a valid cuDNN algorithm to run convolution (torch "
            "2.14 still has this text), or torch.OutOfMemoryError when the allocation fails "
            "first."
        ),
        lesson=(
            "memory?memory.notes_tab=cuDNN+error+%28002%3A1360%29",
            N_("CUDA memory monitor: where the memory runs out, simulated"),
        ),
    ),
)
