"""CONV_2D and DEPTHWISE_CONV_2D -> ``nnrt_conv2d_*`` / ``nnrt_depthwise_conv2d_*``.

Supported (bit-exact with TFLM's reference kernels, see ``nnrt/kernels/conv.h``):

- int8 activations, int8 symmetric weights quantised per channel (conv: axis 0,
  depthwise: axis 3) or per tensor, optional int32 bias;
- float32 activations, weights and optional bias;
- any stride and dilation, SAME/VALID padding, fused NONE/RELU/RELU6/RELU_N1_TO_1,
  grouped convolution (filter depth dividing the input depth), depth multiplier >= 1;
- a max pool folded into the output by ``passes.fuse`` (``ConvOptions.fused_max_pool``):
  the op's output tensor is then the pooled tensor.

- int16 activations with int8 weights (16x8 quantisation, ``nnrt_conv2d_s16`` /
  ``nnrt_depthwise_conv2d_s16``): input and output zero points 0, symmetric weights per
  channel or per tensor, an int64 bias (optional for CONV_2D; TFLM's 16x8 depthwise
  kernel reads one unconditionally, so a depthwise op must have it), requantisation
  shifts <= 7 (TFLM's 64-bit arithmetic), no fused max pool; any stride, dilation,
  padding, group count and depth multiplier. The installed tflite-micro runs a CONV_2D
  with an int32 bias in 16x8 with a 32-bit accumulator whose rounding nnrt does not
  reproduce: refused by name, as an int32 bias on a 16x8 depthwise conv (TFLM reads it
  as int64).

Everything else is refused by :meth:`ConvLowering.check` with an :class:`UnsupportedError` that
names the op, the tensor and what is supported: uint8, hybrid float-activation/int8-weight
models, int4 weights, asymmetric weights, TANH or SIGN_BIT fused activations.

Variant selection (:func:`nnopt.lowering.conv_variant.choose_variant`, build time):
one-group int8 convolutions
run ``nnrt_conv2d_im2col_s8`` (scratch from :meth:`ConvLowering.scratch_bytes`, the
rule of its ``*_get_buffer_size()``: 16 bytes per 4 values of a pixel's input column,
plus an int8 copy of one patch except for a 1x1 filter without padding, whose input
pixels are read in place; ``nnrt_conv2d_1x1_s8`` computes the same with the same
scratch and stays in the API, but is not emitted, so that a firmware links one entry),
3x3 depthwise ones without a fused pool ``nnrt_depthwise_conv2d_opt_s8``; other
depthwise filters, grouped ones and fused pools the generic entries. A firmware links
only the kernels its ops name. Where the planner wants no scratch (``scratch_free``,
memory first) a one-group conv runs ``nnrt_conv2d_opt_s8``, which keeps its columns in
its own not-yet-written output.

The activation-range and padding arithmetic is TFLM's (:mod:`nnopt.arith`); the
weight requantisation here (:func:`weight_requant`) is shared with ``lowering.fc``, the
per-tensor check is :func:`.common.per_tensor_quant`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..arith import (
    FLT_MAX,
    INT8_MAX,
    INT8_MIN,
    activation_range_float,
    activation_range_int8,
)
from ..cdefs import C_TYPE, SUFFIX_DTYPE
from ..errors import PlanError, UnsupportedError
from ..ir import ConvOptions, Graph, Op, Tensor
from . import gemm_pairs, specialize
from .base import EmitContext, LoweringBase
from .call import (
    NULL,
    AddressOf,
    Arg,
    Body,
    Call,
    ConvGemmSpec,
    Dec,
    Grouped,
    KernelCall,
    KernelCheck,
    Params,
    Raw,
    ScratchArg,
    SpecDecl,
    TensorArg,
    lit,
)
from .common import per_tensor_quant
from .conv_checks import _SUPPORTED_HINT_16X8, refuse_dtypes
from .conv_geometry import _bias, _ConvGeom, _geometry, _is_depthwise, _kind
from .conv_requant import _records, _Requant, _requant, _requant16, weight_requant
from .conv_variant import Variant, _op_variant, specialized_ops
from .specialize import SPECIALIZABLE


def _conv_params(ctx: EmitContext, kind: str, geom: Any, depthwise: bool, records: bool,
                 pool: Any, layout: str | None = None) -> tuple[Params, _Requant | None]:
    """The parameter struct of the op's kernel call, the one builder of both the op's
    own body (:meth:`ConvLowering.emit`) and its call on sub-views
    (:meth:`ConvLowering.window_call`), so that a parameter changes in one place; and
    for an int8 conv its requantisation (the constants the struct points at)."""
    graph, op = ctx.graph, ctx.op
    assert isinstance(op.options, ConvOptions)
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    y = graph.tensors[op.outputs[0]]
    if kind == "s16":
        return Params("nnrt_conv_s16_params_t",
                      {"geom": geom, **_requant16(ctx, x, w, y, depthwise)}), None
    if kind == "s8":
        q = _requant(ctx, x, w, y, depthwise, records, layout)
        return Params("nnrt_conv_s8_params_t", {
            "geom": geom, "input_offset": -q.z_in, "output_offset": q.z_out,
            "act_min": q.lo, "act_max": q.hi, "per_channel": 1 if q.per_channel else 0,
            "multiplier": Raw(q.mult), "shift": Raw(q.shift), "pool": pool}), q
    lo_f, hi_f = activation_range_float(op.options.activation)
    return Params("nnrt_conv_f32_params_t", {
        "geom": geom, "act_min": Dec(lo_f), "act_max": Dec(hi_f), "pool": pool}), None


class ConvLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/conv.h",)
    checks: Sequence[KernelCheck] = (
        KernelCheck(("nnrt_conv2d_s8", "nnrt_conv2d_opt_s8", "nnrt_conv2d_1x1_s8",
                     "nnrt_conv2d_im2col_s8"), "nnrt_conv_s8_check", "nnrt/kernels/conv.h",
                    extra=(lit(0),)),
        KernelCheck(("nnrt_depthwise_conv2d_s8", "nnrt_depthwise_conv2d_opt_s8"),
                    "nnrt_conv_s8_check", "nnrt/kernels/conv.h", extra=(lit(1),)),
        KernelCheck(("nnrt_conv2d_s16",), "nnrt_conv_s16_check", "nnrt/kernels/conv.h",
                    extra=(lit(0),)),
        KernelCheck(("nnrt_depthwise_conv2d_s16",), "nnrt_conv_s16_check",
                    "nnrt/kernels/conv.h", extra=(lit(1),)))
    dtypes: Sequence[str] = ("int8", "int16", "float32")  # int16: 16x8, int8 weights

    def check(self, graph: Graph, op: Op) -> None:
        g = _geometry(graph, op)
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        bias = _bias(graph, op, g.output_c)
        kind = refuse_dtypes(op, graph, x, w, y, bias)
        if kind == "s16" and g.pool is not None:
            raise UnsupportedError(
                f"op {op.index} ({op.opcode}): a max pool folded into a 16x8 convolution",
                hint=_SUPPORTED_HINT_16X8)
        if kind != "f32":
            _, _, shifts = weight_requant(op, x, w, y, g.output_c, 3 if g.depthwise else 0)
            if kind == "s16" and max(shifts) > 7:
                raise UnsupportedError(
                    f"op {op.index} ({op.opcode}): a requantisation shift of {max(shifts)} "
                    "(TFLM's 16x8 arithmetic takes at most 7)", hint=_SUPPORTED_HINT_16X8)

    def variant(self, graph: Graph, op: Op) -> Variant:
        g = _geometry(graph, op)
        return _op_variant(g, op, _kind(graph, op))

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return self.variant(graph, op).scratch

    def window_call(self, ctx: EmitContext, geom: dict[str, Any],
                    variant: Variant | None, records: bool = False) -> KernelCall:
        """The call on whole tensors with the geometry ``geom`` (padding as given) and
        the kernel ``variant`` (None: the generic entry): callers running the op on
        sub-views change its geometry. The parameters are the ones :meth:`emit`
        writes; records: the caller runs the op's specialised core where it has one
        (``codegen.views.spec_core``), so an op whose core takes channel records
        (:meth:`records`) gets parameters without multipliers and shifts, and no bias
        argument."""
        graph, op = ctx.graph, ctx.op
        o = op.options
        assert isinstance(o, ConvOptions)
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        bias = graph.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
        dw = _is_depthwise(op)
        kind = _kind(graph, op)
        fn = f"nnrt_{'depthwise_conv2d' if dw else 'conv2d'}_{kind}"
        scratch: tuple[Arg, ...] = ()
        if variant is not None:
            fn = variant.function
            if variant.scratch:
                scratch = (ScratchArg(),)
        # channel records: the sub-views run the specialised core (codegen.views), which
        # reads neither the bias nor these params' multipliers and shifts
        rec = (records and kind == "s8" and variant is not None
               and variant.function in SPECIALIZABLE)
        # weights in the pair-row layout: the specialised core alone reads them (the
        # generic call never runs with records: codegen.views.check_spec). An op whose
        # tensors give no geometry of their own (a folded PAD's: its input is the
        # unpadded map) is not specialised, and is asked nothing more
        g_op = _geometry(graph, op) if rec and op.index in specialized_ops(
            graph, ctx.specialize) else None
        laid = self.pair_rows(ctx, g_op) if g_op is not None else None
        pairs = laid is not None
        if (pairs and g_op is not None and not scratch
                and not gemm_pairs.tail_fits(g_op.filter_h, g_op.filter_w, g_op.input_c)):
            # pair_rows() took the layout on the plan's scratch: every call passes it
            raise PlanError(f"op {op.index}: a sub-view call without the scratch its "
                            "pair-row weights need (the per-pixel loops read row-major "
                            "weights)")
        rec = pairs or (rec and self.records(ctx))
        w_arg = Raw("NULL") if pairs else ctx.ptr(w.index)
        b_arg: Arg = ctx.ptr(bias.index) if bias is not None and not rec else NULL
        args = (AddressOf("params"), TensorArg(x.index), w_arg, b_arg, TensorArg(y.index),
                *scratch)
        elem = C_TYPE[SUFFIX_DTYPE[kind]]
        # the records as the layout reads them (the pair rows: mixed start values)
        params, _ = _conv_params(ctx, kind, geom, dw, rec, Raw("NULL"),
                                 layout=None if laid is None else laid[1])
        return KernelCall(params, Call(fn, args), elem)

    def spec_core(self, ctx: EmitContext) -> specialize.SpecNames | None:
        """Declare the op's specialised matrix core (``ctx.decl``) where
        ``--specialize`` gives the op one, for callers that run it on sub-views (bands,
        patches, folded padding); its symbols, or None. Raises UnsupportedError for a
        geometry this lowering does not take whole."""
        declared: list[SpecDecl] = []
        self.emit(replace(ctx, decl=declared.append))
        if not declared or ctx.decl is None:
            return None
        for block in declared:
            ctx.decl(block)
        return specialize.SpecNames(specialize.core_symbol(ctx.op.index),
                                    specialize.pair_symbol(ctx.model, ctx.op.index),
                                    specialize.spec_symbol(ctx.model, ctx.op.index))

    def records(self, ctx: EmitContext) -> bool:
        """Whether the int8 conv ctx.op gets a specialised matrix core that takes
        channel records (where its channels have them: :func:`_requant`): the mode
        specialises it, its weights are an array of the model source, ``ctx.decl``
        takes declarations. One rule for the op's own body and its sub-views."""
        graph, op = ctx.graph, ctx.op
        return (ctx.decl is not None and op.index in specialized_ops(graph, ctx.specialize)
                and ctx.weight_array(op.inputs[1]) is not None
                and _records(graph, op) is not None)

    def scratch_always(self, ctx: EmitContext, g: _ConvGeom) -> bool:
        """Whether every call of the int8 conv ctx.op passes its kernel a scratch
        buffer: its variant takes one (not the planner's scratch-free choice) and the
        plan gives the op one (:attr:`EmitContext.has_scratch`). Its calls on sub-views
        (bands, tiles, folded padding) take the variant of the same query
        (``codegen.views.kernel_call``) and the op's scratch pointer: :meth:`window_call`
        checks it."""
        return ctx.has_scratch and _op_variant(g, ctx.op, "s8").scratch > 0

    def pair_rows(self, ctx: EmitContext, g: _ConvGeom) -> tuple[str, str] | None:
        """The array of the int8 conv ctx.op's weights in a layout of
        :mod:`.gemm_pairs` and the layout's name, or None: written where the target's
        core asks for the layout (an unknown core: not), the op gets a specialised core
        with channel records, its geometry and weights take the layout (columns beyond
        the scratch-free path's stack buffer: only where :meth:`scratch_always`) and the
        op alone reads them (nothing has named the plain array yet). The int16 layout
        (:func:`.gemm_pairs.int16_rows`) where the core asks for it and the board's flash
        holds it (``fc.fit_flash`` left it in the layouts), else the pair rows."""
        graph, op = ctx.graph, ctx.op
        layouts = ctx.weight_layouts
        # a whole block of the assembly at least (fewer channels: the pair rows)
        wide = (layouts is not None and gemm_pairs.INT16_LAYOUT in layouts
                and g.output_c >= gemm_pairs.BLOCK)
        if (layouts is None or not (wide or gemm_pairs.GEMM_PAIRS_LAYOUT in layouts)
                or ctx.decl is None or g.depthwise
                or not gemm_pairs.fits(g.filter_h, g.filter_w, g.input_c, g.output_c,
                                       self.scratch_always(ctx, g))
                or op.index not in specialized_ops(graph, ctx.specialize)):
            return None
        w = graph.tensors[op.inputs[1]]
        rec = _records(graph, op)
        if rec is None or not w.is_constant:
            return None
        rows = w.array().reshape(g.output_c, -1)
        depth = gemm_pairs.padded_depth(g.filter_h, g.filter_w, g.input_c)
        if wide:
            widened = gemm_pairs.int16_rows(gemm_pairs.padded_rows(rows, depth))
            ident = (None if widened is None else
                     ctx.laid_out_weight(w.index, gemm_pairs.INT16_LAYOUT, widened))
            return None if ident is None else (ident, gemm_pairs.INT16_LAYOUT)
        z_in = per_tensor_quant(op, graph.tensors[op.inputs[0]])[1]
        arranged = gemm_pairs.pair_rows(gemm_pairs.padded_rows(rows, depth))
        if arranged is None or not gemm_pairs.exact(rows, rec, z_in):
            return None
        ident = ctx.laid_out_weight(w.index, gemm_pairs.GEMM_PAIRS_LAYOUT, arranged)
        return None if ident is None else (ident, gemm_pairs.GEMM_PAIRS_LAYOUT)

    def _declare_spec(self, ctx: EmitContext, g: _ConvGeom, params: Params, bias: Tensor | None,
                      q: _Requant, pairs: tuple[str, str] | None = None) -> bool:
        """Declare the specialised function of an int8 conv (True) where the mode, the
        constant weights and ``ctx.decl`` allow it; pairs: its weights' array in a layout
        of :mod:`.gemm_pairs` and the layout's name (:meth:`pair_rows`)."""
        graph, op = ctx.graph, ctx.op
        w = graph.tensors[op.inputs[1]]
        w_ident = pairs[0] if pairs is not None else ctx.weight_array(w.index)
        b_ident = (ctx.weight_array(bias.index) if bias is not None and q.records is None
                   else None)
        if (ctx.decl is None or w_ident is None
                or (bias is not None and b_ident is None and q.records is None)
                or op.index not in specialized_ops(graph, ctx.specialize)):
            return False
        ctx.decl(ConvGemmSpec(
            op_index=op.index, model=ctx.model, params=params,
            params_name=f"op{op.index}_params",
            # a layout's depth (pair rows, int16): rounded up to whole chunks (zero
            # weights past the filter's), the depth of the columns the core reads
            # (conv_gemm_body.h)
            depth=(gemm_pairs.padded_depth(g.filter_h, g.filter_w, g.input_c) if pairs
                   else g.filter_h * g.filter_w * g.input_c), channels=g.output_c,
            filter_ident=w_ident, bias_ident=b_ident, mult_ident=q.mult,
            shift_ident=q.shift, per_channel=q.per_channel, output_offset=q.z_out,
            act_min=q.lo, act_max=q.hi, shifts=q.shifts, records_ident=q.records,
            bias_off=q.bias_off,
            pair_rows=pairs is not None and pairs[1] == gemm_pairs.GEMM_PAIRS_LAYOUT,
            int16_rows=pairs is not None and pairs[1] == gemm_pairs.INT16_LAYOUT))
        return True

    def emit(self, ctx: EmitContext) -> Body:
        graph, op = ctx.graph, ctx.op
        g = _geometry(graph, op)
        assert isinstance(op.options, ConvOptions)
        x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
        y = graph.tensors[op.outputs[0]]
        bias = _bias(graph, op, g.output_c)
        kind = refuse_dtypes(op, graph, x, w, y, bias)
        int8 = kind == "s8"
        rows = (("batches", "input_h", "input_w", "input_c"),
                ("output_h", "output_w", "output_c"), ("filter_h", "filter_w", "filter_c"),
                ("stride_h", "stride_w", "dilation_h", "dilation_w"), ("pad_top", "pad_left"))
        geom = Grouped({k: getattr(g, k) for row in rows for k in row}, rows)
        body: Body = []
        pool: Any = Raw("NULL")
        if g.pool is not None:
            p = g.pool
            if int8:
                s_out, z_out = per_tensor_quant(op, y)
                plo, phi = activation_range_int8(p.activation, s_out, z_out)
                flo, fhi = -FLT_MAX, FLT_MAX
            else:
                plo, phi = INT8_MIN, INT8_MAX
                flo, fhi = activation_range_float(p.activation)
            body.append(Params("nnrt_conv_pool_t", {
                "output_h": p.output_h, "output_w": p.output_w, "filter_h": p.filter_h,
                "filter_w": p.filter_w, "stride_h": p.stride_h, "stride_w": p.stride_w,
                "pad_top": p.pad_top, "pad_left": p.pad_left, "act_min": plo,
                "act_max": phi, "act_min_f": Dec(flo), "act_max_f": Dec(fhi)}, "pool"))
            pool = AddressOf("pool")
        variant = _op_variant(g, op, kind)
        pairs = self.pair_rows(ctx, g) if int8 else None
        if pairs is not None:  # the plain weights are named nowhere (their array is this)
            params, q = _conv_params(ctx, kind, geom, g.depthwise, True, pool,
                                     layout=pairs[1])
            assert q is not None and q.records is not None
            declared = self._declare_spec(ctx, g, params, bias, q, pairs)
            assert declared
            return [Call(specialize.spec_symbol(ctx.model, op.index),
                         (TensorArg(x.index), TensorArg(y.index),
                          ScratchArg() if variant.scratch else NULL), wrap=False)]
        rec = int8 and self.records(ctx)
        b_arg: Arg = ctx.ptr(bias.index) if bias is not None and not rec else NULL
        scratch: tuple[Arg, ...] = (ScratchArg(),) if variant.scratch else ()
        args = (ctx.ptr(x.index), ctx.ptr(w.index), b_arg, ctx.ptr(y.index), *scratch)
        if kind == "s16":
            self.check(graph, op)  # no fused pool, shifts within TFLM's 16x8 range
        params, q = _conv_params(ctx, kind, geom, g.depthwise, rec, pool)
        if q is not None and self._declare_spec(ctx, g, params, bias, q):
            return [Call(specialize.spec_symbol(ctx.model, op.index),
                         (TensorArg(x.index), TensorArg(y.index),
                          ScratchArg() if variant.scratch else NULL), wrap=False)]
        return [*body, params, Call(variant.function, (AddressOf("params"), *args), wrap=False)]


CONV = ConvLowering()
