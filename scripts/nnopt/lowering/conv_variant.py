"""Which conv kernel an op runs (build time): :func:`choose_variant` the fastest one of
``nnrt/kernels/conv.h`` that takes the geometry, its scratch rules (:func:`cols_bytes`,
:func:`im2col_bytes`), the scratch-free choice where the planner asks for it
(:func:`_op_variant`), and which ops ``--specialize`` specialises
(:func:`specialized_ops`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import Graph, Op
from . import specialize
from .conv_geometry import _bias, _ConvGeom, _geometry

#: ``NNRT_DW_MAX_TAPS``: the largest KH * KW of ``nnrt_depthwise_conv2d_opt_s8``.
DW_MAX_TAPS = 25

#: ``NNRT_DW_PLANE_MIN_OUTPUTS``: outputs per channel from which the generic depthwise
#: entry runs a filter other than 3x3 (of at most ``DW_MAX_TAPS`` taps) through its
#: plane path; below, the fast entry is as fast and links less.
DW_PLANE_MIN_OUTPUTS = 16


def cols_bytes(depth: int) -> int:
    """``NNRT_GEMM_COLS_BYTES``: int16 columns of two pixels of ``depth`` values (the
    scratch of ``nnrt_conv2d_1x1_s8`` / ``nnrt_conv2d_im2col_s8``)."""
    return 16 * ((depth + 3) // 4)


def im2col_bytes(filter_h: int, filter_w: int, channels: int) -> int:
    """``nnrt_conv2d_im2col_s8_get_buffer_size``: the columns plus an int8 staging copy
    of one patch."""
    depth = filter_h * filter_w * channels
    return cols_bytes(depth) + (depth + 3) // 4 * 4


@dataclass(frozen=True)
class Variant:
    """The nnrt kernel an op runs (chosen at build time) and its scratch bytes."""

    function: str
    scratch: int


def choose_variant(g: _ConvGeom, kind: str) -> Variant:
    """The fastest kernel of ``nnrt/kernels/conv.h`` that takes this geometry and
    ``kind`` (``refuse_dtypes``); a firmware links only the variants its ops name."""
    if kind != "s8":  # float32 and 16x8: one generic kernel each, no scratch
        return Variant(f"nnrt_{'depthwise_conv2d' if g.depthwise else 'conv2d'}_{kind}", 0)
    if g.pool is not None:
        return Variant("nnrt_depthwise_conv2d_s8" if g.depthwise else "nnrt_conv2d_s8", 0)
    if g.depthwise:
        # 3x3 filters: the fast entry (the plane path in assembly on DSP cores); others
        # the generic one where its plane path in C takes them (every filter over
        # DW_MAX_TAPS taps): a firmware whose depthwise ops are all 3x3 links neither
        taps = g.filter_h * g.filter_w
        fast = (g.filter_h == 3 and g.filter_w == 3) or (
            taps <= DW_MAX_TAPS and g.output_h * g.output_w < DW_PLANE_MIN_OUTPUTS)
        return Variant("nnrt_depthwise_conv2d_opt_s8" if fast else "nnrt_depthwise_conv2d_s8", 0)
    if g.filter_c != g.input_c:  # grouped
        return Variant("nnrt_conv2d_s8", 0)
    if g.filter_h == 1 and g.filter_w == 1 and g.pad_top == 0 and g.pad_left == 0:
        # the im2col entry reads a pointwise conv's input pixels in place (no staging,
        # scratch = the columns only): one entry serves both, the 1x1 one is not linked
        return Variant("nnrt_conv2d_im2col_s8", cols_bytes(g.input_c))
    return Variant("nnrt_conv2d_im2col_s8", im2col_bytes(g.filter_h, g.filter_w, g.input_c))


#: Specialising the int8 matrix-core convolution (``--specialize``, measured on
#: Cortex-M7: :mod:`.specialize`).
CONV_SPEC = specialize.SpecCost("nnrt_conv2d_im2col_s8", gain_per_output=10, spec_bytes=850,
                                generic_bytes=2_100)


def specialized_ops(graph: Graph, mode: str) -> frozenset[int]:
    """The convolutions of ``graph`` that code generation specialises under ``mode``
    (``--specialize``): int8 ones that run the matrix core with constant weights, as
    :func:`nnopt.lowering.specialize.choose` rules."""
    candidates: list[specialize.Candidate] = []
    if specialize.check_mode(mode) == "off":
        return frozenset()
    for op in graph.ops:
        if op.opcode != "CONV_2D" or len(op.inputs) < 2:
            continue
        try:
            g = _geometry(graph, op)
            bias = _bias(graph, op, g.output_c)
        except UnsupportedError:
            continue  # run on views (folded padding ...): not emitted by this lowering
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        if (x.dtype != DType.INT8 or not w.is_constant
                or (bias is not None and not bias.is_constant)):
            continue
        if _op_variant(g, op, "s8").function in specialize.SPECIALIZABLE:
            candidates.append(specialize.Candidate(
                op.index, g.batches * g.output_h * g.output_w * g.output_c, CONV_SPEC))
    return specialize.choose(mode, candidates)


def _op_variant(g: _ConvGeom, op: Op, kind: str) -> Variant:
    """choose_variant, unless the planner asked for no scratch at this op (memory
    first): then ``nnrt_conv2d_opt_s8``: the same matrix core with its columns in the
    op's own output (only the last pixels slower). Called directly, not through
    ``nnrt_conv2d_s8``, so that the generic entry (grouped convs, fused pools) is linked
    only by models that have such ops."""
    v = choose_variant(g, kind)
    if v.scratch and getattr(op.options, "scratch_free", False):
        return Variant("nnrt_conv2d_opt_s8", 0)
    return v
