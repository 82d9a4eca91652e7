"""IF -> both branches inlined into subgraph 0, its outputs selected on the condition.

TFLM's IF (tensorflow/lite/micro/kernels/if.cc) reads its bool condition (one
element), copies its other inputs into the then or else subgraph's inputs (raw bytes;
type and size must agree), runs that subgraph and copies its outputs into the IF's
outputs. Here both branch subgraphs become ordinary ops of subgraph 0 (their tensors
appended, renamed ``if<k>/then/...``; a branch input is the IF's argument itself), and
each IF output is a SELECT_V2 of the condition between the two branches' outputs: the
condition is read at run time, the values are copied raw as TFLM copies them. Both
branches run; that gives TFLM's outputs because a branch is a pure function of its
inputs except for its resource-variable assignments, and each of those assigns
``SELECT_V2(condition, value, current)`` (then; the reverse in else), the current
value read just before: the branch not taken leaves the variable as it was, and the
taken one's reads see its own assignments (the ops of one variable keep their order).
The planner then reorders and overlaps the branches' tensors with everything else.
Runs before :mod:`.variables`, which resolves the handles of both branches too. The
ops are renumbered in the new order.

Refused by name: a branch with a variable tensor (SVDF/LSTM state), CALL_ONCE or a
nested IF, an operator nnopt has no definition for, inputs or outputs whose dtype,
shape or quantisation differ from the IF's, a condition that is not one bool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import CallOnceOptions, IfOptions, Op, Tensor, VarHandleOptions
from ..ops import DEFINITIONS, supported_list
from .variables import Subgraph

_HINT = ("nnopt inlines an IF whose branches hold no nested control flow and no state "
         "tensors, and take and return tensors of the IF's own dtypes, shapes and "
         "quantisation")


def _opcode(**trait: object) -> str:
    """The opcode of the one definition with this trait (SELECT_V2, READ_VARIABLE)."""
    (name, value), = trait.items()
    return next(d.opcode for d in DEFINITIONS.values() if getattr(d, name) == value)


def _refuse(source: str, op: Op, why: str) -> UnsupportedError:
    return UnsupportedError(f"{source}: op {op.index} (IF): {why}", hint=_HINT)


def _same(a: Tensor, b: Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.quant == b.quant


def inline_ifs(main: Subgraph, read: Callable[[int], Subgraph], n_subgraphs: int,
               source: str) -> Subgraph:
    """Subgraph 0 with every IF inlined (module docstring)."""
    if not any(isinstance(op.options, IfOptions) for op in main.ops):
        return main
    tensors = list(main.tensors)
    resources = set(main.resources)
    out: list[Op] = []
    for op in main.ops:
        if not isinstance(op.options, IfOptions):
            out.append(op)
            continue
        if not op.inputs or op.inputs[0] < 0:
            raise _refuse(source, op, "has no condition input")
        cond = tensors[op.inputs[0]]
        if op.inputs[0] in resources or cond.dtype != DType.BOOL or cond.num_elements != 1:
            raise _refuse(source, op, f"condition tensor {cond.index} ({cond.name}) is "
                          f"{cond.dtype.name} {list(cond.shape)}; TFLM takes one bool")
        picked = []
        for label, k in (("then", op.options.then_subgraph_index),
                         ("else", op.options.else_subgraph_index)):
            if not 0 < k < n_subgraphs:
                raise _refuse(source, op, f"{label} subgraph {k} does not exist (the "
                              f"model has {n_subgraphs})")
            picked.append(_Inliner(tensors, resources, out, op, read(k), label,
                                   source).run())
        for i, y in enumerate(op.outputs):
            _check_rank(source, op, cond, tensors[y])
            out.append(Op(op.index, _opcode(select=True),
                          (cond.index, picked[0][i], picked[1][i]), (y,)))
    return replace(main, tensors=tensors, resources=frozenset(resources),
                   ops=[replace(o, index=k) for k, o in enumerate(out)])


def _check_rank(source: str, op: Op, cond: Tensor, y: Tensor) -> None:
    if len(cond.shape) > len(y.shape):
        raise _refuse(source, op, f"condition {list(cond.shape)} has more dimensions "
                      f"than tensor {y.index} ({y.name}) {list(y.shape)} it selects")


class _Inliner:
    """Appends one branch's tensors and ops to subgraph 0's."""

    def __init__(self, tensors: list[Tensor], resources: set[int], out: list[Op], op: Op,
                 sub: Subgraph, label: str, source: str) -> None:
        self.tensors, self.resources, self.out = tensors, resources, out
        self.op, self.sub, self.label, self.source = op, sub, label, source
        self.where = f"{label} subgraph {sub.index}"
        self.ids: dict[int, int] = {}

    def refuse(self, why: str) -> UnsupportedError:
        return _refuse(self.source, self.op, f"{self.where} {why}")

    def new_tensor(self, like: Tensor, name: str) -> int:
        t = len(self.tensors)
        self.tensors.append(replace(like, index=t, data=None, init=None,
                                    name=f"if{self.op.index}/{self.label}/{name}"))
        return t

    def local(self, t: int) -> int:
        if t < 0:
            return t
        if t not in self.ids:
            tensor = self.sub.tensors[t]
            if tensor.variable:
                raise self.refuse(f"keeps variable tensor {t} ({tensor.name}): state in "
                                  "a branch is not supported")
            self.ids[t] = len(self.tensors)
            self.tensors.append(replace(tensor, index=len(self.tensors),
                                        name=f"if{self.op.index}/{self.label}/{tensor.name}"))
            if t in self.sub.resources:
                self.resources.add(self.ids[t])
        return self.ids[t]

    def run(self) -> list[int]:
        """The branch's outputs as tensor ids of subgraph 0."""
        op, sub = self.op, self.sub
        args, results = op.inputs[1:], op.outputs
        if len(sub.inputs) != len(args) or len(sub.outputs) != len(results):
            raise self.refuse(f"takes {len(sub.inputs)} inputs and returns "
                              f"{len(sub.outputs)}; the IF has {len(args)} and "
                              f"{len(results)}")
        for t, a in zip(sub.inputs, args, strict=True):
            if not _same(sub.tensors[t], self.tensors[a]) \
                    or (t in sub.resources) != (a in self.resources):
                raise self.refuse(f"input {t} ({sub.tensors[t].name}) differs in dtype, "
                                  f"shape or quantisation from IF input {a}")
            self.ids[t] = a
        for sop in sub.ops:
            self.inline(sop)
        picked = []
        for t, y in zip(sub.outputs, results, strict=True):
            lt = self.local(t)
            src, dst = self.tensors[lt], self.tensors[y]
            if src.dtype != dst.dtype or src.shape != dst.shape:
                raise self.refuse(f"output {t} ({src.name}, {src.dtype.name} "
                                  f"{list(src.shape)}) differs from IF output {y} "
                                  f"({dst.dtype.name} {list(dst.shape)})")
            picked.append(lt)
        return picked

    def inline(self, sop: Op) -> None:
        d = DEFINITIONS.get(sop.opcode)
        what = f"op {sop.index} ({sop.opcode})"
        if isinstance(sop.options, (IfOptions, CallOnceOptions)):
            raise self.refuse(f"{what} is control flow inside a branch")
        if d is None and not isinstance(sop.options, VarHandleOptions):
            raise self.refuse(f"{what} is not an operator nnopt supports; supported: "
                              f"{supported_list()}")
        ins = tuple(self.local(t) for t in sop.inputs)
        outs = tuple(self.local(t) for t in sop.outputs)
        if d is not None and d.variable == "assign" and len(ins) == 2:
            # assign only if this branch is taken: value or the variable's current value
            value = self.tensors[ins[1]]
            cond = self.tensors[self.op.inputs[0]]
            _check_rank(self.source, self.op, cond, value)
            cur = self.new_tensor(value, f"{value.name}/current")
            sel = self.new_tensor(value, f"{value.name}/selected")
            self.out.append(Op(self.op.index, _opcode(variable="read"), (ins[0],), (cur,)))
            pair = (ins[1], cur) if self.label == "then" else (cur, ins[1])
            self.out.append(Op(self.op.index, _opcode(select=True), (cond.index, *pair),
                               (sel,)))
            ins = (ins[0], sel)
        self.out.append(Op(self.op.index, sop.opcode, ins, outs, sop.options))
