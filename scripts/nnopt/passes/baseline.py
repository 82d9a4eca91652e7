"""The arena TFLM's planner would give a model: the baseline the report compares with.

TFLM (``GreedyMemoryPlanner``, tensorflow/lite/micro/memory_planner/) runs the operators
in the file's order, copies where nnopt aliases, runs nothing in place, and places the
buffers largest first, each at the lowest offset free for its lifetime: exactly
:func:`nnopt.passes.arena.greedy_by_size` over the file order's buffers with no alias
and no overlap. Kernel scratch is left out on both sides of the comparison (it is part
of nnopt's arena when a kernel declares one, and TFLM adds its own). On vww_96_int8
this gives 73,728 B, the head TFLM's interpreter reports for that model
(benchmarks/bench_planner.py measures the interpreter itself)."""

from __future__ import annotations

from ..ir import Graph
from .arena import arena_size, greedy_by_size
from .lifetimes import buffers_for


def tflm_arena_bytes(graph: Graph, align: int = 16) -> int:
    """TFLM's planned non-persistent arena for ``graph`` as imported (file order,
    greedy by size, no aliases, no in-place execution, ``align``-byte offsets)."""
    buffers = buffers_for(graph, tuple(range(len(graph.ops))), {}, {})
    if not buffers:
        return 0
    return arena_size(buffers, greedy_by_size(buffers, align), align)
