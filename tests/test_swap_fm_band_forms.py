"""Row-band forms beyond the spatial patterns (issue 39): ops whose own working set
exceeds RAM and that are no sliding window run in row bands too, each with the form its
definition gives (``OpDef.band``, ``passes.regions.band_of``): the broadcast MUL of a
squeeze-excitation block (the map in bands, the per-channel vector whole), a global
AVERAGE_POOL_2D or a MEAN over rows and columns (a reduction over bands of input rows,
the partial sums carried by ``nnrt_avgpool2d_rows_*`` / ``nnrt_mean_rows_*``),
RESIZE_BILINEAR and TRANSPOSE_CONV (output rows from a computable input row range).
Small models from ``nnopt.testing.big_models.band_forms`` (fixed seed) planned below
their live peak: outputs and every traced tensor bit-exact with the tflite-micro
interpreter, int8 and float32, on the host; int8 on QEMU M7."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

from conftest import model_path
from nnopt.boards import load_board
from nnopt.errors import BudgetError
from nnopt.firmware.toolchain import Target
from nnopt.frontend.tflite import load_model_bytes
from nnopt.memory_budget import check_budget
from nnopt.ops.base import POINT, REDUCE, ROWS, ScatterRows, TableRows
from nnopt.passes.regions import band_of
from nnopt.plan import Plan
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.swap.fmap import plan_traffic
from nnopt.swap.mbedtls_build import MbedtlsSources
from nnopt.testing.big_models import band_forms
from nnopt.testing.fm_model import build_fm_model, run_fm_model
from nnopt.testing.harness import random_inputs, run_litert
from support.cases import run_fm_exact

NUCLEO = load_board("nucleo_f767zi")
# budgets well below each model's live peak (16 KB / 64 KB for se, 48 KB / 192 KB for
# resize and tconv), so that the op of the form runs in bands
SRAM = {("se", "int8"): 6_000, ("se", "float32"): 20_000,
        ("se_mean", "int8"): 6_000, ("se_mean", "float32"): 20_000,
        ("resize", "int8"): 25_000, ("resize", "float32"): 100_000,
        ("tconv", "int8"): 25_000, ("tconv", "float32"): 100_000}
# the op of the form, and its band kind
FORM = {"se": {"AVERAGE_POOL_2D": REDUCE, "MUL": POINT}, "se_mean": {"MEAN": REDUCE},
        "resize": {"RESIZE_BILINEAR": ROWS},
        "tconv": {"TRANSPOSE_CONV": ROWS}}


def _model(kind: str, dtype: str) -> bytes:
    return band_forms(kind, dtype=dtype, seed=3)


def _planned(kind: str, dtype: str) -> PlannedModel:
    data = _model(kind, dtype)
    return plan_model(load_model_bytes(data, name=f"band_{kind}_{dtype}"),
                      PlanOptions(board=NUCLEO, sram=SRAM[kind, dtype], feature_maps="auto"),
                      source_bytes=data)


def test_row_maps_match_the_kernels_reads() -> None:
    # a transposed convolution's output row reads the input rows whose taps reach it
    for size, k, s, pad in ((16, 2, 2, 0), (16, 3, 2, 1), (9, 4, 2, 1), (8, 3, 1, 1)):
        rows = ScatterRows(size, k, s, pad)
        for a in range(2 * size):
            for b in range(a + 1, min(2 * size, a + 5) + 1):
                reach = [i for i in range(size) for y in range(a, b)
                         if 0 <= y + pad - i * s < k]
                lo, hi = rows.span(a, b)
                assert (lo, hi) == ((min(reach), max(reach) + 1) if reach else (lo, lo))
    assert TableRows((0, 1, 0, 1, 1, 2, 1, 2)).span(1, 3) == (0, 3)


@pytest.mark.parametrize("kind", sorted(FORM))
def test_forms_and_plans(kind: str) -> None:
    pm = _planned(kind, "int8")
    g, p = pm.graph, pm.plan
    assert p.arena_bytes <= SRAM[kind, "int8"] < p.peak_live_bytes
    banded = {g.op_by_index[st.ops[0]].opcode: st for st in p.bands}
    stored = {m.tensor for m in p.stored}
    for opcode, kind_ in FORM[kind].items():
        st = banded[opcode]  # the op runs in bands, more than one
        op = g.op_by_index[st.ops[0]]
        form = band_of(g, op)
        assert form is not None and form.kind == kind_ and st.grid[0] > 1
        assert set(form.inputs) <= stored  # read band by band from storage
        assert not set(form.whole) & stored  # the vector stays whole in RAM
        if kind_ == REDUCE:  # bands of input rows covering the input once, in order
            regions = next(te.regions for te in st.tiles if te.tensor == form.inputs[0])
            assert regions[0][0] == 0 and regions[-1][1] == g.tensors[form.inputs[0]].shape[1]
            assert all(a[1] == b[0] for a, b in itertools.pairwise(regions))
            assert op.outputs[0] not in stored


def _check(tmp: Path, target: Target, board_name: str | None, kind: str, dtype: str) -> None:
    pm = _planned(kind, dtype)
    r = run_fm_exact(pm, _model(kind, dtype), tmp, target, board_name)[0]
    fm = plan_traffic(pm.graph, pm.plan, NUCLEO)
    assert (r.written_bytes, r.read_bytes) == (fm.written_bytes, fm.read_bytes)


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("kind", sorted(FORM))
def test_host_bit_exact(mbed: MbedtlsSources, tmp_path: Path, kind: str, dtype: str) -> None:
    _check(tmp_path, "host", None, kind, dtype)


@pytest.mark.qemu
def test_qemu_m7_bit_exact(mbed: MbedtlsSources, tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    _check(tmp_path, "qemu-m7", "nucleo_f767zi", "se", "int8")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ai_edge_litert") is None,
                    reason="ai-edge-litert (the oracle of MediaPipe's models) not installed")
@pytest.mark.parametrize("sram", [1 << 20, None], ids=["1mb_sram", "nucleo_f767zi"])
def test_selfie_segmentation_in_row_bands(mbed: MbedtlsSources, tmp_path: Path,
                                          sram: int | None) -> None:
    # MediaPipe's selfie segmentation: every op of the four forms that exceeds the RAM
    # runs in bands. With a 1 MB SRAM its float32 input (786,432 B) stays whole in RAM;
    # on nucleo_f767zi itself (384 KB SRAM) the input is stored, written by the
    # application in row chunks, and the first convolution reads it band by band. The
    # output within the tolerance of LiteRT's default resolver (its custom
    # Convolution2DTransposeBias is not in the reference one) that the whole model is
    # held to (tests/test_realworld.py)
    data = model_path("realworld/mp_selfie_segmentation.tflite").read_bytes()
    g = load_model_bytes(data, name="mp_selfie_segmentation")
    pm = plan_model(g, PlanOptions(board=NUCLEO, sram=sram, order="file",
                                   feature_maps="auto"), source_bytes=data)
    p = pm.plan
    budget = sram or NUCLEO.sram_bytes
    assert p.arena_bytes <= budget < p.peak_live_bytes
    check_budget(p, NUCLEO)  # the arena in SRAM, the weights in internal flash
    forms = [band_of(pm.graph, pm.graph.op_by_index[st.ops[0]]) for st in p.bands]
    kinds = {f.kind for f in forms if f is not None}
    assert {REDUCE, ROWS, POINT} <= kinds
    (x,) = pm.graph.inputs
    stored_in = [m for m in p.stored if m.tensor == x]
    if sram is None:
        (m,) = stored_in
        assert m.written_by == "application" and m.first_tile == 0
        first = p.bands[0]
        assert pm.graph.op_by_index[first.ops[0]].opcode == "CONV_2D"
        assert first.tiles[0].tensor == x and first.tiles[0].kind == "gather"
    else:
        assert not stored_in
    exe = build_fm_model(pm, tmp_path / "gen", "host", None)
    ins = random_inputs(data, 5)
    r = run_fm_model(exe, "host", None, tmp_path, ins)
    assert r.exit_code == 0, r.text
    fm = plan_traffic(pm.graph, p, NUCLEO)
    assert (r.written_bytes, r.read_bytes) == (fm.written_bytes, fm.read_bytes)
    (want,) = run_litert(data, ins, reference=False)[0]
    got = np.frombuffer(r.output, np.float32)
    assert np.abs(got - want.reshape(-1)).max() <= 2e-4  # XNNPACK_ATOL


def test_refusal_names_what_blocks_the_bands() -> None:
    # 3,000 B of RAM: the 4,096 B output of the SE model must stay whole (graph
    # outputs are not stored; its input could be, written by the application), so no
    # band plan exists; the refusal says so
    data = _model("se", "int8")
    pm = plan_model(load_model_bytes(data, name="band_se_int8"),
                    PlanOptions(board=NUCLEO, sram=3_000, feature_maps="auto"),
                    source_bytes=data)
    assert not pm.plan.bands
    assert pm.plan.feature_maps_refused == (
        "graph output conv3 (4,096 bytes) must stay whole in RAM (graph outputs are not "
        "stored)",)
    with pytest.raises(BudgetError, match="no row-band plan with the feature maps out of "
                       "core: graph output conv3"):
        check_budget(pm.plan, NUCLEO)
    assert Plan.from_json(pm.plan.to_json()).feature_maps_refused == pm.plan.feature_maps_refused


def test_budget_hint_names_feature_maps_auto() -> None:
    # the SE model under 6,000 B without --feature-maps auto: over the SRAM, and the
    # hint names the option (the board has feature-map storage); with it, it fits
    data = _model("se", "int8")
    g = load_model_bytes(data, name="band_se_int8")
    off = plan_model(g, PlanOptions(board=NUCLEO, sram=6_000), source_bytes=data)
    with pytest.raises(BudgetError) as e:
        check_budget(off.plan, NUCLEO)
    assert e.value.hint is not None and e.value.hint.startswith(
        "try --feature-maps auto (feature maps out of core on the board's sd_card")
    on = plan_model(g, PlanOptions(board=NUCLEO, sram=6_000, feature_maps="auto"),
                    source_bytes=data)
    check_budget(on.plan, NUCLEO)
    assert on.plan.bands
