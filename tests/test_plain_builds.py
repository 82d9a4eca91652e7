"""Builds without Zephyr: the nnrt CMake package (modules/nnrt/cmake, installed by its
install project) and Makefile fragment (modules/nnrt/nnrt.mk), each through its example
project (examples/plain_cmake, examples/plain_make) on the host and as bare-metal
Cortex-M3 firmware on QEMU; the model's output bit-exact with the tflite-micro
interpreter on the input the example generates."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, SHIPPED
from nnopt.firmware import qemu_available
from nnopt.testing.harness import run_tflm

MODEL = SHIPPED / "lenet5_int8.tflite"
PYTHON = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(REPO / "scripts")}

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
needs_firmware = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or not qemu_available(),
    reason="bare metal needs arm-none-eabi-gcc and qemu-system-arm "
    "(apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)")


def example_input(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The input examples/plain_common/run_model.c generates (its LCG)."""
    n = int(np.prod(shape))
    x = 12345
    out = []
    for _ in range(n * (1 if dtype.kind == "f" else dtype.itemsize)):
        x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
        out.append(x >> 24)
    if dtype.kind == "f":
        return ((np.array(out) - 128) / 64.0).astype(dtype).reshape(shape)
    return np.frombuffer(bytes(out), dtype=dtype).reshape(shape)


def expected_line() -> str:
    from nnopt.frontend.tflite import load_model
    from nnopt.ir import NUMPY_DTYPE

    g = load_model(MODEL)
    t = g.tensors[g.inputs[0]]
    x = example_input(tuple(t.shape), np.dtype(NUMPY_DTYPE[t.dtype]))
    outs, _ = run_tflm(MODEL.read_bytes(), [x])
    return "output0 " + np.ascontiguousarray(outs[0]).tobytes().hex()


def check_output(stdout: str) -> None:
    assert "run_model: done" in stdout, stdout
    assert expected_line() in stdout.splitlines(), stdout


def run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=ENV, check=False,
                          timeout=900)
    assert proc.returncode == 0, f"{cmd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def qemu(elf: Path) -> str:
    return run(["qemu-system-arm", "-M", "mps2-an385", "-nographic", "-monitor", "none",
                "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]).stdout


def installed_package(tmp_path: Path) -> Path:
    """nnrt installed by its install project: the prefix."""
    prefix = tmp_path / "prefix"
    run(["cmake", "-S", str(REPO / "modules/nnrt/cmake/install"), "-B", str(tmp_path / "inst")])
    run(["cmake", "--install", str(tmp_path / "inst"), "--prefix", str(prefix)])
    assert (prefix / "share/nnrt/cmake/nnrtConfig.cmake").is_file()
    return prefix


@needs_cmake
def test_cmake_package_installed_builds_and_runs_on_the_host(tmp_path: Path) -> None:
    prefix = installed_package(tmp_path)
    build = tmp_path / "build"
    run(["cmake", "-S", str(REPO / "examples/plain_cmake"), "-B", str(build),
         f"-DCMAKE_PREFIX_PATH={prefix}", f"-DNNOPT_PYTHON={PYTHON}"])
    run(["cmake", "--build", str(build), "-j", "2"])
    check_output(run([str(build / "run_model")]).stdout)


@needs_cmake
def test_cmake_package_refuses_an_unknown_core(tmp_path: Path) -> None:
    proc = subprocess.run(["cmake", "-S", str(REPO / "examples/plain_cmake"), "-B",
                           str(tmp_path / "b"), f"-Dnnrt_DIR={REPO / 'modules/nnrt/cmake'}",
                           "-DNNRT_CORE=cortex-z9"], capture_output=True, text=True,
                          env=ENV, check=False)
    assert proc.returncode != 0 and "cortex-z9 is not in" in proc.stderr


@needs_make
def test_makefile_fragment_builds_and_runs_on_the_host(tmp_path: Path) -> None:
    build = tmp_path / "build"
    run(["make", "-C", str(REPO / "examples/plain_make"), f"BUILD={build}", "-j2",
         f"NNOPT={PYTHON} -m nnopt"])
    check_output(run([str(build / "run_model")]).stdout)


@needs_cmake
@needs_firmware
def test_cmake_package_bare_metal_cortex_m3_on_qemu(tmp_path: Path) -> None:
    build = tmp_path / "build"
    run(["cmake", "-S", str(REPO / "examples/plain_cmake"), "-B", str(build),
         f"-Dnnrt_DIR={REPO / 'modules/nnrt/cmake'}", f"-DNNOPT_PYTHON={PYTHON}",
         f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'modules/nnrt/cmake/arm-none-eabi.cmake'}"])
    ninja = (build / "CMakeCache.txt").read_text()
    assert "NNRT_CORE:STRING=cortex-m3" in ninja and "NNRT_PORT:STRING=baremetal" in ninja
    run(["cmake", "--build", str(build), "-j", "2"])
    check_output(qemu(build / "run_model.elf"))


@needs_make
@needs_firmware
def test_makefile_fragment_bare_metal_cortex_m3_on_qemu(tmp_path: Path) -> None:
    build = tmp_path / "build"
    run(["make", "-C", str(REPO / "examples/plain_make"), f"BUILD={build}", "-j2",
         f"NNOPT={PYTHON} -m nnopt", f"NNOPT_PYTHON={PYTHON}", "NNRT_PORT=baremetal",
         "NNRT_CORE=cortex-m3", "CC=arm-none-eabi-gcc"])
    check_output(qemu(build / "run_model.elf"))


def test_one_core_table() -> None:
    """cores.mk is the only table of core flags: the CMake package parses it."""
    text = (REPO / "modules/nnrt/cmake/nnrtConfig.cmake").read_text()
    assert "cores.mk" in text and "-mcpu=" not in text
    assert "-mcpu=" not in (REPO / "modules/nnrt/nnrt.mk").read_text()
