"""Resource-variable accesses: READ_VARIABLE and ASSIGN_VARIABLE. Traits only; the
lowering is :mod:`nnopt.lowering.variable`.

In a .tflite file both take a resource handle (VAR_HANDLE's output) as input 0. The
frontend (:mod:`nnopt.frontend.variables`) resolves each handle to one variable tensor
in the persistent state region, so in the IR READ_VARIABLE reads that state tensor and
writes its output (a copy, as TFLM's ``MicroResourceVariables::Read``), and
ASSIGN_VARIABLE reads the state tensor and the value and writes no output (it copies the
value into the state, as ``MicroResourceVariables::Assign``). The planner keeps the ops
touching one state tensor in file order (:func:`nnopt.passes.lifetimes.schedule_problem`).
"""

from __future__ import annotations

from ..lowering import variable as variable_lowering
from .base import ANY, OpDef, audited, tflm

DEFINITIONS = (
    OpDef("READ_VARIABLE", "READ", variable_lowering.VARIABLE, blob=False, variable="read"),
    OpDef("ASSIGN_VARIABLE", "ASSIGN", variable_lowering.VARIABLE, blob=False, variable="assign"),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "READ_VARIABLE": tflm("read_variable.cc", ANY),
    "ASSIGN_VARIABLE": tflm("assign_variable.cc", ANY),
})
