"""Stateful sequence operators: SVDF. Options and traits; the lowering is
:mod:`nnopt.lowering.sequence`.

SVDF reads a variable tensor (its activation state, input 4) and updates it in place:
the state lives in the persistent region (:mod:`nnopt.passes.state`), not in the arena,
so the op's planned inputs and outputs are only the input and output rows.
"""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import Graph, Op, OpOptions, SvdfOptions
from .base import OpDef, activation, table


def _read_svdf(op: Any) -> OpOptions:
    o = table(tflite.SVDFOptions, op)
    if o is None:
        return SvdfOptions()
    return SvdfOptions(int(o.Rank()), activation(o))


def _svdf_macs(graph: Graph, op: Op) -> int:
    """Feature matmul plus time dot products, per inference."""
    if len(op.inputs) < 3 or min(op.inputs[:3]) < 0:
        return 0
    x, wf, wt = (graph.tensors[t] for t in op.inputs[:3])
    if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2:
        return 0
    return x.shape[0] * (wf.shape[0] * wf.shape[1] + wt.shape[0] * wt.shape[1])


DEFINITIONS = (
    OpDef("SVDF", "SVDF", "sequence", _read_svdf, cost="fc", blob=False, macs=_svdf_macs),
)
