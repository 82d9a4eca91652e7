"""Patch-based execution of the memory-heavy first stage (MCUNetV2's idea).

A stage is a prefix of the schedule whose ops are all spatial (convolutions, depthwise
convolutions, pools, element-wise ops, channel concatenations, and a leading
NCHW->NHWC TRANSPOSE of a graph input) and whose results leave it through one tensor.
Split that output into a grid of patches; walking the ops backwards, every tensor of
the stage gets, per patch, the region its consumers read (receptive fields: a window
op's output rows ``[a, b)`` read ``Axis.span(a, b)``; point-wise ops read what they
write; regions of several consumers are merged). The stage then runs once per patch on
tile buffers sized for the largest region, overlapping halos recomputed; only the
stage's input and output exist at full size.

- Analysis: :func:`stage_shapes` (valid prefixes), :func:`tile_stage` (regions for a
  grid; None when a window op would read a tile that does not start at its window),
  costs (tile bytes, MACs as tiled vs. untiled).
- Transform: :func:`stage_buffers` turns the stage into arena buffers (tiles live
  within the stage's positions; the full input lives to the stage's end and the full
  output from its start) and grants the stage-level permission for the full output to
  overlap the full input where the patch order allows (patches in raster order write
  below every byte a later patch reads: ``passes.inplace_ops.safe_deltas``).
- Choice: ``passes.below_bound`` (memory/compute trade-off).

Access of the full tensors: with one column of patches, every region spans whole rows,
so the first op reads the input in place and the last op writes the output in place;
with several columns the input window is copied into a tile ("gather") and the output
tile copied into place ("scatter"). Limits (stage refused): fused max pools, batch
> 1, ops on whole tensors (FC, MEAN, reshapes, softmax), unary element-wise ops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..arith import Axis
from ..cdefs import DTYPE_SIZE
from ..ir import Graph, Op
from ..ops import known
from .arena import Overlap
from .inplace_ops import Step, safe_deltas
from .lifetimes import Buffer
from .regions import POINT, WINDOW, Spatial, spatial_of

Region = tuple[int, int, int, int]  # y0, y1, x0, x1 (half-open) in the full tensor

NCHW_TO_NHWC = (0, 2, 3, 1)


@dataclass(frozen=True)
class StageShape:
    """A valid stage: schedule positions [0, length) of the graph."""

    ops: tuple[int, ...]  # op indices in execution order
    length: int
    inputs: tuple[int, ...]  # boundary inputs (read by the stage, produced before it)
    output: int  # the one tensor leaving the stage
    transposed: frozenset[int]  # boundary inputs read through a NCHW->NHWC TRANSPOSE


@dataclass
class Tiling:
    """A stage with a patch grid: regions of every tensor, per patch."""

    shape: StageShape
    grid: tuple[int, int]
    regions: dict[int, list[Region]]  # tensor -> region per patch (raster order)
    access: dict[int, str]  # tensor -> "tile", "input", "gather", "output", "scatter"
    tile_bytes: dict[int, int]  # tensor -> bytes of its tile buffer (0: none)
    macs: int
    base_macs: int
    steps: dict[int, list[Step]] = field(default_factory=dict)  # input -> per patch

    @property
    def patches(self) -> int:
        return self.grid[0] * self.grid[1]


def _transpose_perm(graph: Graph, op: Op) -> tuple[int, ...] | None:
    if not _is_transpose(op) or len(op.inputs) != 2:
        return None
    p = graph.tensors[op.inputs[1]]
    if not p.is_constant:
        return None
    return tuple(int(v) for v in p.array().reshape(-1))


def _is_transpose(op: Op) -> bool:
    d = known(op)
    return d is not None and d.transpose


def _is_concat(op: Op) -> bool:
    d = known(op)
    return d is not None and d.concat


def _stage_op_ok(graph: Graph, op: Op, produced: set[int]) -> bool:
    if _is_transpose(op):
        x = op.inputs[0]
        y = graph.tensors[op.outputs[0]]
        return (_transpose_perm(graph, op) == NCHW_TO_NHWC and x not in produced
                and len(y.shape) == 4 and y.shape[0] == 1)
    sp = spatial_of(graph, op)
    if sp is None:
        return False
    d = known(op)
    return not (sp.kind == POINT and d is not None and d.elementwise != "binary"
                and not d.concat)


def stage_shapes(graph: Graph, order: Sequence[int], max_ops: int = 64) -> list[StageShape]:
    """Every prefix of the order that is a valid stage (at least one window op)."""
    out: list[StageShape] = []
    produced: set[int] = set()
    ops: list[Op] = []
    has_window = False
    transposed: set[int] = set()
    for k in order[:max_ops]:
        op = graph.ops[k]
        if not _stage_op_ok(graph, op, produced):
            break
        if _is_transpose(op):
            transposed.add(op.inputs[0])
        else:
            sp = spatial_of(graph, op)
            has_window = has_window or (sp is not None and sp.kind == WINDOW)
        ops.append(op)
        produced.update(op.outputs)
        if not has_window:
            continue
        in_stage = {o.index for o in ops}
        leaving = [t for t in produced
                   if t in graph.outputs
                   or any(c not in in_stage for c in graph.consumers.get(t, ()))]
        if len(leaving) != 1:
            continue
        y = leaving[0]
        if any(c in in_stage for c in graph.consumers.get(y, ())) or y in graph.outputs:
            continue
        if graph.producer[y] != ops[-1].index:
            continue  # the stage must end with the op producing its output
        inputs = tuple(dict.fromkeys(t for o in ops for t in graph.activations(o)
                                     if t not in produced))
        if any(len(graph.tensors[t].shape) != 4 or graph.tensors[t].shape[0] != 1
               for t in inputs):
            continue
        out.append(StageShape(tuple(o.index for o in ops), len(ops), inputs, y,
                              frozenset(transposed)))
    return out


def _split(n: int, parts: int) -> list[tuple[int, int]]:
    return [(n * i // parts, n * (i + 1) // parts) for i in range(parts)]


def _spans(spans: Sequence[tuple[int, int] | None]) -> list[tuple[int, int]]:
    """The spans of a tensor's grid rows or columns (each set once regions exist)."""
    out = []
    for sp in spans:
        assert sp is not None
        out.append(sp)
    return out


def _nhwc(graph: Graph, t: int, transposed: bool) -> tuple[int, int, int]:
    s = graph.tensors[t].shape
    return (s[2], s[3], s[1]) if transposed else (s[1], s[2], s[3])


Span = tuple[int, int]
# an op as the span propagation walks it: output, inputs reached, window axes, concat
Walk = tuple[int, tuple[int, ...], "Axis | None", "Axis | None", bool]


@dataclass
class TilingMemo:
    """What :func:`tile_stage` computes once for one graph across its candidates: each
    op's spatial map, and each stage's row (column) spans per number of grid rows
    (columns): the grids of a stage share them."""

    spatial: dict[int, Spatial] = field(default_factory=dict)
    spans: dict[tuple[tuple[int, ...], int, int, int], dict[int, list[Span]] | None] = \
        field(default_factory=dict)
    walk: dict[int, Walk] = field(default_factory=dict)  # per op index (_walk_of)
    # the same keys: whether the spans along that axis refuse the tiling already (an
    # empty span, a window's column start, a concatenation's input regions)
    refused: dict[tuple[tuple[int, ...], int, int, int], bool] = field(default_factory=dict)
    stage_spatial: dict[tuple[int, ...], dict[int, Spatial]] = field(default_factory=dict)


def _axis_spans(graph: Graph, shape: StageShape, axis: int, parts: int,
                memo: TilingMemo) -> dict[int, list[Span]] | None:
    """Per stage tensor, the spans along ``axis`` (0: rows, 1: columns) of its ``parts``
    grid rows (columns), propagated from the output through the stage's ops (windows
    map each axis on its own, unions take the min and max); None if a tensor the
    stage produces is never read."""
    key = (shape.ops, shape.output, axis, parts)
    if key in memo.spans:
        return memo.spans[key]
    y = shape.output
    spans: dict[int, list[Span]] = {y: _split(graph.tensors[y].shape[1 + axis], parts)}
    res: dict[int, list[Span]] | None = spans
    for i in reversed(shape.ops):
        walk = memo.walk.get(i)
        if walk is None:
            walk = memo.walk[i] = _walk_of(graph, graph.op_by_index[i], memo)
        out, inputs, h, w, _ = walk
        need = spans.get(out)
        if need is None:
            res = None  # produced but never read: not a stage we can run
            break
        m = h if axis == 0 else w
        if m is not None:  # a window: Axis.span of every grid row (column), inlined
            st, pad, k, size = m.stride, m.pad, m.kernel, m.size
            mapped: list[Span] = []
            for a, b in need:
                if b <= a:
                    mapped.append((0, 0))
                    continue
                lo = a * st - pad
                lo = lo if lo > 0 else 0
                hi = (b - 1) * st - pad + k
                hi = hi if hi < size else size
                mapped.append((lo, hi if hi > lo else lo))
            need = mapped
        for x in inputs:  # the union with what other readers need
            acc = spans.get(x)
            spans[x] = list(need) if acc is None else [
                (a0 if a0 < lo else lo, a1 if a1 > hi else hi)
                for (a0, a1), (lo, hi) in zip(acc, need, strict=True)]
    memo.spans[key] = res
    memo.refused[key] = res is not None and _refused(graph, shape, axis, res, memo)
    return res


def _walk_of(graph: Graph, op: Op, memo: TilingMemo) -> Walk:
    """What the span propagation needs of one op: its output, the inputs its regions
    reach, its window axes (None: point-wise, or a transpose), whether it is a
    concatenation."""
    if _is_transpose(op):
        return op.outputs[0], (op.inputs[0],), None, None, False
    sp = _spatial(graph, op, memo)
    inputs = tuple(dict.fromkeys(sp.inputs))
    if sp.kind == WINDOW:
        return op.outputs[0], inputs, sp.h, sp.w, _is_concat(op)
    return op.outputs[0], inputs, None, None, _is_concat(op)


def _refused(graph: Graph, shape: StageShape, axis: int, spans: Mapping[int, Sequence[Span]],
             memo: TilingMemo) -> bool:
    """Whether the spans along one axis refuse every grid using them: a patch is its
    row span times its column span, so the per-patch tests are per-axis tests. (The
    ops' walk entries are in ``memo.walk``: :func:`_axis_spans` made them.)"""
    for rs in spans.values():
        for a, b in rs:
            if b <= a:
                return True  # an empty patch region
    walks = [memo.walk[i] for i in shape.ops]
    if axis == 1:
        # A window op reads its input tile with the tile's row stride: the tile must
        # start at the first column its window reads (else the kernel would need a
        # column offset), Axis.span's start for every patch of this grid column.
        for out, inputs, _h, w, _concat in walks:
            if w is None:
                continue
            st, pad = w.stride, w.pad
            for (a, b), cx in zip(spans[out], spans[inputs[0]], strict=True):
                lo = 0 if b <= a else max(0, a * st - pad)
                if cx[0] != lo:
                    return True
    # A concatenation copies whole pixels: every input tile must be the output's region
    # (the same row spans and the same column spans).
    for i, (out, _inputs, _h, _w, concat) in zip(shape.ops, walks, strict=True):
        if concat and any(spans[t] != spans[out] for t in graph.op_by_index[i].inputs):
            return True
    return False


def _spatial(graph: Graph, op: Op, memo: TilingMemo) -> Spatial:
    sp = memo.spatial.get(op.index)
    if sp is None:
        sp = spatial_of(graph, op)
        assert sp is not None
        memo.spatial[op.index] = sp
    return sp


def tile_stage(graph: Graph, shape: StageShape, grid: tuple[int, int],
               memo: TilingMemo | None = None) -> Tiling | None:
    """Regions, access kinds and costs of a stage for a grid; None if not tileable.
    ``memo``: kept across the calls on one graph (the candidates of every stage and
    grid), see :class:`TilingMemo`."""
    y = shape.output
    _, oh, ow, _ = graph.tensors[y].shape
    gh, gw = grid
    if not (1 <= gh <= oh and 1 <= gw <= ow):
        return None
    # Regions are separable: a patch's rows depend only on its grid row and its columns
    # only on its grid column (windows map each axis on its own, unions take each
    # axis's min and max), so rows and columns propagate apart, gh + gw ranges per
    # tensor instead of gh * gw regions; the patches are their products (raster order).
    memo = memo if memo is not None else TilingMemo()
    ops = [graph.op_by_index[i] for i in shape.ops]
    rows_or_none = _axis_spans(graph, shape, 0, gh, memo)
    cols_or_none = _axis_spans(graph, shape, 1, gw, memo)
    if rows_or_none is None or cols_or_none is None:
        return None
    rows, cols = rows_or_none, cols_or_none
    # The refusals first (most candidates end at one), from each axis's spans alone
    if (memo.refused[(shape.ops, shape.output, 0, gh)]
            or memo.refused[(shape.ops, shape.output, 1, gw)]):
        return None
    spatial = memo.stage_spatial.get(shape.ops)
    if spatial is None:
        spatial = memo.stage_spatial[shape.ops] = {
            op.index: _spatial(graph, op, memo) for op in ops if not _is_transpose(op)}
    final: dict[int, list[Region]] = {
        t: [(r[0], r[1], c[0], c[1]) for r in _spans(rs) for c in _spans(cols[t])]
        for t, rs in rows.items()}
    access: dict[int, str] = {}
    tile_bytes: dict[int, int] = {}
    for t in final:
        tr = t in shape.transposed
        _h, w, c = _nhwc(graph, t, tr)
        elem = DTYPE_SIZE[graph.tensors[t].dtype]
        rs_t, cs_t = _spans(rows[t]), _spans(cols[t])
        full_width = all(a == 0 and b == w for a, b in cs_t)
        biggest = max(b - a for a, b in rs_t) * max(b - a for a, b in cs_t) * c * elem
        if t in shape.inputs:
            kind = "input" if (full_width or tr) else "gather"
        elif t == y:
            kind = "output" if full_width else "scatter"
        else:
            kind = "tile"
        access[t] = kind
        tile_bytes[t] = biggest if kind in ("gather", "scatter", "tile") else 0
    macs = base = 0
    for op in ops:
        sp3 = spatial.get(op.index)
        if sp3 is None or not sp3.macs_per_pixel:
            continue
        out_h, out_w = graph.tensors[op.outputs[0]].shape[1:3]
        base += sp3.macs_per_pixel * out_h * out_w
        out = op.outputs[0]
        macs += (sp3.macs_per_pixel * sum(b - a for a, b in _spans(rows[out]))
                 * sum(b - a for a, b in _spans(cols[out])))
    tiling = Tiling(shape, grid, final, access, tile_bytes, macs, base)
    tiling.steps = {x: _steps(graph, tiling, x) for x in shape.inputs}
    return tiling


def _steps(graph: Graph, tiling: Tiling, x: int) -> list[Step]:
    """Per patch (raster order): bytes of the full input x read, of the full output
    written."""
    y = tiling.shape.output
    _, _, wo, co = graph.tensors[y].shape
    eo = DTYPE_SIZE[graph.tensors[y].dtype]
    tr = x in tiling.shape.transposed
    h, w, c = _nhwc(graph, x, tr)
    ex = DTYPE_SIZE[graph.tensors[x].dtype]
    steps: list[Step] = []
    for rx, ry in zip(tiling.regions[x], tiling.regions[y], strict=True):
        if tr:  # NCHW: rows of every channel plane; the first plane bounds it below
            r_lo = (rx[0] * w + rx[2]) * ex
            r_hi = ((c - 1) * h * w + (rx[1] - 1) * w + rx[3]) * ex
        else:
            r_lo = (rx[0] * w + rx[2]) * c * ex
            r_hi = ((rx[1] - 1) * w + rx[3]) * c * ex
        w_lo = (ry[0] * wo + ry[2]) * co * eo
        w_hi = ((ry[1] - 1) * wo + ry[3]) * co * eo
        steps.append((r_lo, r_hi, w_lo, w_hi))
    return steps


def grids_for(graph: Graph, shape: StageShape, max_patches: int = 64) -> list[tuple[int, int]]:
    """Candidate grids: square-ish grids and horizontal strips."""
    _, oh, ow, _ = graph.tensors[shape.output].shape
    out: set[tuple[int, int]] = set()
    for g in range(1, 9):
        for gh, gw in ((g, g), (g, g + 1), (g + 1, g)):
            if gh <= oh and gw <= ow and gh * gw <= max_patches:
                out.add((gh, gw))
    for g in range(2, min(oh, 24) + 1):
        out.add((g, 1))
    out.discard((1, 1))
    return sorted(out, key=lambda t: (t[0] * t[1], t))


@dataclass
class StageLayout:
    buffers: list[Buffer]
    overlaps: list[Overlap]
    internal: set[int]  # tensors that exist only as tiles


def stage_roots(roots: Mapping[int, int], tiling: Tiling) -> dict[int, int]:
    """Aliases with every alias touching a tile-only tensor removed (each tile is its own
    buffer; the stage's full input and output keep theirs)."""
    inside = {t for t, k in tiling.access.items() if k in ("tile", "gather", "scatter")}
    inside -= set(tiling.shape.inputs) | {tiling.shape.output}
    return {t: r for t, r in roots.items() if t not in inside and r not in inside}


def stage_buffers(graph: Graph, order: Sequence[int], buffers: Sequence[Buffer],
                  tiling: Tiling) -> StageLayout:
    """The arena buffers with the stage tiled, and the stage-level permissions."""
    shape = tiling.shape
    last = shape.length - 1
    y = shape.output
    internal = {t for t, k in tiling.access.items() if k == "tile"}
    pos = {graph.ops[k].index: i for i, k in enumerate(order)}
    out: list[Buffer] = []
    for b in buffers:
        t = b.tensor
        if t is not None and t in internal:
            b = replace(b, size=tiling.tile_bytes[t])
        elif t is not None and t in shape.inputs:
            b = replace(b, last=max(b.last, last))
        elif t == y:
            b = replace(b, first=0)
        out.append(b)
    for t, kind in sorted(tiling.access.items()):
        if kind == "gather":
            users = [pos[o] for o in shape.ops
                     if t in graph.activations(graph.op_by_index[o])]
            out.append(Buffer(f"g{t}", None, tiling.tile_bytes[t], min(users), max(users)))
        elif kind == "scatter":
            p = pos[graph.producer[t]]
            out.append(Buffer(f"c{t}", None, tiling.tile_bytes[t], p, p))
    overlaps: list[Overlap] = []
    by_key = {b.key: b for b in out}
    for x in shape.inputs:
        xb = by_key.get(f"t{x}")
        if xb is None or xb.last != last or x in graph.outputs:
            continue  # read after the stage too: must stay intact
        if xb.size != graph.tensors[x].nbytes:
            continue
        fwd, bwd = safe_deltas(tiling.steps[x])
        if len(shape.inputs) > 1:
            bwd = 1 << 62
        overlaps.append(Overlap(
            f"t{x}", f"t{y}", 0, last, fwd if fwd < (1 << 61) else None,
            bwd if bwd > -(1 << 61) else None,
            f"stage of ops {shape.ops[0]}..{shape.ops[-1]} patch by patch"))
    return StageLayout(out, overlaps, internal)
