"""Instruction estimate of the below-the-bound plans: what a tiling or a row-by-row op
costs beyond its multiply-accumulates, for the choices in ``passes.below_bound``.

The kernels do not cost a fixed number of instructions per MAC: every call prepares
per-channel constants (the depthwise kernel sign-extends each group's weights and
requantisation; the matrix core its channel pairs), the matrix core takes output pixels
in pairs (an odd pixel per call goes through the slower per-pixel path), depthwise
windows clipped by the padding take a slower path, and a tiled stage adds copies. The
estimate of one kernel call producing an output region (rows x cols pixels) is

- convolution (matrix core): ``MACs * (GEMM_BASE + GEMM_DEPTH / K + (IM2COL_TAP / C_in
  + IM2COL_BYTE) / C_out)`` (K = KH * KW * C_in; the staging term only for a window
  larger than 1x1: vww's RGB 3x3 conv 1.47 instructions per MAC, resnet's 3x3 convs
  0.8-1.3)
  ``+ CALL``, and for an odd pixel count ``MACs per pixel * ODD_PIXEL[1x1 or im2col]``;
- depthwise convolution: ``MACs * DW_MAC + groups * (DW_GROUP + rows * DW_ROW +
  clipped pixels * DW_CLIPPED) + CALL`` (groups: output channels / 4);
- pools: ``output elements * taps * POOL_TAP + CALL``; int8 ADD/SUB/MUL:
  ``elements * BINARY_ELEMENT + CALL``; other element-wise ops and concatenations
  ``elements * ELEMENT + CALL``;
- tile copies (gather / scatter): ``bytes * COPY_BYTE + CALL``; every op call in a
  patch adds ``PATCH_CALL`` (the residual of the measured stages).

Constants: calibrated on QEMU Cortex-M7 (mps2-an500, ``-icount shift=0``) with
``benchmarks/bench_firmware.py --profile MODEL [--inplace-ops ...] [--tiling ...]`` on
person_detect, vww_96_int8, kws_ref_model and pretrainedResnet_quant: the matrix core
by least squares (relative error) over their 42 convolutions as specialised whole-op
calls (``--specialize auto``: bands and patches call the same specialised core;
recalibrated after issue 42's kernels, main 67876ec: the int16 weights in blocks of 3
channels on the M7, the RGB 3x3 columns; the constants of commit 01dfdbb, 1.32 / 23 /
13.5 / 2.13, over-estimated those convolutions 1.88x in total), the
depthwise constants over 60 depthwise ops whole and row by row (commit fc75605; that
kernel is not specialised); e.g. 385 instructions per depthwise channel group and call
(kws row by row: 150 k over 24 extra calls of 16 groups), 1.4 per MAC of an odd pixel
(vww op 26 row by row: 95 k per row of 3 pixels at 65,536 MACs each). Estimates, for
ranking and budgets: whole models within about 10 % of the measured totals; the
ordering of candidate tilings is what the tests check against QEMU.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cdefs import DTYPE_SIZE, DType
from ..ir import ConvOptions, Graph, Op, PoolOptions
from ..ops import known
from .regions import WINDOW, Axis, Spatial, op_macs, spatial_of
from .tiling import Region, Tiling

# ----- calibrated constants (Cortex-M7, instructions) -----
# matrix core (specialised kernels, --specialize auto; least squares over the 42
# convolutions of the four models, whole-op calls, CALL and ODD_PIXEL fixed: each
# within 9.2 %, their total within 0.2 %)
GEMM_BASE = 0.72  # per MAC: the SMLAD loop
GEMM_DEPTH = 10.2  # per output value (output stage, block set-up): / K per MAC
IM2COL_TAP = 5.0  # per pixel and tap staged (im2col): / (C_in * C_out) per MAC
IM2COL_BYTE = 1.59  # per column element staged and converted: / C_out per MAC
ODD_PIXEL = {"1x1": 1.42, "im2col": 1.42}  # per MAC of the pixel the pairs leave over
# depthwise: least squares over 60 measured ops (classic and row by row), within 10 %
DW_MAC = 4.9  # per MAC (SXTAB16 + SMLAxy per channel pair, output stage)
DW_GROUP = 360.0  # per group of 4 channels and call: weights and requantisation set-up
DW_ROW = 170.0  # per group and output row: the interior run's call and the borders
DW_CLIPPED = 137.0  # per group and output pixel whose window the padding clips
BINARY_ELEMENT = 57.0  # int8 ADD/SUB/MUL per element (resnet's ADDs: 935 k / 16,384)
POOL_TAP = 7.0  # pools, per output element and window tap
ELEMENT = 3.0  # per output element of other element-wise ops and copies
COPY_BYTE = 0.6  # per byte of a tile copy (nnrt_copy_2d_x8)
CALL = 300.0  # per kernel call: parameters, geometry, checks
# per op and patch of a tiled stage beyond its call's estimate: the residual of the
# measured stages (vww 5x5: 5.6 k per op call, resnet 3x3: 4.3 k, person 4x3: 3.4 k)
PATCH_CALL = 4500.0
FC_MAC = 1.9  # fully connected, per MAC
INPLACE_DW = 1.03  # in-place depthwise against the whole-op kernel


def _clipped(ax: Axis, a: int, b: int) -> int:
    """Outputs in [a, b) whose window leaves the input (padding taps)."""
    n = 0
    for r in range(a, b):
        lo = r * ax.stride - ax.pad
        if lo < 0 or lo + ax.kernel > ax.size:
            n += 1
    return n


def _conv_kind(graph: Graph, op: Op) -> str:
    w = graph.tensors[op.inputs[1]]
    return "1x1" if w.shape[1] == 1 and w.shape[2] == 1 else "im2col"


def _formula(op: Op) -> str:
    """The cost formula of the op's definition (``OpDef.cost``)."""
    d = known(op)
    return d.cost if d is not None else "element"


def call_cost(graph: Graph, op: Op, sp: Spatial, region: Region) -> float:
    """One kernel call of a spatial op producing ``region`` (y0, y1, x0, x1) of its
    output (the whole output: the classic call)."""
    y0, y1, x0, x1 = region
    rows, cols = y1 - y0, x1 - x0
    pixels = rows * cols
    out = graph.tensors[op.outputs[0]]
    c_out = out.shape[3]
    macs = pixels * sp.macs_per_pixel
    formula = _formula(op)
    if sp.kind == WINDOW and formula == "gemm":
        w = graph.tensors[op.inputs[1]]
        k = w.shape[1] * w.shape[2] * w.shape[3]
        kind = _conv_kind(graph, op)
        staged = (IM2COL_TAP / w.shape[3] + IM2COL_BYTE) / c_out if kind == "im2col" else 0.0
        ipm = GEMM_BASE + GEMM_DEPTH / k + staged
        odd = sp.macs_per_pixel * ODD_PIXEL[kind] if pixels % 2 else 0.0
        return macs * ipm + odd + CALL
    if sp.kind == WINDOW and formula == "depthwise":
        groups = -(-c_out // 4)
        clipped = pixels - (rows - _clipped(sp.h, y0, y1)) * (cols - _clipped(sp.w, x0, x1))
        return (macs * DW_MAC + groups * (DW_GROUP + rows * DW_ROW + clipped * DW_CLIPPED)
                + CALL)
    return pixels * c_out * _per_element(graph, op) + CALL


def _per_element(graph: Graph, op: Op) -> float:
    formula = _formula(op)
    if formula in ("window_taps", "reduce_taps"):
        o = op.options
        taps = (o.filter_h * o.filter_w if isinstance(o, PoolOptions)
                else graph.tensors[op.inputs[0]].num_elements
                // max(graph.tensors[op.outputs[0]].num_elements, 1))
        return POOL_TAP * taps
    if formula == "requant" and graph.tensors[op.outputs[0]].dtype == DType.INT8:
        return BINARY_ELEMENT
    return ELEMENT


def op_cost(graph: Graph, op: Op) -> float:
    """An op run whole by its ordinary kernel."""
    sp = spatial_of(graph, op)
    if sp is not None:
        y = graph.tensors[op.outputs[0]]
        return call_cost(graph, op, sp, (0, y.shape[1], 0, y.shape[2]))
    if _formula(op) == "fc":
        return op_macs(graph, op) * FC_MAC + CALL
    if isinstance(op.options, ConvOptions):  # fused pool: the per-pixel path
        return op_macs(graph, op) * (GEMM_BASE + ODD_PIXEL["im2col"]) + CALL
    n = sum(graph.tensors[t].num_elements for t in op.outputs)
    return n * _per_element(graph, op) + CALL


def model_cost(graph: Graph) -> float:
    """Every op run whole (the classic plan)."""
    return sum(op_cost(graph, op) for op in graph.ops)


def rows_cost(graph: Graph, op: Op) -> float:
    """A spatial op run one output row per call (``rows`` in-place mode)."""
    sp = spatial_of(graph, op)
    if sp is None:
        return op_cost(graph, op)
    y = graph.tensors[op.outputs[0]]
    return sum(call_cost(graph, op, sp, (r, r + 1, 0, y.shape[2])) for r in range(y.shape[1]))


def inplace_depthwise_cost(graph: Graph, op: Op) -> float:
    """A depthwise op run in place (nnrt_depthwise_conv2d_inplace_s8): the whole-op
    estimate plus storing each output row from the scratch ring (measured 0.96 M vs
    0.90 M on person_detect's 24x24x32 3x3 op; faster on small maps)."""
    y = graph.tensors[op.outputs[0]]
    return op_cost(graph, op) * INPLACE_DW + y.num_elements * ELEMENT / 4


def stage_cost(graph: Graph, tiling: Tiling) -> float:
    """The tiled stage: every op once per patch on its region, plus the copies."""
    total = 0.0
    for i in tiling.shape.ops:
        op = graph.op_by_index[i]
        sp = spatial_of(graph, op)
        regions = tiling.regions[op.outputs[0]]
        if sp is None:  # a TRANSPOSE of the input: a strided copy per patch
            total += sum(_area(r) * graph.tensors[op.outputs[0]].shape[3] * COPY_BYTE
                         + CALL for r in regions)
            continue
        total += sum(call_cost(graph, op, sp, r) + PATCH_CALL for r in regions)
    for t, kind in tiling.access.items():
        if kind in ("gather", "scatter"):
            x = graph.tensors[t]
            px = x.shape[3] * DTYPE_SIZE[x.dtype]
            total += sum(_area(r) * px * COPY_BYTE + CALL for r in tiling.regions[t])
    return total


def untiled_cost(graph: Graph, ops: Sequence[int]) -> float:
    return sum(op_cost(graph, graph.op_by_index[i]) for i in ops)


def tiling_overhead(graph: Graph, tiling: Tiling) -> float:
    """Estimated extra instructions of running the stage tiled instead of whole."""
    return stage_cost(graph, tiling) - untiled_cost(graph, tiling.shape.ops)


def _area(r: Region) -> int:
    return max(0, r[1] - r[0]) * max(0, r[3] - r[2])
