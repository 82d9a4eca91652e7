"""Op bodies on sub-views of tensors: what the plan's below-the-bound decisions need.

The ordinary lowerings (``nnopt.lowering``) emit one kernel call over whole tensors.
This module emits, from the Plan, the variants that let buffers overlap (see
``passes.inplace_ops`` and ``passes.tiling``), always calling the kernels the
registered lowering calls, on sub-views (the op's specialised matrix core where
``--specialize`` gives it one: :func:`spec_core`), so kernel speed-ups apply here too:

- window ops with an explicit padding left by PAD folding: one call, the padding in the
  kernel geometry;
- ``rows`` ops: a loop over bands of output rows (increasing or decreasing, as planned),
  each a kernel call on the input rows the band reads (``nnrt_window_rows``) and its
  output rows; a band is as many rows as the planned offsets allow
  (``passes.inplace_ops.row_chunks``, recorded in the plan facts: ``nnopt.planfacts``;
  one row where they are as tight as permitted),
  1x1 stride-1 convs in runs of an even number of pixels; a channel CONCATENATION
  copies one row of every input per call;
- ``depthwise_channel`` ops: ``nnrt_depthwise_conv2d_inplace_s8`` over the shared
  buffer with the planned scratch (a ring of output rows of 4 channels).

:class:`ViewLowerings` answers, per op, the lowering to use instead of the registered
one (or None). The tiled stages are :mod:`.stages` (which uses :func:`kernel_call`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..cdefs import DTYPE_SIZE
from ..errors import NnoptError, PlanError
from ..ir import ConcatOptions, ConvOptions, Graph, Op, PoolOptions
from ..lowering import EmitContext
from ..lowering.call import (
    Body,
    Call,
    Code,
    Expr,
    KernelCall,
    Params,
    Pointers,
    Raw,
    TensorArg,
    render_params,
)
from ..lowering.conv import ConvLowering
from ..lowering.pool import PoolLowering
from ..lowering.specialize import SPECIALIZABLE, SpecNames
from ..ops import known, lowering_for
from ..ops.base import Spatial
from ..plan import Plan
from ..planfacts import PlanFacts


def _geom_fields(graph: Graph, op: Op, sp: Spatial) -> dict[str, Any]:
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if isinstance(op.options, PoolOptions):
        p = op.options
        return {"batches": 1, "input_h": x.shape[1], "input_w": x.shape[2],
                "channels": x.shape[3], "output_h": y.shape[1], "output_w": y.shape[2],
                "filter_h": p.filter_h, "filter_w": p.filter_w, "stride_h": p.stride_h,
                "stride_w": p.stride_w, "pad_top": sp.h.pad, "pad_left": sp.w.pad}
    o = op.options
    assert isinstance(o, ConvOptions)
    w = graph.tensors[op.inputs[1]]
    dw = _depthwise(op)
    return {"batches": 1, "input_h": x.shape[1], "input_w": x.shape[2], "input_c": x.shape[3],
            "output_h": y.shape[1], "output_w": y.shape[2], "output_c": y.shape[3],
            "filter_h": w.shape[1], "filter_w": w.shape[2],
            "filter_c": (y.shape[3] // x.shape[3]) if dw else w.shape[3],
            "stride_h": o.stride_h, "stride_w": o.stride_w, "dilation_h": o.dilation_h,
            "dilation_w": o.dilation_w, "pad_top": sp.h.pad, "pad_left": sp.w.pad}


def kernel_call(ctx: EmitContext, sp: Spatial, facts: PlanFacts,
                spec: bool = False) -> KernelCall:
    """The registered lowering's call of a window op over whole tensors, with the
    geometry of its access pattern (explicit padding included) and the kernel variant
    the plan recorded. spec: the caller runs the op's specialised matrix core where
    :func:`spec_core` gives one (then its parameters may leave the requantisation to
    the core's channel records: :func:`check_spec`)."""
    graph, op = ctx.graph, ctx.op
    geom = _geom_fields(graph, op, sp)
    low = lowering_for(op)
    if isinstance(low, PoolLowering):
        return low.window_call(ctx, geom)
    if not isinstance(low, ConvLowering):
        raise PlanError(f"op {op.index} ({op.opcode}) has no window kernel")
    # The kernel variant the registered lowering picks for the whole op also takes every
    # sub-view of it (same filter, channels and padding kind), with the same scratch,
    # which the planner reserved; folded padding: the variant of the padded geometry.
    query = facts.variant(op)
    return low.window_call(ctx, geom, low.variant(*query) if query is not None else None,
                           records=spec)


def memo_consts(ctx: EmitContext) -> EmitContext:
    """The context with its constant arrays emitted once per name (the registered
    lowering and the view's own code may both ask for an op's multipliers)."""
    seen: dict[str, str] = {}
    emit = ctx.const_array

    def const_array(suffix: str, arr: np.ndarray) -> str:
        if suffix not in seen:
            seen[suffix] = emit(suffix, arr)
        return seen[suffix]

    return replace(ctx, const_array=const_array)


SpecCore = SpecNames


def spec_core(ctx: EmitContext, k: KernelCall) -> SpecCore | None:
    """Declare the op's specialised matrix core (the registered lowering's, so the
    constants are its own) where --specialize gives the op one; else None."""
    low = lowering_for(ctx.op)
    d = known(ctx.op)
    if (ctx.decl is None or k.fn not in SPECIALIZABLE or d is None or d.window != "conv"
            or not isinstance(low, ConvLowering)):
        return None
    try:
        return low.spec_core(ctx)
    except NnoptError:
        return None  # the lowering does not take this geometry whole: generic calls


def check_spec(k: KernelCall, sc: SpecCore | None) -> None:
    """Parameters without multipliers (the core's channel records hold them) go only to
    a specialised core: never to the generic kernel."""
    if sc is None and k.fields.get("multiplier") == Raw("NULL"):
        raise PlanError(f"{k.fn}: parameters for a specialised core's channel records, "
                        "but the op has no specialised core here")


def _spec_call(sc: SpecCore, k: KernelCall, at: Pointers, params: str, x: str, y: str) -> str:
    return (f"nnrt_spec_conv_gemm_s8(&{params}, &{sc.core}, {x}, {y}, {k.scratch_expr(at)}, "
            f"{sc.px2})")


def _code(lines: Sequence[str]) -> Body:
    """Lines ending in ``return <status>;`` as a body (code around kernel calls)."""
    last = lines[-1]
    assert last.startswith("return ") and last.endswith(";"), last
    return [Code(tuple(lines[:-1]), last[len("return "):-1])]


def _typed(ptr: str, elem: str, const: bool, byte_offset: str | None = None) -> str:
    q = "const " if const else ""
    if byte_offset is None:
        return f"({q}{elem} *){ptr}"
    return f"({q}{elem} *)(void *)((uint8_t *){ptr} + {byte_offset})"


class _Lowering:
    """A lowering object (the registry's protocol) for one op variant."""

    def __init__(self, headers: Sequence[str], emit: Any) -> None:
        self.headers = tuple(headers)
        self._emit = emit

    def check(self, graph: Graph, op: Op) -> None:  # planned: checked already
        return None

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        return 0

    def emit(self, ctx: EmitContext) -> Body:
        return self._emit(ctx)  # type: ignore[no-any-return]


_CONV_H = ("nnrt/kernels/conv.h",)
_POOL_H = ("nnrt/kernels/pool.h",)


def _headers_for(op: Op) -> tuple[str, ...]:
    return tuple(lowering_for(op).headers)


def emit_window(ctx: EmitContext, facts: PlanFacts) -> Body:
    """A window op over whole tensors, its padding (explicit or not) in the geometry."""
    sp = facts.window(ctx.op, "has no window geometry")
    ctx = memo_consts(ctx)
    k = kernel_call(ctx, sp, facts, spec=True)
    x, y = ctx.op.inputs[0], ctx.op.outputs[0]
    sc = spec_core(ctx, k)
    check_spec(k, sc)
    if sc is None:  # the registered call, its pointers cast to the element type
        args = list(k.call.args)
        args[1], args[k.y_at] = TensorArg(x, k.elem, True), TensorArg(y, k.elem)
        return [k.params, Call(k.fn, tuple(args), wrap=False)]
    xp, yp = _typed(ctx.c_ptr(x), k.elem, True), _typed(ctx.c_ptr(y), k.elem, False)
    return _code([f"(void){sc.entry}; /* its padding is explicit here */",
                  *render_params(k.params),
                  f"return {_spec_call(sc, k, ctx.pointers, 'params', xp, yp)};"])


def emit_window_rows(ctx: EmitContext, direction: str, facts: PlanFacts) -> Body:
    """A window op a band of output rows (or, pointwise, of pixels) at a time (the output
    may overlap the dying input): the bands the plan recorded, in execution order, one
    kernel call each (``passes.inplace_ops.row_chunks``); None: one row per call."""
    ctx = memo_consts(ctx)
    graph, op = ctx.graph, ctx.op
    sp = facts.window(op, "cannot run row by row")
    chunks = facts.bands.get(op.index)
    k = kernel_call(ctx, sp, facts, spec=True)
    sc = spec_core(ctx, k)
    check_spec(k, sc)

    def call(x_ptr: str, y_ptr: str) -> str:
        return k.expr("p", x_ptr, y_ptr, ctx.pointers) if sc is None else _spec_call(
            sc, k, ctx.pointers, "p", x_ptr, y_ptr)

    unused = [] if sc is None else [f"(void){sc.entry}; /* runs in bands, not whole */"]
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    in_row = x.shape[2] * x.shape[3] * DTYPE_SIZE[x.dtype]
    out_row = y.shape[2] * y.shape[3] * DTYPE_SIZE[y.dtype]
    oh = y.shape[1]
    if chunks is not None and chunks.pixels:
        # a 1x1 stride-1 unpadded conv maps pixel p to pixel p: any run of pixels is a
        # [1, 1, n, C] convolution of its own
        in_px, out_px = x.shape[3] * DTYPE_SIZE[x.dtype], y.shape[3] * DTYPE_SIZE[y.dtype]
        table = ctx.const_array("pixels", np.asarray(
            [v for c in chunks.runs for v in c], dtype=np.int32))
        n_runs = len(chunks.runs)
        run = call(_typed(ctx.c_ptr(x.index), k.elem, True, f"(size_t)q * {in_px}u"),
                   _typed(ctx.c_ptr(y.index), k.elem, False, f"(size_t)q * {out_px}u"))
        return _code([*unused, *render_params(k.params, "base"),
                f"{k.ptype} p = base;",
                f"/* {direction}: {n_runs} runs of pixels; run [q, q + n) overwrites only "
                "input pixels that runs already computed read */",
                "p.geom.input_h = 1;",
                "p.geom.output_h = 1;",
                f"for (int32_t i = 0; i < {n_runs}; ++i) {{",
                f"    const int32_t q = {table}[2 * i];",
                "    p.geom.input_w = p.geom.output_w = " + f"{table}[2 * i + 1];",
                f"    const nnrt_status_t s = {run};",
                "    if (s != NNRT_OK) {",
                "        return s;",
                "    }",
                "}",
                "return NNRT_OK;"])
    if chunks is None or all(n == 1 for _, n in chunks.runs):
        row = "i" if direction == "forward" else f"{oh - 1} - i"
        head = [f"for (int32_t i = 0; i < {oh}; ++i) {{",
                f"    const int32_t r = {row};",
                "    const int32_t n = 1;"]
        what = "output row r overwrites only input rows that rows already computed read"
    else:
        table = ctx.const_array("rows", np.asarray([v for c in chunks.runs for v in c],
                                                   dtype=np.int32))
        head = [f"for (int32_t i = 0; i < {len(chunks.runs)}; ++i) {{",
                f"    const int32_t r = {table}[2 * i];",
                f"    const int32_t n = {table}[2 * i + 1];"]
        what = (f"{len(chunks.runs)} bands of rows; band [r, r + n) overwrites only input "
                "rows that bands already computed read")
    lines = [*unused, *render_params(k.params, "base"),
             f"{k.ptype} p = base;",
             f"/* {direction}: {what} */",
             *head,
             f"    const nnrt_window_t w = nnrt_window_rows(r, n, {sp.h.stride}, {sp.h.pad}, "
             f"{sp.h.kernel}, {sp.h.size});",
             "    p.geom.input_h = w.rows;",
             "    p.geom.pad_top = w.pad;",
             "    p.geom.output_h = n;",
             "    const nnrt_status_t s = "
             + call(_typed(ctx.c_ptr(x.index), k.elem, True, f"(size_t)w.start * {in_row}u"),
                    _typed(ctx.c_ptr(y.index), k.elem, False, f"(size_t)r * {out_row}u")) + ";",
             "    if (s != NNRT_OK) {",
             "        return s;",
             "    }",
             "}",
             "return NNRT_OK;"]
    return _code(lines)


def emit_concat_rows(ctx: EmitContext, direction: str) -> Body:
    """A channel concatenation one row (of pixels) at a time."""
    graph, op = ctx.graph, ctx.op
    assert isinstance(op.options, ConcatOptions)
    y = graph.tensors[op.outputs[0]]
    elem = DTYPE_SIZE[y.dtype]
    oh, ow = y.shape[1], y.shape[2]
    blocks = [graph.tensors[t].shape[3] * elem for t in op.inputs]
    ident = ctx.const_array("blocks", np.asarray(blocks, dtype=np.int32))
    row = "i" if direction == "forward" else f"{oh - 1} - i"
    lines = [*render_params(Params("nnrt_concat_params_t", {
                 "outer": ow, "num_inputs": len(blocks), "block_bytes": Raw(ident)})),
             f"const void *inputs[{len(blocks)}];",
             f"for (int32_t i = 0; i < {oh}; ++i) {{",
             f"    const size_t r = (size_t)({row});"]
    for n, t in enumerate(op.inputs):
        lines.append(f"    inputs[{n}] = (const uint8_t *){ctx.c_ptr(t)} + r * "
                     f"{blocks[n] * ow}u;")
    lines += [f"    const nnrt_status_t s = nnrt_concat_x8(&params, inputs, "
              f"(uint8_t *){ctx.c_ptr(y.index)} + r * {sum(blocks) * ow}u);",
              "    if (s != NNRT_OK) {",
              "        return s;",
              "    }",
              "}",
              "return NNRT_OK;"]
    return _code(lines)


def _slice_of(graph: Graph, x: int) -> tuple[Op, int]:
    """The concatenation x is written into, and x's byte offset in an output pixel."""
    concat = graph.op_by_index[graph.consumers[x][0]]
    y = graph.tensors[concat.outputs[0]]
    offset = 0
    for t in concat.inputs:
        if t == x:
            break
        offset += graph.tensors[t].shape[3]
    return concat, offset * DTYPE_SIZE[y.dtype]


def emit_window_into_slice(ctx: EmitContext, facts: PlanFacts) -> Body:
    """A window op whose output is a slice of a concatenation's output: one output row
    at a time into a staging row (after the kernel's own scratch), then stored with the
    concatenation's pixel stride. ``ctx.c_ptr(output)`` already points at the slice."""
    graph, op = ctx.graph, ctx.op
    sp = facts.window(op, "cannot write into a slice")
    k = kernel_call(ctx, sp, facts)
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    concat, _ = _slice_of(graph, y.index)
    e = DTYPE_SIZE[y.dtype]
    ctot = graph.tensors[concat.outputs[0]].shape[3]
    oh, ow, oc = y.shape[1], y.shape[2], y.shape[3]
    in_row = x.shape[2] * x.shape[3] * DTYPE_SIZE[x.dtype]
    query = facts.variant(op)
    own = lowering_for(op).scratch_bytes(*query) if query is not None else 0
    staging = f"((uint8_t *){ctx.c_scratch} + {(own + 15) // 16 * 16}u)"
    call = k.expr("p", _typed(ctx.c_ptr(x.index), k.elem, True, f"(size_t)w.start * {in_row}u"),
                  f"({k.elem} *)(void *){staging}", ctx.pointers)
    return _code([*render_params(k.params, "base"),
            f"{k.ptype} p = base;",
            f"/* rows of this {oc}-channel output go straight into their slice of the "
            f"{ctot}-channel concatenation (op {concat.index}) */",
            f"for (int32_t r = 0; r < {oh}; ++r) {{",
            f"    const nnrt_window_t w = nnrt_window_rows(r, 1, {sp.h.stride}, {sp.h.pad}, "
            f"{sp.h.kernel}, {sp.h.size});",
            "    p.geom.input_h = w.rows;",
            "    p.geom.pad_top = w.pad;",
            "    p.geom.output_h = 1;",
            f"    nnrt_status_t s = {call};",
            "    if (s == NNRT_OK) {",
            f"        s = nnrt_copy_2d_x8({staging}, {oc * e}, (uint8_t *){ctx.c_ptr(y.index)} + "
            f"(size_t)r * {ow * ctot * e}u, {ctot * e}, {ow}, {oc * e});",
            "    }",
            "    if (s != NNRT_OK) {",
            "        return s;",
            "    }",
            "}",
            "return NNRT_OK;"])


def emit_concat_views(ctx: EmitContext, views: set[int]) -> Body:
    """A concatenation some of whose inputs already sit in their slices: copy the
    others into theirs."""
    graph, op = ctx.graph, ctx.op
    y = graph.tensors[op.outputs[0]]
    e = DTYPE_SIZE[y.dtype]
    ctot = y.shape[3]
    pixels = y.shape[1] * y.shape[2]
    lines = []
    offset = 0
    for t in op.inputs:
        c = graph.tensors[t].shape[3]
        if t in views:
            lines.append(f"/* tensor {t}: written into its slice by its producer */")
        else:
            lines += [f"s = nnrt_copy_2d_x8({ctx.c_ptr(t)}, {c * e}, "
                      f"(uint8_t *){ctx.c_ptr(y.index)} + {offset * e}u, {ctot * e}, {pixels}, "
                      f"{c * e});",
                      "if (s != NNRT_OK) {", "    return s;", "}"]
        offset += c
    return _code(["nnrt_status_t s = NNRT_OK;", *lines, "return s;"])


def emit_depthwise_inplace(ctx: EmitContext, facts: PlanFacts) -> Body:
    op = ctx.op
    sp = facts.window(op, "has no window geometry")
    k = kernel_call(ctx, sp, facts)
    x = op.inputs[0]
    if ctx.c_scratch == "NULL":
        raise PlanError(f"op {op.index}: in-place depthwise convolution without scratch")
    # the call's weights with the input as the in-place buffer, the scratch as the ring
    weights = k.call.args[2:k.y_at]
    return [k.params, Call("nnrt_depthwise_conv2d_inplace_s8", (
        k.call.args[0], TensorArg(x, "int8_t"), *weights,
        Expr(f"(int8_t *){ctx.c_scratch}")), wrap=False)]


def _depthwise(op: Op) -> bool:
    d = known(op)
    return d is not None and d.window == "depthwise"


def _concat(op: Op) -> bool:
    d = known(op)
    return d is not None and d.concat


def _explicit(op: Op) -> bool:
    return getattr(op.options, "explicit_padding", None) is not None


class ViewLowerings:
    """Per op, the lowering the plan requires instead of the registered one."""

    def __init__(self, plan: Plan, graph: Graph, facts: PlanFacts) -> None:
        self.plan = plan
        self.graph = graph
        self.facts = facts
        self.kind = {e.op: e for e in plan.inplace_ops if e.kind != "concat_slice"}
        self.slices = {e.op for e in plan.inplace_ops if e.kind == "concat_slice"}
        self.views = {graph.op_by_index[i].outputs[0] for i in self.slices}

    def is_view(self, t: int) -> bool:
        """True for a tensor stored strided inside a concatenation's output."""
        return t in self.views

    def lowering_for(self, op: Op) -> _Lowering | None:
        e = self.kind.get(op.index)
        facts = self.facts
        if op.index in self.slices:
            return _Lowering((*_headers_for(op), "nnrt/kernels/tiling.h"),
                             lambda ctx: emit_window_into_slice(ctx, facts))
        if e is not None and e.kind == "concat_views":
            views = set(self.views)
            return _Lowering(("nnrt/kernels/tiling.h",),
                             lambda ctx: emit_concat_views(ctx, views))
        if e is not None and e.kind == "depthwise_channel":
            return _Lowering(("nnrt/kernels/conv.h", "nnrt/kernels/inplace.h"),
                             lambda ctx: emit_depthwise_inplace(ctx, facts))
        if e is not None and e.kind == "rows":
            direction = e.direction
            if _concat(op):
                return _Lowering(("nnrt/kernels/shape.h",),
                                 lambda ctx: emit_concat_rows(ctx, direction))
            return _Lowering((*_headers_for(op), "nnrt/kernels/tiling.h"),
                             lambda ctx: emit_window_rows(ctx, direction, facts))
        if _explicit(op):
            return _Lowering(_headers_for(op), lambda ctx: emit_window(ctx, facts))
        return None
