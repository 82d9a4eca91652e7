"""The fast int8 kernels (nnrt/kernels/conv.h, fc.h) against a plain reference, on
randomised shapes, on every instruction set they have.

One C program (``tests/c/fast_kernels.c``) draws random geometries, zero points, per-channel and
per-tensor requantisation (shifts across the whole range, so that both the fast and
the reference requantisation run), activation ranges and data, runs every variant
(``nnrt_conv2d_1x1_s8``, ``nnrt_conv2d_im2col_s8``, ``nnrt_conv2d_s8`` with and without a
fused pool, ``nnrt_depthwise_conv2d_s8`` / ``_opt_s8`` with depth multipliers 1-8 and
filters of up to 12 x 12 taps, ``nnrt_depthwise_conv2d_inplace_s8``,
``nnrt_fully_connected_s8``) and compares each output byte with the textbook loops of
TFLM's reference kernels written out in the test (the arithmetic the oracle tests in
ops/test_conv.py / ops/test_fc.py check against the tflite-micro interpreter).
It also checks the folded requantisation of internal/requant.h (and its form for any
shift <= 0, nnrt_rq_nonpos(), which ADD/SUB use) against
nnrt_multiply_by_quantized_multiplier() on random and edge accumulators.

The program is built for every core: Cortex-M7 with the DSP/SIMD paths, Cortex-M7
with ``-DNNRT_PORTABLE_ONLY`` (the portable C paths on the same core), Cortex-M3 (no
DSP extension), Cortex-M4 (DSP), Cortex-M55 (DSP, and Helium: internal/mve_*.h),
Cortex-M33 without DSP (the AN521's CPU0) and Cortex-M0 (Armv6-M: Thumb-1, no divide)
under QEMU, and the host with ASan/UBSan. Every build must report zero mismatches and
the same hash of all outputs: the SIMD and portable paths give identical results. The
Cortex-M0's 16 KB hold smaller buffers (``MAXB``), so it draws other cases: its hash is
not compared, its mismatches are.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from nnopt.boards import load_board
from nnopt.firmware import BuildSpec, build, run
from nnopt.firmware import toolchain as tc
from nnopt.firmware.arch import arch_tools
from nnopt.lowering.conv_variant import (
    DW_MAX_TAPS,
    DW_PLANE_MIN_OUTPUTS,
    cols_bytes,
    im2col_bytes,
)
from nnopt.paths import nnrt_dir
from support.cbuild import c_source, kernel_sources
from support.markers import needs_qemu

CASES = 250  # random cases per kernel family and build


BUILDS: dict[str, tuple[tc.Target, dict[str, str]]] = {
    "m7-dsp": ("qemu-m7", {}),
    # the other cores (docs/cores.md): generic target, the board of BOARDS
    "m4-dsp": ("qemu", {}),
    "m33-nodsp": ("qemu", {}),
    # the Cortex-M55: the Helium (MVE) matrix core and dot products (internal/mve_*.h)
    "m55-mve": ("qemu", {}),
    "m0": ("qemu", {"MAXB": "1024"}),
    # unoptimised: the gemm chunk runs its C form, not its assembly (too few registers
    # at -O0; Zephyr's CONFIG_NO_OPTIMIZATIONS); the depthwise plane path's assembly is
    # a naked function without operands and runs here too
    "m7-dsp-O0": ("qemu-m7", {}),
    "m7-portable": ("qemu-m7", {"NNRT_PORTABLE_ONLY": "1"}),
    "m3": ("qemu-m3", {}),
    "host-sanitized": ("host", {}),
    # RV32IMAC (QEMU virt): the register-blocked paths of internal/rv32_*.h; the same
    # paths on the host with the sanitizers (NNRT_RV32_PATHS)
    "rv32": ("qemu", {}),
    "host-rv32-paths": ("host", {"NNRT_RV32_PATHS": "1"}),
}


#: The board of a build on the generic ``qemu`` target.
BOARDS = {"m4-dsp": "mps2_an386", "m33-nodsp": "mps2_an521", "m55-mve": "mps3_an547",
          "m0": "qemu_cortex_m0", "rv32": "qemu_riscv32"}
#: Builds that draw other cases (smaller buffers): not in the same-hash comparison.
OTHER_CASES = {"m0"}


def _run_build(name: str, tmp: Path) -> tuple[int, str]:
    target, defines = BUILDS[name]
    board = (load_board(BOARDS.get(name) or tc.DEFAULT_BOARDS[target]) if target != "host"
             else None)
    if board is not None:
        tools = arch_tools(board)
        if shutil.which(tools.qemu) is None or shutil.which(tools.cc) is None:
            pytest.skip(f"{tools.qemu} / {tools.cc} not installed")
    src = c_source("fast_kernels.c")
    exe = build(BuildSpec(target=target, sources=(src, *kernel_sources("conv", "fc", "internal")),
                          defines={**defines, "NCASES": str(CASES)},
                          board=board, sanitize=target == "host",
                          opt="-O0" if name.endswith("-O0") else "-O2"))
    res = run(exe, target, [], board=board, timeout_s=600)
    return res.exit_code, res.stdout + res.stderr


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in BUILDS:
        code, text = _run_build(name, tmp_path_factory.mktemp(name))
        assert code == 0, f"{name}: exit code {code}\n{text[-3000:]}"
        out[name] = text
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BUILDS))
def test_fast_kernels_match_reference(results: dict[str, str], name: str) -> None:
    text = results[name]
    assert re.search(r"^fails 0 0$", text, re.MULTILINE), text[-3000:]


@pytest.mark.slow
def test_generic_conv_cases_reach_the_matrix_core(results: dict[str, str]) -> None:
    """nnrt_conv2d_s8 without scratch: enough random cases put the matrix core's columns
    in the output (and finish the last pixels with the direct loops)."""
    m = re.search(r"^gemm-in-output (\d+) 0$", results["m7-dsp"], re.MULTILINE)
    assert m is not None and int(m.group(1)) >= CASES // 10


@pytest.mark.slow
def test_every_instruction_set_gives_the_same_bytes(results: dict[str, str]) -> None:
    hashes = {name: re.findall(r"^hash (\d+) (\d+)$", text, re.MULTILINE)
              for name, text in results.items() if name not in OTHER_CASES}
    assert all(len(h) == 1 for h in hashes.values()), hashes
    assert len({tuple(h[0]) for h in hashes.values()}) == 1, hashes


def test_scratch_rule_matches_the_kernels(tmp_path: Path) -> None:
    """nnopt.lowering.conv's scratch bytes equal the kernels' *_get_buffer_size()."""
    src = tmp_path / "sizes.c"
    src.write_text(r"""
#include <stdio.h>
#include "nnrt/kernels/conv.h"
int main(void)
{
    nnrt_conv_s8_params_t p = {0};
    for (int c = 1; c <= 70; ++c) {
        for (int k = 1; k <= 5; k += 2) {
            p.geom.input_c = c;
            p.geom.filter_h = k;
            p.geom.filter_w = k + 1;
            printf("%d %d %zu %zu\n", c, k, nnrt_conv2d_1x1_s8_get_buffer_size(&p),
                   nnrt_conv2d_im2col_s8_get_buffer_size(&p));
        }
    }
    return 0;
}
""")
    exe = build(BuildSpec(target="host", sources=(src, *kernel_sources("conv", "fc", "internal"))))
    res = run(exe, "host", [])
    assert res.exit_code == 0
    rows = [tuple(int(v) for v in line.split()) for line in res.stdout.splitlines()]
    assert len(rows) == 70 * 3
    for c, k, b1, bk in rows:
        assert b1 == cols_bytes(c)
        assert bk == im2col_bytes(k, k + 1, c)


def test_depthwise_tap_limit_matches_the_kernels() -> None:
    header = (nnrt_dir() / "kernels" / "internal" / "dw.h").read_text()
    m = re.search(r"#define NNRT_DW_MAX_TAPS (\d+)", header)
    assert m is not None and int(m.group(1)) == DW_MAX_TAPS
    m = re.search(r"#define NNRT_DW_PLANE_MIN_OUTPUTS (\d+)", header)
    assert m is not None and int(m.group(1)) == DW_PLANE_MIN_OUTPUTS


@pytest.mark.qemu
@needs_qemu
def test_run_stats_report_instructions_and_elf_sizes(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`nnopt run --target qemu-m7 --stats` writes instructions, arena, ROM and RAM."""
    import json

    from conftest import model_path
    from nnopt.cli import main

    stats = tmp_path / "stats.json"
    model = model_path("mlperf_tiny/ad01_int8.tflite")
    assert main(["run", str(model), "--target", "qemu-m7", "--seed", "1",
                 "--stats", str(stats)]) == 0
    capsys.readouterr()
    doc = json.loads(stats.read_text())
    assert doc["instructions"] > 100_000
    assert doc["arena_bytes"] == 768
    # the weights are 270,880 bytes as int8; on the M7 the FC layers' are widened to
    # int16 (fc-int16: twice the flash, which nucleo_f767zi's 2 MB holds); the arena is
    # in RAM
    assert 2 * 270_880 < doc["rom_bytes"] < 2 * 270_880 + 30_000
    assert doc["ram_bytes"] >= doc["arena_bytes"]
