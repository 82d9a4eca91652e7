"""The persistent state region: where the variable tensors live (SVDF's activation
state, an LSTM's cell and output state).

A variable tensor keeps its value from one invocation to the next, so it can share
its bytes with nothing: it gets its own aligned slot in a region beside the arena,
which the arena planner never sees (:meth:`nnopt.ir.Graph.activations` leaves state
out, so reordering and overlap planning go on over everything else). Every slot starts
as TFLM's ``MicroInterpreterGraph::ResetVariableTensors`` sets it: each byte the zero
point for int8, else 0; a resource variable as its ``Tensor.init`` (TFLM's fill, or
the constant CALL_ONCE's init subgraph assigns it: :mod:`nnopt.frontend.variables`).
"""

from __future__ import annotations

from ..cdefs import DType
from ..ir import Graph
from ..plan import StateEntry


def _align_up(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def reset_byte(graph: Graph, t: int) -> int:
    """The byte every element of state tensor ``t`` is reset to (TFLM's rule)."""
    tensor = graph.tensors[t]
    if tensor.dtype == DType.INT8 and tensor.quant is not None:
        return tensor.quant.zero_point[0] & 0xFF
    return 0


def plan_state(graph: Graph, align: int) -> tuple[tuple[StateEntry, ...], int]:
    """The state region's slots (in tensor order) and its size in bytes."""
    entries: list[StateEntry] = []
    offset = 0
    for t in graph.state:
        size = graph.tensors[t].nbytes
        init = graph.tensors[t].init
        if init is None or len(set(init)) <= 1:
            byte = init[0] if init else reset_byte(graph, t)
            entries.append(StateEntry(t, offset, size, byte))
        else:  # a resource variable CALL_ONCE set to a constant
            entries.append(StateEntry(t, offset, size, 0, init.hex()))
        offset = _align_up(offset + size, align)
    return tuple(entries), offset
