"""The shape functions of the operator definitions checked against a built model."""

from __future__ import annotations

from collections import Counter

from nnopt.ir import Graph
from nnopt.ops import DEFINITIONS
from nnopt.ops.shapes import ShapeQuery, output_shapes


def inferred_shape_mismatches(graph: Graph, opcode: str) -> tuple[int, list[int]]:
    """How many ``opcode`` ops of ``graph`` have a shape function result, and the ops
    whose inferred output shapes differ from the stored ones."""
    checked: Counter[str] = Counter()
    bad = []
    for k, op in enumerate(graph.ops):
        if op.opcode != opcode:
            continue
        d = DEFINITIONS[op.opcode]
        q = ShapeQuery(op, tuple(graph.tensors[t].shape if t >= 0 else None
                                 for t in op.inputs),
                       tuple(graph.tensors[t].array() if t >= 0 and graph.tensors[t].is_constant
                             else None for t in op.inputs))
        got = output_shapes(d.infer_shape, d.elementwise, q)
        if got is None:
            continue
        checked[opcode] += 1
        if got != tuple(graph.tensors[t].shape for t in op.outputs):
            bad.append(k)
    return checked[opcode], bad
