"""Whole-model checks shared by the model, in-place, tiling, dynamic-mode, blob and
firmware tests: every traced tensor against the tflite-micro interpreter (on the host,
or as firmware under QEMU: :func:`run_on_qemu`), a plan re-verified from its records,
and the shared models too slow for the default run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nnopt.boards import Board
from nnopt.elfcheck import check_elf
from nnopt.firmware.linker import check_firmware_budget
from nnopt.frontend.tflite import load_model_bytes
from nnopt.memory_budget import check_budget
from nnopt.passes.arena import Overlap, verify_offsets
from nnopt.passes.lifetimes import Buffer
from nnopt.plan import Plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.runner import run_planned
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm
from support.cases import assert_outputs_match, compare, compare_trace

# Models too large for the host-time budget of the default test run are marked slow.
# The unrolled RNNs (480 and 540 ops) plan twice (views and copies) and build 500-op C.
SLOW = {"tflm/mobilenet_v2_quantized_1x3x224x224.tflite", "keras/densenet121_64.tflite",
        "families/crnn_lstm_b.tflite", "families/gru_imu_b.tflite"}


def check_every_tensor(data: bytes, inputs: Sequence[np.ndarray], *, float_close: bool = True,
                       **run: Any) -> None:
    """nnopt's generated code (:func:`run_nnopt` with ``run``) against TFLM on
    ``inputs``: every traced tensor in execution order (:func:`compare`), then the
    outputs (float32 within 1e-5 relative with ``float_close``, otherwise exactly)."""
    graph = load_model_bytes(data)
    ref_out, ref_all = run_tflm(data, inputs)
    outs, trace = run_nnopt(data, inputs, **run)
    ref_all.update({t: o for t, o in zip(graph.outputs, ref_out, strict=True)})
    compare(graph, trace, ref_all, [op.index for op in graph.ops])
    assert_outputs_match(outs, ref_out, float_close=float_close)



def bit_exact(data: bytes, options: PlanOptions, seeds: Sequence[int] = (0,),
              target: str = "host") -> PlannedModel:
    """Plan, run on ``target`` and compare every tensor with TFLM; the planned model."""
    graph = load_model_bytes(data)
    pm = plan_model(graph, options, data)
    for seed in seeds:
        check_every_tensor(data, random_inputs(data, seed), options=options, target=target)
    return pm


def verify_plan(plan: Plan) -> None:
    """Re-check a finished plan's offsets from its JSON-level records: root buffers and
    scratch strictly, except the overlaps the plan lists as permitted."""
    bufs = [Buffer(f"t{b.tensor}", b.tensor, b.size, b.first, b.last)
            for b in plan.buffers if b.alias_of is None]
    bufs += [Buffer(f"s{s.op}", None, s.size, s.position, s.position) for s in plan.scratch]
    offsets = {f"t{b.tensor}": b.offset for b in plan.buffers if b.alias_of is None}
    offsets |= {f"s{s.op}": s.offset for s in plan.scratch}
    perms = [Overlap(f"t{o.src}", f"t{o.dst}", o.first, o.last, o.forward_max,
                     o.backward_min, o.reason) for o in plan.overlaps]
    verify_offsets(bufs, offsets, plan.alignment, plan.arena_bytes, perms)


def run_on_qemu(data: bytes, name: str, board: Board, target: str, tmp: Path, *,
                options: PlanOptions | None = None, firmware_stack: bool = False,
                arena_exact: bool = True) -> int:
    """The model planned for ``board`` (``options``, default the board alone) within its
    budget (and, ``firmware_stack``, with the firmware's stack: as ``nnopt run --target
    qemu`` plans), run as firmware for ``target`` under QEMU with every op's output
    traced and compared with the tflite-micro interpreter's (seeded inputs); the ELF
    within the board's budget and, ``arena_exact``, its arena exactly the plan's, in the
    board's arena region. Returns the instructions per inference."""
    pm = plan_model(load_model_bytes(data, name=name),
                    options or PlanOptions(board=board), source_bytes=data)
    check_budget(pm.plan, board)
    if firmware_stack:
        check_firmware_budget(pm.plan, board)
    inputs = random_inputs(data, 11)
    ref_out, ref_all = run_tflm(data, inputs)
    res = run_planned(pm, [x.tobytes() for x in inputs], target=target,  # type: ignore[arg-type]
                      board=board, trace=True, workdir=tmp)
    compare_trace(pm, res.trace, ref_out, ref_all)
    assert res.instructions is not None and res.instructions > 0
    assert res.executable is not None
    report = check_elf(res.executable, board)
    assert not report.over_budget
    if arena_exact:
        arena = [s for s in report.symbols if s.name == f"{pm.plan.model}_arena"]
        assert arena and arena[0].size == max(pm.plan.arena_bytes, 16)
        assert arena[0].region == board.arena_region
    return res.instructions
