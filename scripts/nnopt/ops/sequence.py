"""Stateful sequence operators: SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM. Options and
traits; the lowering is :mod:`nnopt.lowering.sequence`.

Both read variable tensors (SVDF's activation state, input 4; the LSTM's hidden and
cell state, inputs 18 and 19) and update them in place: the state lives in the
persistent region (:mod:`nnopt.passes.state`), not in the arena, so the op's planned
inputs and outputs are only its input and output sequences.
"""

from __future__ import annotations

from typing import Any

import tflite

from ..arith import ACTIVATION_NAMES
from ..ir import Graph, LstmOptions, Op, OpOptions, SvdfOptions
from ..lowering import sequence as sequence_lowering
from .base import OpDef, Options, activation, audited, table, tflm, writer


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


def _read_lstm(op: Any) -> OpOptions:
    o = table(tflite.UnidirectionalSequenceLSTMOptions, op)
    if o is None:
        return LstmOptions()
    act = int(o.FusedActivationFunction())
    name = ACTIVATION_NAMES[act] if act < len(ACTIVATION_NAMES) else f"ACTIVATION_{act}"
    return LstmOptions(name, float(o.CellClip()), float(o.ProjClip()), bool(o.TimeMajor()))


def _lstm_macs(graph: Graph, op: Op) -> int:
    """Eight gate matrix products per time step and batch row."""
    if len(op.inputs) < 5 or min(op.inputs[:2]) < 0:
        return 0
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if len(x.shape) != 3 or len(w.shape) != 2:
        return 0
    rows = x.shape[0] * x.shape[1]
    state, depth = w.shape
    return rows * 4 * state * (depth + state)


_write_svdf = writer(SvdfOptions, lambda o: {"rank": o.rank,
                                             "fused_activation_function": o.activation})
_write_lstm = writer(LstmOptions, lambda o: {
    "fused_activation_function": o.activation, "cell_clip": o.cell_clip,
    "proj_clip": o.proj_clip, "time_major": o.time_major})


DEFINITIONS = (
    OpDef("SVDF", "SVDF", sequence_lowering.SVDF, Options("SVDFOptions", _read_svdf, _write_svdf),
          cost="fc", blob=False, macs=_svdf_macs),
    OpDef("UNIDIRECTIONAL_SEQUENCE_LSTM", "LSTM", sequence_lowering.LSTM,
          Options("UnidirectionalSequenceLSTMOptions", _read_lstm, _write_lstm), cost="fc",
          blob=False, macs=_lstm_macs),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "SVDF": tflm("svdf.cc", "float32", "int8"),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": tflm("unidirectional_sequence_lstm.cc", "float32", "int8",
                                         "int16"),
})
