"""SVDF -> ``nnrt_svdf_s8`` / ``nnrt_svdf_f32``, UNIDIRECTIONAL_SEQUENCE_LSTM ->
``nnrt_lstm_s8`` / ``nnrt_lstm_s16`` / ``nnrt_lstm_f32`` (``nnrt/kernels/sequence.h``).

Supported (bit-exact with TFLM's reference SVDF, ``svdf_common.cc``), the layout TFLM's
converter writes: input ``[batches, input_size]``, weights_feature ``[num_filters,
input_size]``, weights_time ``[num_filters, memory_size]``, bias ``[num_units]``, the
activation state a variable tensor ``[batches, memory_size * num_filters]`` (kept in the
persistent region and updated in place), output ``[batches, num_units]``, with
``num_filters = num_units * rank``:

- int8 input, weights_feature and output; int16 (or int8) weights_time and state of
  the same type; int32 bias (TFLM requires it, with a scale of state x weights_time
  within 1e-5). The two rescales are TFLM's ``QuantizeMultiplier`` of the float32
  products ``input * feature / state`` and ``state * time / output``. The fused
  activation is not applied, as in TFLM's integer kernel.
- float32 throughout, fused NONE / RELU / RELU_N1_TO_1 / RELU6.

A bias is required (TFLM's kernel reads it unconditionally: an SVDF without one does
not run there, so it is refused here).

UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's EvalLstm, ``lstm_eval.h``): the standard LSTM
TFLM runs (no peephole, projection or layer norm: TFLM refuses those too), batch-major
or time-major, any cell clip; the hidden and cell states variable tensors.

- float32 throughout, the cell gate TANH.
- int8 with an int16 cell state, the layout TFLM's converter writes: int8 input,
  weights (per tensor, zero point 0), hidden state and output; int32 biases; the cell
  state int16 with zero point 0 (the converter gives it a power-of-two scale; TFLM takes
  the scale's rounded log2 for the tanh of the cell, and so does nnopt); the cell gate
  TANH. The op's intermediate
  tensors (quantisation only) are not read, as TFLM does not read them.
- int16 activations (TFLM's 16x8, ``EvalLstm<int16_t, int8_t, int16_t, int64_t>``): the
  same layout and arithmetic with int16 input, hidden state and output, int64 biases
  and the gate FCs' sums in 64 bits (TFLM's 64-bit requantisation, whose shift must be
  at most 7: a larger one is refused by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..arith import ACTIVATION_NAMES, FUSED_ACTIVATIONS
from ..cdefs import DType
from ..ir import Graph, LstmOptions, Op, SvdfOptions, Tensor
from ..multiplier import quantize_multiplier
from .activation import checked_log2
from .base import EmitContext, LoweringBase
from .call import Arg, Body, Raw
from .common import c_call, c_params, refuse, tensor_desc

_SUPPORTED = ("int8 input/weights_feature/output with int16 (or int8) weights_time and "
              "activation state and int32 bias, or float32 throughout; input [batches, "
              "input_size], state a variable tensor [batches, memory_size * num_filters], "
              "num_filters a multiple of rank")


@dataclass(frozen=True)
class _Svdf:
    x: Tensor
    wf: Tensor
    wt: Tensor
    bias: Tensor | None
    state: Tensor
    y: Tensor
    batches: int
    input_size: int
    filters: int
    units: int
    rank: int
    memory: int
    quantized: bool
    activation: str


def _scale(op: Op, t: Tensor) -> tuple[float, int]:
    if t.quant is None or t.quant.per_channel:
        raise refuse(op, f"{tensor_desc(t)} is not quantised per tensor", _SUPPORTED)
    return float(t.quant.scale[0]), int(t.quant.zero_point[0])


def _svdf(graph: Graph, op: Op) -> _Svdf:
    if len(op.inputs) != 5 or len(op.outputs) != 1 or min(op.inputs[:3]) < 0 \
            or op.inputs[4] < 0:
        raise refuse(op, "expects input, weights_feature, weights_time, bias (optional), "
                     "activation state and 1 output", _SUPPORTED)
    x, wf, wt, state = (graph.tensors[op.inputs[k]] for k in (0, 1, 2, 4))
    bias = graph.tensors[op.inputs[3]] if op.inputs[3] >= 0 else None
    y = graph.tensors[op.outputs[0]]
    o = op.options if isinstance(op.options, SvdfOptions) else SvdfOptions()
    if not state.is_state:
        raise refuse(op, f"activation state {tensor_desc(state)} is not a variable tensor",
                     _SUPPORTED)
    if any(len(t.shape) != 2 for t in (x, wf, wt, state, y)):
        raise refuse(op, "input, weights, state and output must be 2-D", _SUPPORTED)
    batches, input_size = x.shape
    filters, memory = wt.shape
    rank = o.rank
    if rank < 1 or filters % rank or wf.shape != (filters, input_size) or min(x.shape) < 1 \
            or memory < 1:
        raise refuse(op, f"weights_feature {list(wf.shape)} / weights_time {list(wt.shape)} "
                     f"/ rank {rank} do not fit input {list(x.shape)}", _SUPPORTED)
    units = filters // rank
    if y.shape != (batches, units) or state.shape != (batches, memory * filters):
        raise refuse(op, f"output {tensor_desc(y)} or state {tensor_desc(state)} does not "
                     f"fit {batches} batch(es), {units} unit(s), {filters} filter(s) x "
                     f"{memory} memory", _SUPPORTED)
    if bias is None:  # TFLM's SVDF reads it unconditionally (TODO #1751 there)
        raise refuse(op, "SVDF without a bias (TFLM requires one)", _SUPPORTED)
    if bias.num_elements != units:
        raise refuse(op, f"bias {tensor_desc(bias)} needs {units} elements", _SUPPORTED)
    if x.dtype == DType.INT8:
        if wf.dtype != DType.INT8 or y.dtype != DType.INT8 \
                or wt.dtype not in (DType.INT16, DType.INT8) or state.dtype != wt.dtype:
            raise refuse(op, f"{tensor_desc(x)} with weights_feature {wf.dtype.name}, "
                         f"weights_time {wt.dtype.name}, state {state.dtype.name}, output "
                         f"{y.dtype.name}", _SUPPORTED)
        if bias.dtype != DType.INT32:
            raise refuse(op, f"int8 SVDF needs an int32 bias, not {tensor_desc(bias)}",
                         _SUPPORTED)
        for t in (x, wf, wt, state, y, bias):
            _scale(op, t)
        want = float(np.float32(_scale(op, state)[0]) * np.float32(_scale(op, wt)[0]))
        if abs(float(np.float32(_scale(op, bias)[0])) - want) >= 1e-5:
            raise refuse(op, f"bias scale {_scale(op, bias)[0]:g} is not state scale x "
                         f"weights_time scale ({want:g}), as TFLM requires", _SUPPORTED)
        quantized = True
    elif x.dtype == DType.FLOAT32:
        if any(t.dtype != DType.FLOAT32 for t in (wf, wt, state, y, bias)):
            raise refuse(op, f"{tensor_desc(x)} with non-float32 weights, state or output",
                         _SUPPORTED)
        if o.activation not in FUSED_ACTIVATIONS:
            raise refuse(op, f"fused activation {o.activation}", "float32 SVDF with "
                         "fused " + ", ".join(FUSED_ACTIVATIONS))
        quantized = False
    else:
        raise refuse(op, f"{tensor_desc(x)}", _SUPPORTED)
    return _Svdf(x, wf, wt, bias, state, y, batches, input_size, filters, units, rank,
                 memory, quantized, o.activation)


def _f32(x: float) -> np.float32:
    return np.float32(x)


class SvdfLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/sequence.h",)
    dtypes: Sequence[str] = ("int8", "float32")  # int8: int16 or int8 state

    def check(self, graph: Graph, op: Op) -> None:
        _svdf(graph, op)

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        s = _svdf(graph, op)
        return 4 * s.batches * (s.filters + (s.units if s.quantized else 0))

    def emit(self, ctx: EmitContext) -> Body:
        s = _svdf(ctx.graph, ctx.op)
        dims = {"batches": s.batches, "input_size": s.input_size, "num_filters": s.filters,
                "num_units": s.units, "rank": s.rank, "memory_size": s.memory}
        assert s.bias is not None  # _svdf refuses an SVDF without one
        args: list[Arg] = [ctx.ptr(s.x.index), ctx.ptr(s.wf.index), ctx.ptr(s.wt.index),
                ctx.ptr(s.bias.index),
                ctx.ptr(s.state.index), ctx.ptr(s.y.index), ctx.scratch]
        if not s.quantized:
            return [*c_params("nnrt_svdf_f32_params_t",
                              {**dims, "activation": ACTIVATION_NAMES.index(s.activation)}),
                    *c_call("nnrt_svdf_f32", ["&params", *args])]
        (xs, xz), (fs, _), (ts, _), (ss, sz), (ys, yz) = (
            _scale(ctx.op, t) for t in (s.x, s.wf, s.wt, s.state, s.y))
        # TFLM: the products and quotients in float (the tensors' float scales)
        m1, sh1 = quantize_multiplier(float(_f32(xs) * _f32(fs) / _f32(ss)))
        m2, sh2 = quantize_multiplier(float(_f32(ss) * _f32(ts) / _f32(ys)))
        fields = {**dims, "state_bytes": 2 if s.state.dtype == DType.INT16 else 1,
                  "input_zero_point": xz, "state_zero_point": sz, "output_zero_point": yz,
                  "mult1": m1, "shift1": sh1, "mult2": m2, "shift2": sh2}
        return [*c_params("nnrt_svdf_s8_params_t", fields),
                *c_call("nnrt_svdf_s8", ["&params", *args])]


SVDF = SvdfLowering()
_LSTM_SUPPORTED = ("float32 input [batches, time, input] (or time-major), 4 input and 4 "
                   "recurrent weights, 4 biases, variable hidden and cell state [batches, "
                   "state], no peephole / projection / layer norm, TANH cell activation; "
                   "or int8 (int16: 16x8) input, hidden state and output, int8 weights "
                   "(per tensor, zero point 0), int32 (16x8: int64) biases and an int16 "
                   "cell state (zero point 0)")
# the integer kernels by activation type: (kernel suffix, bias type)
_LSTM_INT = {DType.INT8: ("s8", DType.INT32), DType.INT16: ("s16", DType.INT64)}
# input positions: weights 1-8 (input-to-i/f/c/o, recurrent-to-i/f/c/o), biases 12-15,
# hidden state 18, cell state 19; 9-11, 16-17, 20-23 must be absent
_LSTM_ABSENT = (9, 10, 11, 16, 17, 20, 21, 22, 23)
_CELL_TANH = ACTIVATION_NAMES[4]  # TFLite's ActivationFunctionType 4: the cell gate's tanh
_Q3_12 = 2.0**-12  # TFLM's int16 gate pre-activations (the FC outputs): Q3.12
_Q0_15 = 2.0**-15  # and gate outputs: Q0.15


@dataclass(frozen=True)
class _Lstm:
    x: Tensor
    y: Tensor
    hidden: Tensor
    cell: Tensor
    batches: int
    time: int
    inputs: int
    state: int
    options: LstmOptions
    kind: str  # "s8", "s16" (16x8) or "f32"

    @property
    def quantized(self) -> bool:
        return self.kind != "f32"


def _lstm(graph: Graph, op: Op) -> _Lstm:
    if len(op.inputs) != 24 or len(op.outputs) != 1:
        raise refuse(op, f"{len(op.inputs)} inputs; TFLM's LSTM has 24", _LSTM_SUPPORTED)
    if any(op.inputs[k] < 0 for k in (0, *range(1, 9), 12, 13, 14, 15, 18, 19)):
        raise refuse(op, "a weight, bias or state input is absent (CIFG)", _LSTM_SUPPORTED)
    if any(op.inputs[k] >= 0 for k in _LSTM_ABSENT):
        raise refuse(op, "peephole, projection or layer-norm inputs (TFLM refuses them too)",
                     _LSTM_SUPPORTED)
    o = op.options if isinstance(op.options, LstmOptions) else LstmOptions()
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    hidden, cell = graph.tensors[op.inputs[18]], graph.tensors[op.inputs[19]]
    if x.dtype == DType.FLOAT32:
        kind, wtype, btype, htype, ctype = ("f32", DType.FLOAT32, DType.FLOAT32,
                                            DType.FLOAT32, DType.FLOAT32)
    elif x.dtype in _LSTM_INT:
        kind, btype = _LSTM_INT[x.dtype]
        wtype, htype, ctype = DType.INT8, x.dtype, DType.INT16
    else:
        raise refuse(op, f"{tensor_desc(x)}", _LSTM_SUPPORTED)
    if len(x.shape) != 3 or len(y.shape) != 3:
        raise refuse(op, f"input {tensor_desc(x)} / output {tensor_desc(y)} not 3-D",
                     _LSTM_SUPPORTED)
    time, batches = (x.shape[0], x.shape[1]) if o.time_major else (x.shape[1], x.shape[0])
    n_in = x.shape[2]
    w = graph.tensors[op.inputs[1]]
    if len(w.shape) != 2 or w.shape[1] != n_in:
        raise refuse(op, f"weights {tensor_desc(w)} do not fit input {tensor_desc(x)}",
                     _LSTM_SUPPORTED)
    state = w.shape[0]
    for k in range(1, 9):
        t = graph.tensors[op.inputs[k]]
        if t.shape != ((state, n_in) if k < 5 else (state, state)) or t.dtype != wtype:
            raise refuse(op, f"weights {tensor_desc(t)}", _LSTM_SUPPORTED)
    for k in range(12, 16):
        t = graph.tensors[op.inputs[k]]
        if t.num_elements != state or t.dtype != btype:
            raise refuse(op, f"bias {tensor_desc(t)}", _LSTM_SUPPORTED)
    for t, dt in ((hidden, htype), (cell, ctype)):
        if not t.is_state or t.dtype != dt or t.num_elements != batches * state:
            raise refuse(op, f"state {tensor_desc(t)} is not a {dt.name.lower()} variable "
                         f"tensor of {batches} x {state}", _LSTM_SUPPORTED)
    if y.dtype != htype or y.shape != (*x.shape[:2], state):
        raise refuse(op, f"output {tensor_desc(y)}", _LSTM_SUPPORTED)
    if o.activation != _CELL_TANH:
        raise refuse(op, f"cell activation {o.activation}", _LSTM_SUPPORTED)
    if o.cell_clip < 0:
        raise refuse(op, f"cell clip {o.cell_clip} (TFLM requires >= 0)", _LSTM_SUPPORTED)
    s = _Lstm(x, y, hidden, cell, batches, time, n_in, state, o, kind)
    if s.quantized:
        _lstm_int_fields(graph, op, s)
    return s


def _lstm_int_fields(graph: Graph, op: Op, s: _Lstm) -> dict[str, int | list[int]]:
    """The integer kernels' parameters (int8 and 16x8 alike): TFLM's
    PrepareGateParametersInteger and CreateLstmCellStateInfo. The gate FCs rescale to
    Q3.12 (TFLM's fixed pre-activation scale: the converter's intermediate tensors,
    which carry the quantisation it used, are not read, as TFLM does not read them),
    the products of two Q0.15 gate outputs to the cell or hidden scale (double ratios
    of float32 scales); the tanh of the cell state is TFLM's int16 tanh at the cell
    scale's power of two."""
    ins = op.inputs
    (xs, xz), (hs, hz), (cs, cz) = (_scale(op, t) for t in (s.x, s.hidden, s.cell))
    for k in range(1, 9):
        t = graph.tensors[ins[k]]
        if _scale(op, t)[1] != 0:
            raise refuse(op, f"weights {tensor_desc(t)} have zero point {_scale(op, t)[1]}",
                         _LSTM_SUPPORTED)
    for k in range(12, 16):
        _scale(op, graph.tensors[ins[k]])
    if cz != 0:
        raise refuse(op, f"cell state {tensor_desc(s.cell)} has zero point {cz}",
                     _LSTM_SUPPORTED)

    def d(v: float) -> float:  # a float32 scale read as a double, as TFLM does
        return float(_f32(v))

    def fc(in_scale: float, k: int) -> tuple[int, int]:
        return quantize_multiplier(d(in_scale) * d(_scale(op, graph.tensors[ins[k]])[0])
                                   / d(_Q3_12))

    fin = [fc(xs, k) for k in range(1, 5)]
    frec = [fc(hs, k) for k in range(5, 9)]
    forget = quantize_multiplier(d(_Q0_15) * d(cs) / d(cs))
    update = quantize_multiplier(d(_Q0_15) * d(_Q0_15) / d(cs))
    hid = quantize_multiplier(d(_Q0_15) * d(_Q0_15) / d(hs))
    for what, (_, e) in (*((f"gate {g} input rescale", r) for g, r in enumerate(fin)),
                         *((f"gate {g} recurrent rescale", r) for g, r in enumerate(frec)),
                         ("cell update rescale", update), ("hidden rescale", hid)):
        if not -31 <= e <= 30:
            raise refuse(op, f"the {what} (a scale ratio) is outside 2^-32 .. 2^30",
                         _LSTM_SUPPORTED)
    if s.kind == "s16":  # TFLM's 64-bit requantisation of the gate FCs takes shifts <= 7
        for what, (_, e) in (*((f"gate {g} input rescale", r) for g, r in enumerate(fin)),
                             *((f"gate {g} recurrent rescale", r)
                               for g, r in enumerate(frec))):
            if e > 7:
                raise refuse(op, f"the 16x8 {what} needs a shift of {e} (TFLM's 64-bit "
                             "requantisation takes at most 7)", _LSTM_SUPPORTED)
    power = checked_log2(cs)[1]  # TFLM ignores whether it is a power of two
    shift = 12 + power
    tanh_m, tanh_s = (3 << shift, 0) if shift >= 0 else (3, -shift)
    if tanh_m > 0xFFFF:
        raise refuse(op, f"cell state {tensor_desc(s.cell)} scale {cs:g} is above 2^2",
                     _LSTM_SUPPORTED)
    clip = 0
    if s.options.cell_clip > 0:
        clip = int(min(max(d(s.options.cell_clip) / d(cs), -32768.0), 32767.0))
    return {"input_zero_point": xz, "hidden_zero_point": hz,
            "input_mult": [m for m, _ in fin], "input_shift": [e for _, e in fin],
            "recurrent_mult": [m for m, _ in frec], "recurrent_shift": [e for _, e in frec],
            "forget_mult": forget[0], "forget_shift": forget[1],
            "update_mult": update[0], "update_shift": update[1],
            "hidden_mult": hid[0], "hidden_shift": hid[1], "cell_clip": clip,
            "cell_tanh_multiplier": tanh_m, "cell_tanh_shift": tanh_s}


class LstmLowering(LoweringBase):
    headers: Sequence[str] = ("nnrt/kernels/sequence.h",)
    dtypes: Sequence[str] = ("int8", "int16", "float32")  # int16: 16x8; int16 cell state

    def check(self, graph: Graph, op: Op) -> None:
        _lstm(graph, op)

    def scratch_bytes(self, graph: Graph, op: Op) -> int:
        s = _lstm(graph, op)
        return (2 if s.quantized else 4) * 4 * s.batches * s.state

    def emit(self, ctx: EmitContext) -> Body:
        s = _lstm(ctx.graph, ctx.op)
        ins = ctx.op.inputs
        dims: dict[str, int] = {
            "batches": s.batches, "time_steps": s.time, "input_size": s.inputs,
            "state_size": s.state, "time_major": int(s.options.time_major),
            "cell_activation": ACTIVATION_NAMES.index(s.options.activation)}
        pointers = {"w_input": [Raw(ctx.c_ptr(ins[k])) for k in range(1, 5)],
                    "w_recurrent": [Raw(ctx.c_ptr(ins[k])) for k in range(5, 9)],
                    "bias": [Raw(ctx.c_ptr(ins[k])) for k in range(12, 16)]}
        args: list[Arg] = [ctx.ptr(s.x.index), ctx.ptr(s.hidden.index),
                           ctx.ptr(s.cell.index), ctx.ptr(s.y.index), ctx.scratch]
        if s.quantized:
            q: dict[str, object] = {**dims, **_lstm_int_fields(ctx.graph, ctx.op, s),
                                    **pointers}
            return [*c_params(f"nnrt_lstm_{s.kind}_params_t", q),
                    *c_call(f"nnrt_lstm_{s.kind}", ["&params", *args])]
        fields = {**dims, "cell_clip": float(np.float32(s.options.cell_clip)), **pointers}
        return [*c_params("nnrt_lstm_f32_params_t", fields),
                *c_call("nnrt_lstm_f32", ["&params", *args])]


LSTM = LstmLowering()
