"""Lifetime analysis: which tensors share a buffer, and when each buffer is live.

- Aliases: ops whose definition has the ``alias`` trait (reshape-like: RESHAPE,
  SQUEEZE, ...) and whose output has the input's dtype, size and quantisation reuse the
  input's bytes; the output tensor maps to the input's *root*
  buffer and extends its lifetime. No copy is made and no memory is counted twice.
- Views: outputs of split-like ops (the definition's ``output_views`` trait: SPLIT,
  UNPACK, SLICE ... where an output is a contiguous byte range of the input) live in
  the input's root buffer at their byte offset (:func:`view_offsets`); the root then
  lives as long as its last view. The op's kernel finds them in place and copies
  nothing.
- In place: decided after scheduling by :func:`.inplace_elementwise.plan_inplace`.
- :func:`schedule_problem` turns a graph into the scheduler's abstract problem, with
  constants dropped and aliases folded onto their roots.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..ir import Graph, Op
from ..ops import known
from .schedule import ScheduleProblem


def _same_layout(graph: Graph, a: int, b: int) -> bool:
    ta, tb = graph.tensors[a], graph.tensors[b]
    return ta.dtype == tb.dtype and ta.nbytes == tb.nbytes and ta.quant == tb.quant


def is_alias_op(graph: Graph, op: Op) -> bool:
    """True when the op's output can share its data input's bytes (no copy)."""
    d = known(op)
    if d is None or not d.alias or not op.inputs or len(op.outputs) != 1:
        return False
    src, dst = op.inputs[0], op.outputs[0]
    return (src >= 0 and not graph.tensors[src].is_constant and _same_layout(graph, src, dst)
            and dst not in graph.inputs)


def view_parents(graph: Graph) -> dict[int, tuple[int, int]]:
    """output tensor -> (input tensor, byte offset) for every output planned as a view
    of its input: the op's definition says it is a byte range of the input
    (``output_views``), the input is an activation and the output neither a graph
    input nor a graph output."""
    out: dict[int, tuple[int, int]] = {}
    for op in graph.ops:
        d = known(op)
        if d is None:
            continue
        v = d.output_views(graph, op)
        if v is None or graph.tensors[v.source].is_constant:
            continue
        for t, off in v.outputs:
            if t not in graph.inputs and t not in graph.outputs and t != v.source:
                out[t] = (v.source, off)
    return out


def alias_roots(graph: Graph, extra: Mapping[int, int] | None = None, *,
                views: bool = True) -> dict[int, int]:
    """tensor -> root tensor whose buffer it uses (only non-identity entries).

    ``extra`` adds further aliases (in-place outputs onto inputs); ``views``: the
    outputs of split-like ops are views of their input (else copies)."""
    parent: dict[int, int] = {}
    for op in graph.ops:
        if is_alias_op(graph, op):
            parent[op.outputs[0]] = op.inputs[0]
    if views:
        parent.update({t: src for t, (src, _) in view_parents(graph).items()})
    if extra:
        parent.update(extra)

    def root(t: int) -> int:
        seen = set()
        while t in parent:
            if t in seen:  # pragma: no cover - verify() forbids cycles
                break
            seen.add(t)
            t = parent[t]
        return t

    return {t: root(t) for t in parent}


def view_offsets(graph: Graph, extra: Mapping[int, int] | None = None, *,
                 views: bool = True) -> dict[int, int]:
    """tensor -> byte offset of its bytes within its root buffer, for the tensors not
    at the start of it (views, views of views, and ``extra`` in-place outputs written
    over a view: at the view's offset)."""
    step: dict[int, tuple[int, int]] = {}
    for op in graph.ops:
        if is_alias_op(graph, op):
            step[op.outputs[0]] = (op.inputs[0], 0)
    if views:
        step.update(view_parents(graph))
    if extra:
        step.update({t: (src, 0) for t, src in extra.items()})
    memo: dict[int, int] = {}

    def offset(t: int) -> int:
        chain: list[int] = []
        while t in step and t not in memo and len(chain) <= len(step):
            chain.append(t)
            t = step[t][0]
        acc = memo.get(t, 0)
        for c in reversed(chain):
            acc += step[c][1]
            memo[c] = acc
        return acc

    return {t: off for t in step if (off := offset(t))}


def schedule_problem(graph: Graph, *, views: bool = True) -> ScheduleProblem:
    """The graph as the scheduler sees it: activation buffers only, aliases (and with
    ``views`` the views of split-like ops) folded."""
    roots = alias_roots(graph, views=views)
    viewed = view_parents(graph) if views else {}

    def r(t: int) -> int:
        return roots.get(t, t)

    # Problem op k is graph.ops[k] (positions, not .tflite indices: fusion removes ops).
    op_inputs = []
    op_outputs = []
    for op in graph.ops:
        ins = tuple(dict.fromkeys(r(t) for t in graph.activations(op)))
        if is_alias_op(graph, op):
            outs: tuple[int, ...] = ()
        else:
            outs = tuple(t for t in op.outputs if t not in viewed)
        op_inputs.append(ins)
        op_outputs.append(outs)
    used = {t for ts in op_inputs for t in ts} | {t for ts in op_outputs for t in ts}
    used |= {r(t) for t in graph.inputs} | {r(t) for t in graph.outputs}
    sizes = {t: graph.tensors[t].nbytes for t in used}
    # Ops touching the same state tensor keep their file order (a resource variable
    # read, assigned, read again): a zero-byte token from each to the next, ids past
    # the graph's tensors. A state only one op touches (SVDF, LSTM) adds none.
    last: dict[int, int] = {}
    token = len(graph.tensors)
    for k, op in enumerate(graph.ops):
        for t in dict.fromkeys(op.inputs):
            if t < 0 or not graph.tensors[t].is_state:
                continue
            if t in last:
                op_outputs[last[t]] = (*op_outputs[last[t]], token)
                op_inputs[k] = (*op_inputs[k], token)
                sizes[token] = 0
                token += 1
            last[t] = k
    return ScheduleProblem(
        n_ops=len(graph.ops),
        op_inputs=tuple(op_inputs),
        op_outputs=tuple(op_outputs),
        sizes=sizes,
        graph_inputs=frozenset(r(t) for t in graph.inputs),
        graph_outputs=frozenset(r(t) for t in graph.outputs),
    )


@dataclass(frozen=True)
class Buffer:
    """One region of the arena: a root tensor (plus its aliases) or an op's scratch."""

    key: str  # "t<tensor>" or "s<op index>"
    tensor: int | None  # root tensor index, None for scratch
    size: int
    first: int  # position in the schedule
    last: int
    aliases: tuple[int, ...] = ()  # other tensors stored in this buffer
    scratch_of: int | None = None  # op index, for scratch


def buffers_for(graph: Graph, order: Sequence[int], roots: Mapping[int, int],
                scratch: Mapping[int, int]) -> list[Buffer]:
    """Buffers with lifetimes for an order (positions into ``order``; op *positions*
    of graph.ops). ``scratch`` maps op index -> scratch bytes."""
    pos = {graph.ops[k].index: i for i, k in enumerate(order)}
    n = len(order)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    members: dict[int, list[int]] = {}

    def touch(t: int, i: int) -> None:
        rt = roots.get(t, t)
        if t != rt:
            members.setdefault(rt, [])
            if t not in members[rt]:
                members[rt].append(t)
        first[rt] = min(first.get(rt, i), i)
        last[rt] = max(last.get(rt, i), i)

    for t in graph.inputs:
        touch(t, 0)
    for op in graph.ops:
        i = pos[op.index]
        for t in graph.activations(op):
            touch(t, i)
        for t in op.outputs:
            touch(t, i)
    for t in graph.outputs:
        touch(t, n - 1)
    out: list[Buffer] = []
    for rt in sorted(first):
        size = max([graph.tensors[rt].nbytes] + [graph.tensors[a].nbytes
                                                 for a in members.get(rt, [])])
        out.append(Buffer(f"t{rt}", rt, size, first[rt], last[rt],
                          tuple(sorted(members.get(rt, [])))))
    for op_index, nbytes in sorted(scratch.items()):
        if nbytes > 0:
            i = pos[op_index]
            out.append(Buffer(f"s{op_index}", None, nbytes, i, i, scratch_of=op_index))
    return out


def live_profile(buffers: Sequence[Buffer], n_steps: int) -> list[int]:
    """Sum of live buffer bytes at each schedule position."""
    prof = [0] * n_steps
    for b in buffers:
        for i in range(b.first, b.last + 1):
            prof[i] += b.size
    return prof
