"""Operator fusion that removes whole tensors (Unlu 2020, generalised).

- ``fuse_max_pool``: a MAX_POOL_2D with VALID padding and stride >= filter (windows do
  not overlap), whose input is the only use of the output of an op whose definition
  absorbs one (``OpDef.absorbs_max_pool``: convolution, depthwise convolution), is
  folded into that convolution: the conv computes each pooling window and writes only
  its maximum, so the full-resolution conv output never exists. Bit-exact: max-pool on
  int8 needs equal input/output quantisation, and max commutes with the monotonic fused
  activations.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from ..cdefs import DType
from ..ir import ConvOptions, Graph, Op, PoolOptions
from ..ops import known


@dataclass(frozen=True)
class Fusion:
    op: int  # index of the op that was folded away
    into: int  # index of the op that now does its work
    kind: str  # "max_pool"



def fold_ops(graph: Graph, replaced: Mapping[int, Op], removed: AbstractSet[int],
             fusions: list[Fusion]) -> tuple[Graph, list[Fusion]]:
    """A folding pass's result: ``graph`` with the ops of ``replaced`` (by index) swapped
    in and those of ``removed`` dropped, verified, and its ``fusions``; ``graph`` itself
    when nothing was folded."""
    if not fusions:
        return graph, []
    ops = tuple(replaced.get(op.index, op) for op in graph.ops if op.index not in removed)
    folded = replace(graph, ops=ops)
    folded.verify()
    return folded, fusions

def _fusable_pool(graph: Graph, pool: Op) -> Op | None:
    if pool.opcode != "MAX_POOL_2D" or not isinstance(pool.options, PoolOptions):
        return None
    o = pool.options
    if o.padding != "VALID" or o.stride_h < o.filter_h or o.stride_w < o.filter_w:
        return None
    if o.activation != "NONE":
        return None
    src = pool.inputs[0]
    prod = graph.producer.get(src)
    if prod is None or src in graph.outputs or len(graph.consumers.get(src, ())) != 1:
        return None
    conv = graph.op_by_index[prod]
    d = known(conv)
    if d is None or not d.absorbs_max_pool:
        return None
    if not isinstance(conv.options, ConvOptions) or conv.options.fused_max_pool is not None:
        return None
    tin, tout = graph.tensors[src], graph.tensors[pool.outputs[0]]
    if tin.dtype != tout.dtype or tin.quant != tout.quant:
        return None
    if tin.dtype not in (DType.INT8, DType.FLOAT32):
        return None  # the convolutions' fused pool (nnrt_conv_pool_t) is int8/float32 only
    return conv


def fuse_max_pool(graph: Graph) -> tuple[Graph, list[Fusion]]:
    """Return the graph with every fusable conv -> max-pool pair folded."""
    replaced: dict[int, Op] = {}
    removed: set[int] = set()
    fusions: list[Fusion] = []
    for op in graph.ops:
        conv = _fusable_pool(graph, op)
        if conv is None:
            continue
        assert isinstance(conv.options, ConvOptions) and isinstance(op.options, PoolOptions)
        replaced[conv.index] = replace(
            conv, outputs=op.outputs,
            options=replace(conv.options, fused_max_pool=op.options))
        removed.add(op.index)
        fusions.append(Fusion(op.index, conv.index, "max_pool"))
    return fold_ops(graph, replaced, removed, fusions)
