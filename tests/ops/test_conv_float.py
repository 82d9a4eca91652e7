"""The float32 dot products of nnrt_dot4_f32 (kernels/internal/dot_f32.h: VLDM blocks on
an FPU core, the C loop elsewhere) and the float32 CONV_2D / FULLY_CONNECTED kernels
that use them.

- ``tests/c/float_dot.c`` against the reference loop, bit for bit, built five ways
  (Cortex-M7 with the FPU assembly at -O2 and -O0, Cortex-M7 with
  ``-DNNRT_PORTABLE_ONLY``, Cortex-M3 with soft float, the host with ASan/UBSan): zero
  mismatches and the same hash of every result on each.
- Conv and FC geometries that reach each path of the kernels (one filter row as one
  run, one run per column, short runs summed inline, depths with every remainder,
  output channels not a multiple of four) against the tflite-micro interpreter, byte
  for byte, on the host, QEMU Cortex-M7 (nucleo_f767zi, FPU) and QEMU Cortex-M3.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from nnopt.boards import load_board
from nnopt.firmware import BuildSpec, build, run
from nnopt.firmware import toolchain as tc
from nnopt.planner import PlanOptions
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm
from support.cbuild import c_source
from support.markers import needs_qemu
from support.tflite_builder import (
    combine_models,
    conv2d_model,
    fully_connected_model,
    grouped_float_conv_model,
)

CASES = 400  # random dot products per build

BUILDS: dict[str, tuple[tc.Target, dict[str, str], str]] = {
    "m7-fpu": ("qemu-m7", {}, "-O2"),
    "m7-fpu-O0": ("qemu-m7", {}, "-O0"),  # Zephyr's CONFIG_NO_OPTIMIZATIONS
    "m7-portable": ("qemu-m7", {"NNRT_PORTABLE_ONLY": "1"}, "-O2"),
    "m3": ("qemu-m3", {}, "-O2"),
    "host-sanitized": ("host", {}, "-O2"),
}


def _build(name: str) -> Path:
    target, defines, opt = BUILDS[name]
    board = load_board(tc.DEFAULT_BOARDS[target]) if target != "host" else None
    return build(BuildSpec(target=target, sources=(c_source("float_dot.c"),),
                           defines={**defines, "NCASES": str(CASES)}, board=board,
                           sanitize=target == "host", opt=opt))


@pytest.fixture(scope="module")
def results() -> dict[str, str]:
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("qemu-system-arm / arm-none-eabi-gcc not installed")
    out: dict[str, str] = {}
    for name, (target, _, _) in BUILDS.items():
        board = load_board(tc.DEFAULT_BOARDS[target]) if target != "host" else None
        res = run(_build(name), target, [], board=board, timeout_s=600)
        out[name] = f"exit {res.exit_code}\n{res.stdout}{res.stderr}"
    return out


@pytest.mark.qemu
@pytest.mark.parametrize("name", list(BUILDS))
def test_dot4_matches_the_reference_loop(results: dict[str, str], name: str) -> None:
    text = results[name]
    assert text.startswith("exit 0\n") and re.search(r"^fails 0 0$", text, re.MULTILINE), \
        text[-2000:]


@pytest.mark.qemu
def test_every_build_gives_the_same_bits(results: dict[str, str]) -> None:
    hashes = {name: re.findall(r"^hash (\d+) (\d+)$", text, re.MULTILINE)
              for name, text in results.items()}
    assert all(len(h) == 1 for h in hashes.values()), hashes
    assert len({tuple(h[0]) for h in hashes.values()}) == 1, hashes


@needs_qemu
def test_fpu_build_runs_the_vldm_blocks() -> None:
    """The M7 FPU builds (-O2 and -O0) use the VLDM loop, the portable one does not."""
    objdump = shutil.which("arm-none-eabi-objdump")
    if objdump is None:
        pytest.skip("arm-none-eabi-objdump not installed")

    def dot4(name: str) -> str:
        text = subprocess.run([objdump, "-d", str(_build(name))], capture_output=True,
                              text=True, check=True).stdout
        m = re.search(r"<dot4_under_test>:\n(.*?)\n\n", text, re.DOTALL)
        assert m is not None, f"{name}: no dot4_under_test"
        return m.group(1)

    blocks = r"vldmia\s+\w+!, \{s\d+-s\d+\}"  # four registers at once
    for name in ("m7-fpu", "m7-fpu-O0"):
        n = len(re.findall(blocks, dot4(name)))  # five per inlined copy
        assert n >= 5 and n % 5 == 0, name
    assert re.search(blocks, dot4("m7-portable")) is None


# ----- the kernels that use it, against the interpreter -----

F32 = "float32"
MODEL_CASES: dict[str, bytes] = {
    # one filter row, one input channel: the whole row is one run, clipped at the edges
    "row_fc1_same_s3": conv2d_model((1, 1, 40, 1), 6, (1, 13), strides=(1, 3), seed=1,
                                    dtype=F32),
    "row_fc1_valid_s8": conv2d_model((1, 1, 64, 1), 5, (1, 32), strides=(1, 8),
                                     padding="VALID", seed=2, dtype=F32),
    "3x3_fc3_relu": conv2d_model((1, 6, 6, 3), 7, (3, 3), activation="RELU", seed=3,
                                 dtype=F32),
    "3x3_fc16_dilation2": conv2d_model((1, 7, 7, 16), 5, (3, 3), dilation=(2, 2), seed=4,
                                       dtype=F32),
    "2x2_fc2_inline": conv2d_model((2, 5, 5, 2), 3, (2, 2), bias=False, seed=5, dtype=F32),
    "1x1_fc9": conv2d_model((1, 4, 4, 9), 6, (1, 1), seed=6, dtype=F32),
    "5x5_fc4_s2_relu6": conv2d_model((1, 9, 8, 4), 9, (5, 5), strides=(2, 2),
                                     activation="RELU6", seed=7, dtype=F32),
    # input depth 16, filter depth 8 (two groups of 6 filters): one run per column
    "grouped_fc8": grouped_float_conv_model((1, 5, 6, 16), 12, 8, (2, 3), seed=8),
    "fc_depth1": fully_connected_model((1, 1), 5, seed=9, dtype=F32),
    "fc_depth3": fully_connected_model((2, 3), 4, seed=10, dtype=F32),
    "fc_depth7_units9": fully_connected_model((1, 7), 9, seed=11, dtype=F32),
    "fc_depth13_units6": fully_connected_model((3, 13), 6, activation="RELU", seed=12,
                                               dtype=F32),
    "fc_depth128_units12": fully_connected_model((1, 128), 12, seed=13, dtype=F32),
    "fc_depth257_units7_no_bias": fully_connected_model((1, 257), 7, bias=False, seed=14,
                                                        dtype=F32),
}
CHUNK = 7  # cases per firmware (its semihosting command line names every file)
TARGETS = {"host": None, "qemu-m7": "nucleo_f767zi", "qemu-m3": "mps2_an385"}


@pytest.mark.parametrize("target", list(TARGETS))
def test_float_conv_and_fc_bit_exact_with_the_interpreter(target: str) -> None:
    if target != "host" and (shutil.which("qemu-system-arm") is None
                             or shutil.which("arm-none-eabi-gcc") is None):
        pytest.skip("qemu-system-arm / arm-none-eabi-gcc not installed")
    board_name = TARGETS[target]
    board = load_board(board_name) if board_name else None
    names = list(MODEL_CASES)
    differ = []
    for k in range(0, len(names), CHUNK):
        chunk = names[k:k + CHUNK]
        combined = combine_models([MODEL_CASES[n] for n in chunk])
        inputs = random_inputs(combined.data, 3)
        ref, _ = run_tflm(combined.data, inputs)
        got, _ = run_nnopt(combined.data, inputs, target=target, board=board,
                           options=PlanOptions(order="file"))
        differ += [name for name, a, r in zip(chunk, got, ref, strict=True)
                   if a.tobytes() != np.ascontiguousarray(r).reshape(a.shape).tobytes()]
    assert differ == []
