"""In-place operators beyond element-wise ops: what lets a plan go below the op bound.

No order and no offset plan can go below the largest (inputs + outputs) of one op; these
analyses let an op's output share memory with the input it consumes, each justified by
the op's access pattern (vMCU's partially overlapping buffers, TinyEngine's in-place
depthwise convolution):

- ``fold_pads``: a PAD (or PADV2) whose only consumer is a VALID/SAME convolution,
  depthwise convolution or (under a range condition) max pool (the definitions'
  ``pad_consumer`` trait) becomes that op's
  implicit padding (``explicit_padding``): the padded tensor never exists. Bit-exact:
  the pad value is the consumer's input zero point, whose taps contribute
  ``w * (zp - zp) = 0`` exactly like a skipped padding tap; for max pool the pad value
  must not exceed the producer's activation minimum, so it never wins.
- ``stream_candidates`` / ``overlaps_of``: a window op (conv, depthwise, pool) or a
  channel concatenation processed one output row at a time reads input rows ``span(r)``
  and writes output row r only. With rows in increasing order, the output may start
  ``d`` bytes from the input's start for any ``d <= min_r(read_lo(r) - write_hi(r))`` (the rows it
  overwrites were read by earlier rows only); in decreasing order for any
  ``d >= max_r(read_hi(r) - write_lo(r))``. These become arena permissions
  (:class:`~nnopt.passes.arena.Overlap`), valid only where the input dies at the op.
- ``depthwise_candidates``: an int8 depthwise convolution with depth multiplier 1 computes
  4 channels at a time, a few output rows into scratch, each row stored over those
  channels of its input as soon as no later row reads the input it overlays: the output
  aliases the input, plus ``rows * OW * min(C, 4)`` bytes (groups of 4: the SIMD path
  on DSP cores).
- ``concat_views``: a window op whose output only a channel concatenation reads writes
  it straight into its slice of the concatenation's output.

Nothing here changes an op's arithmetic: every kernel call is the reference kernel on a
sub-view, or ``nnrt_depthwise_conv2d_inplace_s8`` (same arithmetic, checked bit-exact).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..arith import ACTIVATION_REAL, activation_range_int8, bounded_below
from ..cdefs import DTYPE_SIZE, DType
from ..ir import ConvOptions, Graph, Op, PoolOptions
from ..ops import known
from .arena import Overlap
from .fuse import Fusion, fold_ops
from .lifetimes import Buffer
from .regions import POINT, WINDOW, Spatial, spatial_of, window_axis

# ----- PAD folding -----


def _pad_amounts(graph: Graph, op: Op) -> tuple[int, int, int, int] | None:
    """(top, bottom, left, right) of a PAD over H and W only, or None."""
    if len(op.inputs) < 2 or op.inputs[1] < 0:
        return None
    p = graph.tensors[op.inputs[1]]
    if not p.is_constant or p.dtype not in (DType.INT32, DType.INT64) or p.num_elements != 8:
        return None
    v = [int(x) for x in p.array().reshape(-1)]
    if v[0] or v[1] or v[6] or v[7] or min(v) < 0:
        return None
    return v[2], v[3], v[4], v[5]


def _pad_value(graph: Graph, op: Op) -> float | int | None:
    """The raw value PAD writes (int8: the stored integer; float: the float)."""
    y = graph.tensors[op.outputs[0]]
    if len(op.inputs) >= 3 and op.inputs[2] >= 0:
        v = graph.tensors[op.inputs[2]]
        if not v.is_constant or v.num_elements != 1 or v.dtype != y.dtype:
            return None
        return v.array().reshape(-1)[0].item()  # type: ignore[no-any-return]
    if y.dtype == DType.INT8:
        return y.quant.zero_point[0] if y.quant and y.quant.zero_point else None
    return 0.0 if y.dtype == DType.FLOAT32 else None


def _act_min(graph: Graph, t: int) -> float | None:
    """A lower bound on the raw values of tensor t from its producer's fused
    activation (None: unknown)."""
    prod = graph.producer.get(t)
    if prod is None:
        return None
    op = graph.op_by_index[prod]
    act = getattr(op.options, "activation", "NONE")
    if not bounded_below(act):
        return None
    x = graph.tensors[t]
    if x.dtype == DType.INT8 and x.quant is not None and x.quant.scale:
        return activation_range_int8(act, x.quant.scale[0], x.quant.zero_point[0])[0]
    if x.dtype == DType.FLOAT32:
        return ACTIVATION_REAL[act][0]
    return None


def _fold_target(graph: Graph, pad: Op) -> tuple[Op, tuple[int, int, int, int]] | None:
    dpad = known(pad)
    if dpad is None or not dpad.pad or len(pad.outputs) != 1 or pad.inputs[0] < 0:
        return None
    x, y = graph.tensors[pad.inputs[0]], graph.tensors[pad.outputs[0]]
    if x.is_constant or x.dtype != y.dtype or x.quant != y.quant or len(x.shape) != 4:
        return None
    if x.dtype not in (DType.INT8, DType.FLOAT32) or y.index in graph.outputs:
        return None
    amounts = _pad_amounts(graph, pad)
    value = _pad_value(graph, pad)
    cons = graph.consumers.get(y.index, ())
    if amounts is None or value is None or len(cons) != 1:
        return None
    user = graph.op_by_index[cons[0]]
    if not user.inputs or user.inputs[0] != y.index or y.index in user.inputs[1:]:
        return None
    zp = y.quant.zero_point[0] if (y.dtype == DType.INT8 and y.quant) else 0.0
    o = user.options
    kind = d.pad_consumer if (d := known(user)) is not None else None
    if kind == "zero_point" and isinstance(o, ConvOptions):
        if o.fused_max_pool is not None or value != zp:
            return None
        w = graph.tensors[user.inputs[1]]
        kh, kw, sh, sw, dh, dw = (w.shape[1], w.shape[2], o.stride_h, o.stride_w,
                                  o.dilation_h, o.dilation_w)
    elif kind == "below_floor" and isinstance(o, PoolOptions):
        lo = _act_min(graph, x.index)
        if lo is None or value > lo or o.activation != "NONE":
            return None  # the pad could win a window: not foldable
        kh, kw, sh, sw, dh, dw = o.filter_h, o.filter_w, o.stride_h, o.stride_w, 1, 1
    else:
        return None
    t, b, left, right = amounts
    _, hp, wp, _ = y.shape
    old = o.explicit_padding
    if old is None:  # the consumer's own padding over the padded tensor
        ah = window_axis(hp, kh, sh, dh, o.padding, None)
        aw = window_axis(wp, kw, sw, dw, o.padding, None)
        tot_h = max((ah.out - 1) * sh + ah.kernel - hp, 0)
        tot_w = max((aw.out - 1) * sw + aw.kernel - wp, 0)
        old = (ah.pad, tot_h - ah.pad, aw.pad, tot_w - aw.pad)
    new = (t + old[0], b + old[1], left + old[2], right + old[3])
    _, h, wd, _ = x.shape
    ah2 = window_axis(h, kh, sh, dh, "VALID", (new[0], new[1]))
    aw2 = window_axis(wd, kw, sw, dw, "VALID", (new[2], new[3]))
    out = graph.tensors[user.outputs[0]].shape
    if (ah2.out, aw2.out) != (out[1], out[2]):
        return None
    # every window must reach the input (TFLM never sees an all-padding window there;
    # the kernels refuse one)
    for a in (ah2, aw2):
        if a.pad >= a.kernel or (a.out - 1) * a.stride - a.pad >= a.size:
            return None
    return user, new


def fold_pads(graph: Graph) -> tuple[Graph, list[Fusion]]:
    """Fold every foldable PAD into its consumer's implicit padding."""
    replaced: dict[int, Op] = {}
    removed: set[int] = set()
    fusions: list[Fusion] = []
    for op in graph.ops:
        hit = _fold_target(graph, op)
        if hit is None or hit[0].index in replaced:
            continue
        user, pads = hit
        opts = user.options
        assert isinstance(opts, (ConvOptions, PoolOptions))
        replaced[user.index] = replace(
            user, inputs=(op.inputs[0], *user.inputs[1:]),
            options=replace(opts, padding="VALID", explicit_padding=pads))
        removed.add(op.index)
        fusions.append(Fusion(op.index, user.index, "pad"))
    return fold_ops(graph, replaced, removed, fusions)


# ----- partial overlap of an op's input and output (row streaming) -----

Step = tuple[int, int, int, int]  # read [lo, hi) of the input, write [lo, hi) of the output


def safe_deltas(steps: Sequence[Step]) -> tuple[int, int]:
    """(forward_max, backward_min) for steps executed in the given order.

    Executed in this order, the output may start d bytes from the input's start for
    any d <= forward_max: every byte step k writes lies below every byte that step k
    or a later step reads. Executed in reverse order, for any d >= backward_min.
    Steps that read nothing (windows entirely in padding) constrain nothing."""
    fwd = 1 << 62
    suffix_lo = 1 << 62
    for r_lo, r_hi, w_lo, w_hi in reversed(steps):
        if r_hi > r_lo:
            suffix_lo = min(suffix_lo, r_lo)
        if w_hi > w_lo and suffix_lo < (1 << 62):
            fwd = min(fwd, suffix_lo - w_hi)
    bwd = -(1 << 62)
    prefix_hi = -(1 << 62)
    for r_lo, r_hi, w_lo, w_hi in steps:
        if r_hi > r_lo:
            prefix_hi = max(prefix_hi, r_hi)
        if w_hi > w_lo and prefix_hi > -(1 << 62):
            bwd = max(bwd, prefix_hi - w_lo)
    return fwd, bwd


def row_steps(graph: Graph, sp: Spatial, x: int) -> list[Step]:
    """One step per output row, in increasing order: input x's bytes read, output
    bytes written."""
    tx, ty = graph.tensors[x], graph.tensors[sp.output]
    in_row = tx.shape[2] * tx.shape[3] * DTYPE_SIZE[tx.dtype]
    out_row = ty.shape[2] * ty.shape[3] * DTYPE_SIZE[ty.dtype]
    steps = []
    for r in range(ty.shape[1]):
        lo, hi = sp.h.span(r, r + 1)
        steps.append((lo * in_row, hi * in_row, r * out_row, (r + 1) * out_row))
    return steps


def row_chunks(steps: Sequence[Step], delta: int, direction: str, multiple: int = 1
               ) -> list[tuple[int, int]]:
    """Runs of consecutive steps (rows, or pixels), (first, count) in execution order,
    that one kernel call each may produce when the output starts ``delta`` bytes from
    the input: a run's writes stay clear of every byte it or a later run reads (the
    condition of :func:`safe_deltas` for runs instead of steps), so a call may read and
    write within its run in any order. Each run is the longest allowed, rounded down to
    a multiple of ``multiple`` where it is longer (the matrix core takes pixels in
    pairs); one step per run when the delta is as tight as the planner allowed."""
    n = len(steps)
    big = 1 << 62
    runs: list[tuple[int, int]] = []
    if direction == "forward":
        suffix = [big] * (n + 1)  # lowest byte read by steps >= p
        for p in range(n - 1, -1, -1):
            r_lo, r_hi = steps[p][0], steps[p][1]
            suffix[p] = min(suffix[p + 1], r_lo) if r_hi > r_lo else suffix[p + 1]
        p = 0
        while p < n:
            k = 1
            while p + k < n and (suffix[p] >= big or delta <= suffix[p] - steps[p + k][3]):
                k += 1
            if k > multiple:
                k -= k % multiple
            runs.append((p, k))
            p += k
        return runs
    prefix = [-big] * (n + 1)  # one past the highest byte read by steps < q
    for q in range(n):
        r_lo, r_hi = steps[q][0], steps[q][1]
        prefix[q + 1] = max(prefix[q], r_hi) if r_hi > r_lo else prefix[q]
    q = n
    while q > 0:
        k = 1
        while q - k > 0 and (prefix[q] <= -big or delta >= prefix[q] - steps[q - k - 1][2]):
            k += 1
        if k > multiple:
            k -= k % multiple
        runs.append((q - k, k))
        q -= k
    return runs


def streamable(graph: Graph, op: Op) -> Spatial | None:
    """The op's access pattern if it can run row by row on sub-views of its tensors: a
    window op or a channel concatenation."""
    d = known(op)
    if d is None or (d.window is None and not d.concat):
        return None
    sp = spatial_of(graph, op)
    if sp is None:
        return None
    if sp.kind == POINT and not d.concat:
        return None
    return sp


@dataclass(frozen=True)
class StreamCandidate:
    op: int  # op index
    src: int  # root tensor of the input
    dst: int  # root tensor of the output
    forward_max: int
    backward_min: int


def stream_candidates(graph: Graph, order: Sequence[int], roots: Mapping[int, int],
                      buffers: Sequence[Buffer],
                      memo: dict[tuple[str, int, int], Any] | None = None
                      ) -> list[StreamCandidate]:
    """Every (op, dying input, output) where row streaming makes an overlap safe.

    ``memo``: a dict kept across calls on the same graph (a search evaluating many
    layouts): each op's access pattern and safe offsets are computed once."""
    pos = {graph.ops[k].index: i for i, k in enumerate(order)}
    by_key = {b.key: b for b in buffers}
    out: list[StreamCandidate] = []
    cache: dict[tuple[str, int, int], Any] = {} if memo is None else memo
    for op in graph.ops:
        out += op_stream_candidates(graph, op, pos[op.index], roots, by_key, cache)
    return out


def op_stream_candidates(graph: Graph, op: Op, i: int, roots: Mapping[int, int],
                         by_key: Mapping[str, Buffer],
                         cache: dict[tuple[str, int, int], Any]) -> list[StreamCandidate]:
    """The :func:`stream_candidates` of one op at schedule position ``i`` (``by_key``:
    the buffers by key; ``cache``: the memo). Depends only on the roots and buffers of
    the op's own tensors: a layout change elsewhere leaves it as it is."""
    key = ("sp", op.index, 0)
    if key not in cache:
        cache[key] = streamable(graph, op)
    sp = cache[key]
    if sp is None:
        return []
    y = sp.output
    if roots.get(y, y) != y or y in graph.outputs:
        return []
    ybuf = by_key.get(f"t{y}")
    if ybuf is None or ybuf.first != i:
        return []
    out: list[StreamCandidate] = []
    inputs = list(dict.fromkeys(sp.inputs))
    for x in inputs:
        rx = roots.get(x, x)
        xbuf = by_key.get(f"t{rx}")
        if xbuf is None or xbuf.last != i or rx in graph.outputs or rx == y:
            continue
        if graph.tensors[x].nbytes != xbuf.size:
            continue  # an alias of a larger root: byte layout not the tensor's
        dkey = ("deltas", op.index, x)
        if dkey not in cache:
            cache[dkey] = safe_deltas(row_steps(graph, sp, x))
        fwd, bwd = cache[dkey]
        if len(inputs) > 1:
            bwd = 1 << 62  # several inputs must agree on one direction: forward only
        out.append(StreamCandidate(op.index, rx, y, fwd, bwd))
    return out


def overlaps_of(cands: Sequence[StreamCandidate], pos: Mapping[int, int],
                graph: Graph) -> list[Overlap]:
    res = []
    for c in cands:
        i = pos[c.op]
        op = graph.op_by_index[c.op]
        res.append(Overlap(f"t{c.src}", f"t{c.dst}", i, i,
                           c.forward_max if c.forward_max < (1 << 61) else None,
                           c.backward_min if c.backward_min > -(1 << 61) else None,
                           f"op {c.op} ({op.opcode}) row by row"))
    return res


# ----- in-place depthwise convolution (a group of channels of scratch) -----


def depthwise_inplace_ok(graph: Graph, op: Op) -> bool:
    """int8 depthwise conv, multiplier 1, no fused pool, output pixels <= input pixels."""
    d = known(op)
    if d is None or d.window != "depthwise" or not isinstance(op.options, ConvOptions):
        return False
    if op.options.fused_max_pool is not None or op.options.depth_multiplier != 1:
        return False
    sp = spatial_of(graph, op)
    if sp is None:
        return False
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype != DType.INT8 or y.dtype != DType.INT8 or x.shape[3] != y.shape[3]:
        return False
    return y.shape[1] * y.shape[2] <= x.shape[1] * x.shape[2]


#: Channels the in-place depthwise kernel computes per pass (NNRT_DW_INPLACE_GROUP in
#: nnrt/kernels/inplace.h): groups of 4 take the SIMD path on DSP cores.
DEPTHWISE_INPLACE_GROUP = 4


def depthwise_ring_rows(graph: Graph, op: Op) -> int:
    """Output rows of one channel group the in-place kernel holds at once
    (``nnrt_depthwise_conv2d_inplace_s8_rows``): row r is stored over the buffer before
    row r' once ``((r + 1) * OW - 1) // W < r' * stride_h - pad_top`` (no row from r' on
    reads the input it overlays)."""
    sp = spatial_of(graph, op)
    assert sp is not None
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    return ring_rows(x.shape[2], y.shape[1], y.shape[2], sp.h.stride, sp.h.pad)


def ring_rows(input_w: int, output_h: int, output_w: int, stride_h: int, pad_top: int
              ) -> int:
    """The ring of :func:`depthwise_ring_rows` from the geometry alone."""
    ring, done = 1, 0
    for r in range(output_h):
        first = r * stride_h - pad_top
        while done < r and ((done + 1) * output_w - 1) // input_w < first:
            done += 1
        ring = max(ring, r - done + 1)
    return ring


def depthwise_scratch(graph: Graph, op: Op) -> int:
    """Scratch of the in-place depthwise kernel: ring rows * OW * min(C, group) bytes
    (``nnrt_depthwise_conv2d_inplace_s8_get_buffer_size``)."""
    y = graph.tensors[op.outputs[0]]
    return (depthwise_ring_rows(graph, op) * y.shape[2]
            * min(y.shape[3], DEPTHWISE_INPLACE_GROUP))


def depthwise_candidates(graph: Graph, order: Sequence[int],
                         roots: Mapping[int, int]) -> list[int]:
    """Depthwise ops whose input (a root buffer, not a graph input/output) dies there."""
    pos = {graph.ops[k].index: i for i, k in enumerate(order)}
    last: dict[int, int] = {}
    for op in graph.ops:
        for t in graph.activations(op):
            r = roots.get(t, t)
            last[r] = max(last.get(r, -1), pos[op.index])
    protected = {roots.get(t, t) for t in graph.inputs + graph.outputs}
    out = []
    for op in graph.ops:
        if not depthwise_inplace_ok(graph, op):
            continue
        x = op.inputs[0]
        r = roots.get(x, x)
        if r in protected or last.get(r) != pos[op.index] or op.outputs[0] in graph.outputs:
            continue
        if graph.tensors[x].nbytes != graph.tensors[r].nbytes:
            continue
        out.append(op.index)
    return out


# ----- concatenation without copies -----


@dataclass(frozen=True)
class ConcatView:
    concat: int  # op index of the CONCATENATION
    tensor: int  # the input written straight into its slice of the output
    output: int  # the concatenation's output tensor
    byte_offset: int  # of the slice within an output pixel
    producer: int  # op index writing the input, row by row through one staging row


def concat_views(graph: Graph, roots: Mapping[int, int],
                 exclude: set[int] | frozenset[int] = frozenset()) -> list[ConcatView]:
    """Inputs of channel concatenations whose producer can write them straight into
    their slice of the output: a window op (conv, depthwise, pool) computing one output
    row at a time into a staging row that is then stored with the output's pixel stride.
    The input must be read by the concatenation only, and neither tensor aliased."""
    out: list[ConcatView] = []
    for op in graph.ops:
        d = known(op)
        if d is None or not d.concat or op.index in exclude:
            continue
        sp = spatial_of(graph, op)
        if sp is None or sp.kind != POINT:
            continue
        y = op.outputs[0]
        ty = graph.tensors[y]
        if roots.get(y, y) != y or y in graph.outputs or len(set(op.inputs)) != len(op.inputs):
            continue
        elem = DTYPE_SIZE[ty.dtype]
        channel = 0
        for x in op.inputs:
            tx = graph.tensors[x]
            offset = channel * elem
            channel += tx.shape[3]
            prod = graph.producer.get(x)
            if (prod is None or prod in exclude or x in graph.outputs or x in graph.inputs
                    or roots.get(x, x) != x or x in roots.values()
                    or graph.consumers.get(x, ()) != (op.index,)):
                continue
            pop = graph.op_by_index[prod]
            psp = streamable(graph, pop)
            if psp is None or psp.kind != WINDOW or tx.dtype != ty.dtype:
                continue
            out.append(ConcatView(op.index, x, y, offset, prod))
    return out


def staging_bytes(graph: Graph, view: ConcatView) -> int:
    """The staging row a view's producer writes before storing it into the slice."""
    t = graph.tensors[view.tensor]
    return t.shape[2] * t.shape[3] * DTYPE_SIZE[t.dtype]


def variant_query(graph: Graph, op: Op) -> tuple[Graph, Op] | None:
    """The (graph, op) to ask the registered lowering which kernel variant, and how much
    scratch, the op's geometry takes. For a window op with folded padding: the same op
    over an explicitly padded stand-in input (VALID), the geometry kernels see apart from
    the padding; None when only the generic kernel fits (a 1x1 filter with padding)."""
    o = op.options
    e = getattr(o, "explicit_padding", None)
    if e is None:
        return graph, op
    assert isinstance(o, (ConvOptions, PoolOptions))
    if isinstance(o, ConvOptions):
        w = graph.tensors[op.inputs[1]]
        if w.shape[1] == 1 and w.shape[2] == 1 and any(e):
            return None
    x = graph.tensors[op.inputs[0]]
    n, h, wd, c = x.shape
    padded = replace(x, index=len(graph.tensors), name=f"{x.name}/padded",
                     shape=(n, h + e[0] + e[1], wd + e[2] + e[3], c))
    stand_in = replace(graph, tensors=(*graph.tensors, padded))
    return stand_in, replace(op, inputs=(padded.index, *op.inputs[1:]),
                             options=replace(o, padding="VALID", explicit_padding=None))
