"""The generated ``<model>_prepare()`` (the descriptor's ``prepare``): each kernel's
exported argument check (``nnrt_*_check()``, TFLM's Prepare) on the parameters its op
runs with, called once by the runner harness before the first inference, not inside
``invoke()``. A parameter struct corrupted in the generated C fails at prepare (exit 11,
the status named) before any inference, on the host and on QEMU."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from nnopt.codegen.c_model import generate
from nnopt.firmware.toolchain import BuildSpec, Target, build, run
from nnopt.frontend.tflite import load_model_bytes
from nnopt.paths import nnrt_dir
from nnopt.planner import PlanOptions, plan_model
from nnopt.runner import build_runtime
from support.markers import needs_qemu
from support.tflite_builder import fully_connected_model

TARGETS = ["host", pytest.param("qemu-m7", marks=needs_qemu)]


def _sources(tmp: Path) -> tuple[Path, str]:
    data = fully_connected_model((1, 16), 8, activation="RELU", seed=3)
    planned = plan_model(load_model_bytes(data, "prep"), PlanOptions(specialize="off"))
    gen = generate(planned, tmp / "gen")
    return gen.c_file, gen.symbol


def _run(c_file: Path, symbol: str, target: Target, out: Path) -> tuple[int, str]:
    spec = BuildSpec(target=target, sources=(c_file, nnrt_dir() / "harness" / "runner_main.c"),
                     include_dirs=(c_file.parent, nnrt_dir() / "include"),
                     defines={"NNRT_HARNESS_MODEL": symbol},
                     libraries=(build_runtime(target),))
    exe = build(spec)
    inp = out.with_name("in.bin")
    inp.write_bytes(np.arange(16, dtype=np.int8).tobytes())
    res = run(exe, target, ["-i", str(inp), "-o", str(out)])
    return res.exit_code, res.stderr + res.stdout


def test_prepare_calls_each_kernel_check_once(tmp_path: Path) -> None:
    c_file, _ = _sources(tmp_path)
    text = c_file.read_text()
    prepare = text[text.index("nnrt_status_t prep_prepare(void)"):]
    prepare = prepare[:prepare.index("\n}\n")]
    assert re.findall(r"nnrt_\w+_check\([^)]*\)", prepare) == ["nnrt_fc_s8_check(&op0_params)"]
    invoke = text[text.index("static nnrt_status_t prep_invoke(void)"):]
    assert "_check(" not in invoke[:invoke.index("\n}\n")]  # not per inference
    assert "prep_prepare," in text  # the descriptor's prepare


@pytest.mark.parametrize("target", TARGETS)
def test_prepare_runs_before_the_first_inference(target: Target, tmp_path: Path) -> None:
    c_file, symbol = _sources(tmp_path)
    rc, out = _run(c_file, symbol, target, tmp_path / "good.bin")
    assert rc == 0, out
    assert (tmp_path / "good.bin").stat().st_size == 8
    # the same model with an activation range its kernel rejects: prepare fails first
    text = c_file.read_text()
    start = text.index("static const nnrt_fc_s8_params_t op0_params = {")
    end = text.index("};", start)
    block = re.sub(r"\.act_min = -?\d+,", ".act_min = 100,", text[start:end])
    block = re.sub(r"\.act_max = -?\d+,", ".act_max = 0,", block)
    bad = tmp_path / "bad" / c_file.name
    bad.parent.mkdir()
    bad.write_text(text[:start] + block + text[end:])
    (bad.parent / c_file.with_suffix(".h").name).write_text(
        c_file.with_suffix(".h").read_text())
    rc, out = _run(bad, symbol, target, tmp_path / "bad.bin")
    assert rc == 11, out
    assert "prepare() failed with status" in out and "NNRT_ERR_ARG" in out, out
    assert not (tmp_path / "bad.bin").exists()  # no inference ran
