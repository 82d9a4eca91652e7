"""What VGG16 float32 at 224 needs to run out of core on nucleo_f767zi (issue 39), on a
VGG-shaped model small enough for a test:

- fully connected layers whose weight rows exceed the staging buffers stream in slices
  along their input depth: blocks of output channels x depth slices [k0, k1), the
  partial sums kept in an accumulator between the slices
  (nnrt_fully_connected_{s8,f32}_depth), the order of the additions the whole-depth
  kernel's, so the output is bit-exact with the tflite-micro interpreter in int8 and
  float32;
- the graph input is stored (written by the application, tests/test_swap_fm_input.py);
- the weights of float32 convolutions run in row bands stream too, their output-channel
  slices again for every band;
- the chunk table on demand (two entries in RAM, each read when its chunk is).

On the host and QEMU M7; a flipped bit in a depth-slice chunk, in a banded layer's
chunk and in a table entry read on demand stop the inference."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import model_path
from nnopt.boards import load_board
from nnopt.firmware.toolchain import Target
from nnopt.frontend.tflite import load_model_bytes
from nnopt.plan import Plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.swap.mbedtls_build import MbedtlsSources
from nnopt.swap.pipeline import plan_swap_for
from nnopt.swap.sealed_blob import ENTRY_BYTES, HEADER_BYTES, parse_swap_blob
from nnopt.testing.big_models import vgg16
from nnopt.testing.fm_model import build_fm_model, run_fm_model, weight_blob
from nnopt.testing.harness import random_inputs, run_tflm

NUCLEO = load_board("nucleo_f767zi")
STAGING = 512  # the float model's first FC rows are 1,024 B, ad01's 640 B


def _vgg() -> bytes:
    return vgg16(64, width=0.125, units=64, classes=10, seed=3, name="vgg_mini")


def _planned_vgg(staging: int = STAGING, banded: bool = False) -> PlannedModel:
    data = _vgg()
    pm = plan_model(load_model_bytes(data, name="vgg_mini"),
                    PlanOptions(board=NUCLEO, sram=30_000, feature_maps="auto", tiling="off",
                                inplace_ops="off"), source_bytes=data)
    return plan_swap_for(pm, NUCLEO, mode="force", staging_bytes=staging,
                         stream_banded=banded)


def _planned_ad01() -> tuple[bytes, PlannedModel]:
    data = model_path("ad01_int8.tflite").read_bytes()
    pm = plan_model(load_model_bytes(data, name="ad01_int8"), PlanOptions(board=NUCLEO),
                    source_bytes=data)
    return data, plan_swap_for(pm, NUCLEO, mode="force", staging_bytes=256)


def test_plan_depth_slices() -> None:
    pm = _planned_vgg()
    s = pm.plan.swap
    assert s is not None and s.enabled
    depth = [c for c in s.chunks if c.k1]
    assert depth and all(c.plain_bytes <= STAGING for c in s.chunks)
    w = pm.graph.tensors[depth[0].tensor]
    rows, k_all = w.shape
    # per block of output channels, its slices in input order, covering the depth
    blocks: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for c in depth:
        blocks.setdefault((c.c0, c.c1), []).append((c.k0, c.k1))
    assert sorted(blocks) == [(a, b) for a, b in blocks] and sum(b - a for a, b in blocks) == rows
    for ks in blocks.values():
        assert ks[0][0] == 0 and ks[-1][1] == k_all
        assert all(x[1] == y[0] for x, y in itertools.pairwise(ks))
    d = json.loads(json.dumps(pm.plan.to_json()))
    keyed = [c for c in d["swap"]["chunks"] if "k1" in c]
    assert len(keyed) == len(depth)  # whole-depth chunks keep their JSON
    assert Plan.from_json(d).swap == s


def _run(tmp: Path, target: Target, board_name: str | None, data: bytes,
         pm: PlannedModel, tamper: bool, depth: bool = True) -> None:
    board = load_board(board_name) if board_name else None
    exe = build_fm_model(pm, tmp / "gen", target, board) if pm.plan.stored else None
    ins = random_inputs(data, 5)
    ref, _ = run_tflm(data, ins)
    if exe is None:
        from nnopt.runner import run_planned
        from nnopt.testing.fm_model import SWAP_KEY
        r0 = run_planned(pm, [x.tobytes() for x in ins], target=target, board=board,
                         workdir=tmp / "r", swap_key=SWAP_KEY)
        assert r0.outputs[0] == ref[0].tobytes()
        return
    blob = weight_blob(pm, tmp / "gen")
    r = run_fm_model(exe, target, board, tmp, ins, blob)
    assert r.exit_code == 0, r.text
    assert r.output == ref[0].tobytes()  # float32 too: the same additions in order
    src = (tmp / "gen" / f"{pm.plan.model}_model.c").read_text()
    if depth:
        assert "_depth(" in src and "for (uint32_t k = 0;" in src  # one loop per layer
    if not tamper:
        return
    s = pm.plan.swap
    assert s is not None
    path = Path(blob[1])
    clean = path.read_bytes()
    parsed = parse_swap_blob(clean)
    if depth:
        k = next(c.index for c in s.chunks if c.k1 and c.k0 > 0)
        assert parsed.entries[k].depth == s.chunks[k].k0 | s.chunks[k].k1 << 16
    else:  # a chunk of a banded layer, read for its second band
        banded = {st.ops[0] for st in pm.plan.bands}
        k = [c.index for c in s.chunks if c.op in banded][-1]
    spots = [parsed.entries[k].offset + 3]  # the sealed chunk
    if s.table_on_demand:  # its table entry (in the AAD)
        spots.append(HEADER_BYTES + ENTRY_BYTES * k + 8)  # the tensor index
    for at in spots:
        raw = bytearray(clean)
        raw[at] ^= 0x01
        path.write_bytes(bytes(raw))
        r = run_fm_model(exe, target, board, tmp, ins, blob)
        assert r.exit_code == 5 and "status -4" in r.text, (at, r.text)
    path.write_bytes(clean)


def test_host_float_vgg_depth_slices_and_stored_input(mbed: MbedtlsSources,
                                                      tmp_path: Path) -> None:
    _run(tmp_path, "host", None, _vgg(), _planned_vgg(), tamper=True)


def test_host_int8_depth_slices_bit_exact(mbed: MbedtlsSources, tmp_path: Path) -> None:
    data, pm = _planned_ad01()
    s = pm.plan.swap
    assert s is not None and any(c.k1 for c in s.chunks)
    _run(tmp_path, "host", None, data, pm, tamper=False)


def test_host_banded_weights_stream_table_on_demand(mbed: MbedtlsSources,
                                                    tmp_path: Path) -> None:
    pm = _planned_vgg(1024, banded=True)
    s = pm.plan.swap
    assert s is not None
    banded = {st.ops[0]: st.grid[0] for st in pm.plan.bands}
    per_op: dict[int, list[tuple[int, int]]] = {}
    for c in s.chunks:
        per_op.setdefault(c.op, []).append((c.c0, c.c1))
    streamed = [op for op in per_op if op in banded]
    assert streamed  # the banded convolutions' slices, once for every band
    for op in streamed:
        n = banded[op]
        m = len(per_op[op]) // n
        assert len(per_op[op]) == n * m and per_op[op] == per_op[op][:m] * n
    pm = replace(pm, plan=replace(pm.plan, swap=replace(s, table_on_demand=True)))
    _run(tmp_path, "host", None, _vgg(), pm, tamper=True, depth=False)
    src = (tmp_path / "gen" / "vgg_mini_model.c").read_text()
    assert ".table_on_demand = 1" in src and "output-channel slices streamed" in src


@pytest.mark.qemu
def test_qemu_m7_float_vgg_depth_slices(mbed: MbedtlsSources, tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    _run(tmp_path, "qemu-m7", "nucleo_f767zi", _vgg(), _planned_vgg(), tamper=False)


def test_int8_banded_weights_refused_with_hint() -> None:
    """int8 layers in row bands keep their weights internal: too many of them is refused,
    the hint saying why (not the staging size)."""
    from nnopt.errors import BudgetError
    from nnopt.memory_budget import check_budget
    from nnopt.testing.big_models import Layer, conv_chain

    data = conv_chain((1, 14, 14, 256), [Layer(512), Layer(512), Layer(8, stride=2)],
                      dtype="int8", seed=1, name="big8")
    pm = plan_model(load_model_bytes(data, name="big8"),
                    PlanOptions(board=NUCLEO, sram=60_000, feature_maps="auto", tiling="off",
                                inplace_ops="off"), source_bytes=data)
    assert pm.plan.bands
    pm = plan_swap_for(pm, NUCLEO)
    with pytest.raises(BudgetError) as err:
        check_budget(pm.plan, NUCLEO)
    assert "row bands" in (err.value.hint or "") and "int8" in (err.value.hint or "")
