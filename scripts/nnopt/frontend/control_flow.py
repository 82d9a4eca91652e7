"""IF and WHILE -> their subgraphs inlined into subgraph 0.

IF: TFLM's IF (tensorflow/lite/micro/kernels/if.cc) reads its bool condition (one
element), copies its other inputs into the then or else subgraph's inputs (raw bytes;
type and size must agree), runs that subgraph and copies its outputs into the IF's
outputs. Here both branch subgraphs become ordinary ops of subgraph 0 (their tensors
appended, renamed ``if<k>/then/...``; a branch input is the IF's argument itself, or a
RESHAPE of it where the branch declares another shape of as many bytes: TFLM copies the
bytes, checking only their count), and each IF output is a SELECT_V2 of the condition
between the two branches' outputs (a branch output of another shape of as many bytes
reshaped first): the
condition is read at run time, the values are copied raw as TFLM copies them. Both
branches run; that gives TFLM's outputs because a branch is a pure function of its
inputs except for its resource-variable assignments, and each of those assigns
``SELECT_V2(condition, value, current)`` (then; the reverse in else), the current
value read just before: the branch not taken leaves the variable as it was, and the
taken one's reads see its own assignments (the ops of one variable keep their order).
The planner then reorders and overlaps the branches' tensors with everything else.

WHILE: TFLM's WHILE (tensorflow/lite/micro/kernels/while.cc) takes n loop values (its
inputs; its outputs, the cond subgraph's inputs and the body's inputs and outputs are n
tensors of the same types), runs the cond subgraph on them and, while element 0 of its
bool output is true, runs the body and feeds its outputs back. TF's converter writes it
for a non-unrolled RNN or a ``tf.while_loop`` over a fixed range: an int32 counter among
the loop values, compared with a constant. Here the condition is evaluated at compile
time on the loop values nnopt knows (constants, and int32/int64/bool values computed
from them by the ops whose definition has a ``fold``: ADD, SUB, the comparisons, ...),
the body applied to them trip by trip, until it is false: that is the trip count (at
most :data:`MAX_TRIPS`). The body is then inlined that many times (tensors renamed
``while<k>/<trip>/...``): trip k's outputs are trip k+1's inputs, a value known at
compile time is a constant (a GATHER of step i reads a constant index; the counter's
ADD is not emitted), the body's constants are shared by every trip, the last trip's ops
write the WHILE's outputs; an output the body passes through (or every output, after
zero trips) is copied from the loop value with SELECT_V2 of a constant true when
something reads it, and a counter output becomes a constant.

Both run before :mod:`.variables`, which resolves the handles of the branches too. The
ops are renumbered in the new order.

Refused by name: a branch or loop with a variable tensor (SVDF/LSTM state), a resource
variable, CALL_ONCE or nested control flow; an operator nnopt has no definition for;
inputs or outputs whose dtype, byte size or quantisation differ from the IF's (WHILE's:
dtype, shape or quantisation);
an IF condition that is not one bool; a WHILE condition that depends on run-time data
(naming the loop value) or that loops more than :data:`MAX_TRIPS` times; a counter
that is a graph output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

import numpy as np

from ..cdefs import DType
from ..errors import UnsupportedError
from ..ir import (
    NUMPY_DTYPE,
    CallOnceOptions,
    IfOptions,
    Op,
    Tensor,
    VarHandleOptions,
    WhileOptions,
)
from ..ops import DEFINITIONS, supported_list
from .variables import Subgraph

MAX_TRIPS = 4096  # a WHILE looping more often is refused (the body is inlined per trip)
_CONTROL = (IfOptions, WhileOptions, CallOnceOptions)
_V = TypeVar("_V")

_HINT = ("nnopt inlines an IF whose branches hold no nested control flow and no state "
         "tensors, and take and return tensors of the IF's own dtypes, shapes and "
         "quantisation")


def _opcode(**trait: object) -> str:
    """The opcode of the one definition with these traits (SELECT_V2, READ_VARIABLE,
    RESHAPE); ``fold=_RESHAPE_FOLD``: any fold."""
    return next(d.opcode for d in DEFINITIONS.values()
                if all((getattr(d, k) is not None) if v is _RESHAPE_FOLD
                       else getattr(d, k) == v for k, v in trait.items()))


#: ``_opcode(alias=True, fold=_RESHAPE_FOLD)``: the alias op that folds (RESHAPE, whose
#: output is its input's bytes under another shape; SQUEEZE and EXPAND_DIMS do not fold)
_RESHAPE_FOLD = object()


def _refuse(source: str, op: Op, why: str) -> UnsupportedError:
    return UnsupportedError(f"{source}: op {op.index} (IF): {why}", hint=_HINT)


def _same(a: Tensor, b: Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.quant == b.quant


def _same_bytes(a: Tensor, b: Tensor) -> bool:
    """What TFLM's IF copies between: one dtype and quantisation, as many bytes."""
    return a.dtype == b.dtype and a.nbytes == b.nbytes and a.quant == b.quant


def inline_control_flow(main: Subgraph, read: Callable[[int], Subgraph], n_subgraphs: int,
                        source: str) -> Subgraph:
    """Subgraph 0 with every IF and WHILE inlined (module docstring)."""
    if not any(isinstance(op.options, (IfOptions, WhileOptions)) for op in main.ops):
        return main
    tensors = list(main.tensors)
    resources = set(main.resources)
    out: list[Op] = []
    needed = {t for op in main.ops for t in op.inputs} | set(main.outputs)
    for op in main.ops:
        if isinstance(op.options, WhileOptions):
            _WhileInliner(tensors, resources, out, op, main.outputs, needed, read,
                          n_subgraphs, source).run(op.options)
            continue
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
            if (t in sub.resources) != (a in self.resources) or not (
                    _same(sub.tensors[t], self.tensors[a])
                    or (t not in sub.resources and _same_bytes(sub.tensors[t],
                                                               self.tensors[a]))):
                raise self.refuse(f"input {t} ({sub.tensors[t].name}) differs in dtype, "
                                  f"size or quantisation from IF input {a}")
            if _same(sub.tensors[t], self.tensors[a]):
                self.ids[t] = a
            else:  # the branch's own shape of the IF argument's bytes
                self.reshape(a, self.local(t))
        for sop in sub.ops:
            self.inline(sop)
        picked = []
        for t, y in zip(sub.outputs, results, strict=True):
            lt = self.local(t)
            src, dst = self.tensors[lt], self.tensors[y]
            if src.dtype != dst.dtype or src.nbytes != dst.nbytes:
                raise self.refuse(f"output {t} ({src.name}, {src.dtype.name} "
                                  f"{list(src.shape)}) differs from IF output {y} "
                                  f"({dst.dtype.name} {list(dst.shape)})")
            if src.shape != dst.shape:  # the IF output's shape of the branch's bytes
                out = self.new_tensor(dst, f"{src.name}/as_output")
                self.reshape(lt, out)
                lt = out
            picked.append(lt)
        return picked

    def reshape(self, src: int, dst: int) -> None:
        """A RESHAPE of ``src`` into ``dst`` (same bytes, ``dst``'s shape)."""
        shape = self.tensors[dst].shape
        k = len(self.tensors)
        self.tensors.append(Tensor(k, f"if{self.op.index}/{self.label}/shape{dst}",
                                   (len(shape),), DType.INT32,
                                   data=np.asarray(shape, dtype="<i4").tobytes()))
        self.out.append(Op(self.op.index, _opcode(alias=True, fold=_RESHAPE_FOLD),
                           (src, k), (dst,)))

    def inline(self, sop: Op) -> None:
        d = DEFINITIONS.get(sop.opcode)
        what = f"op {sop.index} ({sop.opcode})"
        if isinstance(sop.options, _CONTROL):
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


# ----- WHILE -----

_WHILE_HINT = ("nnopt inlines a WHILE whose condition it can evaluate at compile time: "
               "constants and int32/int64/bool loop values (counters) updated by "
               "ADD/SUB/MUL/MAXIMUM/MINIMUM of constants and compared with "
               "LESS/GREATER/EQUAL/...; export a data-dependent loop unrolled, or "
               "with a fixed trip count (tf.range over a Python int)")
_FOLDABLE = (DType.INT32, DType.INT64, DType.BOOL)


def _foldable(t: Tensor) -> bool:
    return t.dtype in _FOLDABLE and t.quant is None


def _evaluate(sub: Subgraph, known: dict[int, np.ndarray], why: dict[int, str]
              ) -> tuple[dict[int, np.ndarray], dict[int, str]]:
    """The tensors of ``sub`` computable at compile time (``known`` inputs, constants,
    outputs of foldable ops over them: ``OpDef.fold``) and, for the others met, why
    not."""
    vals, why = dict(known), dict(why)
    for t, tensor in enumerate(sub.tensors):
        if tensor.data is not None:
            if _foldable(tensor):
                vals[t] = tensor.array()
            else:
                why[t] = (f"constant tensor {t} ({tensor.name}) is {tensor.dtype.name}; "
                          "nnopt evaluates int32, int64 and bool values")
    for op in sub.ops:
        d = DEFINITIONS.get(op.opcode)
        ins = [t for t in op.inputs if t >= 0]
        what = f"op {op.index} ({op.opcode}) of subgraph {sub.index}"
        missing = [t for t in ins if t not in vals]
        cause = None
        if missing:
            cause = why.get(missing[0], f"tensor {missing[0]} is computed at run time")
        elif d is None or d.fold is None:
            cause = f"{what} is not evaluated at compile time"
        elif getattr(op.options, "activation", "NONE") != "NONE":
            cause = f"{what} has a fused activation"
        elif len(op.outputs) != 1 or not all(
                _foldable(sub.tensors[t]) for t in (*ins, *op.outputs)):
            cause = f"{what} computes on values other than int32, int64 and bool"
        else:
            y = sub.tensors[op.outputs[0]]
            with np.errstate(all="ignore"):  # int32 wraps around, as TFLM's does
                r = np.asarray(d.fold(*(vals[t] for t in ins)))
            if r.size != y.num_elements:
                cause = f"{what} broadcasts to {list(r.shape)}, not {list(y.shape)}"
            else:
                vals[op.outputs[0]] = r.astype(NUMPY_DTYPE[y.dtype]).reshape(y.shape)
        if cause is not None:
            for t in op.outputs:
                why.setdefault(t, cause)
    return vals, why


class _WhileInliner:
    """Appends a WHILE's body, once per iteration, to subgraph 0's ops."""

    def __init__(self, tensors: list[Tensor], resources: set[int], out: list[Op], op: Op,
                 graph_outputs: tuple[int, ...], needed: set[int],
                 read: Callable[[int], Subgraph], n_subgraphs: int, source: str) -> None:
        self.tensors, self.resources, self.out, self.op = tensors, resources, out, op
        self.needed = needed  # tensors read by an op or a graph output
        self.graph_outputs, self.read, self.n, self.source = (graph_outputs, read,
                                                              n_subgraphs, source)
        self.consts: dict[int, int] = {}  # body constant -> subgraph 0 (shared by trips)

    def refuse(self, why: str) -> UnsupportedError:
        return UnsupportedError(f"{self.source}: op {self.op.index} (WHILE): {why}",
                                hint=_WHILE_HINT)

    def subgraph(self, label: str, k: int) -> Subgraph:
        if not 0 < k < self.n:
            raise self.refuse(f"{label} subgraph {k} does not exist (the model has "
                              f"{self.n})")
        sub = self.read(k)
        for t in sub.tensors:
            if t.variable or t.index in sub.resources:
                raise self.refuse(f"{label} subgraph {k} keeps variable or resource tensor "
                                  f"{t.index} ({t.name}): state in a loop is not supported")
        for sop in sub.ops:
            what = f"{label} subgraph {k} op {sop.index} ({sop.opcode})"
            d = DEFINITIONS.get(sop.opcode)
            if isinstance(sop.options, (*_CONTROL, VarHandleOptions)) or (
                    d is not None and d.variable):
                raise self.refuse(f"{what} is control flow or a variable inside a loop")
            if d is None and label == "body":
                raise self.refuse(f"{what} is not an operator nnopt supports; supported: "
                                  f"{supported_list()}")
        return sub

    def check_signature(self, cond: Subgraph, body: Subgraph) -> None:
        op = self.op
        n = len(op.inputs)
        if not (len(op.outputs) == len(cond.inputs) == len(body.inputs)
                == len(body.outputs) == n):
            raise self.refuse(f"has {n} inputs and {len(op.outputs)} outputs, its cond "
                              f"subgraph {cond.index} {len(cond.inputs)} inputs, its body "
                              f"subgraph {body.index} {len(body.inputs)} inputs and "
                              f"{len(body.outputs)} outputs; TFLM needs them all equal")
        for j, a in enumerate(op.inputs):
            if a < 0 or a in self.resources:
                raise self.refuse(f"loop value {j} is not a tensor nnopt can carry")
            ref = self.tensors[a]
            for where, t in (("output", self.tensors[op.outputs[j]]),
                             ("cond input", cond.tensors[cond.inputs[j]]),
                             ("body input", body.tensors[body.inputs[j]]),
                             ("body output", body.tensors[body.outputs[j]])):
                if not _same(ref, t):
                    raise self.refuse(f"loop value {j}: {where} tensor {t.index} "
                                      f"({t.name}) differs in dtype, shape or quantisation "
                                      f"from input tensor {a} ({ref.name})")
        if len(cond.outputs) != 1 or cond.tensors[cond.outputs[0]].dtype != DType.BOOL:
            raise self.refuse(f"cond subgraph {cond.index} does not return one bool")

    def trip_count(self, cond: Subgraph, body: Subgraph, state: list[np.ndarray | None],
                   why: list[str]) -> int:
        """Iterations TFLM runs: the condition evaluated on the loop values, the body
        applied to them, until the condition is false."""
        trips = 0
        c = cond.outputs[0]
        while True:
            vals, whys = _evaluate(cond, _bind(cond.inputs, state), _bind(cond.inputs, why))
            if c not in vals:
                raise self.refuse(
                    f"its condition (cond subgraph {cond.index}, tensor {c}) "
                    f"{'' if trips == 0 else f'at iteration {trips} '}depends on values "
                    f"known only at run time: {whys.get(c, 'not evaluated')}; nnopt "
                    "inlines loops with a trip count known at compile time")
            if not bool(vals[c].reshape(-1)[0]):  # TFLM reads element 0
                return trips
            if trips == MAX_TRIPS:
                raise self.refuse(f"loops more than {MAX_TRIPS} times; nnopt inlines the "
                                  f"body once per iteration, at most {MAX_TRIPS}")
            trips += 1
            vals, whys = _evaluate(body, _bind(body.inputs, state), _bind(body.inputs, why))
            state = [vals.get(t) for t in body.outputs]
            why = [whys.get(t, f"body output {t} is computed at run time")
                   for t in body.outputs]

    def run(self, options: WhileOptions) -> None:
        op = self.op
        cond = self.subgraph("cond", options.cond_subgraph_index)
        body = self.subgraph("body", options.body_subgraph_index)
        self.check_signature(cond, body)
        state: list[np.ndarray | None] = []
        why: list[str] = []
        for j, a in enumerate(op.inputs):
            t = self.tensors[a]
            state.append(t.array() if t.data is not None and _foldable(t) else None)
            why.append(f"loop value {j} (tensor {a}, {t.name}) is run-time data")
        trips = self.trip_count(cond, body, list(state), list(why))
        ids: list[int] = list(op.inputs)  # the loop values' tensors in subgraph 0
        done: set[int] = set()  # outputs the last trip wrote directly
        for trip in range(trips):
            state, ids = self.inline_body(body, trip, state, ids,
                                          done if trip == trips - 1 else None)
        copy_cond: int | None = None
        for j, y in enumerate(op.outputs):
            if j in done or y not in self.needed:
                continue  # written by the last trip, or read by nothing
            value = state[j]
            if value is not None and y not in self.graph_outputs:
                self.tensors[y] = replace(self.tensors[y], data=value.tobytes())
                continue
            if value is not None or self.tensors[y].dtype not in (
                    DType.INT8, DType.INT16, DType.FLOAT32):
                raise self.refuse(f"output {j} (tensor {y}, {self.tensors[y].name}, "
                                  f"{self.tensors[y].dtype.name}) would be a copy nnopt "
                                  "cannot make; only int8, int16 and float32 run-time "
                                  "loop values are copied to a graph output")
            if copy_cond is None:
                copy_cond = len(self.tensors)
                self.tensors.append(Tensor(copy_cond, f"while{op.index}/copy", (),
                                           DType.BOOL, data=b"\x01"))
            # the loop value's bytes, raw as TFLM copies them (SELECT_V2 of true)
            self.out.append(Op(op.index, _opcode(select=True), (copy_cond, ids[j], ids[j]),
                               (y,)))

    def inline_body(self, body: Subgraph, trip: int, state: list[np.ndarray | None],
                    ids: list[int], last: set[int] | None
                    ) -> tuple[list[np.ndarray | None], list[int]]:
        """One iteration: the body's ops over the loop values (``ids`` at run time,
        ``state`` where known), those it computes at compile time folded; returns the
        next loop values. ``last``: the final trip, whose body outputs computed by an op
        are written to the WHILE's outputs directly (their indices added to it)."""
        vals, _ = _evaluate(body, _bind(body.inputs, state), {})
        local: dict[int, int] = {}
        for j, t in enumerate(body.inputs):
            if state[j] is None:
                local[t] = ids[j]
        if last is not None:
            produced = {t for sop in body.ops for t in sop.outputs}
            for j, t in enumerate(body.outputs):
                if t not in vals and t in produced and body.outputs.count(t) == 1:
                    local[t] = self.op.outputs[j]
                    last.add(j)

        def tensor(t: int) -> int:
            if t < 0 or t in local:
                return local.get(t, t)
            src = body.tensors[t]
            if src.data is not None:
                if t not in self.consts:
                    self.consts[t] = self.append(src, f"{src.name}", src.data)
                return self.consts[t]
            data = vals[t].tobytes() if t in vals else None
            local[t] = self.append(src, f"{trip}/{src.name}", data)
            return local[t]

        for sop in body.ops:
            if sop.outputs and all(t in vals for t in sop.outputs):
                continue  # computed at compile time
            self.out.append(Op(self.op.index, sop.opcode,
                               tuple(tensor(t) for t in sop.inputs),
                               tuple(tensor(t) for t in sop.outputs), sop.options))
        return ([vals.get(t) for t in body.outputs],
                [-1 if t in vals else tensor(t) for t in body.outputs])

    def append(self, like: Tensor, name: str, data: bytes | None) -> int:
        k = len(self.tensors)
        self.tensors.append(replace(like, index=k, data=data, init=None,
                                    name=f"while{self.op.index}/{name}"))
        return k


def _bind(inputs: tuple[int, ...], values: Sequence[_V | None]) -> dict[int, _V]:
    return {t: v for t, v in zip(inputs, values, strict=True) if v is not None}
