"""IF -> both branches inlined into subgraph 0, its outputs selected on the condition.

TFLM's IF (tensorflow/lite/micro/kernels/if.cc) reads its bool condition (one
element), copies its other inputs into the then or else subgraph's inputs (raw bytes;
type and size must agree), runs that subgraph and copies its outputs into the IF's
outputs. Here both branch subgraphs become ordinary ops of subgraph 0 (their tensors
appended, renamed ``if<k>/then/...``; a branch input is the IF's argument itself), and
each IF output is a SELECT_V2 of the condition between the two branches' outputs: the
condition is read at run time, the values are copied raw as TFLM copies them. Both
branches run, which gives TFLM's outputs because a branch without state or resource
variables is a pure function of its inputs; the planner then reorders and overlaps
the branches' tensors with everything else. The ops are renumbered in the new order.

Refused by name: a branch with a resource variable, a variable tensor, CALL_ONCE or a
nested IF (its effects would happen on the branch not taken), an operator nnopt has no
definition for, inputs or outputs whose dtype, shape or quantisation differ from the
IF's, a condition that is not one bool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import CallOnceOptions, IfOptions, Op, Tensor, VarHandleOptions
from ..ops import DEFINITIONS, supported_list
from .variables import Subgraph

_HINT = ("nnopt inlines an IF whose branches are pure (no variables, no nested control "
         "flow) and take and return tensors of the IF's own dtypes, shapes and "
         "quantisation")


def _select_opcode() -> str:
    return next(d.opcode for d in DEFINITIONS.values() if d.select)


def _refuse(source: str, op: Op, why: str) -> UnsupportedError:
    return UnsupportedError(f"{source}: op {op.index} (IF): {why}", hint=_HINT)


def _same(a: Tensor, b: Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.quant == b.quant


def inline_ifs(tensors: list[Tensor], ops: list[Op], read: Callable[[int], Subgraph],
               n_subgraphs: int, source: str) -> tuple[list[Tensor], list[Op]]:
    """Subgraph 0's tensors and ops with every IF inlined (module docstring)."""
    if not any(isinstance(op.options, IfOptions) for op in ops):
        return tensors, ops
    tensors = list(tensors)
    out: list[Op] = []
    for op in ops:
        if not isinstance(op.options, IfOptions):
            out.append(op)
            continue
        if not op.inputs or op.inputs[0] < 0:
            raise _refuse(source, op, "has no condition input")
        cond = tensors[op.inputs[0]]
        if cond.dtype != DType.BOOL or cond.num_elements != 1:
            raise _refuse(source, op, f"condition tensor {cond.index} ({cond.name}) is "
                          f"{cond.dtype.name} {list(cond.shape)}; TFLM takes one bool")
        picked = []
        for label, k in (("then", op.options.then_subgraph_index),
                         ("else", op.options.else_subgraph_index)):
            if not 0 < k < n_subgraphs:
                raise _refuse(source, op, f"{label} subgraph {k} does not exist (the "
                              f"model has {n_subgraphs})")
            picked.append(_inline(tensors, out, op, read(k), label, source))
        select = _select_opcode()
        for i, y in enumerate(op.outputs):
            yt = tensors[y]
            if len(cond.shape) > len(yt.shape):
                raise _refuse(source, op, f"condition {list(cond.shape)} has more "
                              f"dimensions than output {y} {list(yt.shape)}")
            out.append(Op(op.index, select, (cond.index, picked[0][i], picked[1][i]), (y,)))
    return tensors, [replace(o, index=k) for k, o in enumerate(out)]


def _inline(tensors: list[Tensor], out: list[Op], op: Op, sub: Subgraph, label: str,
            source: str) -> list[int]:
    """Append branch ``sub``'s tensors and ops; returns its outputs as tensor ids."""
    args, results = op.inputs[1:], op.outputs
    where = f"{label} subgraph {sub.index}"
    if len(sub.inputs) != len(args) or len(sub.outputs) != len(results):
        raise _refuse(source, op, f"{where} takes {len(sub.inputs)} inputs and returns "
                      f"{len(sub.outputs)}; the IF has {len(args)} and {len(results)}")
    ids: dict[int, int] = {}
    for t, a in zip(sub.inputs, args, strict=True):
        if not _same(sub.tensors[t], tensors[a]):
            raise _refuse(source, op, f"{where} input {t} ({sub.tensors[t].name}) differs "
                          f"in dtype, shape or quantisation from IF input {a}")
        ids[t] = a

    def local(t: int) -> int:
        if t < 0:
            return t
        if t in sub.resources:
            raise _refuse(source, op, f"{where} uses resource tensor {t}: a variable in a "
                          "branch would change on the branch not taken too")
        if t not in ids:
            tensor = sub.tensors[t]
            if tensor.variable:
                raise _refuse(source, op, f"{where} keeps variable tensor {t} "
                              f"({tensor.name}): state in a branch is not supported")
            ids[t] = len(tensors)
            tensors.append(replace(tensor, index=len(tensors),
                                   name=f"if{op.index}/{label}/{tensor.name}"))
        return ids[t]

    for sop in sub.ops:
        d = DEFINITIONS.get(sop.opcode)
        what = f"{where} op {sop.index} ({sop.opcode})"
        if isinstance(sop.options, (IfOptions, CallOnceOptions, VarHandleOptions)) \
                or (d is not None and d.variable is not None):
            raise _refuse(source, op, f"{what} is control flow or a resource variable, "
                          "inside a branch")
        if d is None:
            raise _refuse(source, op, f"{what} is not an operator nnopt supports; "
                          f"supported: {supported_list()}")
        out.append(Op(op.index, sop.opcode, tuple(local(t) for t in sop.inputs),
                      tuple(local(t) for t in sop.outputs), sop.options))
    picked = []
    for t, y in zip(sub.outputs, results, strict=True):
        lt = local(t)
        src, dst = tensors[lt], tensors[y]
        if src.dtype != dst.dtype or src.shape != dst.shape:
            raise _refuse(source, op, f"{where} output {t} ({src.name}, {src.dtype.name} "
                          f"{list(src.shape)}) differs from IF output {y} ({dst.dtype.name} "
                          f"{list(dst.shape)})")
        picked.append(lt)
    return picked
