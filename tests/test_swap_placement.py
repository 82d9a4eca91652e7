"""Weight placement, chunking, staging and the cost model (nnopt.swap)."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from conftest import model_path
from nnopt.boards import load_board
from nnopt.errors import PlanError
from nnopt.frontend.tflite import load_model
from nnopt.plan import ChunkEntry, Plan, SwapCost, TensorPlacement
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.swap import CostParams, SwapOptions, SwapPlan, plan_swap, simulate
from nnopt.swap.costmodel import (
    AEAD_CYCLES_PER_BYTE,
    MACS_PER_CYCLE,
    ChunkCost,
    io_bound_if_streamed,
    op_macs,
)
from nnopt.swap.placement import (
    CODE_RESERVE_BYTES,
    CRYPTO_STATE_BYTES,
    DTCM_RESERVE_BYTES,
    blob_chunks,
    chunk_bytes,
    metadata_bytes,
)
from nnopt.swap.sealed_blob import read_blob

MOBILENET = "tflm/mobilenet_v2_quantized_1x3x224x224.tflite"
F767 = load_board("nucleo_f767zi")


def _planned(rel: str, board: object = None) -> PlannedModel:
    g = load_model(model_path(rel))
    return plan_model(g, PlanOptions(check_kernels=False, board=board))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def mnv2() -> tuple[PlannedModel, SwapPlan]:
    pm = _planned(MOBILENET, F767)
    return pm, plan_swap(pm.graph, pm.plan, F767)


def test_mobilenet_fits_the_f767_flash(mnv2: tuple[PlannedModel, SwapPlan]) -> None:
    pm, s = mnv2
    flash = F767.regions["flash"].size
    assert s.enabled and s.mode == "auto" and s.algorithm == "chacha20-poly1305"
    assert s.internal_flash_bytes == flash == 2 * 1024 * 1024
    assert s.code_reserve_bytes == CODE_RESERVE_BYTES
    assert s.metadata_bytes == metadata_bytes(pm.graph)
    # internal weights + code reserve + requantisation tables <= 2 MB; the rest streams
    assert s.internal_weight_bytes + s.code_reserve_bytes + s.metadata_bytes <= flash
    assert s.fits_internal_flash
    assert s.internal_weight_bytes + s.external_weight_bytes == pm.plan.weight_bytes
    ext = {t.tensor for t in s.tensors if t.pool == "external"}
    assert sum(pm.graph.tensors[t].nbytes for t in ext) == s.external_weight_bytes
    weights = s.weights_with_pools(pm.plan.weights)
    assert {w.tensor for w in weights if w.pool == "external"} == ext
    assert sum(w.size for w in weights if w.pool == "flash") == s.internal_weight_bytes


def test_mobilenet_keeps_the_io_bound_fc_internal(mnv2: tuple[PlannedModel, SwapPlan]) -> None:
    _, s = mnv2
    fc = [t for t in s.tensors if t.opcode == "FULLY_CONNECTED"]
    assert len(fc) == 1 and fc[0].bytes == 1_280_000
    assert fc[0].pool == "flash" and fc[0].io_bound_if_streamed
    assert fc[0].macs_per_byte == pytest.approx(1.0)
    streamed = [t for t in s.tensors if t.pool == "external"]
    assert streamed and all(t.opcode == "CONV_2D" for t in streamed)
    assert not any(t.io_bound_if_streamed for t in streamed)
    assert s.cost.io_bound_ops == ()  # every streamed read hides behind compute
    assert s.cost.stall_ms == 0


def test_mobilenet_staging_and_chunks(mnv2: tuple[PlannedModel, SwapPlan]) -> None:
    pm, s = mnv2
    # staging in DTCM (128 KiB minus the reserve), the arena does not fit SRAM at all
    assert s.staging_region == "dtcm"
    assert s.staging_budget_bytes == F767.regions["dtcm"].size - DTCM_RESERVE_BYTES
    assert s.fits_staging and s.arena_fits is False
    assert any("tiling" in n for n in s.notes)
    assert 2 * s.staging_buffer_bytes + 32 * s.chunk_count <= s.staging_budget_bytes
    assert s.staging_bytes == max(c.plain_bytes for c in s.chunks)
    assert s.staging_buffer_bytes >= s.staging_bytes + 16
    assert s.needs_channel_range_kernels
    # chunks: numbered in execution order, cover every streamed tensor's channels once
    pos = {op: i for i, op in enumerate(pm.plan.schedule)}
    assert [c.index for c in s.chunks] == list(range(s.chunk_count))
    assert [pos[c.op] for c in s.chunks] == sorted(pos[c.op] for c in s.chunks)
    for t in s.tensors:
        if t.pool != "external":
            continue
        mine = [c for c in s.chunks if c.tensor == t.tensor]
        assert len(mine) == t.chunks
        assert mine[0].c0 == 0 and mine[-1].c1 == t.channels
        assert all(a.c1 == b.c0 for a, b in itertools.pairwise(mine))
        assert sum(c.plain_bytes for c in mine) == t.bytes
        widths = {c.c1 - c.c0 for c in mine[:-1]}
        assert len(widths) <= 1 and mine[-1].c1 - mine[-1].c0 <= t.channels_per_chunk
    # prefetch: chunk k+1 is issued by wait(k), into the other buffer
    for c in s.chunks:
        assert c.buffer == c.index % 2 and c.issue_after == c.index - 1
        assert c.issue_op == (-1 if c.index == 0 else s.chunks[c.index - 1].op)


def test_mobilenet_cost(mnv2: tuple[PlannedModel, SwapPlan]) -> None:
    _, s = mnv2
    c = s.cost
    assert c.baseline_ms < c.overlap_ms < c.serial_ms
    # decryption is the only exposed cost: overlap = baseline + decrypt (no stall)
    assert c.overlap_ms == pytest.approx(c.baseline_ms + c.decrypt_ms, rel=1e-6)
    assert 1.0 < s.predicted_slowdown < 1.2
    assert s.predicted_slowdown < c.serial_slowdown
    # the chosen staging is within tolerance of the best candidate
    best = min(s.staging_candidates.values())
    assert c.overlap_ms <= best * 1.005 + 1e-9


def test_mobilenet_chunk_bytes_and_blob(mnv2: tuple[PlannedModel, SwapPlan]) -> None:
    from nnopt.swap import write_model_blob

    pm, s = mnv2
    g = pm.graph
    for t in s.external_tensors[:3]:
        mine = [c for c in s.chunks if c.tensor == t]
        assert b"".join(chunk_bytes(g, c) for c in mine) == g.tensors[t].data
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        key = bytes(32)
        wb = write_model_blob(Path(tmp) / "m.bin", g, s, pm.plan.source_sha256, key)
        data = wb.path.read_bytes()
        assert wb.bytes == len(data)
        got = read_blob(data, key, expect_layout=wb.layout_id)
    assert [(c.tensor, c.c0, c.c1, c.data) for c in got] == [
        (c.tensor, c.c0, c.c1, c.data) for c in blob_chunks(g, s)]


def test_modes_off_and_force(mnv2: tuple[PlannedModel, SwapPlan]) -> None:
    pm, _ = mnv2
    off = plan_swap(pm.graph, pm.plan, F767, SwapOptions(mode="off"))
    assert not off.enabled and not off.chunks and not off.fits_internal_flash
    assert any("--swap auto" in n for n in off.notes)
    force = plan_swap(pm.graph, pm.plan, F767, SwapOptions(mode="force"))
    assert force.external_weight_bytes > 3_400_000  # every conv, depthwise and the FC
    fc = next(t for t in force.tensors if t.opcode == "FULLY_CONNECTED")
    assert fc.pool == "external" and fc.reason == "forced"
    assert force.predicted_slowdown > plan_swap(pm.graph, pm.plan, F767).predicted_slowdown
    assert op_macs(pm.graph, pm.graph.op_by_index[fc.op]) == 1_280_000
    with pytest.raises(PlanError, match="swap mode"):
        plan_swap(pm.graph, pm.plan, F767, SwapOptions(mode="sometimes"))


def test_without_channel_range_kernels(mnv2: tuple[PlannedModel, SwapPlan]) -> None:
    """With today's kernels (full output only) a conv streams as one chunk; the FC (batch
    1: a unit range of the output is contiguous) may still split. MobileNetV2 then fits
    by streaming the FC in slices and the 12-55 KB convs whole, at about the same cost."""
    pm, with_ranges = mnv2
    s = plan_swap(pm.graph, pm.plan, F767, SwapOptions(kernel_channel_ranges=False))
    assert not s.needs_channel_range_kernels and s.fits_internal_flash and s.fits_staging
    fc = next(t for t in s.tensors if t.opcode == "FULLY_CONNECTED")
    assert fc.pool == "external" and fc.chunks > 1 and fc.splittable
    assert "I/O-bound" in fc.reason
    assert all(t.chunks == 1 for t in s.tensors if t.pool == "external" and t is not fc)
    big = [t for t in s.tensors if t.bytes > 100_000 and t.opcode == "CONV_2D"]
    assert big and all(t.pool == "flash" and "staging" in t.reason for t in big)
    assert s.cost.io_bound_ops == (fc.op,)
    assert abs(s.predicted_slowdown - with_ranges.predicted_slowdown) < 0.05
    assert s.staging_bytes > with_ranges.staging_bytes  # whole 55 KB convs


def test_small_model_auto_does_not_stream() -> None:
    pm = _planned("mlperf_tiny/vww_96_int8.tflite", F767)
    s = plan_swap(pm.graph, pm.plan, F767)
    assert not s.enabled and s.fits_internal_flash and s.external_weight_bytes == 0


def test_small_model_forced_with_small_staging() -> None:
    pm = _planned("mlperf_tiny/vww_96_int8.tflite")
    s = plan_swap(pm.graph, pm.plan, None, SwapOptions(mode="force", staging_bytes=2048))
    assert s.enabled and s.staging_bytes <= 2048
    cands = [op for op in pm.graph.ops
             if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")]
    streamed = {t.op for t in s.tensors if t.pool == "external"}
    unstreamed = [t for t in s.tensors if t.pool != "external"]
    assert all("staging" in t.reason for t in unstreamed)  # too big for 2 KiB in one piece
    assert len(streamed) + len(unstreamed) == len(cands)
    assert s.chunk_count > len(streamed)  # some layers split into several chunks
    again = SwapPlan.from_json(json.loads(json.dumps(s.to_json())))
    assert again == s
    assert plan_swap(pm.graph, pm.plan, None,
                     SwapOptions(mode="force", staging_bytes=2048)).to_json() == s.to_json()


def test_board_without_external_flash() -> None:
    pm = _planned("mlperf_tiny/vww_96_int8.tflite")
    b = replace(F767, external_flash={})
    with pytest.raises(PlanError, match="no external flash"):
        plan_swap(pm.graph, pm.plan, b, SwapOptions(mode="force"))
    s = plan_swap(pm.graph, pm.plan, b, SwapOptions(internal_flash_bytes=CODE_RESERVE_BYTES))
    assert not s.enabled and not s.fits_internal_flash
    assert any("no external flash" in n for n in s.notes)


# ----- the cost model on its own -----

def test_cost_params_from_boards() -> None:
    p = CostParams.for_board(F767)
    assert p.clock_hz == 216e6 and p.flash_bytes_per_s == 6_750_000
    assert p.algorithm == "chacha20-poly1305"
    assert p.aead_cycles_per_byte == AEAD_CYCLES_PER_BYTE["chacha20-poly1305"]
    q = CostParams.for_board(load_board("mps2_an385"))
    assert q.algorithm == "aes-128-gcm" and q.flash_bytes_per_s == 54e6
    assert CostParams.for_board(None, macs_per_cycle=0.6).macs_per_cycle == 0.6
    with pytest.raises(ValueError, match="unknown cost parameter"):
        CostParams.for_board(None, mac_per_cycle=1.0)
    assert p.read_s(6_750_000) == pytest.approx(1.0 + p.flash_setup_s)


def test_fc_is_io_bound_and_convs_overlap(mnv2: tuple[PlannedModel, SwapPlan]) -> None:
    pm, _ = mnv2
    g = pm.graph
    p = CostParams.for_board(F767)
    fc = next(op for op in g.ops if op.opcode == "FULLY_CONNECTED")
    conv = next(op for op in g.ops if op.opcode == "CONV_2D"
                and g.tensors[op.inputs[1]].nbytes == 409_600)
    hw_aes = CostParams.for_board(F767, "aes-128-gcm", crypto_hardware=True)
    for params, op, bound, stalls in ((p, fc, True, False), (hw_aes, fc, True, True),
                                      (p, conv, False, False), (hw_aes, conv, False, False)):
        w = g.tensors[op.inputs[1]].nbytes
        assert io_bound_if_streamed(g, op, w, params) is bound
        # stream just this op in 16 chunks: the simulation agrees
        chunks = [ChunkCost(op.index, w // 16, 1 / 16)] * 16
        tl = simulate(g, pm.plan.schedule, chunks, params)
        timing = next(t for t in tl.ops if t.op == op.index)
        assert timing.io_bound is bound
        # software ChaCha20 (37 c/B) is slower than the SPI NOR (32 c/B): the FC is
        # bound by decryption and its reads hide; with AES hardware they stall
        assert (timing.stall_s > 0) is stalls
        assert tl.serial_s >= tl.overlap_s >= tl.baseline_s
    # a fast flash and cheap crypto make the FC compute-bound
    w = g.tensors[fc.inputs[1]].nbytes
    assert not io_bound_if_streamed(g, fc, w, replace(p, flash_bytes_per_s=1e10,
                                                      aead_cycles_per_byte=0.01))
    assert MACS_PER_CYCLE == 0.75


def test_simulation_overlap_arithmetic() -> None:
    """Two equal chunks of one op: the second read hides behind the first's work."""
    pm = _planned("mlperf_tiny/vww_96_int8.tflite")
    g = pm.graph
    op = next(o for o in g.ops if o.opcode == "CONV_2D")
    p = CostParams(clock_hz=1e6, macs_per_cycle=1.0, flash_bytes_per_s=1e6, flash_setup_s=0.0,
                   aead_cycles_per_byte=0.0, aead_cycles_per_chunk=0.0)
    sched = (op.index,)
    tl = simulate(g, sched, [ChunkCost(op.index, 84, 0.5)] * 2, p)
    compute = op_macs(g, op) / 1e6
    read = 100 / 1e6  # 84 + 16-byte tag
    assert tl.baseline_s == pytest.approx(compute)
    assert tl.serial_s == pytest.approx(compute + 2 * read)
    # read 0 exposed; read 1 overlaps the first half of the compute
    assert tl.overlap_s == pytest.approx(read + max(compute / 2, read) + compute / 2)
    with pytest.raises(ValueError, match="not in the schedule"):
        simulate(g, (), [ChunkCost(op.index, 84, 1.0)], p)
    assert np.isclose(tl.slowdown, tl.overlap_s / tl.baseline_s)


def test_staging_beside_the_arena_without_dtcm() -> None:
    """A board without DTCM: the staging buffers share the arena region; their budget
    is what the arena leaves (minus the stack/.bss reserve)."""
    from nnopt.swap.placement import SRAM_RESERVE_BYTES

    an385 = load_board("mps2_an385")
    pm = _planned("mlperf_tiny/vww_96_int8.tflite", an385)
    s = plan_swap(pm.graph, pm.plan, an385, SwapOptions(mode="force"))
    assert s.staging_region == "sram" and s.algorithm == "aes-128-gcm"
    assert s.staging_budget_bytes == an385.sram_bytes - pm.plan.arena_bytes - SRAM_RESERVE_BYTES
    assert s.fits_staging and s.arena_fits
    row = s.benchmark_row()
    assert row["chunks"] == s.chunk_count and row["fits"]
    assert row["external_weight_bytes"] + row["internal_weight_bytes"] == pm.plan.weight_bytes
    tight = plan_swap(pm.graph, pm.plan, an385, SwapOptions(
        mode="force", staging_budget_bytes=4096))
    assert all(t.row_bytes <= 4096 // 2 for t in tight.tensors if t.pool == "external")
    # the buffers fit, the table of so many small chunks does not: the driver reads
    # each entry on demand (two in RAM), said in the plan
    assert 32 * tight.chunk_count > 4096 - 2 * tight.staging_buffer_bytes
    assert tight.table_on_demand and tight.fits_staging
    assert tight.sram_bytes == 2 * tight.staging_buffer_bytes + 2 * 32 + CRYPTO_STATE_BYTES
    assert tight.to_json()["table_on_demand"] is True
    assert "table_on_demand" not in s.to_json()  # a table that fits: the JSON as before
    # buffers alone beyond the budget: refused, said
    tighter = plan_swap(pm.graph, pm.plan, an385, SwapOptions(
        mode="force", staging_budget_bytes=4096, staging_bytes=4096))
    assert not tighter.fits_staging and any("chunk table" in n for n in tighter.notes)


def test_plan_json_of_an_earlier_release_loads_and_writes_back_identically() -> None:
    """``Plan.swap`` is typed (SwapPlan with its records); its JSON is a contract: the plan
    file nnopt d350980 wrote for ``optimize lenet5_int8 --swap force`` loads, and writes
    back byte for byte."""
    text = (Path(__file__).parent / "support" / "lenet5_int8_swap_plan.json").read_text()
    plan = Plan.from_json(json.loads(text))
    assert isinstance(plan.swap, SwapPlan) and plan.swap.enabled
    assert isinstance(plan.swap.cost, SwapCost) and plan.swap.cost.ops
    assert all(isinstance(c, ChunkEntry) for c in plan.swap.chunks)
    assert all(isinstance(t, TensorPlacement) for t in plan.swap.tensors)
    assert plan.swap.chunk_count == json.loads(text)["swap"]["chunk_count"] == 7
    assert json.dumps(plan.to_json(), indent=1) == text
    # a tensor without MACs: infinity in the record, null in the JSON
    d = json.loads(text)["swap"]
    d["tensors"][0]["macs_per_byte"] = None
    swap = SwapPlan.from_json(d)
    assert math.isinf(swap.tensors[0].macs_per_byte)
    assert swap.to_json()["tensors"][0]["macs_per_byte"] is None
