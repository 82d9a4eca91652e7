"""In-place operators below the per-op bound: the overlap verifier, the access-pattern
analysis behind each permission, PAD folding, in-place depthwise convolution,
concatenation views, and every shared model bit-exact with TFLM with all of it forced.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ALL_MODELS, model_path
from nnopt.codegen.c_model import generate
from nnopt.errors import PlanError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ConcatOptions, ConvOptions, PoolOptions
from nnopt.passes.arena import Overlap, plan_arena, verify_offsets
from nnopt.passes.inplace_ops import (
    DEPTHWISE_INPLACE_GROUP,
    depthwise_scratch,
    fold_pads,
    ring_rows,
    row_chunks,
    safe_deltas,
)
from nnopt.passes.lifetimes import Buffer
from nnopt.passes.regions import Axis, spatial_of
from nnopt.planner import PlanOptions
from support.markers import needs_qemu
from support.model_checks import SLOW, bit_exact, verify_plan
from support.tflite_builder import ModelBuilder, random_int8

FORCED = PlanOptions(inplace_ops="force", tiling="off")


def _buf(key: str, size: int, first: int, last: int) -> Buffer:
    return Buffer(key, int(key[1:]), size, first, last)


# ----- the verifier: only justified overlaps -----

def test_verifier_accepts_only_permitted_offsets() -> None:
    src, dst = _buf("t0", 256, 0, 2), _buf("t1", 256, 2, 4)
    perm = Overlap("t0", "t1", 2, 2, -64, 192, "test op row by row")
    # forward: the output starts at most 64 bytes below the input
    verify_offsets([src, dst], {"t0": 64, "t1": 0}, 16, 320, [perm])
    with pytest.raises(PlanError, match="overlap"):
        verify_offsets([src, dst], {"t0": 64, "t1": 16}, 16, 320, [perm])
    # backward: at least 192 bytes above
    verify_offsets([src, dst], {"t0": 0, "t1": 192}, 16, 448, [perm])
    with pytest.raises(PlanError, match="overlap"):
        verify_offsets([src, dst], {"t0": 0, "t1": 176}, 16, 448, [perm])
    # the same offsets without the permission: a crafted bad plan
    with pytest.raises(PlanError, match="overlap"):
        verify_offsets([src, dst], {"t0": 64, "t1": 0}, 16, 320)


def test_verifier_rejects_overlap_outside_the_permitted_op() -> None:
    """The input still read after the op (lives to step 3): the overlap is unsafe."""
    src, dst = _buf("t0", 256, 0, 3), _buf("t1", 256, 2, 4)
    perm = Overlap("t0", "t1", 2, 2, -64, None, "test")
    with pytest.raises(PlanError, match="overlap"):
        verify_offsets([src, dst], {"t0": 64, "t1": 0}, 16, 320, [perm])
    # a third buffer gets no relaxation from someone else's permission
    other = _buf("t2", 64, 2, 2)
    with pytest.raises(PlanError, match="overlap"):
        verify_offsets([src, dst, other], {"t0": 256, "t1": 0, "t2": 240}, 16, 512, [perm])


def test_arena_uses_permissions() -> None:
    a, b = _buf("t0", 4096, 0, 1), _buf("t1", 4096, 1, 2)
    strict = plan_arena([a, b], strategies=["greedy_by_lifetime"])
    assert strict.arena_bytes == 8192
    perm = Overlap("t0", "t1", 1, 1, None, 256, "test")
    relaxed = plan_arena([a, b], strategies=["greedy_by_lifetime"], overlaps=[perm])
    assert relaxed.arena_bytes == 4096 + 256  # verified inside plan_arena


# ----- the access-pattern analysis -----

def _safe_forward(steps: Sequence[tuple[int, int, int, int]], d: int) -> bool:
    """Brute force: no step's writes (shifted by d) hit bytes this or a later step reads."""
    for k, (_, _, w_lo, w_hi) in enumerate(steps):
        for r_lo, r_hi, _, _ in steps[k:]:
            if r_hi > r_lo and w_lo + d < r_hi and r_lo < w_hi + d:
                return False
    return True


def _safe_backward(steps: Sequence[tuple[int, int, int, int]], d: int) -> bool:
    for k, (_, _, w_lo, w_hi) in enumerate(steps):
        for r_lo, r_hi, _, _ in steps[:k + 1]:
            if r_hi > r_lo and w_lo + d < r_hi and r_lo < w_hi + d:
                return False
    return True


axis_st = st.tuples(st.integers(1, 12), st.integers(1, 5), st.integers(1, 3),
                    st.integers(0, 2), st.integers(1, 7), st.integers(1, 7))


def _bytes(lo: int, hi: int) -> set[int]:
    return set(range(lo, hi))


def _row_steps(p: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    """Per output row of a window op along one axis (size, kernel, stride, pad, input
    and output row bytes): (input bytes read from, to, output bytes written from, to);
    empty when the geometry has no output row."""
    size, kernel, stride, pad, in_row, out_row = p
    pad = min(pad, kernel - 1)
    out = (size + 2 * pad - kernel) // stride + 1
    if out < 1:
        return []
    ax = Axis(size, out, kernel, stride, pad)
    steps = []
    for r in range(out):
        lo, hi = ax.span(r, r + 1)
        steps.append((lo * in_row, hi * in_row, r * out_row, (r + 1) * out_row))
    return steps


@settings(max_examples=300, deadline=None)
@given(axis_st, st.integers(0, 40), st.booleans(), st.sampled_from([1, 2]))
def test_row_chunks_are_safe_bands(p: tuple[int, ...], slack: int, forward: bool,
                                   multiple: int) -> None:
    """Bands of rows from row_chunks() at any permitted offset: byte by byte, no band
    writes an input byte that it or a later band reads, bands cover every row once in
    the planned order, their lengths are multiples of ``multiple`` where longer, and
    slack in the offset makes the bands longer, never shorter."""
    steps = _row_steps(p)
    if not steps:
        return
    out, out_row = len(steps), p[5]
    fwd, bwd = safe_deltas(steps)
    if (forward and fwd >= (1 << 61)) or (not forward and bwd <= -(1 << 61)):
        return
    d = fwd - slack if forward else bwd + slack
    chunks = row_chunks(steps, d, "forward" if forward else "backward", multiple)
    assert all(n % multiple == 0 or n < multiple for _, n in chunks)
    rows = [r for first, n in chunks for r in range(first, first + n)]
    assert sorted(rows) == list(range(out))
    firsts = [c[0] for c in chunks]
    assert firsts == sorted(firsts, reverse=not forward)
    for j, (first, n) in enumerate(chunks):
        written = _bytes(d + first * out_row, d + (first + n) * out_row)
        for f2, n2 in chunks[j:]:
            for r in range(f2, f2 + n2):
                assert not written & _bytes(steps[r][0], steps[r][1])
    if multiple == 1:
        tight = row_chunks(steps, fwd if forward else bwd, "forward" if forward else "backward")
        assert len(chunks) <= len(tight)


@settings(max_examples=200, deadline=None)
@given(axis_st)
def test_safe_deltas_are_the_tightest_safe_offsets(p: tuple[int, ...]) -> None:
    steps = _row_steps(p)
    if not steps:
        return
    fwd, bwd = safe_deltas(steps)
    assert _safe_forward(steps, fwd) and not _safe_forward(steps, fwd + 1)
    assert _safe_forward(steps, fwd - 37)
    assert _safe_backward(steps, bwd) and not _safe_backward(steps, bwd - 1)
    assert _safe_backward(steps, bwd + 29)


@settings(max_examples=200, deadline=None)
@given(axis_st, st.integers(0, 11), st.integers(1, 6))
def test_axis_span_is_the_union_of_windows(p: tuple[int, ...], a: int, n: int) -> None:
    size, kernel, stride, pad, _, _ = p
    pad = min(pad, kernel - 1)  # as TFLM's SAME padding and every folded PAD
    out = (size + 2 * pad - kernel) // stride + 1
    if out < 1 or a >= out:
        return
    b = min(out, a + n)
    ax = Axis(size, out, kernel, stride, pad)
    taps = {r * stride - pad + k for r in range(a, b) for k in range(kernel)}
    inside = sorted(t for t in taps if 0 <= t < size)
    assert inside  # every window reaches the input
    assert ax.span(a, b) == (inside[0], inside[-1] + 1)


# ----- models built here -----

def _chain(*, dw_stride: int = 1, dilation: int = 1, pad_op: bool = True,
           pool: str | None = None, seed: int = 0, c: int = 8, kernel: int = 3,
           width: int = 9, act: str = "RELU6", dw_scale: float = 0.06) -> bytes:
    """input -> 1x1 conv (ReLU) -> [PAD] -> depthwise KxK (``act``, output scale
    ``dw_scale``) -> [pool] -> 1x1 conv; c channels in the middle, 11 x ``width``."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.tensor((1, 11, width, 3), "int8", scale=0.05, zero_point=-3)
    w1 = b.const(random_int8(rng, (c, 1, 1, 3), -127, 127), scale=[0.01] * c, axis=0)
    y1 = b.tensor((1, 11, width, c), "int8", scale=0.04, zero_point=-128)
    b.op("CONV_2D", [x, w1, -1], [y1], ConvOptions("VALID", 1, 1, activation="RELU"))
    src, h, w = y1, 11, width
    padding = "SAME"
    if pad_op:
        pads = b.const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
        p = b.tensor((1, 13, width + 2, c), "int8", scale=0.04, zero_point=-128)
        b.op("PAD", [y1, pads], [p])
        src, h, w, padding = p, 13, width + 2, "VALID"
    eff = (kernel - 1) * dilation + 1
    if padding == "SAME":
        oh, ow = -(-h // dw_stride), -(-w // dw_stride)
    else:
        oh, ow = (h - eff) // dw_stride + 1, (w - eff) // dw_stride + 1
    wd = b.const(random_int8(rng, (1, kernel, kernel, c), -127, 127), scale=list(rng.uniform(
        0.005, 0.02, c)), axis=3)
    bd = b.const(rng.integers(-500, 500, c).astype(np.int32), scale=[1e-4] * c, axis=0)
    y2 = b.tensor((1, oh, ow, c), "int8", scale=dw_scale, zero_point=5)
    b.op("DEPTHWISE_CONV_2D", [src, wd, bd], [y2],
         ConvOptions(padding, dw_stride, dw_stride, dilation, dilation, act, 1))
    last = y2
    if pool is not None:
        pads2 = b.const(np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
        p2 = b.tensor((1, oh + 2, ow + 2, c), "int8", scale=dw_scale, zero_point=5)
        b.op("PAD", [y2, pads2], [p2])
        y3 = b.tensor((1, oh, ow, c), "int8", scale=dw_scale, zero_point=5)
        b.op(pool, [p2], [y3], PoolOptions("VALID", 1, 1, 3, 3))
        last = y3
    w4 = b.const(random_int8(rng, (4, 1, 1, c), -127, 127), scale=[0.01] * 4, axis=0)
    y4 = b.tensor((1, oh, ow, 4), "int8", scale=0.1, zero_point=0)
    b.op("CONV_2D", [last, w4, -1], [y4], ConvOptions("VALID", 1, 1))
    return b.build([x], [y4])


@pytest.mark.parametrize("kw", [
    {}, {"dw_stride": 2}, {"dilation": 2}, {"pad_op": False}, {"pool": "MAX_POOL_2D"},
    {"pool": "AVERAGE_POOL_2D", "dw_stride": 2},
], ids=["s1", "s2", "dilation2", "same", "pad-maxpool", "pad-avgpool"])
def test_folded_pads_and_inplace_depthwise_bit_exact(kw: dict[str, object]) -> None:
    data = _chain(**kw)  # type: ignore[arg-type]
    pm = bit_exact(data, FORCED, seeds=(0, 1))
    plan = pm.plan
    kinds = {e.kind for e in plan.inplace_ops}
    assert "depthwise_channel" in kinds
    pads = [f for f in plan.fusions if f.kind == "pad"]
    if kw.get("pad_op", True):
        assert pads  # the depthwise padding at least
    if kw.get("pool") == "MAX_POOL_2D":
        assert len(pads) == 2  # after a RELU6 the zero-point pad never wins the max
    if kw.get("pool") == "AVERAGE_POOL_2D":
        assert len(pads) == 1  # averaging counts the pad: never folded
    dw = next(e.op for e in plan.inplace_ops if e.kind == "depthwise_channel")
    op = pm.graph.op_by_index[dw]
    out, src = plan.buffer_of(op.outputs[0]), plan.buffer_of(op.inputs[0])
    assert out.offset == src.offset and out.alias_of == (src.alias_of or src.tensor)
    assert any(s.op == dw for s in plan.scratch)


@pytest.mark.qemu
@needs_qemu
@pytest.mark.parametrize("kw", [
    {}, {"dw_stride": 2}, {"dilation": 2}, {"pad_op": False, "c": 6},
    {"c": 3, "dw_stride": 2}, {"c": 12, "kernel": 5}, {"c": 4, "kernel": 7},
    {"act": "NONE"}, {"pad_op": False, "dw_scale": 0.0015},
    {"pad_op": False, "dw_scale": 0.001}, {"width": 63}, {"width": 64},
    {"width": 70, "dw_stride": 2, "pad_op": False},
], ids=["s1", "s2", "dilation2", "same-c6", "c3", "c12-5x5", "c4-7x7", "plane-full-range",
        "plane-shift-1", "plane-shift-0", "plane-one-strip", "wider-than-a-strip", "wide-s2"])
def test_inplace_depthwise_bit_exact_on_cortex_m7(kw: dict[str, object]) -> None:
    """The SIMD groups of 4 channels (DSP), the scalar tail (C % 4) and windows too large
    for the grouped path, as Cortex-M7 firmware against TFLM; 3x3 undilated groups
    through the plane path of internal/dw_plane.h: every input line of the group
    converted before any output is stored (the default 9 columns), or runs of output
    rows through the scratch ring (activation range all of int8 or not; shifts -1 and
    -2; shift 0 in some channels, outside the plane path's form, which sends their
    groups to the group path; an output row of exactly one strip of four planes, 63
    columns); rows wider than one strip through the group path (64 columns; 35 at
    stride 2)."""
    data = _chain(**kw)  # type: ignore[arg-type]
    pm = bit_exact(data, FORCED, seeds=(0, 1), target="qemu-m7")
    dw = next(e.op for e in pm.plan.inplace_ops if e.kind == "depthwise_channel")
    op = pm.graph.op_by_index[dw]
    scratch = next(s for s in pm.plan.scratch if s.op == dw)
    assert scratch.size == depthwise_scratch(pm.graph, op)
    y = pm.graph.tensors[op.outputs[0]]
    if kw.get("kernel", 3) == 3:  # a ring of a few rows, not a whole output channel
        assert scratch.size < y.shape[1] * y.shape[2] * min(y.shape[3], 4)


def test_pad_folding_keeps_shapes_and_skips_graph_outputs() -> None:
    g = load_model_bytes(_chain())
    folded, fusions = fold_pads(g)
    assert len(fusions) == 1 and len(folded.ops) == len(g.ops) - 1
    dw = next(op for op in folded.ops if op.opcode == "DEPTHWISE_CONV_2D")
    assert isinstance(dw.options, ConvOptions) and dw.options.explicit_padding == (1, 1, 1, 1)
    sp = spatial_of(folded, dw)
    assert sp is not None and (sp.h.out, sp.w.out) == folded.tensors[dw.outputs[0]].shape[1:3]


def test_row_streaming_overlaps_in_both_orders_bit_exact() -> None:
    """Forced row streaming on a chain: the output overlaps the dying input."""
    data = _chain(pad_op=False)
    plan = bit_exact(data, PlanOptions(inplace_ops="force", tiling="off")).plan
    rows = [e for e in plan.inplace_ops if e.kind == "rows"]
    assert rows
    used = [o for o in plan.overlaps if o.mode != "disjoint"]
    for o in used:
        delta = plan.buffer_of(o.dst).offset - plan.buffer_of(o.src).offset
        assert (o.mode == "forward" and o.forward_max is not None and delta <= o.forward_max) \
            or (o.mode == "backward" and o.backward_min is not None
                and delta >= o.backward_min)


def _concat_model(seed: int = 0) -> bytes:
    """Two conv branches and a max pool concatenated along channels, then a 1x1 conv."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.tensor((1, 8, 7, 4), "int8", scale=0.05, zero_point=2)
    outs = []
    for oc in (6, 5):
        w = b.const(random_int8(rng, (oc, 3, 3, 4), -127, 127), scale=[0.01] * oc, axis=0)
        y = b.tensor((1, 8, 7, oc), "int8", scale=0.07, zero_point=-1)
        b.op("CONV_2D", [x, w, -1], [y], ConvOptions("SAME", 1, 1, activation="RELU"))
        outs.append(y)
    pq = b.tensor((1, 8, 7, 4), "int8", scale=0.05, zero_point=2)
    b.op("MAX_POOL_2D", [x], [pq], PoolOptions("SAME", 1, 1, 3, 3))
    # the pool's quantisation differs from the concat's: TFLM needs equal ones
    wq = b.const(random_int8(rng, (3, 1, 1, 4), -127, 127), scale=[0.01] * 3, axis=0)
    y3 = b.tensor((1, 8, 7, 3), "int8", scale=0.07, zero_point=-1)
    b.op("CONV_2D", [pq, wq, -1], [y3], ConvOptions("VALID", 1, 1))
    cat = b.tensor((1, 8, 7, 14), "int8", scale=0.07, zero_point=-1)
    b.op("CONCATENATION", [outs[0], y3, outs[1]], [cat], ConcatOptions(3))
    w5 = b.const(random_int8(rng, (4, 1, 1, 14), -127, 127), scale=[0.01] * 4, axis=0)
    y5 = b.tensor((1, 8, 7, 4), "int8", scale=0.1, zero_point=0)
    b.op("CONV_2D", [cat, w5, -1], [y5], ConvOptions("VALID", 1, 1))
    return b.build([x], [y5])


def test_concat_inputs_written_into_their_slices() -> None:
    data = _concat_model()
    plan = bit_exact(data, FORCED, seeds=(0, 1)).plan
    graph = load_model_bytes(data)
    cat = next(op for op in graph.ops if op.opcode == "CONCATENATION")
    slices = {e.op for e in plan.inplace_ops if e.kind == "concat_slice"}
    assert len(slices) == 3
    assert any(e.op == cat.index and e.kind == "concat_views" for e in plan.inplace_ops)
    out = plan.buffer_of(cat.outputs[0])
    offset = 0
    for t in cat.inputs:  # each input is a view at its channel offset
        e = plan.buffer_of(t)
        assert e.alias_of == cat.outputs[0] and e.offset == out.offset + offset
        offset += graph.tensors[t].shape[3]


# ----- every shared model, forced -----

def _params() -> list[object]:
    return [pytest.param(rel, marks=[pytest.mark.slow] if rel in SLOW else [],
                         id=rel.split("/")[-1].removesuffix(".tflite")) for rel in ALL_MODELS]


@pytest.mark.parametrize("rel", _params())
def test_shared_model_bit_exact_with_inplace_ops_forced(rel: str) -> None:
    data = model_path(rel).read_bytes()
    verify_plan(bit_exact(data, FORCED).plan)


# ----- the in-place depthwise kernel's scratch rule -----

def test_inplace_depthwise_scratch_rule_matches_the_kernel(tmp_path: Path) -> None:
    """ring_rows() (the planner's scratch) equals the kernel header's rule on random
    geometries, and is never larger than the whole output."""
    from nnopt.firmware.toolchain import BuildSpec, build, run

    rng = np.random.default_rng(7)
    geoms = []
    for _ in range(300):
        k = int(rng.integers(1, 6))
        s = int(rng.integers(1, 4))
        h, w = int(rng.integers(k, 40)), int(rng.integers(k, 40))
        pad = int(rng.integers(0, k))
        oh = (h + 2 * pad - k) // s + 1
        ow = (w + 2 * pad - k) // s + 1
        if oh * ow > h * w or oh < 1 or ow < 1:
            continue
        geoms.append((h, w, int(rng.integers(1, 70)), oh, ow, k, s, pad))
    rows = ",\n".join("{" + ", ".join(map(str, g)) + "}" for g in geoms)
    src = tmp_path / "rule.c"
    src.write_text(f"""
#include <stdio.h>
#include "nnrt/kernels/inplace.h"
static const int G[][8] = {{
{rows}
}};
int main(void)
{{
    for (unsigned i = 0; i < sizeof(G) / sizeof(G[0]); ++i) {{
        nnrt_conv_geom_t g = {{0}};
        g.batches = 1; g.input_h = G[i][0]; g.input_w = G[i][1]; g.input_c = G[i][2];
        g.output_h = G[i][3]; g.output_w = G[i][4]; g.output_c = G[i][2];
        g.filter_h = G[i][5]; g.filter_w = G[i][5]; g.filter_c = 1;
        g.stride_h = G[i][6]; g.stride_w = G[i][6]; g.dilation_h = 1; g.dilation_w = 1;
        g.pad_top = G[i][7]; g.pad_left = G[i][7];
        printf("%u\\n", (unsigned)nnrt_depthwise_conv2d_inplace_s8_get_buffer_size(&g));
    }}
    return 0;
}}
""")
    res = run(build(BuildSpec(target="host", sources=(src,))), "host", [])
    got = [int(v) for v in res.stdout.split()]
    want = [ring_rows(w, oh, ow, s, pad) * ow * min(c, DEPTHWISE_INPLACE_GROUP)
            for (_h, w, c, oh, ow, _k, s, pad) in geoms]
    assert got == want
    assert all(n <= oh * ow * min(c, 4) for n, (_h, _w, c, oh, ow, _k, _s, _p)
               in zip(got, geoms, strict=True))
    # a few rows, not the whole output, wherever the output has more than a few rows
    assert all(ring_rows(w, oh, ow, s, pad) <= 3 for (_h, w, _c, oh, ow, k, s, pad)
               in geoms if k <= 3 and oh >= 8)


@pytest.mark.qemu
@needs_qemu
@pytest.mark.parametrize(("rel", "spec"), [
    ("mlperf_tiny/kws_ref_model.tflite", "auto"), ("mlperf_tiny/kws_ref_model.tflite", "off"),
    ("mlperf_tiny/pretrainedResnet_quant.tflite", "auto")],
    ids=["kws", "kws-generic", "resnet"])
def test_row_bands_bit_exact_on_cortex_m7(rel: str, spec: str, tmp_path: Path) -> None:
    """The default in-place plan as Cortex-M7 firmware: row-by-row ops run in bands of
    several rows per call where the planned offsets leave room, pointwise convs in runs
    of an even number of pixels, through the op's specialised matrix core or (--specialize
    off) the generic kernels; bit-exact with TFLM."""
    data = model_path(rel).read_bytes()
    pm = bit_exact(data, PlanOptions(inplace_ops="auto", specialize=spec), target="qemu-m7")
    fewer_calls = pixel_runs = 0
    for e in pm.plan.inplace_ops:
        op = pm.graph.op_by_index[e.op]
        if e.kind != "rows" or op.opcode == "CONCATENATION":
            continue
        bands = pm.facts.bands[e.op]  # recorded by the planner, read by codegen
        assert bands is not None
        y = pm.graph.tensors[op.outputs[0]]
        if bands.pixels:  # pointwise: runs of pixels, in pairs but at most one
            pixel_runs += 1
            assert sum(n for _, n in bands.runs) == y.shape[1] * y.shape[2]
            assert sum(n % 2 for _, n in bands.runs) <= 1
        else:
            assert sum(n for _, n in bands.runs) == y.shape[1]
            fewer_calls += len(bands.runs) < y.shape[1]
    code = generate(pm, tmp_path).c_file.read_text()
    assert ("nnrt_spec_conv_gemm_s8(&p," in code) == (spec == "auto")
    if rel.startswith("mlperf_tiny/kws"):
        assert pixel_runs == 4  # its four 1x1 convs
    else:
        assert fewer_calls  # resnet: 3x3 convs with room for bands
