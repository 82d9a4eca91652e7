"""WHILE with a trip count known at compile time (issue 17): the body inlined once per
iteration, as TF's converter writes a non-unrolled Keras RNN or a tf.while_loop over a
fixed range (an int32 counter among the loop values, compared with a constant).

Two models, one build and one oracle run each: the counter loops (an int8 accumulator,
a condition on two counters joined by LOGICAL_AND, zero iterations with the input as a
graph output), and a float32 RNN (GATHER of step i of the sequence, FULLY_CONNECTED +
TANH over the state, 6 iterations). A condition on run-time data is refused by name.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.control_flow import MAX_TRIPS
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import FullyConnectedOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.tflite_builder import ModelBuilder

Q8 = {"scale": 0.05, "zero_point": 3}
STEPS, UNITS, FEATURES = 6, 8, 4


def _i32(v: int, shape: tuple[int, ...] = (1,)) -> np.ndarray:
    return np.full(shape, v, np.int32)


def _counter_cond(limit: int, second: int | None = None, shape: tuple[int, ...] = (1,)
                  ) -> ModelBuilder:
    """cond(i, n, ...): i < limit (and n != second when given)."""
    c = ModelBuilder()
    i = c.tensor(shape, "int32")
    lt = c.tensor(shape, "bool")
    c.op("LESS", [i, c.const(_i32(limit, shape))], [lt])
    c.loop_inputs = [i]  # type: ignore[attr-defined]
    c.loop_output = lt  # type: ignore[attr-defined]
    if second is not None:
        n = c.tensor((1,), "int32")
        ne, both = c.tensor((1,), "bool"), c.tensor((1,), "bool")
        c.op("NOT_EQUAL", [n, c.const(_i32(second))], [ne])
        c.op("LOGICAL_AND", [lt, ne], [both])
        c.loop_inputs = [i, n]  # type: ignore[attr-defined]
        c.loop_output = both  # type: ignore[attr-defined]
    return c


def _while(b: ModelBuilder, cond: ModelBuilder, cond_extra: list[tuple[int, ...]],
           body: ModelBuilder, body_ins: list[int], body_outs: list[int],
           args: list[int], outs: list[int]) -> None:
    """WHILE(args) -> outs; cond's inputs beyond its counters get tensors of the shapes
    and dtypes ``cond_extra`` lists (unused by the condition, as the converter writes)."""
    ins = list(cond.loop_inputs)  # type: ignore[attr-defined]
    for shape, dtype, q in cond_extra:
        ins.append(cond.tensor(shape, dtype, **q))
    kc = b.add_subgraph(cond, ins, [cond.loop_output], "cond")  # type: ignore[attr-defined]
    kb = b.add_subgraph(body, body_ins, body_outs, "body")
    b.op("WHILE", args, outs, {"cond_subgraph_index": kc, "body_subgraph_index": kb})


def counter_model() -> bytes:
    """Outputs: 0 the int8 input accumulated 5 times (i < 5, i += 1), 1 an int8 sum
    over a loop on two counters (i < 10 and n != 3, n += 1 from 0: 3 trips), 2 a
    float32 value through a loop of zero iterations (i < 0) straight to the output, 3
    the accumulator of loop 0 plus one after it (a run-time WHILE output read on)."""
    b = ModelBuilder("while counters")
    x = b.tensor((1, 8), "int8", name="x", **Q8)
    xf = b.tensor((1, 4), "float32", name="xf")
    # (a) acc += x while i < 5
    body = ModelBuilder()
    i, i1 = body.tensor((1,), "int32"), body.tensor((1,), "int32")
    acc, acc1, bx = (body.tensor((1, 8), "int8", **Q8) for _ in range(3))
    body.op("ADD", [i, body.const(_i32(1))], [i1])
    body.op("ADD", [acc, bx], [acc1])
    y_i, y_acc, y_x = (b.tensor((1,), "int32"), b.tensor((1, 8), "int8", **Q8),
                       b.tensor((1, 8), "int8", **Q8))
    _while(b, _counter_cond(5), [((1, 8), "int8", Q8), ((1, 8), "int8", Q8)], body,
           [i, acc, bx], [i1, acc1, bx], [b.const(_i32(0)), x, x], [y_i, y_acc, y_x])
    plus = b.tensor((1, 8), "int8", **Q8)
    b.op("ADD", [y_acc, b.const(np.full((1, 8), 23, np.int8), **Q8)], [plus])
    # two counters: i < 10 and n != 3 (LOGICAL_AND); i += 2, n += 1; s = s - x
    body = ModelBuilder()
    i, i1, n, n1 = (body.tensor((1,), "int32") for _ in range(4))
    s, s1, bx = (body.tensor((1, 8), "int8", **Q8) for _ in range(3))
    body.op("ADD", [i, body.const(_i32(2))], [i1])
    body.op("ADD", [n, body.const(_i32(1))], [n1])
    body.op("SUB", [s, bx], [s1])
    y2 = [b.tensor((1,), "int32"), b.tensor((1,), "int32"),
          b.tensor((1, 8), "int8", **Q8), b.tensor((1, 8), "int8", **Q8)]
    _while(b, _counter_cond(10, 3), [((1, 8), "int8", Q8), ((1, 8), "int8", Q8)], body,
           [i, n, s, bx], [i1, n1, s1, bx],
           [b.const(_i32(0)), b.const(_i32(0)), plus, x], y2)
    # (c) zero iterations: i < 0 from 0; the float input is the output
    body = ModelBuilder()
    i, i1 = body.tensor((1,), "int32"), body.tensor((1,), "int32")
    v, v1 = body.tensor((1, 4), "float32"), body.tensor((1, 4), "float32")
    body.op("ADD", [i, body.const(_i32(1))], [i1])
    body.op("MUL", [v, v], [v1])
    y3 = [b.tensor((1,), "int32"), b.tensor((1, 4), "float32", name="zero_trips")]
    _while(b, _counter_cond(0), [((1, 4), "float32", {})], body, [i, v], [i1, v1],
           [b.const(_i32(0)), xf], y3)
    return b.build([x, xf], [y_acc, y2[2], y3[1], plus])


def rnn_model() -> bytes:
    """A SimpleRNN over 6 steps as TF converts it non-unrolled: WHILE(i, h, seq) with a
    scalar counter, body x_t = GATHER(seq, RESHAPE(i, [1])), h = tanh(FC(x_t) + FC(h)),
    i += 1; cond i < 6. Output: the last state."""
    rng = np.random.default_rng(17)
    wx = (rng.standard_normal((UNITS, FEATURES)) * 0.5).astype(np.float32)
    wh = (rng.standard_normal((UNITS, UNITS)) * 0.4).astype(np.float32)
    bias = (rng.standard_normal(UNITS) * 0.1).astype(np.float32)
    b = ModelBuilder("while rnn")
    seq = b.tensor((STEPS, FEATURES), "float32", name="seq")
    h0 = b.tensor((1, UNITS), "float32", name="h0")
    body = ModelBuilder()
    i, i1, idx = body.tensor((), "int32"), body.tensor((), "int32"), body.tensor((1,), "int32")
    h, bseq = body.tensor((1, UNITS), "float32"), body.tensor((STEPS, FEATURES), "float32")
    xt = body.tensor((1, FEATURES), "float32")
    body.op("RESHAPE", [i, body.const(_i32(1))], [idx])
    body.op("GATHER", [bseq, idx], [xt], {"axis": 0, "batch_dims": 0})
    a, c, s, h1 = (body.tensor((1, UNITS), "float32") for _ in range(4))
    body.op("FULLY_CONNECTED", [xt, body.const(wx), body.const(bias)], [a],
            FullyConnectedOptions("NONE"))
    body.op("FULLY_CONNECTED", [h, body.const(wh), -1], [c], FullyConnectedOptions("NONE"))
    body.op("ADD", [a, c], [s])
    body.op("TANH", [s], [h1])
    body.op("ADD", [i, body.const(_i32(1, ()))], [i1])
    outs = [b.tensor((), "int32"), b.tensor((1, UNITS), "float32", name="h_last"),
            b.tensor((STEPS, FEATURES), "float32")]
    _while(b, _counter_cond(STEPS, shape=()), [((1, UNITS), "float32", {}),
                                               ((STEPS, FEATURES), "float32", {})],
           body, [i, h, bseq], [i1, h1, bseq], [b.const(_i32(0, ())), h0, seq], outs)
    return b.build([seq, h0], [outs[1]])


COUNTERS = counter_model()
RNN = rnn_model()


def _inputs(model: bytes, seed: int) -> list[np.ndarray]:
    g = load_model_bytes(model)
    rng = np.random.default_rng(seed)
    out = []
    for t in g.inputs:
        tensor = g.tensors[t]
        if tensor.dtype.name == "INT8":
            out.append(rng.integers(-10, 10, tensor.shape).astype(np.int8))
        else:
            out.append(rng.standard_normal(tensor.shape).astype(np.float32))
    return out


def _assert_bit_exact(model: bytes, inputs: list[np.ndarray], target: str = "host"
                      ) -> list[np.ndarray]:
    ref, _ = run_tflm(model, inputs)
    got, _ = run_nnopt(model, inputs, target=target)
    assert len(ref) == len(got)
    for k, (r, g) in enumerate(zip(ref, got, strict=True)):
        np.testing.assert_array_equal(g, r, err_msg=f"output {k}")
    return ref


def _dequant(q: np.ndarray) -> np.ndarray:
    return (q.astype(np.float64) - Q8["zero_point"]) * Q8["scale"]


def test_counter_loops_bit_exact() -> None:
    x, xf = inputs = _inputs(COUNTERS, 1)
    ref = _assert_bit_exact(COUNTERS, inputs)
    # the oracle ran the loops: 6 x (x + 5 adds), 3 subtractions, zero trips
    np.testing.assert_allclose(_dequant(ref[0]), 6 * _dequant(x), atol=3 * Q8["scale"])
    np.testing.assert_allclose(_dequant(ref[1]), _dequant(ref[3]) - 3 * _dequant(x),
                               atol=2 * Q8["scale"])
    np.testing.assert_array_equal(ref[2], xf)


def test_rnn_loop_bit_exact() -> None:
    seq, h0 = inputs = _inputs(RNN, 2)
    ref = _assert_bit_exact(RNN, inputs)
    wx, wh, bias = rnn_weights()
    h = h0.astype(np.float64)
    for t in range(STEPS):  # the oracle ran 6 steps of the recurrence
        h = np.tanh(seq[t:t + 1] @ wx.T + h @ wh.T + bias)
    np.testing.assert_allclose(ref[0], h, atol=1e-5)


def rnn_weights() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = load_model_bytes(RNN)
    consts = [t.array() for t in g.tensors if t.is_constant and t.dtype.name == "FLOAT32"]
    wx = next(c for c in consts if c.shape == (UNITS, FEATURES))
    wh = next(c for c in consts if c.shape == (UNITS, UNITS))
    bias = next(c for c in consts if c.shape == (UNITS,))
    return wx, wh, bias


def test_body_inlined_once_per_trip() -> None:
    g = load_model_bytes(RNN)
    ops = [op.opcode for op in g.ops]
    assert "WHILE" not in ops
    assert ops.count("FULLY_CONNECTED") == 2 * STEPS and ops.count("TANH") == STEPS
    # GATHER, 2 FC, ADD, TANH per trip; no copy of the sequence nothing reads after it
    assert len(ops) == 5 * STEPS
    # the counter is folded: no int32 ADD or RESHAPE runs, GATHER reads step t as a
    # constant
    assert ops.count("ADD") == STEPS and "RESHAPE" not in ops
    gathers = [op for op in g.ops if op.opcode == "GATHER"]
    assert [int(g.tensors[op.inputs[1]].array()[0]) for op in gathers] == list(range(STEPS))
    # the weights are shared by the trips, not copied
    assert sum(t.is_constant and t.dtype.name == "FLOAT32" for t in g.tensors) == 3
    # the last trip writes the WHILE's output itself
    last_tanh = [op for op in g.ops if op.opcode == "TANH"][-1]
    assert g.tensors[last_tanh.outputs[0]].name == "h_last"
    c = load_model_bytes(COUNTERS)
    assert [op.opcode for op in c.ops].count("ADD") == 5 + 1
    assert [op.opcode for op in c.ops].count("SUB") == 3


qemu = pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                          or shutil.which("arm-none-eabi-gcc") is None,
                          reason="qemu-system-arm or arm-none-eabi-gcc not installed")


@pytest.mark.qemu
@qemu
def test_while_loops_on_cortex_m7() -> None:
    _assert_bit_exact(RNN, _inputs(RNN, 3), target="qemu-m7")
    _assert_bit_exact(COUNTERS, _inputs(COUNTERS, 4), target="qemu-m7")


# ----- refused by name -----

def _data_dependent(kind: str) -> bytes:
    """A WHILE whose condition reads run-time data: a float32 value < 5 (kind "float"),
    an int32 counter that is a graph input ("input"), or a constant counter compared
    with an int32 graph input carried as a loop value ("limit")."""
    b = ModelBuilder()
    cond, body = ModelBuilder(), ModelBuilder()
    dtype = "float32" if kind == "float" else "int32"
    one = np.ones(1, np.float32 if kind == "float" else np.int32)
    ci, co, cn = cond.tensor((1,), dtype), cond.tensor((1,), "bool"), cond.tensor((1,), dtype)
    cond.op("LESS", [ci, cn if kind == "limit" else cond.const(one * 5)], [co])
    bi, bo, bn = body.tensor((1,), dtype), body.tensor((1,), dtype), body.tensor((1,), dtype)
    body.op("ADD", [bi, body.const(one)], [bo])
    kc = b.add_subgraph(cond, [ci, cn], [co], "cond")
    kb = b.add_subgraph(body, [bi, bn], [bo, bn], "body")
    x, n = b.tensor((1,), dtype, name="x"), b.tensor((1,), dtype, name="n")
    y, m = b.tensor((1,), dtype), b.tensor((1,), dtype)
    start = b.const(one * 0) if kind == "limit" else x
    b.op("WHILE", [start, n], [y, m], {"cond_subgraph_index": kc, "body_subgraph_index": kb})
    return b.build([x, n], [y])


@pytest.mark.parametrize(("kind", "why"), [
    ("float", r"loop value 0 \(tensor 0, x\) is run-time data"),
    ("input", r"loop value 0 \(tensor 0, x\) is run-time data"),
    ("limit", r"loop value 1 \(tensor 1, n\) is run-time data"),
])
def test_refuses_a_condition_on_run_time_data(kind: str, why: str) -> None:
    from tflite_micro.python.tflite_micro import runtime

    model = _data_dependent(kind)
    if kind == "float":  # a valid model TFLM runs: 5 trips from 0
        interp = runtime.Interpreter.from_bytes(model, arena_size=1 << 16)
        interp.set_input(np.zeros(1, np.float32), 0)
        interp.set_input(np.zeros(1, np.float32), 1)
        interp.invoke()
        assert interp.get_output(0)[0] == 5.0
    with pytest.raises(UnsupportedError, match=r"op 0 \(WHILE\): its condition \(cond "
                       r"subgraph 1, tensor \d+\) depends on values known only at run "
                       r"time: " + why) as e:
        load_model_bytes(model)
    assert "fixed trip count" in (e.value.hint or "")


def test_refuses_too_many_trips() -> None:
    b = ModelBuilder()
    body = ModelBuilder()
    i, i1 = body.tensor((1,), "int32"), body.tensor((1,), "int32")
    v, v1 = body.tensor((1, 4), "float32"), body.tensor((1, 4), "float32")
    body.op("ADD", [i, body.const(_i32(1))], [i1])
    body.op("MUL", [v, v], [v1])
    x = b.tensor((1, 4), "float32")
    ys = [b.tensor((1,), "int32"), b.tensor((1, 4), "float32")]
    _while(b, _counter_cond(MAX_TRIPS + 1), [((1, 4), "float32", {})], body, [i, v],
           [i1, v1], [b.const(_i32(0)), x], ys)
    with pytest.raises(UnsupportedError, match=rf"op 0 \(WHILE\): loops more than "
                       rf"{MAX_TRIPS} times"):
        load_model_bytes(b.build([x], [ys[1]]))


def test_refuses_a_counter_as_graph_output() -> None:
    b = ModelBuilder()
    body = ModelBuilder()
    i, i1 = body.tensor((1,), "int32"), body.tensor((1,), "int32")
    body.op("ADD", [i, body.const(_i32(1))], [i1])
    y = b.tensor((1,), "int32", name="count")
    _while(b, _counter_cond(3), [], body, [i], [i1], [b.const(_i32(0))], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(WHILE\): output 0 \(tensor \d+, "
                       r"count, INT32\) would be a copy"):
        load_model_bytes(b.build([], [y]))




@pytest.mark.parametrize(("inner", "match"), [
    ("IF", r"body subgraph 2 op 2 \(IF\) is control flow or a variable inside a loop"),
    ("VAR_HANDLE", r"body subgraph 2 keeps variable or resource tensor \d+ .*: state in a "
     r"loop is not supported"),
])
def test_refuses_control_flow_or_state_in_the_body(inner: str, match: str) -> None:
    b = ModelBuilder()
    body = ModelBuilder()
    i, i1 = body.tensor((1,), "int32"), body.tensor((1,), "int32")
    v, v1 = body.tensor((1, 4), "float32"), body.tensor((1, 4), "float32")
    body.op("ADD", [i, body.const(_i32(1))], [i1])
    if inner == "IF":
        c = body.tensor((), "bool")
        body.op("LESS", [i, body.const(_i32(1))], [c])
        body.op("IF", [c, v], [v1], {"then_subgraph_index": 1, "else_subgraph_index": 1})
    else:
        h = body.tensor((), "resource")
        body.op("VAR_HANDLE", [], [h], {"container": "", "shared_name": "v"})
        body.op("READ_VARIABLE", [h], [v1])
    x = b.tensor((1, 4), "float32")
    ys = [b.tensor((1,), "int32"), b.tensor((1, 4), "float32")]
    _while(b, _counter_cond(2), [((1, 4), "float32", {})], body, [i, v], [i1, v1],
           [b.const(_i32(0)), x], ys)
    with pytest.raises(UnsupportedError, match=r"op 0 \(WHILE\): " + match):
        load_model_bytes(b.build([x], [ys[1]]))
