"""Build and install errors: C++ extensions, modules torch no longer has, the ONNX exporter.

The two removed modules (torch.utils.ffi, torch._six) fail on import here and now. Compiling an
extension takes longer than a page may wait, and the others need an old torch or a debugger.
"""

from __future__ import annotations

from core.text import N_
from lessons.errors.entry import DOCUMENTED, LIVE, Entry

ENTRIES: tuple[Entry, ...] = (
    Entry(
        key="extension-cxx-std",
        kind="build",
        title=N_("A C++ extension compiled with too old a C++ standard"),
        where="000:76",
        notes_message="RuntimeError: Error compiling objects for extension",
        notes_cause=(
            "编译自定义层时出现的问题，把编译器选项从 cxx_args = ['-std=c++11'] 改为 "
            "cxx_args = ['-std=c++14'] 就好了，看来可能是新的 pytorch 版本用到了一些新的 C++ 特性"
        ),
        notes_gloss=N_(
            "It happened compiling a custom layer; changing the compiler option from "
            "cxx_args = ['-std=c++11'] to ['-std=c++14'] fixed it, apparently because newer "
            "PyTorch uses newer C++ features."
        ),
        cause=N_(
            "torch's headers need a minimum C++ standard and stop with '#error C++20 or later "
            "compatible compiler is required to use PyTorch.' (torch 2.14) when compiled with an "
            "older one. torch.utils.cpp_extension already passes the right -std flag; an -std in "
            "extra_compile_args / extra_cflags comes after it on the command line and wins. The "
            "RuntimeError only says the build failed; the compiler's first 'error:' line above it "
            "says why."
        ),
        fix=N_(
            "Remove -std from cxx_args / extra_cflags and let cpp_extension choose it (torch 2.14 "
            "passes -std=c++20). If a flag is needed, use the standard your torch requires: C++20 "
            "for torch 2.14, C++17 for earlier 2.x, C++14 for 1.x. Read the first 'error:' line of "
            "the compiler output, not the last line of the traceback."
        ),
        run=DOCUMENTED,
        notes_differ=N_(
            "C++14 was enough for torch 1.x. torch 2.x needs C++17, and torch 2.14 needs C++20: "
            "-std=c++14 now breaks the build instead of fixing it."
        ),
        also=(
            "RuntimeError: Error building extension 'twice': [1/2] c++ -MMD -MF main.o.d "
            "-DTORCH_EXTENSION_NAME=twice -fPIC -std=c++20 -std=c++14 -c main.cpp -o main.o",
            "RuntimeError: Error building extension 'fused_adam'",
            "error: #error C++20 or later compatible compiler is required to use PyTorch.",
            "error: #error C++17 or later compatible compiler is required to use PyTorch.",
            "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit "
            "status 1.",
        ),
        needs=N_(
            "A C++ compiler and ninja, and about a minute: compiling even a one-line extension "
            "against torch's headers takes that long, longer than this page waits. Run here with "
            "torch 2.14, load_inline(..., extra_cflags=['-std=c++14']) failed after 64 s with "
            "RuntimeError: Error building extension '...' and, above it, the compiler's '#error "
            "C++20 or later compatible compiler is required to use PyTorch.' A setup.py build "
            "(BuildExtension) reports the same failure as RuntimeError: Error compiling objects "
            "for extension."
        ),
    ),
    Entry(
        key="extension-lock",
        kind="build",
        title=N_("Loading a C++ extension waits forever on a lock"),
        where="000:76",
        notes_message="_jit_compile->baton.wait()->time.sleep(self.wait_seconds)",
        notes_cause=(
            "是因为之前编译到一半中断了，存在文件锁，目录为 ~/.cache/torch_extensions/xxx，"
            "删掉里面的文件锁或者直接删掉目录都行"
        ),
        notes_gloss=N_(
            "An earlier build was interrupted halfway and left a lock file in "
            "~/.cache/torch_extensions/xxx; delete the lock file or the whole directory."
        ),
        cause=N_(
            "torch.utils.cpp_extension.load builds in ~/.cache/torch_extensions/<name> and "
            "guards that directory with a lock so that two processes do not build at once. Older "
            "torch used a plain lock file (FileBaton) whose mere existence made the next process "
            "wait: a build killed halfway left it behind, and every later load slept in "
            "baton.wait() forever, printing nothing."
        ),
        fix=N_(
            "Make sure no other build is running, then delete the lock file in the extension's "
            "build directory (or the directory; it is rebuilt). Set TORCH_EXTENSIONS_DIR to move "
            "the builds elsewhere, and verbose=True shows which directory is used."
        ),
        run=DOCUMENTED,
        notes_differ=N_(
            "The notes hold for the torch they used. torch 2.14 (installed here) holds an "
            "operating-system file lock (filelock) instead, which the kernel releases when the "
            "holding process dies, so an interrupted build no longer blocks later ones; a wait "
            "there means another process really is building."
        ),
        needs=N_(
            "An older torch whose extension build lock is a plain file (FileBaton), a C++ "
            "compiler, and a build killed halfway. The next load of the same extension then "
            "hangs without a message; interrupting it shows the stack ending in baton.wait() -> "
            "time.sleep(self.wait_seconds)."
        ),
    ),
    Entry(
        key="utils-ffi",
        kind="build",
        title=N_("torch.utils.ffi no longer exists"),
        where="002:1347",
        notes_message=(
            "ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead."
        ),
        notes_cause="",
        notes_gloss=N_(
            "The notes list blog posts about it and quote one: the easiest way out is to downgrade "
            "torch to 0.4 (which that blog's author had not tested)."
        ),
        cause=N_(
            "torch.utils.ffi built C extensions with cffi for torch 0.4 and earlier. torch 1.0 "
            "replaced it with C++ extensions (torch.utils.cpp_extension) and left a module that "
            "only raised this ImportError; later releases removed the module altogether."
        ),
        fix=N_(
            "Port the C code to a C++ extension: write the functions against at::Tensor and build "
            "them with torch.utils.cpp_extension (CppExtension / CUDAExtension in setup.py, or "
            "load / load_inline at run time). Often the operation now exists in torch itself."
        ),
        run=LIVE,
        broken="import torch\nimport torch.utils.ffi\n",
        fixed=(
            "import torch.utils.cpp_extension as cpp_extension\n"
            "\n"
            "# setup.py builds with CppExtension and BuildExtension; load_inline compiles at run "
            "time.\n"
            'names = ["CppExtension", "CUDAExtension", "BuildExtension", "load", "load_inline"]\n'
            "print([name for name in names if hasattr(cpp_extension, name)])\n"
        ),
        today="ModuleNotFoundError: No module named 'torch.utils.ffi'",
        notes_differ=N_(
            "Downgrading to torch 0.4 is no fix today: no current Python, CUDA or GPU is "
            "supported by it. The module is gone; the code has to move to cpp_extension."
        ),
        also=("AttributeError: module 'torch.utils' has no attribute 'ffi'",),
        also_notes=(("002:1354", "最省事的情况是降级torch版本到0.4"),),
    ),
    Entry(
        key="torch-six",
        kind="build",
        title=N_("torch._six no longer exists"),
        where="002:1356",
        notes_message="cannot import name container_abc form torch._six",
        notes_cause="",
        notes_gloss=N_(
            "The notes only name a blog post: cannot import 'container_abc' or 'int_classes' from "
            "torch._six."
        ),
        cause=N_(
            "torch._six was torch's private Python 2/3 compatibility module. Its container_abcs "
            "and int_classes went in torch 1.9; string_classes, (str, bytes), stayed until the "
            "module itself went in torch 2.0. Old code (and old versions of libraries such as "
            "apex or timm) still imports them."
        ),
        fix=N_(
            "Use what they stood for: collections.abc for container_abcs, int for int_classes, "
            "(str, bytes) for string_classes, math.inf for inf. In a third-party library, "
            "upgrade it."
        ),
        run=LIVE,
        broken="import torch\nfrom torch._six import container_abcs\n",
        fixed=(
            "import collections.abc as container_abcs\n"
            "\n"
            "int_classes = int\n"
            "string_classes = (str, bytes)\n"
            'print(isinstance([1, 2], container_abcs.Sequence), isinstance("a", string_classes))\n'
        ),
        today="ModuleNotFoundError: No module named 'torch._six'",
        notes_differ=N_(
            "The notes' blog post is about torch 1.9, where only some names went; since torch 2.0 "
            "torch._six is gone, so no import from it works."
        ),
        also=(
            "ImportError: cannot import name 'container_abcs' from 'torch._six' "
            "(/usr/local/lib/python3.8/dist-packages/torch/_six.py)",
            "ImportError: cannot import name 'int_classes' from 'torch._six'",
            "AttributeError: module 'torch' has no attribute '_six'",
        ),
        also_notes=(
            (
                "002:1358",
                "PyTorch: cannot import name ‘container_abc‘ 或者 ‘int_classes‘ form torch._six",
            ),
        ),
    ),
    Entry(
        key="onnx-held-instance",
        kind="build",
        title=N_("ONNX export: unable to cast from non-held to held instance"),
        where="000:76",
        notes_message="ONNX Unable to cast from non-held to held instance",
        notes_cause="神奇问题，重启 notebook 或者去掉 vscode 断点再试试",
        notes_gloss=N_(
            "A mysterious problem: restart the notebook, or remove the VS Code breakpoints and try "
            "again."
        ),
        cause=N_(
            "The message comes from pybind11, the layer between Python and torch's C++: an object "
            "of the TorchScript-based ONNX exporter was handed over in a way its C++ owner did not "
            "expect. It has been seen when a debugger (VS Code) stops inside the export and "
            "inspects those objects, and in a notebook after an earlier export failed halfway. "
            "torch's own issue about it (pytorch/pytorch#82998) calls the cause unknown."
        ),
        fix=N_(
            "Run the export without a debugger attached (no breakpoints inside it), in a fresh "
            "process or restarted kernel. In torch 2.9 and later torch.onnx.export uses the "
            "torch.export-based exporter by default (dynamo=True), which does not go through "
            "these objects."
        ),
        run=DOCUMENTED,
        also=(
            "RuntimeError: Unable to cast from non-held to held instance (T& to Holder<T>) "
            "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for type "
            "information)",
            "RuntimeError: Unable to cast from non-held to held instance (T& to Holder<T>) "
            "(compile in debug mode for type information)",
        ),
        needs=N_(
            "torch.onnx.export with the TorchScript exporter (dynamo=False), the onnx package, and "
            "a debugger stopped inside the export; there is no reliable recipe. There it raises "
            "RuntimeError: Unable to cast from non-held to held instance (T& to Holder<T>)."
        ),
    ),
)
