"""Small ONNX models (``onnx.helper``, seeded weights) for issue 24: LSTM, GRU and RNN in
each direction with states as model inputs and outputs, If and Loop resolved at build
time, Clip with computed bounds, MatMul of two activations."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .onnx_models import OnnxBuilder

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _finish(b: OnnxBuilder, inputs: dict[str, tuple[int, Sequence[int]]],
            outputs: Sequence[str], opset: int = 17) -> bytes:
    g = helper.make_graph(
        b.nodes, "g",
        [helper.make_tensor_value_info(n, et, list(s)) for n, (et, s) in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outputs], b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(m)
    known = {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output]}
    for o in m.graph.output:
        if o.name in known:
            o.CopyFrom(known[o.name])
    onnx.checker.check_model(m)
    return m.SerializeToString()


def _f18(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 8])


def recurrent_model(op: str, direction: str = "forward", *, seq: int = 5, batch: int = 2,
                    size: int = 6, hidden: int = 4, layout: int = 0,
                    state_inputs: bool = True, linear_before_reset: int = 0,
                    seed: int = 24, **attrs: object) -> bytes:
    """X -> op -> (Y, Y_h[, Y_c]); initial states as inputs when ``state_inputs``."""
    b = OnnxBuilder(seed)
    nd = 2 if direction == "bidirectional" else 1
    G = GATES[op]
    W = b.w(nd, G * hidden, size, scale=0.5)
    R = b.w(nd, G * hidden, hidden, scale=0.5)
    B = b.w(nd, 2 * G * hidden, scale=0.3)
    xs = (seq, batch, size) if layout == 0 else (batch, seq, size)
    hs = (nd, batch, hidden) if layout == 0 else (batch, nd, hidden)
    inputs: dict[str, tuple[int, Sequence[int]]] = {"x": (TensorProto.FLOAT, xs)}
    ins = ["x", W, R, B, ""]
    if state_inputs:
        inputs["h0"] = (TensorProto.FLOAT, hs)
        ins.append("h0")
        if op == "LSTM":
            inputs["c0"] = (TensorProto.FLOAT, hs)
            ins.append("c0")
    n_out = 3 if op == "LSTM" else 2
    outs = ["y", "y_h", "y_c"][:n_out]
    if op == "GRU":
        attrs["linear_before_reset"] = linear_before_reset
    if layout:
        attrs["layout"] = layout
    b.nodes.append(helper.make_node(op, ins, outs, name=f"{op}_0", hidden_size=hidden,
                                    direction=direction, **attrs))
    return _finish(b, inputs, outs)


def if_loop_model(seed: int = 25) -> bytes:
    """x [1, 8]: If on a condition from x's shape (then: x*2, else: x-1), then a Loop of 3
    iterations that accumulates ``acc = acc * w + iter`` and scans ``acc``; and an If on
    the int64 input ``mode`` (pinned with --input-value): Relu or Neg of the result."""
    b = OnnxBuilder(seed)
    w = b.w(1, 8)
    shp = b.node("Shape", ["x"])
    d1 = b.node("Gather", [shp, b.const(np.array(1, np.int64))], axis=0)
    cond = b.node("Equal", [d1, b.const(np.array(8, np.int64))])
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t_out"])], "then",
                               [], [_f18("t_out")],
                               [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    else_g = helper.make_graph([helper.make_node("Sub", ["x", "one"], ["e_out"])], "else",
                               [], [_f18("e_out")],
                               [numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    b.nodes.append(helper.make_node("If", [cond], ["if_out"], name="If_shape",
                                    then_branch=then_g, else_branch=else_g))
    body = helper.make_graph(
        [helper.make_node("Mul", ["acc_in", w], ["m"]),
         helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["m", "i_f"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [1, 8]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [1, 8])])
    trip = b.const(np.array(3, np.int64))
    true = b.const(np.array(True))
    b.nodes.append(helper.make_node("Loop", [trip, true, "if_out"], ["acc", "scans"],
                                    name="Loop_0", body=body))
    is_one = b.node("Equal", ["mode", b.const(np.array(1, np.int64))])
    relu_g = helper.make_graph([helper.make_node("Relu", ["acc"], ["r_out"])], "relu", [],
                               [_f18("r_out")])
    neg_g = helper.make_graph([helper.make_node("Neg", ["acc"], ["n_out"])], "neg", [],
                              [_f18("n_out")])
    b.nodes.append(helper.make_node("If", [is_one], ["out"], name="If_mode",
                                    then_branch=relu_g, else_branch=neg_g))
    return _finish(b, {"x": (TensorProto.FLOAT, [1, 8]), "mode": (TensorProto.INT64, [])},
                   ["out", "scans"])


def computed_clip_model(seed: int = 26) -> bytes:
    """The mel front end's pattern: Clip(x, max(x) - 8, c + 1) (a bound from the
    activation, one from initializers), then MatMul of two activations [2,3,4] x [2,4,5]
    and a 2-D one x [3,4] @ x^T."""
    b = OnnxBuilder(seed)
    hi = b.node("Add", [b.const(np.array(1.5, np.float32)), b.const(np.array(0.5, np.float32))])
    mx = b.node("ReduceMax", ["x"], keepdims=0)
    lo = b.node("Sub", [mx, b.const(np.array(3.0, np.float32))])
    c = b.node("Clip", ["x", lo, hi])
    y = b.node("MatMul", [c, "z"])
    x2 = b.node("Reshape", ["x", b.const(np.array([6, 4], np.int64))])
    xt = b.node("Transpose", [x2], perm=[1, 0])
    gram = b.node("MatMul", [x2, xt])
    return _finish(b, {"x": (TensorProto.FLOAT, [2, 3, 4]),
                       "z": (TensorProto.FLOAT, [2, 4, 5])}, [y, gram])
