"""Resource variables and CALL_ONCE init subgraphs -> persistent state tensors.

What TF's converter writes for a stateful model (a ``tf.Variable`` updated per call):
subgraph 0 starts with ``CALL_ONCE`` (its init subgraph: ``VAR_HANDLE`` and
``ASSIGN_VARIABLE`` of a constant), then ``VAR_HANDLE`` -> ``READ_VARIABLE`` -> ops ->
``ASSIGN_VARIABLE``. TFLM (tensorflow/lite/micro/kernels/var_handle.cc,
read_variable.cc, assign_variable.cc, call_once.cc, micro_resource_variable.cc) gives
each (container, shared_name) one buffer, allocated by the first ASSIGN_VARIABLE it
prepares (subgraph 0 first) with that value tensor's size and filled with its zero
point (``int8_t``; 0 unquantised); CALL_ONCE runs the init subgraph at the first
invocation; reads and assigns are ``memcpy``.

Here each variable becomes one variable tensor of subgraph 0 (the first VAR_HANDLE's
output, with the value's shape, dtype and quantisation) in the persistent state region
(:mod:`nnopt.passes.state`); READ_VARIABLE and ASSIGN_VARIABLE read that tensor
(:mod:`nnopt.ops.variable`). The init subgraphs are run here, at compile time: their
constant assignments are the variables' contents at reset (``Tensor.init``), which the
model's reset sets before the first invocation. Refused by name: an init subgraph with
any other op (nnopt evaluates only constant assignments), a variable read before its
CALL_ONCE, a variable never assigned, sizes that disagree, a resource as a graph input
or output or read by another op (IF and WHILE: :mod:`.control_flow`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import tflite

from ..errors import UnsupportedError
from ..ir import (
    CallOnceOptions,
    Expansion,
    IfOptions,
    Op,
    OpOptions,
    Tensor,
    VarHandleOptions,
    WhileOptions,
)
from ..ops import DEFINITIONS

_VAR_HANDLE = "VAR_HANDLE"
_CALL_ONCE = "CALL_ONCE"
_HINT = ("nnopt compiles resource variables used as TF's converter writes them: "
         "CALL_ONCE first, its init subgraph only VAR_HANDLE and ASSIGN_VARIABLE of "
         "constants, then READ_VARIABLE / ASSIGN_VARIABLE of values of the variable's "
         "dtype and size")


@dataclass(frozen=True)
class Subgraph:
    """One subgraph as the TFLite reader read it."""

    index: int
    tensors: list[Tensor]
    ops: list[Op]
    resources: frozenset[int]  # resource-handle tensors (placeholders)
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    unknown: Mapping[str, list[int]] = field(default_factory=dict)
    # build-time weight expansions (frontend.densify, frontend.float16)
    expansions: tuple[Expansion, ...] = ()


def _string(raw: bytes | None) -> str:
    return raw.decode(errors="replace") if raw else ""


def read_structural(opcode: str, op: Any, k: int, subgraph: int,
                    source: str) -> OpOptions | None:
    """The options of an op the frontend resolves (VAR_HANDLE, CALL_ONCE here; IF and
    WHILE in :mod:`.control_flow`); None for any other opcode."""
    if opcode == _VAR_HANDLE:
        o = _table(tflite.VarHandleOptions, op)
        return VarHandleOptions(_string(o.Container()) if o else "",
                                _string(o.SharedName()) if o else "")
    if opcode == _CALL_ONCE:
        o = _table(tflite.CallOnceOptions, op)
        return CallOnceOptions(int(o.InitSubgraphIndex()) if o else 0)
    if opcode == "IF":  # inlined by frontend.control_flow
        o = _table(tflite.IfOptions, op)
        return IfOptions(int(o.ThenSubgraphIndex()) if o else 0,
                         int(o.ElseSubgraphIndex()) if o else 0)
    if opcode == "WHILE":  # inlined by frontend.control_flow
        o = _table(tflite.WhileOptions, op)
        return WhileOptions(int(o.CondSubgraphIndex()) if o else 0,
                            int(o.BodySubgraphIndex()) if o else 0)
    return None


def _table(cls: Any, op: Any) -> Any:
    t = op.BuiltinOptions()
    if t is None:
        return None
    o = cls()
    o.Init(t.Bytes, t.Pos)
    return o


def _access(op: Op) -> str | None:
    d = DEFINITIONS.get(op.opcode)
    return d.variable if d is not None else None


@dataclass
class _Variable:
    name: str  # shared_name
    container: str
    value: Tensor | None = None  # the first value assigned (TFLM's Allocate)
    init_writes: list[tuple[Tensor, str]] = field(default_factory=list)  # (const, where)


class _Variables:
    """(container, shared_name) -> variable id, as TFLM's ``FindId``: an empty
    container matches any."""

    def __init__(self) -> None:
        self.vars: list[_Variable] = []

    def id_of(self, o: VarHandleOptions) -> int:
        for i, v in enumerate(self.vars):
            if v.name == o.shared_name and (not o.container or o.container == v.container):
                return i
        self.vars.append(_Variable(o.shared_name, o.container))
        return len(self.vars) - 1


def _refuse(source: str, sg: int, op: Op, why: str) -> UnsupportedError:
    where = f"subgraph {sg} " if sg else ""
    return UnsupportedError(f"{source}: {where}op {op.index} ({op.opcode}): {why}",
                            hint=_HINT)


def _handles(sub: Subgraph, variables: _Variables, source: str) -> dict[int, int]:
    """Resource tensor -> variable id, from the subgraph's VAR_HANDLE ops."""
    out: dict[int, int] = {}
    for op in sub.ops:
        if isinstance(op.options, VarHandleOptions):
            if len(op.outputs) != 1 or op.outputs[0] not in sub.resources:
                raise _refuse(source, sub.index, op, "needs one resource output")
            out[op.outputs[0]] = variables.id_of(op.options)
    for t in (*sub.inputs, *sub.outputs):
        if t in sub.resources:
            raise UnsupportedError(
                f"{source}: subgraph {sub.index} has resource tensor {t} "
                f"({sub.tensors[t].name}) as an input or output", hint=_HINT)
    for op in sub.ops:
        for pos, t in enumerate(op.inputs):
            if t in sub.resources and (pos != 0 or _access(op) is None):
                raise _refuse(source, sub.index, op,
                              f"takes resource tensor {t} ({sub.tensors[t].name}) as "
                              f"input {pos}; only READ_VARIABLE and ASSIGN_VARIABLE "
                              "take a variable")
            if pos == 0 and _access(op) is not None and t not in out:
                raise _refuse(source, sub.index, op,
                              f"input 0 (tensor {t}) is not a VAR_HANDLE's resource")
    return out


def _default_fill(value: Tensor) -> int:
    """The byte TFLM's Allocate fills a new variable with: the value tensor's zero
    point cast to int8, 0 without quantisation."""
    return value.quant.zero_point[0] & 0xFF if value.quant is not None else 0


def resolve(main: Subgraph, read: Callable[[int], Subgraph], n_subgraphs: int,
            source: str) -> tuple[list[Tensor], list[Op]]:
    """Subgraph 0's tensors and ops with its resource variables as state tensors and
    its CALL_ONCE ops applied at reset (module docstring)."""
    variables = _Variables()
    handles = _handles(main, variables, source)
    # CALL_ONCE: each init subgraph run here, once, in file order
    first_call: dict[int, int] = {}  # variable id -> position of the CALL_ONCE setting it
    for pos, op in enumerate(main.ops):
        if not isinstance(op.options, CallOnceOptions):
            continue
        k = op.options.init_subgraph_index
        if op.inputs or op.outputs or not 0 < k < n_subgraphs:
            raise _refuse(source, 0, op, f"init subgraph {k} of {n_subgraphs} subgraphs, "
                          f"{len(op.inputs)} inputs, {len(op.outputs)} outputs (TFLM "
                          "requires none and an existing subgraph)")
        sub = read(k)
        sub_handles = _handles(sub, variables, source)
        for sop in sub.ops:
            if isinstance(sop.options, VarHandleOptions):
                continue
            if _access(sop) != "assign":
                raise _refuse(source, k, sop, f"in the init subgraph of CALL_ONCE op "
                              f"{op.index}: nnopt runs an init subgraph at compile time "
                              "and takes only VAR_HANDLE and ASSIGN_VARIABLE of constants")
            if len(sop.inputs) != 2:
                raise _refuse(source, k, sop, "needs a variable and a value")
            value = sub.tensors[sop.inputs[1]]
            if not value.is_constant:
                raise _refuse(source, k, sop, f"assigns tensor {value.index} "
                              f"({value.name}), not a constant: nnopt runs an init "
                              "subgraph at compile time")
            vid = sub_handles[sop.inputs[0]]
            variables.vars[vid].init_writes.append((value, f"subgraph {k} op {sop.index}"))
            first_call.setdefault(vid, pos)
    # TFLM's Allocate: the first ASSIGN_VARIABLE prepared, subgraph 0 first (an IF's
    # branches, inlined, count as subgraph 0 here)
    for op in main.ops:
        if _access(op) == "assign" and len(op.inputs) == 2:
            v = variables.vars[handles[op.inputs[0]]]
            if v.value is None:
                v.value = main.tensors[op.inputs[1]]
    for v in variables.vars:
        if v.value is None and v.init_writes:
            v.value = v.init_writes[0][0]

    # the accesses of subgraph 0: after the CALL_ONCE that sets the variable
    for pos, op in enumerate(main.ops):
        kind = _access(op)
        if kind is None:
            continue
        vid = handles[op.inputs[0]]
        v = variables.vars[vid]
        if v.value is None:
            raise _refuse(source, 0, op, f"reads variable {v.name!r}, which no "
                          "ASSIGN_VARIABLE sets (TFLM has no buffer for it)")
        if vid in first_call and pos < first_call[vid]:
            raise _refuse(source, 0, op, f"accesses variable {v.name!r} before CALL_ONCE "
                          f"op {main.ops[first_call[vid]].index} initialises it (nnopt "
                          "applies an init subgraph at reset, before the first op)")
        n_in, n_out = (2, 0) if kind == "assign" else (1, 1)
        if len(op.inputs) != n_in or len(op.outputs) != n_out:
            raise _refuse(source, 0, op, f"{len(op.inputs)} inputs and {len(op.outputs)} "
                          f"outputs; TFLM requires {n_in} and {n_out}")
        other = main.tensors[op.inputs[1] if kind == "assign" else op.outputs[0]]
        if other.dtype != v.value.dtype or other.nbytes != v.value.nbytes:
            raise _refuse(source, 0, op, f"tensor {other.index} ({other.name}, "
                          f"{other.dtype.name}, {other.nbytes} B) does not match variable "
                          f"{v.name!r} ({v.value.dtype.name}, {v.value.nbytes} B)")

    tensors = list(main.tensors)
    canonical: dict[int, int] = {}  # variable id -> its state tensor in subgraph 0
    for t, vid in handles.items():
        canonical.setdefault(vid, t)
    for vid, t in canonical.items():
        tensors[t] = _state_tensor(variables.vars[vid], t, source)
    ops: list[Op] = []
    for op in main.ops:
        if isinstance(op.options, (VarHandleOptions, CallOnceOptions)):
            continue  # resolved: the handles are the state tensors, CALL_ONCE the reset
        if _access(op) is not None:
            op = replace(op, inputs=(canonical[handles[op.inputs[0]]], *op.inputs[1:]))
        ops.append(op)
    return tensors, ops


def _state_tensor(v: _Variable, index: int, source: str) -> Tensor:
    """The variable as a state tensor, its reset contents TFLM's fill overlaid by the
    init subgraphs' constants."""
    assert v.value is not None
    value = v.value
    init = bytearray([_default_fill(value)] * value.nbytes)
    for const, where in v.init_writes:
        if const.dtype != value.dtype or const.nbytes != value.nbytes:
            raise UnsupportedError(
                f"{source}: {where} assigns {const.nbytes} B of {const.dtype.name} to "
                f"variable {v.name!r} of {value.nbytes} B of {value.dtype.name}", hint=_HINT)
        assert const.data is not None
        init[:] = const.data
    return Tensor(index, v.name or value.name, value.shape, value.dtype, value.quant, None,
                  True, bytes(init))

