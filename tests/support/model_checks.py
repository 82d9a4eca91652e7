"""Whole-model checks shared by the model, in-place, tiling, dynamic-mode and blob tests:
every traced tensor against the tflite-micro interpreter, a plan re-verified from its
records, and the shared models too slow for the default run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nnopt.frontend.tflite import load_model_bytes
from nnopt.passes.arena import Overlap, verify_offsets
from nnopt.passes.lifetimes import Buffer
from nnopt.plan import Plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm
from support.cases import assert_outputs_match, compare

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

