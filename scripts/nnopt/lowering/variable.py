"""READ_VARIABLE and ASSIGN_VARIABLE -> ``nnrt_copy_x8`` (``nnrt/kernels/shape.h``).

After :mod:`nnopt.frontend.variables`, input 0 of both is the variable's state tensor
(persistent region). READ_VARIABLE copies the state into its output;
ASSIGN_VARIABLE copies its value (input 1: an activation or a constant) into the state.
Both are byte copies of the variable's size, as TFLM's ``MicroResourceVariables``
``Read`` and ``Assign`` are (``memcpy``); TFLM only debug-checks that the sizes agree,
nnopt requires the same dtype and size.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cdefs import DType
from ..ir import Graph, Op, Tensor
from .base import EmitContext, LoweringBase
from .call import Body
from .common import c_call, refuse, tensor_desc

_SUPPORTED = ("a resource variable (its VAR_HANDLE resolved to a state tensor) and a "
              "tensor of the variable's dtype and size")


class VariableLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/shape.h",)
    dtypes: Sequence[str] = tuple(d.name.lower() for d in DType)

    def _tensors(self, graph: Graph, op: Op) -> tuple[Tensor, Tensor, bool]:
        """(state, the other tensor, whether the op writes the state)."""
        writes = op.opcode == "ASSIGN_VARIABLE"
        n_in, n_out = (2, 0) if writes else (1, 1)
        if len(op.inputs) != n_in or len(op.outputs) != n_out or min(op.inputs) < 0:
            raise refuse(op, f"needs {n_in} input(s) and {n_out} output(s)", _SUPPORTED)
        state = graph.tensors[op.inputs[0]]
        if not state.is_state:
            raise refuse(op, f"input 0 {tensor_desc(state)} is not a resource variable",
                         _SUPPORTED)
        other = graph.tensors[op.inputs[1] if writes else op.outputs[0]]
        if other.dtype != state.dtype or other.nbytes != state.nbytes:
            raise refuse(op, f"{tensor_desc(other)} does not match the variable "
                         f"{tensor_desc(state)}", _SUPPORTED)
        return state, other, writes

    def check(self, graph: Graph, op: Op) -> None:
        self._tensors(graph, op)

    def emit(self, ctx: EmitContext) -> Body:
        state, other, writes = self._tensors(ctx.graph, ctx.op)
        src, dst = (other, state) if writes else (state, other)
        return c_call("nnrt_copy_x8", [ctx.ptr(src.index), ctx.ptr(dst.index),
                                       f"{state.nbytes}u"])


VARIABLE = VariableLowering()
