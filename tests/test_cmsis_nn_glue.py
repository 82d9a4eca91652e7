"""nnrt's optional CMSIS-NN path (CONFIG_NNRT_CMSIS_NN / NNRT_USE_CMSIS_NN), checked
without CMSIS-NN: the glue compiles to nothing by default, the macro switches it on in
every hooked kernel, the Kconfig option selects only symbols Zephyr's cmsis-nn module
defines, and RuntimeExtras carries defines, include directories and libraries into the
runtime build (the way a CMSIS-NN build is linked side by side; see docs/zephyr.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from nnopt.errors import NnoptError, ToolchainError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.inputs import random_inputs
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.runner import RuntimeExtras, build_planned, build_runtime, run_planned
from support.cbuild import CBuild, c_source

REPO = Path(__file__).resolve().parents[1]
NNRT = REPO / "modules" / "nnrt"
GLUE = sorted((NNRT / "kernels" / "cmsis").glob("*.c"))
#: The public int8 kernels with a CMSIS-NN equivalent, and the glue function each calls.
HOOKS = {
    "conv/nnrt_conv2d_1x1_s8.c": "nnrt_cmsis_conv_s8",
    "conv/nnrt_conv2d_im2col_s8.c": "nnrt_cmsis_conv_s8",
    "conv/nnrt_conv2d_opt_s8.c": "nnrt_cmsis_conv_s8",
    "conv/nnrt_depthwise_conv2d_s8.c": "nnrt_cmsis_depthwise_conv_s8",
    "conv/nnrt_depthwise_conv2d_opt_s8.c": "nnrt_cmsis_depthwise_conv_s8",
    "fc/nnrt_fully_connected_s8.c": "nnrt_cmsis_fully_connected_s8",
    "pool/nnrt_maxpool2d_s8.c": "nnrt_cmsis_maxpool_s8",
    "pool/nnrt_avgpool2d_s8.c": "nnrt_cmsis_avgpool_s8",
    "elementwise/nnrt_add_s8.c": "nnrt_cmsis_add_s8",
    "softmax/nnrt_softmax_s8.c": "nnrt_cmsis_softmax_s8",
}
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("nm") is None,
                               reason="gcc/nm not installed")


def _symbols(obj: Path, *flags: str) -> set[str]:
    out = subprocess.run(["nm", *flags, str(obj)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@needs_gcc
@pytest.mark.parametrize("src", GLUE, ids=lambda p: p.name)
def test_glue_compiles_to_nothing_without_the_macro(src: Path, cbuild: CBuild) -> None:
    obj, res = cbuild.object("g.o", src)
    assert res.returncode == 0, res.stderr
    assert _symbols(obj, "--defined-only") == set()
    # NNRT_USE_CMSIS_NN=0 is "off" too
    obj, res = cbuild.object("g0.o", src, "NNRT_USE_CMSIS_NN=0")
    assert res.returncode == 0, res.stderr
    assert _symbols(obj, "--defined-only") == set()


@needs_gcc
@pytest.mark.parametrize("src", GLUE, ids=lambda p: p.name)
def test_glue_needs_cmsis_nn_with_the_macro(src: Path, tmp_path: Path, cbuild: CBuild) -> None:
    stand_in = tmp_path / "inc"
    stand_in.mkdir()
    (stand_in / "arm_nnfunctions.h").write_text('#error "stand-in arm_nnfunctions.h"\n')
    _, res = cbuild.object("g.o", src, "NNRT_USE_CMSIS_NN=1", include=stand_in)
    assert res.returncode != 0
    assert "stand-in arm_nnfunctions.h" in res.stderr


@needs_gcc
@pytest.mark.parametrize("rel", sorted(HOOKS))
def test_hooked_kernel_calls_the_glue_only_with_the_macro(rel: str, cbuild: CBuild) -> None:
    src = NNRT / "kernels" / rel
    glue = HOOKS[rel]
    obj, res = cbuild.object("k.o", src)
    assert res.returncode == 0, res.stderr
    assert not {s for s in _symbols(obj, "-u") if s.startswith("nnrt_cmsis")}
    # with the macro the kernel references its glue function (declared by the internal
    # header, which needs no CMSIS-NN header itself)
    obj, res = cbuild.object("k1.o", src, "NNRT_USE_CMSIS_NN=1")
    assert res.returncode == 0, res.stderr
    assert glue in _symbols(obj, "-u")


def test_every_glue_function_is_hooked_somewhere() -> None:
    header = (NNRT / "kernels" / "cmsis" / "nnrt_cmsis.h").read_text()
    declared = set(re.findall(r"^int (nnrt_cmsis_\w+)\(", header, re.M))
    assert declared == set(HOOKS.values())


# ----- Kconfig: the option selects real symbols of Zephyr's cmsis-nn module -----

#: Symbols defined by Zephyr's modules/cmsis-nn/Kconfig (zephyrproject-rtos/zephyr),
#: each gating one group of sources in modules/cmsis-nn/CMakeLists.txt.
ZEPHYR_CMSIS_NN_SYMBOLS = {
    "ZEPHYR_CMSIS_NN_MODULE", "CMSIS_NN", "CMSIS_NN_ACTIVATION", "CMSIS_NN_BASICMATH",
    "CMSIS_NN_CONCATENATION", "CMSIS_NN_CONVOLUTION", "CMSIS_NN_FULLYCONNECTED",
    "CMSIS_NN_NNSUPPORT", "CMSIS_NN_POOLING", "CMSIS_NN_RESHAPE", "CMSIS_NN_SOFTMAX",
    "CMSIS_NN_SVD", "CMSIS_NN_LSTM",
}
#: The function groups the glue calls (kernels/cmsis/*.c) and the support code they use.
GLUE_GROUPS = {"CMSIS_NN", "CMSIS_NN_CONVOLUTION", "CMSIS_NN_FULLYCONNECTED",
               "CMSIS_NN_POOLING", "CMSIS_NN_BASICMATH", "CMSIS_NN_SOFTMAX",
               "CMSIS_NN_NNSUPPORT"}


def _cmsis_option() -> str:
    text = (NNRT / "Kconfig").read_text()
    m = re.search(r"^config NNRT_CMSIS_NN\n(.*?)(?=^\S)", text, re.M | re.S)
    assert m, "config NNRT_CMSIS_NN not found in modules/nnrt/Kconfig"
    return m.group(1)


def test_cmsis_option_selects_the_groups_the_glue_calls() -> None:
    body = _cmsis_option()
    selected = set(re.findall(r"^\s*select\s+(\w+)", body, re.M))
    assert selected <= ZEPHYR_CMSIS_NN_SYMBOLS, selected - ZEPHYR_CMSIS_NN_SYMBOLS
    assert selected == GLUE_GROUPS
    deps = set(re.findall(r"\b[A-Z][A-Z0-9_]+\b",
                          " ".join(re.findall(r"^\s*depends on (.*)$", body, re.M))))
    assert "ZEPHYR_CMSIS_NN_MODULE" in deps  # an option, never a requirement


def test_no_stale_cmsis_option_name() -> None:
    for f in (REPO / "west.yml", REPO / "README.md", REPO / "docs" / "zephyr.md",
              NNRT / "CMakeLists.txt",
              NNRT / "Kconfig"):
        assert "NN_USE_CMSIS_NN" not in f.read_text().replace("NNRT_USE_CMSIS_NN", ""), f


# ----- RuntimeExtras: the runner's hook for extra runtime build inputs -----

def test_extras_refuse_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(NnoptError, match="not found") as err:
        RuntimeExtras(libraries=(tmp_path / "libnothing.a",))
    assert err.value.hint
    with pytest.raises(NnoptError, match="not found"):
        RuntimeExtras(include_dirs=(tmp_path / "nothing",))


@needs_gcc
def test_extras_reach_the_runtime_library_build(tmp_path: Path) -> None:
    """The define switches the glue on inside the runtime build, and the include
    directory is searched there: the stand-in header's #error stops that build."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "arm_nnfunctions.h").write_text('#error "stand-in reached the runtime build"\n')
    extras = RuntimeExtras(defines={"NNRT_USE_CMSIS_NN": "1"}, include_dirs=(inc,))
    with pytest.raises(ToolchainError, match="stand-in reached the runtime build"):
        build_runtime("host", extras=extras)


def _stand_in_library(tmp_path: Path, cc: str, ar: str, flags: list[str]) -> Path:
    src = c_source("stand_in_probe.c")
    obj, lib = tmp_path / "stand_in.o", tmp_path / "libstandin.a"
    subprocess.run([cc, *flags, "-c", str(src), "-o", str(obj)], check=True)
    subprocess.run([ar, "rcs", str(lib), str(obj)], check=True)
    return lib


def _hello() -> tuple[PlannedModel, list[bytes]]:
    data = (REPO / "models" / "hello_world_int8.tflite").read_bytes()
    pm = plan_model(load_model_bytes(data, name="hello_world_int8"), PlanOptions(),
                    source_bytes=data)
    return pm, [x.tobytes() for x in random_inputs(pm.graph, 3)]


@needs_gcc
def test_extras_library_and_define_keep_the_host_run_exact(tmp_path: Path) -> None:
    pm, inputs = _hello()
    lib = _stand_in_library(tmp_path, "gcc", "ar", ["-O2"])
    base = run_planned(pm, inputs, target="host")
    extra = run_planned(pm, inputs, target="host",
                        extras=RuntimeExtras(defines={"NNRT_EXTRAS_PROBE": "1"},
                                             libraries=(lib,)))
    assert extra.outputs == base.outputs
    assert extra.executable != base.executable  # a different build, not the cached one
    assert np.frombuffer(extra.outputs[0], dtype=np.int8).size > 0


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed")
def test_extras_libraries_are_linked_after_the_runtime(tmp_path: Path) -> None:
    """GNU ld resolves left to right: a library the runtime calls into (CMSIS-NN) must
    come after libnnrt.a on the firmware's link line (its map lists LOAD in order)."""
    pm, _ = _hello()
    lib = _stand_in_library(tmp_path, "arm-none-eabi-gcc", "arm-none-eabi-ar",
                            ["-mcpu=cortex-m3", "-mthumb", "-O2"])
    exe = build_planned(pm, "qemu-m3", tmp_path / "gen",
                        extras=RuntimeExtras(libraries=(lib,)))
    loads = [line.split(maxsplit=1)[1] for line in
             (exe.parent / "firmware.map").read_text().splitlines()
             if line.startswith("LOAD ")]
    runtime = next(i for i, p in enumerate(loads) if p.endswith("libnnrt.a"))
    stand_in = next(i for i, p in enumerate(loads) if p.endswith("libstandin.a"))
    assert stand_in > runtime
