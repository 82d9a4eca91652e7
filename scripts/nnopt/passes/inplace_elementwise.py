"""In-place execution of element-wise operators (Unlu 2020's in-place idea, generalised).

Given an execution order, an element-wise op (activations, same-size QUANTIZE, and
ADD/SUB/MUL/MAXIMUM/MINIMUM without broadcasting) may write its output over an input
whose buffer dies at that op: element i of the output depends only on element i of the
inputs, and the kernels read element i before writing it. The result is an alias map
(output tensor -> input tensor) for :func:`nnopt.passes.lifetimes.alias_roots`.

Not done when the input is a graph input or output (the caller may still read it), or
when the dtype size differs (e.g. int8 -> float32 DEQUANTIZE).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..cdefs import DTYPE_SIZE
from ..ir import Graph, Op
from ..ops import known


def _candidates(graph: Graph, op: Op) -> list[int]:
    if len(op.outputs) != 1:
        return []
    out = graph.tensors[op.outputs[0]]
    kind = d.elementwise if (d := known(op)) is not None else None
    if kind == "unary":
        data = [op.inputs[0]]
    elif kind == "binary":
        data = list(op.inputs[:2])
    else:
        return []
    result = []
    for t in data:
        if t < 0:
            continue
        src = graph.tensors[t]
        if (not src.is_constant and src.shape == out.shape
                and DTYPE_SIZE[src.dtype] == DTYPE_SIZE[out.dtype]):
            result.append(t)
    return result


def plan_inplace(graph: Graph, order: Sequence[int], roots: Mapping[int, int]) -> dict[int, int]:
    """Aliases output -> input for element-wise ops whose input buffer dies there.

    ``order`` holds positions into graph.ops; ``roots`` are the aliases already made
    (RESHAPE-like). Returns only the new in-place aliases.
    """
    pos = {graph.ops[k].index: i for i, k in enumerate(order)}
    n = len(order)
    extra: dict[int, int] = {}

    def root(t: int) -> int:
        while t in extra or t in roots:
            t = extra.get(t, roots.get(t, t))
        return t

    # Last use (position) of every root buffer, given all aliases so far.
    def last_use() -> dict[int, int]:
        last: dict[int, int] = {}
        for op in graph.ops:
            i = pos[op.index]
            for t in graph.activations(op) + op.outputs:
                r = root(t)
                last[r] = max(last.get(r, i), i)
        for t in graph.outputs:
            last[root(t)] = n - 1
        return last

    protected = {root(t) for t in graph.inputs} | {root(t) for t in graph.outputs}
    last = last_use()  # kept up to date as aliases merge buffers (not recomputed per op)
    for k in order:
        op = graph.ops[k]
        cands = _candidates(graph, op)
        if not cands:
            continue
        i = pos[op.index]
        for t in cands:
            r = root(t)
            if r in protected or last.get(r) != i:
                continue
            if op.outputs[0] in graph.outputs:
                continue
            old = root(op.outputs[0])
            extra[op.outputs[0]] = t
            if old != r and old in last:  # the output's buffer joins the input's
                last[r] = max(last.get(r, -1), last.pop(old))
            break
    return extra
