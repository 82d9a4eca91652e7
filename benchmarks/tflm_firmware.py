"""TensorFlow Lite Micro built as bare-metal firmware beside nnopt's, for bench_firmware.py.

TFLM's library is built by TFLM's own Makefile (``tensorflow/lite/micro/tools/make``,
``BUILD_TYPE=release``; for each core the target and variables of
:mod:`tflm_targets`: on the Cortex-M7 ``TARGET=cortex_m_generic
TARGET_ARCH=cortex-m7+fp``, reference kernels and ``OPTIMIZED_KERNEL_DIR=cmsis_nn``; on
RISC-V ``riscv32_generic``) from a local source tree (found at run
time: ``--tflm-dir``/``--cmsis-nn-dir``/``--cmsis-dir``, by default the Zephyr
workspace's modules, :func:`find_sources`). The Makefile downloads its third-party code;
offline, each download script skips a folder that already exists, so the build runs in a
cached copy of the tree (symbolic links to the sources, :func:`prepare_tree`) whose
``tools/make/downloads/`` holds links to the local flatbuffers, gemmlowp, ruy and kissfft
(``third_party_static/``), CMSIS_6 and CMSIS-NN, plus ``ARMCM<core>.h`` (the generic
device headers of the Cortex_DFP pack, which is not in the workspace; written here). One
library build per core and kernel variant, cached across models and runs.

Per model, :func:`harness_source` writes a small C++ harness (``tflm_harness.cc.in``
beside this file): the model as a const array (``.incbin``), a ``MicroMutableOpResolver``
with the operators the model uses, a static arena; it reads the inputs and writes the
outputs through nnrt's bare-metal port (semihosting) and counts the instructions around
``Invoke()`` with the port's counter, exactly as nnopt's harness does. It is linked by
:func:`nnopt.firmware.toolchain.build` with the same startup, port and linker script as
nnopt's firmware for the same board, and run on the same QEMU (``-icount shift=0``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnopt.boards import Board
    from nnopt.firmware.toolchain import Target



from tflm_targets import (  # noqa: F401  (re-exported: the build data per core)
    ALL_VARIANTS,
    ARMCM3_H,
    ARMCM7_H,
    CORE_VARIANTS,
    CXX,
    CXX_HINT,
    DEVICE_HEADERS,
    M3_VARIANTS,
    TFLM_MAKE_ARGS,
    VARIANT_SPECS,
    VARIANTS,
    Variant,
    compilers,
    make_args,
    variant_spec,
)

MAKEFILE = "tensorflow/lite/micro/tools/make/Makefile"
DOWNLOADS = "tensorflow/lite/micro/tools/make/downloads"
RESOLVER_H = "tensorflow/lite/micro/micro_mutable_op_resolver.h"
HARNESS_TEMPLATE = Path(__file__).with_name("tflm_harness.cc.in")


class TflmUnavailable(Exception):
    """TFLM cannot be built or run here; the message says what is missing."""


@dataclass(frozen=True)
class Sources:
    tflm: Path
    cmsis_nn: Path
    cmsis: Path  # CMSIS_6 (CMSIS/Core/Include)


def default_workspace() -> Path | None:
    """``$NNOPT_ZEPHYR_WORKSPACE``, else the parent of ``$ZEPHYR_BASE``."""
    ws = os.environ.get("NNOPT_ZEPHYR_WORKSPACE")
    if ws:
        return Path(ws)
    base = os.environ.get("ZEPHYR_BASE")
    return Path(base).parent if base else None


def find_sources(tflm: Path | None = None, cmsis_nn: Path | None = None,
                 cmsis: Path | None = None, workspace: Path | None = None) -> Sources:
    """The three source trees, the given ones or the Zephyr workspace's modules; raises
    :class:`TflmUnavailable` naming what is missing and how to point at it."""
    ws = workspace or default_workspace()
    cands: dict[str, list[Path]] = {"tflm": [], "cmsis_nn": [], "cmsis": []}
    if ws is not None:
        cands["tflm"] = [ws / "optional/modules/lib/tflite-micro", ws / "modules/lib/tflite-micro"]
        cands["cmsis_nn"] = [ws / "modules/lib/cmsis-nn"]
        cands["cmsis"] = [ws / "modules/lib/cmsis_6"]
    marks = {"tflm": MAKEFILE, "cmsis_nn": "Include/arm_nnfunctions.h",
             "cmsis": "CMSIS/Core/Include/core_cm7.h"}
    opts = {"tflm": "--tflm-dir", "cmsis_nn": "--cmsis-nn-dir", "cmsis": "--cmsis-dir"}
    given = {"tflm": tflm, "cmsis_nn": cmsis_nn, "cmsis": cmsis}
    found: dict[str, Path] = {}
    for key, mark in marks.items():
        paths = [given[key]] if given[key] is not None else cands[key]
        hit = next((p for p in paths if p is not None and (p / mark).is_file()), None)
        if hit is None:
            where = ", ".join(str(p) for p in paths if p is not None) or (
                "no Zephyr workspace: set NNOPT_ZEPHYR_WORKSPACE or ZEPHYR_BASE")
            raise TflmUnavailable(f"{key} source not found ({mark} missing; looked in "
                                  f"{where}); pass {opts[key]} DIR")
        found[key] = hit.resolve()
    if not (found["tflm"] / "third_party_static").is_dir():
        raise TflmUnavailable(f"{found['tflm']} has no third_party_static/ (flatbuffers, "
                              "gemmlowp, ruy, kissfft): use the Zephyr module's tflite-micro")
    return Sources(found["tflm"], found["cmsis_nn"], found["cmsis"])


def _tree_key(src: Sources) -> str:
    h = hashlib.sha256()
    for p in (src.tflm, src.cmsis_nn, src.cmsis):
        head = p / ".git" / "HEAD"
        h.update(os.fspath(p).encode())
        h.update(head.read_bytes() if head.is_file() else b"")
    h.update(ARMCM7_H.encode())
    return h.hexdigest()[:16]


def _link_tree(src: Path, dst: Path, skip: Iterable[str] = ()) -> None:
    """``dst`` mirrors ``src``: real folders, symbolic links to its files."""
    skipped = set(skip)
    for root, dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        dirs[:] = [d for d in dirs if not (rel == Path(".") and d in skipped)]
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            link = dst / rel / f
            if not link.exists():
                link.symlink_to(Path(root) / f)


def prepare_tree(src: Sources, cache: Path) -> Path:
    """The cached build copy of TFLM's tree, downloads satisfied by local folders."""
    tree = cache / f"tflm-{_tree_key(src)}"
    stamp = tree / ".nnopt-tree-ready"
    if stamp.is_file():
        _device_headers(tree)  # a tree prepared before a header was added
        return tree
    if tree.exists():
        shutil.rmtree(tree)
    _link_tree(src.tflm, tree, skip=(".git", "third_party_static"))
    dl = tree / "tensorflow/lite/micro/tools/make/downloads"
    dl.mkdir(parents=True, exist_ok=True)
    static = src.tflm / "third_party_static"
    for name in ("flatbuffers", "gemmlowp", "ruy", "kissfft"):
        (dl / name).symlink_to(static / name, target_is_directory=True)
    (dl / "cmsis_nn").symlink_to(src.cmsis_nn, target_is_directory=True)
    (dl / "pigweed").mkdir()  # only TFLM's own tests use it
    cmsis = dl / "cmsis"
    (cmsis / "CMSIS").mkdir(parents=True)
    (cmsis / "CMSIS/Core").symlink_to(src.cmsis / "CMSIS/Core", target_is_directory=True)
    for f in ("LICENSE",):
        if (src.cmsis / f).is_file():
            (cmsis / f).symlink_to(src.cmsis / f)
    _device_headers(tree)
    stamp.write_text("ok\n")
    return tree


def _device_headers(tree: Path) -> None:
    """The generic device headers (:data:`DEVICE_HEADERS`) where TFLM's cortex_m_generic
    target looks for them, those missing written; and the riscv32_generic target's
    printf folder, empty (its download script skips an existing folder; the release
    build compiles none of it: tflm_targets.RISCV_MAKE_ARGS)."""
    (tree / DOWNLOADS / "eyalroz_printf").mkdir(parents=True, exist_ok=True)
    for name, text in DEVICE_HEADERS.items():
        dev = tree / DOWNLOADS / f"cmsis/Cortex_DFP/Device/{name}/Include"
        if not (dev / f"{name}.h").is_file():
            dev.mkdir(parents=True, exist_ok=True)
            (dev / f"{name}.h").write_text(text)


@dataclass(frozen=True)
class Library:
    variant: str
    tree: Path
    archive: Path
    cxxflags: tuple[str, ...]  # TFLM's CXXFLAGS + INCLUDES (absolute), for the harness
    target: Target = "qemu-m7"  # nnopt's firmware target of its core (Variant.target)


def _check_cxx(variant: str = "ref") -> None:
    tools = compilers(variant)
    if shutil.which(tools.cxx) is None:
        raise TflmUnavailable(f"{tools.cxx} not found: {tools.hint}")
    probe = subprocess.run([tools.cxx, *tools.probe_flags, "-x", "c++", "-E", "-", "-o",
                            os.devnull], input="#include <cstdio>\n", capture_output=True,
                           text=True, check=False)
    if probe.returncode != 0:
        raise TflmUnavailable(f"{tools.cxx} has no C++ library headers (<cstdio>): "
                              f"{tools.hint}")


def _make_env() -> dict[str, str]:
    # the Makefile's parse runs python3 scripts (generate_cc_arrays.py: numpy, PIL) of
    # the integration tests: this interpreter's environment has them
    return dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                   os.environ.get("PATH", "")]))


def _make_print(tree: Path, args: Sequence[str], exprs: Sequence[str]) -> list[str]:
    """The values of Makefile expressions (one line each) after TFLM's Makefile parsed."""
    recipe = " && ".join(f"echo {e}" for e in exprs)
    proc = subprocess.run(["make", "-f", MAKEFILE, *args, "--no-print-directory",
                           f"--eval=nnopt_print: ; @{recipe}", "nnopt_print"], cwd=tree,
                          capture_output=True, text=True, check=False, env=_make_env())
    if proc.returncode != 0:
        raise TflmUnavailable(f"TFLM's Makefile failed in {tree}: "
                              f"{(proc.stderr or proc.stdout).strip()[-400:]}")
    return proc.stdout.strip().splitlines()[-len(exprs):]


def _registrations(header_text: str, methods: Iterable[str]) -> set[str]:
    """The ``Register_*`` functions the resolver's ``methods`` call."""
    out: set[str] = set()
    for m in methods:
        i = header_text.find(f"TfLiteStatus {m}(")
        if i >= 0:
            body = header_text[i:header_text.find("}", i)]
            out.update(re.findall(r"Register_(\w+)\(", body))
    return out


#: TFLM's own test helpers among the library's core sources: no firmware links them (the
#: harness names none), so they are not compiled (the heaviest, test_helpers.cc, builds
#: TFLM's test models).
TEST_ONLY_SRCS = frozenset({"hexdump_test.cc", "test_helpers.cc", "test_helper_custom_ops.cc",
                            "mock_micro_graph.cc", "fake_micro_context.cc"})
#: Support files (no ``Register_*``) every firmware links: kernel helpers of all ops
#: and the compression hooks the core refers to.
ALWAYS_KERNELS = ("kernel_util", "micro_tensor_utils", "decompress", "decompress_common")
#: Support files named after no kernel, by the kernel that uses them.
SUPPORT_OF = {"lstm_eval": "unidirectional_sequence_lstm",
              "lstm_eval_common": "unidirectional_sequence_lstm",
              "activations_common": "activations"}


def select_kernels(sources: Sequence[str], registrations: set[str], tree: Path) -> list[str]:
    """The kernel files of ``sources`` a firmware with ``registrations`` links: those that
    define one of them, the support files of those (``conv_common.cc`` of ``conv.cc``,
    :data:`SUPPORT_OF`) and :data:`ALWAYS_KERNELS`; not TFLM's test helper
    (``kernel_runner.cc``)."""
    defines: dict[str, set[str]] = {}
    for f in sources:
        text = (tree / f).read_text(errors="replace")
        defines[f] = set(re.findall(r"TFLMRegistration\s+Register_(\w+)\(\s*\)\s*\{", text))
    used = {Path(f).stem for f, regs in defines.items() if regs & registrations}
    keep = []
    for f, regs in defines.items():
        stem = Path(f).stem
        owner = SUPPORT_OF.get(stem, stem.removesuffix("_common"))
        if (regs & registrations) or (not regs and (stem in ALWAYS_KERNELS or owner in used)):
            keep.append(f)
    return keep


def build_library(src: Sources, variant: str, cache: Path, ops: Iterable[str],
                  jobs: int = 2, log: Path | None = None) -> Library:
    """TFLM's ``libtensorflow-microlite.a`` for ``variant`` with the kernels of ``ops``
    (builtin operator names; TFLM's support files always), built by TFLM's Makefile
    (``nice make -jJOBS microlite``) and reused while it holds them all. Make keeps
    every object, so a later run with more operators compiles only theirs."""
    _check_cxx(variant)
    tree = prepare_tree(src, cache)
    args = make_args(variant)
    header = (tree / RESOLVER_H).read_text()
    methods = resolver_methods(header)
    regs = _registrations(header, (methods[o] for o in ops if o in methods))
    cxx, inc, lib_path, kernels, core_srcs = _make_print(
        tree, args, ["$(CXXFLAGS)", "$(INCLUDES)", "$(MICROLITE_LIB_PATH)",
                     "$(MICROLITE_CC_KERNEL_SRCS)", "$(MICROLITE_CC_SRCS)"])
    archive = tree / lib_path.strip()
    cxxflags = tuple(_absolute_includes([*cxx.split(), *inc.split()], tree))
    stamp = archive.with_suffix(".nnopt-kernels")
    built = set(stamp.read_text().split()) if stamp.is_file() and archive.is_file() else None
    wanted = set(select_kernels(kernels.split(), regs, tree))
    if built is None or not wanted <= built:
        chosen = sorted(wanted | (built or set()))
        out = log or tree / f"build-{variant}.log"
        # one build of a library at a time (two bench runs sharing the cache wait)
        with (tree / f".nnopt-build-{variant}.lock").open("w") as lock, out.open("w") as f:
            fcntl.flock(lock, fcntl.LOCK_EX)
            proc = subprocess.run(["nice", "make", "-f", MAKEFILE, *args, f"-j{jobs}",
                                   *_ccache_args(variant),
                                   "MICROLITE_CC_SRCS=" + " ".join(
                                       f for f in core_srcs.split()
                                       if Path(f).name not in TEST_ONLY_SRCS),
                                   "MICROLITE_CC_KERNEL_SRCS=" + " ".join(chosen),
                                   "microlite"], cwd=tree, stdout=f,
                                  stderr=subprocess.STDOUT, check=False, env=_make_env())
        if proc.returncode != 0 or not archive.is_file():
            tail = out.read_text(errors="replace").strip().splitlines()[-5:]
            raise TflmUnavailable(f"TFLM {variant} library build failed (log {out}): "
                                  + " | ".join(tail))
        stamp.write_text("\n".join(chosen) + "\n")
    return Library(variant, tree, archive, cxxflags, variant_spec(variant).target)


def _ccache_args(variant: str) -> list[str]:
    """``CXX=ccache …`` and ``CC=ccache …`` when ccache is installed: the reference and
    CMSIS-NN builds of one core compile TFLM's core files with the same preprocessed
    source, so the second build compiles little more than its kernels. The compiler and
    the objects are the same (not part of the measurements' key)."""
    cxx = shutil.which(compilers(variant).cxx)
    if shutil.which("ccache") is None or cxx is None:
        return []
    return [f"CXX=ccache {cxx}", f"CC=ccache {cxx.removesuffix('g++')}gcc"]


def _absolute_includes(flags: Sequence[str], tree: Path) -> list[str]:
    out = []
    for f in flags:
        if f.startswith("-I") and not os.path.isabs(f[2:]):
            f = "-I" + os.fspath(tree / f[2:])
        out.append(f)
    return out


# ----- model operators -> resolver -----

_ADD_RE = re.compile(r"TfLiteStatus (Add\w+)\([^{;]*\)\s*\{\s*return AddBuiltin\(\s*"
                     r"(?:tflite::)?BuiltinOperator_(\w+)")


def resolver_methods(header_text: str) -> dict[str, str]:
    """TFLite builtin operator name -> ``MicroMutableOpResolver`` method, read from
    TFLM's ``micro_mutable_op_resolver.h``."""
    return {op: method for method, op in _ADD_RE.findall(header_text)}


def model_operators(data: bytes) -> list[str]:
    """The operators of every subgraph of a .tflite model (builtin names, custom ops
    as ``CUSTOM(name)``), sorted."""
    import tflite
    from tflite.utils import BUILTIN_OPCODE2NAME

    model = tflite.Model.GetRootAsModel(data, 0)
    names: set[str] = set()
    for k in range(model.SubgraphsLength()):
        sg = model.Subgraphs(k)
        for i in range(sg.OperatorsLength()):
            code = model.OperatorCodes(sg.Operators(i).OpcodeIndex())
            b = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
            if b == tflite.BuiltinOperator.CUSTOM:
                c = code.CustomCode()
                names.add(f"CUSTOM({c.decode(errors='replace') if c else '?'})")
            else:
                names.add(str(BUILTIN_OPCODE2NAME.get(b, f"BUILTIN_{b}")))
    return sorted(names)


def resolver_calls(ops: Sequence[str], methods: dict[str, str]) -> list[str]:
    """The resolver's ``Add…()`` calls for ``ops``; raises :class:`TflmUnavailable`
    naming the operators TFLM's resolver has no method for."""
    missing = [o for o in ops if o not in methods]
    if missing:
        raise TflmUnavailable("TFLM's MicroMutableOpResolver has no builtin for "
                              + ", ".join(missing))
    return [methods[o] for o in ops]


def harness_source(methods: Sequence[str], model_path: Path, resource_variables: int = 0,
                   template: str | None = None) -> str:
    """The C++ harness for one model: ``methods`` registered, room for
    ``resource_variables``, the model file included as a const array."""
    text = template if template is not None else HARNESS_TEMPLATE.read_text()
    adds = "\n".join(f"  if (resolver.{m}() != kTfLiteOk) {{ return fail(\"{m}\", "
                     "EXIT_RESOLVER); }" for m in methods)
    path = os.fspath(model_path)
    if any(c in path for c in '"\\\n'):
        raise TflmUnavailable(f"model path {path!r} holds a quote, backslash or newline "
                              "(it goes into an assembler string)")
    return (text.replace("@N_OPS@", str(max(1, len(methods))))
            .replace("@ADD_OPS@", adds)
            .replace("@N_RESOURCES@", str(resource_variables))
            .replace("@MODEL_PATH@", path))


def resource_variables(data: bytes) -> int:
    """Number of VAR_HANDLE operators (resource variables) in all subgraphs."""
    import tflite
    from tflite.utils import BUILTIN_OPCODE2NAME

    model = tflite.Model.GetRootAsModel(data, 0)
    n = 0
    for k in range(model.SubgraphsLength()):
        sg = model.Subgraphs(k)
        for i in range(sg.OperatorsLength()):
            code = model.OperatorCodes(sg.Operators(i).OpcodeIndex())
            b = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
            n += BUILTIN_OPCODE2NAME.get(b) == "VAR_HANDLE"
    return n


# ----- one model's firmware -----

TFLM_MAIN_C = Path(__file__).with_name("tflm_main.c")
EXIT_ALLOCATE = 12  # the harness: AllocateTensors failed (tflm_harness.cc.in)
MODEL_SYMBOL = "nnopt_tflm_model"
_LOG_RE = re.compile(r"^tflm: (\w+)=(\d+)\s*$", re.MULTILINE)


@dataclass
class FirmwareRun:
    instructions: int | None  # first invocation
    instructions_total: int | None
    arena_used: int | None
    stack: int | None
    exit_code: int
    log: str
    executable: Path


@dataclass(frozen=True)
class Harness:
    """One model's compiled C++ harness for one library variant."""

    lib: Library
    archive: Path  # the harness object, archived


def build_harness(lib: Library, model: Path, workdir: Path) -> Harness:
    """Compile the C++ harness of ``model`` for ``lib`` (TFLM's own compiler flags);
    raises :class:`TflmUnavailable` when TFLM lacks one of its operators."""
    from nnopt.paths import nnrt_include_dirs

    data = model.read_bytes()
    header = (lib.tree / RESOLVER_H).read_text()
    methods = resolver_calls(model_operators(data), resolver_methods(header))
    workdir.mkdir(parents=True, exist_ok=True)
    # the model under a name without characters to escape, by content
    safe = lib.tree / "harness" / "models" / f"{hashlib.sha256(data).hexdigest()[:24]}.tflite"
    if not safe.is_file():
        safe.parent.mkdir(parents=True, exist_ok=True)
        safe.write_bytes(data)
    src = workdir / f"tflm_harness_{lib.variant}.cc"
    text = harness_source(methods, safe, resource_variables(data))
    src.write_text(text)
    # TFLM's own flags (its -mcpu/-mfpu/-mfloat-abi: the ABI of its library)
    flags = [*(f for f in lib.cxxflags if f != "-MD"), "-O2",
             *(f"-I{d}" for d in nnrt_include_dirs())]
    # cached by the harness text, the model bytes, the flags and the compiler
    tools = compilers(lib.variant)
    if tools.cxx != CXX:  # no libsupc++: the harness defines what TFLM's classes name
        flags.append("-DNNOPT_TFLM_NO_LIBSUPCXX=1")
    h = hashlib.sha256("\0".join([text, *flags, str(shutil.which(tools.cxx))]).encode())
    archive = lib.tree / "harness" / f"{h.hexdigest()[:24]}.a"
    if archive.is_file():
        return Harness(lib, archive)
    obj = src.with_suffix(".o")
    proc = subprocess.run([tools.cxx, *flags, "-c", str(src), "-o", str(obj)], capture_output=True,
                          text=True, check=False, cwd=workdir)
    if proc.returncode != 0:
        raise TflmUnavailable(f"TFLM harness does not compile: {proc.stderr.strip()[-600:]}")
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_suffix(".tmp.a")
    tmp.unlink(missing_ok=True)
    subprocess.run([tools.ar, "rcs", str(tmp), str(obj)], check=True)
    os.replace(tmp, archive)
    return Harness(lib, archive)


def link_firmware(harness: Harness, arena_bytes: int, board: Board) -> Path:
    """The ELF of a harness with a static arena of ``arena_bytes``, linked like nnopt's
    firmware for ``board`` (nnrt startup, port and linker script, newlib)."""
    from nnopt.firmware.arch import machine_flags
    from nnopt.firmware.toolchain import BuildSpec, build

    supcxx = subprocess.run([compilers(harness.lib.variant).cxx, *machine_flags(board),
                             "-print-file-name=libsupc++.a"],
                            capture_output=True, text=True, check=True).stdout.strip()
    libs = [harness.archive, harness.lib.archive] + (
        [Path(supcxx)] if os.path.isabs(supcxx) else [])
    return build(BuildSpec(target=harness.lib.target, sources=(TFLM_MAIN_C,), board=board,
                           defines={"NNOPT_TFLM_ARENA_BYTES": str(arena_bytes)},
                           libraries=tuple(libs)))


def run_firmware(exe: Path, board: Board, inputs: Sequence[Path], outputs: Sequence[Path],
                 invocations: int, timeout_s: float = 1200,
                 target: Target = "qemu-m7") -> FirmwareRun:
    """Run a TFLM firmware (built for ``target``) under QEMU and read what it printed."""
    from nnopt.firmware.toolchain import run

    args = ["-n", str(invocations)]
    for p in inputs:
        args += ["-i", str(p.resolve())]
    for p in outputs:
        args += ["-o", str(p.resolve())]
    res = run(exe, target, args, board=board, timeout_s=timeout_s)
    vals = {k: int(v) for k, v in _LOG_RE.findall(res.stdout)}
    return FirmwareRun(res.instructions, vals.get("instructions_total"),
                       vals.get("arena_used"), vals.get("stack"), res.exit_code,
                       (res.stdout + res.stderr).strip(), exe)


def model_array_bytes(exe: Path) -> int:
    """Size of the .tflite array (``nnopt_tflm_model``) in a TFLM firmware ELF."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    with exe.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        if isinstance(symtab, SymbolTableSection):
            for sym in symtab.get_symbol_by_name(MODEL_SYMBOL) or []:
                return int(sym["st_size"])
    return 0


def search_arena(allocates: Callable[[int], bool], used: int, known_ok: int) -> int:
    """The smallest multiple of 16 ``n`` with ``allocates(n)``, from ``used`` (TFLM's
    ``arena_used_bytes()``, usually enough) up (steps doubling) and bisected back down,
    below ``known_ok`` (which allocates); assumes more arena never fails."""
    lo = -(-used // 16) * 16
    if allocates(lo):
        return lo
    step, hi = 16, known_ok
    while lo + step < known_ok:
        if allocates(lo + step):
            hi = lo + step
            break
        lo, step = lo + step, step * 2
    while hi - lo > 16:  # lo fails, hi allocates
        mid = (lo + hi) // 32 * 16
        if allocates(mid):
            hi = mid
        else:
            lo = mid
    return hi
