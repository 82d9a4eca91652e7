"""The plan facts (:mod:`nnopt.planfacts`) of a planned graph and its Plan, computed once.

What codegen and the blob writer would otherwise re-derive from the passes: the ops
stored as aliases (:func:`.lifetimes.is_alias_op` where the plan made the output an
alias), each op's access pattern (:func:`.regions.spatial_of`), each window op's kernel
variant query (:func:`.inplace_ops.variant_query`) and, for window ops the plan runs row
by row, the bands one kernel call each may produce at the planned offsets
(:func:`.inplace_ops.row_chunks`). :func:`nnopt.planner.plan_model` records the result.
"""

from __future__ import annotations

from ..cdefs import DTYPE_SIZE
from ..ir import Graph, Op
from ..ops import known
from ..plan import Plan
from ..planfacts import Bands, PlanFacts
from .inplace_ops import row_chunks, row_steps, variant_query
from .lifetimes import is_alias_op
from .regions import WINDOW, Spatial, spatial_of


def plan_facts(graph: Graph, plan: Plan) -> PlanFacts:
    """The facts of ``plan`` over its planned ``graph`` (``PlannedModel.graph``)."""
    aliases = {b.tensor for b in plan.buffers if b.alias_of is not None}
    aliased = frozenset(op.index for op in graph.ops
                        if is_alias_op(graph, op) and op.outputs[0] in aliases)
    spatial = {op.index: sp for op in graph.ops if (sp := spatial_of(graph, op)) is not None}
    variants = {i: variant_query(graph, graph.op_by_index[i])
                for i, sp in spatial.items() if sp.kind == WINDOW}
    # outputs stored strided inside a concatenation's output (written into its slice)
    slices = {graph.op_by_index[e.op].outputs[0] for e in plan.inplace_ops
              if e.kind == "concat_slice"}
    bands = {e.op: _bands(graph, plan, graph.op_by_index[e.op], spatial[e.op], e.direction,
                          slices)
             for e in plan.inplace_ops
             if e.kind == "rows" and e.op in spatial and spatial[e.op].kind == WINDOW}
    return PlanFacts(aliased, spatial, variants, bands)


def _bands(graph: Graph, plan: Plan, op: Op, sp: Spatial, direction: str,
           slices: set[int]) -> Bands | None:
    """Bands of rows (pointwise convs: runs of pixels, even where possible: the matrix
    core takes pixel pairs) per kernel call that the planned offsets allow (None: one
    row per call)."""
    x, y = op.inputs[0], op.outputs[0]
    if x in slices or y in slices:
        return None  # strided inside a concatenation's output
    # aliases (element-wise in place) start at their root's offset: bytes as planned
    delta = plan.buffer_of(y).offset - plan.buffer_of(x).offset
    if _pointwise(graph, op, sp):
        tx, ty = graph.tensors[x], graph.tensors[y]
        ix, oy = tx.shape[3] * DTYPE_SIZE[tx.dtype], ty.shape[3] * DTYPE_SIZE[ty.dtype]
        steps = [(q * ix, (q + 1) * ix, q * oy, (q + 1) * oy)
                 for q in range(ty.shape[1] * ty.shape[2])]
        return Bands(tuple(row_chunks(steps, delta, direction, 2)), True)
    return Bands(tuple(row_chunks(row_steps(graph, sp, x), delta, direction)), False)


def _pointwise(graph: Graph, op: Op, sp: Spatial) -> bool:
    """A conv whose output pixel p reads exactly input pixel p (1x1, stride 1, no
    padding): runs of pixels need not follow rows."""
    d = known(op)
    if d is None or d.window != "conv":
        return False
    w = graph.tensors[op.inputs[1]]
    return (w.shape[1] == 1 and w.shape[2] == 1 and sp.h.stride == 1 and sp.w.stride == 1
            and sp.h.pad == 0 and sp.w.pad == 0)
