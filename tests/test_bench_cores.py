"""bench_firmware.py on every core (issue 42): the TFLM build of each core as data
(benchmarks/tflm_targets.py), the per-core rows, tables and geometric means, the cache
key per core, --profile on any core, and the size of the benchmark scripts. No TFLM
build or QEMU run except the one test marked slow (it skips without the toolchains)."""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from nnopt.boards import load_board
from nnopt.firmware.cores import core_name, core_of
from nnopt.paths import find_model

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_firmware as bf  # noqa: E402
import fw_cores  # noqa: E402
import fw_tflm as ft  # noqa: E402
import tflm_cache as tc  # noqa: E402
import tflm_firmware as tf  # noqa: E402

#: TFLM's TARGET_ARCH (cortex_m_generic_makefile.inc) / RISCV_ARCH per core, and the
#: float ABI it builds with: what the core's nnopt board links with.
EXPECTED = {
    "m7": ("TARGET_ARCH=cortex-m7+fp", "hard"),
    "m3": ("TARGET_ARCH=cortex-m3", "soft"),
    "m4": ("TARGET_ARCH=cortex-m4+fp", "hard"),
    "m33": ("TARGET_ARCH=cortex-m33+nodsp", "soft"),
    "m55": ("TARGET_ARCH=cortex-m55", "hard"),
    "m0": ("TARGET_ARCH=cortex-m0", "soft"),
    "rv32": ("RISCV_ARCH=rv32imac", "soft"),
}


@pytest.mark.parametrize("core", list(EXPECTED))
def test_tflm_make_arguments_of_each_core(core: str) -> None:
    arch_arg, abi = EXPECTED[core]
    variants = tf.CORE_VARIANTS[core]
    assert variants == (("ref_rv32",) if core == "rv32" else
                        tuple(f"{k}{'' if core == 'm7' else '_' + core}"
                              for k in ("ref", "cmsis_nn")))
    for v in variants:
        spec = tf.variant_spec(v)
        args = tf.make_args(v)
        assert arch_arg in args and "BUILD_TYPE=release" in args
        assert ("OPTIMIZED_KERNEL_DIR=cmsis_nn" in args) == (spec.kernels == "cmsis_nn")
        assert spec.board == bf.BENCH_CORES[core].board
        assert spec.target == bf.BENCH_CORES[core].target
        board = load_board(spec.board)
        assert core_of(board).short == core
        assert (board.fpu is not None) == (abi == "hard")
        if core == "rv32":
            assert "TARGET=riscv32_generic" in args and spec.isa == "riscv"
            assert "THIRD_PARTY_CC_SRCS=" in args
            extra = next(a for a in args if a.startswith("RISCV_EXTRA_CFLAGS="))
            assert "--specs=picolibc.specs" in extra
            assert tf.compilers(v).cxx == "riscv64-unknown-elf-g++"
        else:
            assert "TARGET=cortex_m_generic" in args and spec.isa == "arm"
            # TFLM's -mcpu is the board's core (its extensions: the float ABI above)
            assert core_name(spec.arch) == core_name(board.cpu)
            assert tf.compilers(v).cxx == "arm-none-eabi-g++"
    assert set(tf.CORE_VARIANTS) == set(bf.BENCH_CORES)


def test_m7_and_m3_builds_keep_their_arguments() -> None:
    """The M7 and M3 builds' arguments are those their cached measurements were keyed
    by before the other cores came (same order)."""
    assert tf.make_args("ref")[:4] == ["TARGET=cortex_m_generic", "TARGET_ARCH=cortex-m7+fp",
                                       "BUILD_TYPE=release", "TOOLCHAIN=gcc"]
    assert [a for a in tf.make_args("cmsis_nn_m3") if not a.startswith("TARGET_TOOLCHAIN")] \
        == [a.format(arch="cortex-m3") for a in tf.TFLM_MAKE_ARGS] + [
            "OPTIMIZED_KERNEL_DIR=cmsis_nn"]


@pytest.mark.parametrize("name", sorted(tf.DEVICE_HEADERS))
def test_device_header_per_arm_core(name: str) -> None:
    core = name.removeprefix("ARMCM")
    text = tf.DEVICE_HEADERS[name]
    assert f'#include "core_cm{core}.h"' in text and f"#define __CM{core}_REV" in text
    cores = {tf.variant_spec(v).arch for v in tf.ALL_VARIANTS}
    assert any(core_name(a) == f"cortex-m{core}" for a in cores)


def _figs(board: str, ours: int | None, cmsis: int | None, ref: int | None,
          exact: bool | None = True) -> bf.CoreFigures:
    return bf.CoreFigures(board=board, instructions=ours, bit_exact=exact,
                          tflm_cmsis_nn_instructions=cmsis, tflm_ref_instructions=ref,
                          ratio_cmsis_nn=bf.ratio(ours, cmsis), ratio_ref=bf.ratio(ours, ref))


def _rows() -> list[bf.Row]:
    a = bf.Row(model="a", path="a.tflite", ops=1, macs=10, group="anchors", instructions=50,
               tflm_cmsis_nn_instructions=100, tflm_ref_instructions=400, bit_exact=True,
               ratio_cmsis_nn=0.5, ratio_ref=0.125, m3_instructions=80,
               tflm_cmsis_nn_m3_instructions=100, tflm_ref_m3_instructions=200,
               ratio_m3_cmsis_nn=0.8, ratio_m3_ref=0.4, m3_bit_exact=True)
    a.cores["m4"] = _figs("mps2_an386", 60, 100, 300)
    a.cores["rv32"] = _figs("qemu_riscv32", 90, None, 300)
    b = bf.Row(model="b", path="b.tflite", ops=1, macs=10, group="anchors", instructions=20,
               tflm_cmsis_nn_instructions=10, ratio_cmsis_nn=2.0)
    b.cores["m4"] = _figs("mps2_an386", 40, 20, None, exact=False)
    b.cores["m0"] = bf.CoreFigures(board="qemu_cortex_m0",
                                   error="does not fit qemu_cortex_m0: over",
                                   tflm_ref_error="does not fit qemu_cortex_m0: flash",
                                   tflm_cmsis_nn_error="does not fit qemu_cortex_m0: flash")
    return [a, b]


def test_json_core_rows_carry_the_contract_fields(tmp_path: Path) -> None:
    dest = tmp_path / "fw.json"
    bf.write_doc(_rows(), str(dest))
    doc = json.loads(dest.read_text())
    flat = doc["core_rows"]
    assert [(c["core"], c["model"]) for c in flat] == [
        ("m7", "a"), ("m3", "a"), ("m4", "a"), ("rv32", "a"),
        ("m7", "b"), ("m4", "b"), ("m0", "b")]
    for c in flat:
        for key in ("core", "model", "instructions", "tflm_cmsis_nn_instructions",
                    "tflm_ref_instructions", "bit_exact", "board", "ratio_cmsis_nn",
                    "ratio_ref", "tflm_ref_bit_exact", "tflm_cmsis_nn_error"):
            assert key in c
    by = {(c["core"], c["model"]): c for c in flat}
    assert by[("m4", "a")]["instructions"] == 60
    assert by[("m4", "a")]["tflm_cmsis_nn_instructions"] == 100
    assert by[("m3", "a")]["tflm_ref_instructions"] == 200
    assert by[("rv32", "a")]["tflm_cmsis_nn_instructions"] is None
    assert by[("m4", "b")]["bit_exact"] is False
    assert by[("m0", "b")]["tflm_ref_error"].startswith("does not fit")
    assert all(r["core"] == "m7" for r in doc["rows"])  # the model rows' own core
    assert set(doc["tflm_make_per_variant"]) == set(tf.ALL_VARIANTS)


def test_geometric_mean_per_core() -> None:
    geo = {g["core"]: g for g in fw_cores.core_geomeans(_rows())}
    assert list(geo) == ["m7", "m3", "m4", "m0", "rv32"]  # BENCH_CORES order
    assert math.isclose(geo["m7"]["geomean_ratio_cmsis_nn"], math.sqrt(0.5 * 2.0))
    assert geo["m7"]["cmsis_nn_n"] == 2 and geo["m7"]["ref_n"] == 1
    assert math.isclose(geo["m4"]["geomean_ratio_cmsis_nn"], math.sqrt(0.6 * 2.0))
    assert math.isclose(geo["m4"]["geomean_ratio_ref"], 0.2)
    assert geo["rv32"]["cmsis_nn_n"] == 0 and geo["rv32"]["geomean_ratio_cmsis_nn"] is None
    assert math.isclose(geo["rv32"]["geomean_ratio_ref"], 0.3)
    assert geo["m0"]["models"] == 1 and geo["m0"]["ref_n"] == 0


def test_table_per_core() -> None:
    text = "\n".join(bf.markdown(_rows()))
    assert "m4 (mps2_an386):" in text and "rv32 (qemu_riscv32):" in text
    assert "| anchors | a | 60 | 100 | 300 | 0.60 | 0.20 | yes / - / - |  |" in text
    assert "| anchors | b | 40 | 20 | - | **2.00** | - | **no** / - / - |" in text
    assert "TFLM: does not fit qemu_cortex_m0: flash" in text  # one reason said once
    assert "| m4 | mps2_an386 | 2 | **1.10** (2) | 0.20 (1) |" in text
    assert "| rv32 | qemu_riscv32 | 1 | - (0) | 0.30 (1) |" in text
    # no other core: no per-core tables (the M7-only output is unchanged)
    only = [bf.Row(model="x", path="x", ops=0, macs=0, instructions=5)]
    assert fw_cores.core_markdown(only) == []


def test_destination_of_each_variant() -> None:
    row = bf.Row(model="m", path="m", ops=1, macs=1)
    assert ft.destination(row, "cmsis_nn") == (row, "tflm_cmsis_nn_")
    assert ft.destination(row, "ref_m3") == (row, "tflm_ref_m3_")
    dest, prefix = ft.destination(row, "cmsis_nn_m55")
    assert dest is row.cores["m55"] and prefix == "tflm_cmsis_nn_"
    assert row.cores["m55"].board == "mps3_an547"
    assert ft.destination(row, "ref_rv32")[1] == "tflm_ref_"


def test_probe_arena_is_capped_by_the_board() -> None:
    m0 = load_board("qemu_cortex_m0")
    size, capped = ft.probe_arena(m0, None)
    assert capped and size < 16384 and size % 16 == 0
    assert ft.probe_arena(load_board("nucleo_f767zi"), None) == (ft.PROBE_ARENA, False)
    assert ft.probe_arena(m0, 4096) == (4096, False)


@pytest.mark.parametrize("rel, why", [
    ("mlperf_tiny/ad01_int8.tflite", "the .tflite alone (276,976 B) is larger than its "
                                     "flash (262,144 B)"),
    ("mlperf_tiny/kws_ref_model.tflite", "TFLM's arena needs at least 16,000 B"),
    ("hello_world_int8.tflite", None),
])
def test_what_cannot_fit_the_m0_is_said_before_any_build(rel: str, why: str | None) -> None:
    path = find_model(rel)
    if path is None:
        pytest.skip(f"{rel} not found (../shared/models)")
    got = ft.does_not_fit(path.read_bytes(), load_board("qemu_cortex_m0"))
    if why is None:
        assert got is None
        assert ft.does_not_fit(path.read_bytes(), load_board("mps2_an386")) is None
    else:
        assert got is not None and got.startswith("does not fit qemu_cortex_m0: ")
        assert why in got


def _context(tmp_path: Path) -> bf.TflmContext:
    def tree(name: str, rel: str) -> Path:
        (tmp_path / name / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name / rel).write_text("x")
        return tmp_path / name

    src = tf.Sources(tree("tflm", "a.cc"), tree("cmsis_nn", "b.c"),
                     tree("cmsis", "CMSIS/Core/Include/core_cm7.h"))
    return bf.TflmContext(src, None, tmp_path / "cache",
                          results=tc.ResultCache(tmp_path / "cache" / "results", "use"))


def test_cached_measurements_are_per_core(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The same model and kernels on two cores are two measurements: each is stored
    under its core's key and read back into its core's figures."""
    measured: list[str] = []

    def fake(dest: Any, lib: tf.Library, *args: Any) -> bool:
        measured.append(lib.variant)
        prefix = args[5]
        setattr(dest, prefix + "instructions", 1000 * len(measured))
        setattr(dest, prefix + "bit_exact", True)
        return True

    monkeypatch.setattr(ft, "measure_tflm_firmware", fake)
    monkeypatch.setattr(bf.TflmContext, "library",
                        lambda self, v: tf.Library(v, tmp_path, tmp_path / "l.a", ()))
    model = tmp_path / "m.tflite"
    model.write_bytes(b"tflite")
    fw = _context(tmp_path)
    assert fw.identity("cmsis_nn")["core"] == "m7"
    assert fw.identity("cmsis_nn_m4")["core"] == "m4"

    def run() -> bf.Row:
        row = bf.Row(model="m", path="m.tflite", ops=1, macs=1)
        for v in ("cmsis_nn", "cmsis_nn_m4", "ref_rv32"):
            bf.measure_tflm(row, fw, v, model, [b"x"], bf.Oracle([b"y"], ["|i1"]), 1,
                            tmp_path / v)
        return row

    first = run()
    assert measured == ["cmsis_nn", "cmsis_nn_m4", "ref_rv32"]
    assert first.tflm_cmsis_nn_instructions == 1000
    assert first.cores["m4"].tflm_cmsis_nn_instructions == 2000
    assert first.cores["rv32"].tflm_ref_instructions == 3000
    again = run()
    assert len(measured) == 3  # all three from the cache, each into its own core
    assert again.cores["m4"].tflm_cmsis_nn_cached and again.tflm_cmsis_nn_cached
    assert again.cores["m4"].tflm_cmsis_nn_instructions == 2000
    assert again.cores["rv32"].tflm_ref_instructions == 3000


def test_tflm_variants_follow_the_cores(tmp_path: Path) -> None:
    import argparse

    def ctx(cores: str, no_m3: bool = False) -> tuple[str, ...]:
        args = argparse.Namespace(no_tflm=False, no_tflm_firmware=False, tflm_dir=None,
                                  cmsis_nn_dir=None, cmsis_dir=None, jobs=1,
                                  tflm_variants=",".join(tf.ALL_VARIANTS), cores=cores,
                                  no_m3=no_m3, tflm_cache="off")
        fw = ft.tflm_context(args, [])
        assert fw is not None
        return fw.variants

    try:
        tf.find_sources()
    except tf.TflmUnavailable:
        pytest.skip("no TFLM source (Zephyr workspace)")
    assert ctx("m7,m3") == ("ref", "cmsis_nn", "ref_m3", "cmsis_nn_m3")
    assert ctx("m7,m3", no_m3=True) == ("ref", "cmsis_nn")
    assert ctx("m4,rv32") == ("ref", "cmsis_nn", "ref_m4", "cmsis_nn_m4", "ref_rv32")


def test_profile_takes_one_core(capsys: pytest.CaptureFixture[str]) -> None:
    path = find_model("hello_world_int8.tflite")
    assert path is not None
    assert bf.main(["--profile", str(path), "--cores", "m4,m33"]) == 2
    assert "--profile runs on one core" in capsys.readouterr().err


MAX_LINES = 700


def test_no_benchmark_script_is_over_700_lines() -> None:
    """Issue 43: each benchmark module one job; none over 700 lines."""
    long = {p.name: n for p in sorted(BENCH.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, long


def _toolchains(variant: str) -> str | None:
    tools = tf.compilers(variant)
    qemu = "qemu-system-riscv32" if tf.variant_spec(variant).isa == "riscv" \
        else "qemu-system-arm"
    for t in (tools.cxx, qemu):
        if shutil.which(t) is None:
            return f"{t} not installed"
    try:
        tf.find_sources()
    except tf.TflmUnavailable as err:
        return str(err)
    return None


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize("core", ["rv32"])
def test_tflm_on_a_new_core_matches_the_interpreter(core: str, tmp_path: Path) -> None:
    """TFLM built by its Makefile for ``core`` (the library cached across runs) runs
    ad01_int8 under QEMU bit-exactly with the tflite-micro interpreter, as nnopt's
    firmware for the same board does."""
    variant = tf.CORE_VARIANTS[core][0]
    why = _toolchains(variant)
    if why is not None:
        pytest.skip(why)
    model = find_model("mlperf_tiny/ad01_int8.tflite")
    if model is None:
        pytest.skip("ad01_int8.tflite not found (../shared/models)")
    json_path = tmp_path / "fw.json"
    assert bf.main([str(model), "--cores", f"m7,{core}", "--tflm-variants", variant,
                    "--no-tflm-min-arena", "--tflm-cache", "off",
                    "--json", str(json_path)]) == 0
    flat = json.loads(json_path.read_text())["core_rows"]
    row = next(c for c in flat if c["core"] == core)
    assert row["tflm_ref_error"] is None, row["tflm_ref_error"]
    assert row["tflm_ref_bit_exact"] is True and row["bit_exact"] is True
    assert row["tflm_ref_instructions"] > 0 and row["instructions"] > 0
