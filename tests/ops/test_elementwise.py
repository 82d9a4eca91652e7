"""ADD, SUB, MUL, MAXIMUM, MINIMUM (int8, float32): bit-exact against TFLite Micro.

Every case is one op in a single multi-op model (one build, one oracle run), checked
output by output: broadcasting of all shapes TFLite allows (scalars, 5-D and 6-D),
zero points at the ends of the int8 range, saturation, multipliers above one (MUL),
fused activations, and a chain of ops the planner runs in place.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import SoftmaxOptions
from nnopt.lowering.elementwise import broadcast_descriptor
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions, plan_model
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm
from support.cases import mismatched_cases, oracle_results
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder, binary_model

Q = tuple[float, int]

@dataclass(frozen=True)
class Case:
    id: str
    opcode: str
    dtype: str
    shape_a: tuple[int, ...]
    shape_b: tuple[int, ...]
    qa: Q = (0.05, 0)
    qb: Q = (0.05, 0)
    qo: Q = (0.1, 0)
    act: str = "NONE"


def _cases() -> list[Case]:
    out: list[Case] = []
    shapes = [
        ("same", (1, 4, 4, 8), (1, 4, 4, 8)),
        ("chan", (1, 4, 4, 8), (8,)),
        ("both", (4, 1, 8), (1, 5, 1)),
        ("scalar", (2, 3, 5), ()),
        ("lhs_small", (1, 1, 1, 6), (2, 3, 4, 6)),
        ("5d", (2, 1, 3, 1, 4), (1, 2, 1, 5, 1)),
        ("6d", (2, 1, 2, 1, 2, 3), (1, 3, 1, 2, 1, 3)),
    ]
    quant = {
        "ADD": ((0.05, 3), (0.07, -5), (0.1, 2)),
        "SUB": ((0.05, 3), (0.02, -5), (0.03, 2)),
        "MUL": ((0.05, 3), (0.07, -5), (0.05, 2)),
        "MAXIMUM": ((0.05, 3), (0.05, -5), (0.05, 2)),
        "MINIMUM": ((0.05, 3), (0.05, -5), (0.05, 2)),
    }
    for opcode, (name, sa, sb) in itertools.product(quant, shapes):
        qa, qb, qo = quant[opcode]
        out.append(Case(f"{opcode}-s8-{name}", opcode, "int8", sa, sb, qa, qb, qo))
        out.append(Case(f"{opcode}-f32-{name}", opcode, "float32", sa, sb))
    for opcode in ("ADD", "SUB", "MUL"):
        qa, qb, qo = quant[opcode]
        for act in ("RELU", "RELU6", "RELU_N1_TO_1"):
            out.append(Case(f"{opcode}-s8-{act}", opcode, "int8", (3, 7), (7,),
                            qa, qb, (0.02, -10), act))
            out.append(Case(f"{opcode}-f32-{act}", opcode, "float32", (3, 7), (7,), act=act))
        # zero points at both ends of the int8 range, strongly saturating output
        out.append(Case(f"{opcode}-s8-zp-extremes", opcode, "int8", (4, 9), (4, 9),
                        (0.1, -128), (0.03, 127), (0.004, 127)))
        out.append(Case(f"{opcode}-s8-zp-extremes-rev", opcode, "int8", (4, 9), (9,),
                        (0.1, 127), (0.3, -128), (0.5, -128)))
    # int8 ADD of >= 512 output elements takes the tabled loop (nnrt_add_s8.c,
    # add_tabled()): same shape, broadcast, zero points at the ends, activation, scale
    # ratio; 2,048 random elements meet every one of the 256 values of each input
    qa, qb, qo = quant["ADD"]
    for name, sa, sb, qs, act in (
            ("same", (1, 16, 16, 8), (1, 16, 16, 8), (qa, qb, qo), "NONE"),
            ("chan", (1, 16, 16, 8), (8,), (qa, qb, qo), "NONE"),
            ("zp-extremes", (1, 8, 8, 32), (1, 8, 8, 32),
             ((0.1, -128), (0.03, 127), (0.004, 127)), "NONE"),
            ("relu", (2, 16, 64), (2, 16, 64), (qa, qb, (0.02, -10)), "RELU"),
            ("scale-ratio", (1, 32, 64), (1, 32, 64), ((0.9, 0), (0.0007, 10), (1.0, 0)),
             "NONE")):
        out.append(Case(f"ADD-s8-tabled-{name}", "ADD", "int8", sa, sb, *qs, act=act))
    # MUL whose real multiplier is above one (positive shift), and tiny (large right shift)
    out.append(Case("MUL-s8-mult-gt1", "MUL", "int8", (3, 8), (8,), (0.5, 1), (0.4, -2),
                    (0.01, 0)))
    out.append(Case("MUL-s8-mult-tiny", "MUL", "int8", (3, 8), (8,), (0.001, 1), (0.002, -2),
                    (0.5, 0)))
    # ADD with very different input scales (one multiplier near 0.5, the other tiny)
    out.append(Case("ADD-s8-scale-ratio", "ADD", "int8", (3, 8), (3, 8), (0.9, 0),
                    (0.0007, 10), (1.0, 0)))
    out.append(Case("SUB-s8-scale-ratio", "SUB", "int8", (3, 8), (3, 8), (0.0007, 0),
                    (0.9, 10), (1.0, 0)))
    # Output multiplier differs in its low bits when computed in float32 instead of
    # double (1431655680 vs 1431655730): the oracle divides in double.
    out.append(Case("SUB-s8-double-multiplier", "SUB", "int8", (6, 8), (8,), (0.2, -7),
                    (0.05, -3), (0.3, 1), "RELU"))
    return out


CASES = _cases()


def _q(quant: Q, dtype: str) -> dict[str, Any]:
    return {} if dtype == "float32" else {"scale": quant[0], "zero_point": quant[1]}


def _operand(b: ModelBuilder, rng: np.random.Generator, name: str, shape: tuple[int, ...],
             dtype: str, quant: Q) -> int:
    if dtype == "int8":
        data: np.ndarray = rng.integers(-128, 128, size=shape).astype(np.int8)
    else:
        data = (rng.standard_normal(shape) * 2).astype(np.float32)
    return b.tensor(shape, dtype, name=name, data=data, **_q(quant, dtype))


def add_cases(b: ModelBuilder, seed: int = 7) -> dict[str, int]:
    """Add every case to ``b``; returns case id -> result tensor. The harness runner
    takes at most 16 graph inputs and outputs, so case operands are random constants
    and case results intermediate tensors (both sides trace every tensor)."""
    rng = np.random.default_rng(seed)
    out_of: dict[str, int] = {}
    for c in CASES:
        a = _operand(b, rng, f"{c.id}/a", c.shape_a, c.dtype, c.qa)
        bi = _operand(b, rng, f"{c.id}/b", c.shape_b, c.dtype, c.qb)
        shape = np.broadcast_shapes(c.shape_a, c.shape_b)
        y = b.tensor(shape, c.dtype, name=f"{c.id}/y", **_q(c.qo, c.dtype))
        opts = None if c.opcode in ("MAXIMUM", "MINIMUM") else {
            "fused_activation_function": c.act}
        b.op(c.opcode, [a, bi], [y], opts)
        out_of[c.id] = y
    return out_of


def _cases_model() -> tuple[bytes, dict[str, int], list[np.ndarray]]:
    b = ModelBuilder("elementwise cases")
    out_of = add_cases(b)
    x = b.tensor((4,), "int8", name="x", scale=0.1, zero_point=0)  # drives one last op
    z = b.tensor((4,), "int8", name="z", scale=0.1, zero_point=0)
    b.op("MAXIMUM", [x, x], [z])
    model = b.build([x], [z])
    return model, out_of, random_inputs(model, seed=3)


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    model, out_of, ins = _cases_model()
    return oracle_results(model, ins, out_of)


@pytest.mark.slow
def test_cases_sanitized() -> None:
    """The element-wise cases built with ASan/UBSan: any out-of-bounds access or
    undefined behaviour in these kernels fails the run."""
    model, out_of, ins = _cases_model()
    assert not mismatched_cases(oracle_results(model, ins, out_of, sanitize=True))


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bit_exact(results: dict[str, tuple[np.ndarray, np.ndarray]], case: Case) -> None:
    ref, got = results[case.id]
    np.testing.assert_array_equal(got, ref)


def _inplace_chains() -> bytes:
    """Per dtype: a+b -> *c -> max(d,.) -> -f -> +e. MUL, MAXIMUM (onto its second
    input) and SUB overwrite the dying intermediate they read."""
    b = ModelBuilder("inplace chains")
    inputs, outputs = [], []
    for dtype in ("int8", "float32"):
        q = _q((0.05, -3), dtype)
        shape = (2, 6, 5, 8)
        xs = [b.tensor(shape, dtype, name=f"{dtype}/{n}", **q) for n in "abcde"]
        small = b.tensor((8,), dtype, name=f"{dtype}/f", **q)
        t1 = b.tensor(shape, dtype, name=f"{dtype}/t1", **_q((0.1, 4), dtype))
        t2 = b.tensor(shape, dtype, name=f"{dtype}/t2", **_q((0.2, -7), dtype))
        t3 = b.tensor(shape, dtype, name=f"{dtype}/t3", **_q((0.2, -7), dtype))
        t4 = b.tensor(shape, dtype, name=f"{dtype}/t4", **_q((0.3, 1), dtype))
        y = b.tensor(shape, dtype, name=f"{dtype}/y", **_q((0.3, 1), dtype))
        b.op("ADD", [xs[0], xs[1]], [t1], {"fused_activation_function": "NONE"})
        b.op("MUL", [t1, xs[2]], [t2], {"fused_activation_function": "NONE"})
        b.op("MAXIMUM", [xs[3], t2], [t3])
        b.op("SUB", [t3, small], [t4], {"fused_activation_function": "RELU"})
        b.op("ADD", [t4, xs[4]], [y], {"fused_activation_function": "NONE"})
        inputs += [*xs, small]
        outputs.append(y)
    return b.build(inputs, outputs)


@pytest.mark.slow
def test_in_place_chain() -> None:
    model = _inplace_chains()
    opts = PlanOptions(order="file")
    graph = load_model_bytes(model)
    planned = plan_model(graph, opts)
    assert len(planned.plan.inplace) == 6  # MUL, MAXIMUM, SUB of each chain
    ins = random_inputs(model, seed=11)
    ref_out, ref = run_tflm(model, ins)
    got_out, got = run_nnopt(model, ins, options=opts)
    for r, g in zip(ref_out, got_out, strict=True):
        np.testing.assert_array_equal(g, r)
    # Each in-place output was overwritten later; the trace taken right after each op
    # must still match.
    for t in (t for op in graph.ops for t in op.outputs):
        np.testing.assert_array_equal(got[t], ref[t])


#: The tabled int8 ADD's loops (nnrt_add_s8.c, add_tabled(); >= 512 output elements) on
#: the cores that run them: the M7 (DSP) and the M3 (none). id -> (shape a, shape b,
#: qa, qb, qo, activation).
TABLED_ADD: dict[str, tuple[tuple[int, ...], tuple[int, ...], Q, Q, Q, str]] = {
    # contiguous rows four a pass, the n % 4 == 3 tail
    "same-tail": ((1, 9, 9, 7), (1, 9, 9, 7), (0.05, 3), (0.07, -5), (0.1, 2), "NONE"),
    # broadcast whose innermost rows are contiguous (rows of 7: one pass and a tail)
    "chan-rows": ((1, 16, 16, 7), (7,), (0.05, 3), (0.07, -5), (0.1, 2), "NONE"),
    # broadcast rows with a zero stride: the strided loop
    "stride0-rows": ((1, 8, 9, 8), (1, 8, 9, 1), (0.05, 3), (0.07, -5), (0.1, 2), "NONE"),
    # an activation range inside int8: the strided loop's clamp
    "relu-tail": ((3, 13, 17), (3, 13, 17), (0.05, 3), (0.07, -5), (0.02, -10), "RELU"),
    "zp-extremes": ((1, 8, 8, 33), (1, 8, 8, 33), (0.1, -128), (0.03, 127), (0.004, 127),
                    "NONE"),
    # the output's right shift at its least (rsh = 1: the rounding half and thus the
    # folded addend odd); the sums that cancel to a few units are the unsaturated outputs
    "rsh1": ((1, 16, 64), (1, 16, 64), (0.05, 0), (0.03, 0), (5.3e-7, 0), "NONE"),
    # a large output scale: the output offset shifted by rsh overflows int32, so it is
    # added after the shift (not folded) and the rows take the strided loop
    "offset-unfolded": ((1, 16, 33), (1, 16, 33), (0.001, 3), (0.0013, -4), (4.0, 9),
                        "NONE"),
}


def _tabled_add_model() -> tuple[bytes, dict[str, int], list[np.ndarray]]:
    """The TABLED_ADD cases on constant operands, plus a chain on a graph input whose
    second ADD the planner runs in place (its output over the dying first sum)."""
    b = ModelBuilder("tabled add")
    rng = np.random.default_rng(5)
    out_of: dict[str, int] = {}
    for cid, (sa, sb, qa, qb, qo, act) in TABLED_ADD.items():
        a = _operand(b, rng, f"{cid}/a", sa, "int8", qa)
        c = _operand(b, rng, f"{cid}/b", sb, "int8", qb)
        y = b.tensor(np.broadcast_shapes(sa, sb), "int8", name=f"{cid}/y", **_q(qo, "int8"))
        b.op("ADD", [a, c], [y], {"fused_activation_function": act})
        out_of[cid] = y
    shape = (1, 10, 10, 9)  # 900 elements: the tail again
    x = b.tensor(shape, "int8", name="x", scale=0.05, zero_point=-3)
    k1 = _operand(b, rng, "k1", shape, "int8", (0.04, 6))
    k2 = _operand(b, rng, "k2", shape, "int8", (0.06, -2))
    t = b.tensor(shape, "int8", name="t", scale=0.08, zero_point=1)
    u = b.tensor(shape, "int8", name="inplace/u", scale=0.1, zero_point=-4)
    y = b.tensor(shape, "int8", name="inplace/y", scale=0.1, zero_point=-4)
    b.op("ADD", [x, k1], [t], {"fused_activation_function": "NONE"})
    b.op("ADD", [k2, t], [u], {"fused_activation_function": "NONE"})
    b.op("MAXIMUM", [u, k2], [y])  # the graph output apart: u an intermediate
    out_of["inplace-first"] = t
    out_of["inplace"] = u
    model = b.build([x], [y])
    return model, out_of, random_inputs(model, seed=9)


@pytest.mark.qemu
@needs_qemu
@pytest.mark.parametrize("target,board", [("qemu-m7", "nucleo_f767zi"),
                                          ("qemu-m3", "mps2_an385")])
def test_tabled_add_on_cortex_m_bit_exact_with_tflm(target: str, board: str) -> None:
    from nnopt.boards import load_board

    model, out_of, ins = _tabled_add_model()
    opts = PlanOptions(order="file")
    planned = plan_model(load_model_bytes(model), opts)
    assert (out_of["inplace"], out_of["inplace-first"]) in planned.plan.inplace
    _, ref = run_tflm(model, ins)
    _, got = run_nnopt(model, ins, target=target, board=load_board(board), options=opts)
    bad = [cid for cid, t in out_of.items()
           if got[t].shape != ref[t].shape or np.any(got[t] != ref[t])]
    assert not bad


# ----- refusals (no compilation) -----

def _refusal(model: bytes) -> str:
    with pytest.raises(UnsupportedError) as err:
        check_graph(load_model_bytes(model))
    return str(err.value)


def test_refuses_int16_mul_with_zero_points() -> None:
    """TFLM's mul_common.cc requires int16 zero points 0."""
    msg = _refusal(binary_model("MUL", (2, 3), (2, 3), dtype="int16", quant_a=(0.01, 3),
                                quant_b=(0.01, 0), quant_out=(0.01, 0)))
    assert "op 0 (MUL)" in msg and "zero points 3, 0 -> 0" in msg and "Hint: " in msg


def test_refuses_tanh_activation() -> None:
    msg = _refusal(binary_model("MUL", (2, 3), (2, 3), dtype="float32", activation="TANH"))
    assert "op 0 (MUL)" in msg and "TANH" in msg and "RELU6" in msg


def test_refuses_add_with_tiny_output_scale() -> None:
    # 2 * max_scale / (2^20 * out_scale) >= 1: TFLM's Prepare aborts on this.
    msg = _refusal(binary_model("ADD", (4,), (4,), quant_a=(1.0, 0), quant_b=(1.0, 0),
                                quant_out=(1e-7, 0)))
    assert "op 0 (ADD)" in msg and "output rescale" in msg


def test_refuses_mixed_dtypes() -> None:
    msg = _refusal(binary_model("ADD", (4,), (4,), dtype="int8", out_dtype="float32"))
    assert "op 0 (ADD)" in msg


def test_refuses_bad_broadcast() -> None:
    msg = _refusal(binary_model("SUB", (2, 3), (2, 3), out_shape=(3, 3)))
    assert "do not broadcast" in msg


# ----- the broadcast descriptor, against numpy -----

def _walk(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices of a and b read for each output element, via the descriptor."""
    out = np.broadcast_shapes(shape_a, shape_b)
    bc = broadcast_descriptor(shape_a, shape_b, out)
    assert bc is not None and 1 <= len(bc.dims) <= 6
    grids = np.meshgrid(*[np.arange(d) for d in bc.dims], indexing="ij")
    ia = sum(g * s for g, s in zip(grids, bc.stride1, strict=True))
    ib = sum(g * s for g, s in zip(grids, bc.stride2, strict=True))
    return np.asarray(ia).reshape(-1), np.asarray(ib).reshape(-1)


dim = st.integers(1, 3)


@settings(max_examples=150, deadline=None)
@given(st.lists(dim, min_size=0, max_size=6), st.data())
def test_broadcast_descriptor_matches_numpy(shape: list[int], data: st.DataObject) -> None:
    # Derive a broadcast-compatible partner: each dim kept or set to 1, leading dims
    # possibly dropped.
    a = tuple(shape)
    b = tuple(d if data.draw(st.booleans()) else 1 for d in shape)
    b = b[data.draw(st.integers(0, len(b))):]
    if data.draw(st.booleans()):
        a, b = b, a
    out = np.broadcast_shapes(a, b)
    ia, ib = _walk(a, b)
    ref_a = np.broadcast_to(np.arange(int(np.prod(a))).reshape(a), out).reshape(-1)
    ref_b = np.broadcast_to(np.arange(int(np.prod(b))).reshape(b), out).reshape(-1)
    np.testing.assert_array_equal(ia, ref_a)
    np.testing.assert_array_equal(ib, ref_b)


def test_broadcast_descriptor_merges_dims() -> None:
    bc = broadcast_descriptor((1, 4, 4, 8), (8,), (1, 4, 4, 8))
    assert bc is not None
    assert bc.dims == (16, 8) and bc.stride1 == (8, 1) and bc.stride2 == (0, 1)
    bc = broadcast_descriptor((2, 3, 4), (2, 3, 4), (2, 3, 4))
    assert bc is not None and bc.dims == (24,)
    assert broadcast_descriptor((2, 3), (3, 2), (2, 3)) is None


def _masked_attention_model() -> tuple[bytes, int, int]:
    """An attention-style float model: scores + mask (-inf where masked) -> SOFTMAX, and
    x + c with c holding +inf, -inf and NaN (every non-finite float32 kind a constant
    can hold)."""
    b = ModelBuilder("non-finite constants")
    x = b.tensor((2, 6), "float32", name="x")
    inf = np.float32(np.inf)
    mask = np.array([[0, -inf, 0, -inf, -inf, 0], [-inf, 0, 0, 0, -inf, 0]], np.float32)
    c = np.array([[inf, -inf, np.nan, 0.5, -2.0, inf], [-inf, 1.0, inf, np.nan, 0, 3]],
                 np.float32)
    scores = b.tensor((2, 6), "float32", name="scores")
    probs = b.tensor((2, 6), "float32", name="probs")
    shifted = b.tensor((2, 6), "float32", name="shifted")
    b.op("ADD", [x, b.tensor((2, 6), "float32", name="mask", data=mask)], [scores],
         {"fused_activation_function": "NONE"})
    b.op("SOFTMAX", [scores], [probs], SoftmaxOptions(1.0))
    b.op("ADD", [x, b.tensor((2, 6), "float32", name="c", data=c)], [shifted],
         {"fused_activation_function": "NONE"})
    return b.build([x], [probs, shifted]), probs, shifted


def test_non_finite_float_constants_bit_exact() -> None:
    """Infinite and NaN float constants reach the generated C as themselves (they were
    written as 0.0f: a masked softmax computed silently wrong), bit for bit as TFLM."""
    model, probs, shifted = _masked_attention_model()
    ins = random_inputs(model, seed=5)
    _, ref = run_tflm(model, ins)
    _, got = run_nnopt(model, ins, options=PlanOptions(order="file"))
    assert (ref[probs] == 0).sum() == 5  # the masked positions, as TFLM computes them
    for t in (probs, shifted):
        np.testing.assert_array_equal(got[t].view(np.uint32), ref[t].view(np.uint32))


# ----- int32 ADD and MUL (issue 44: TFLM's Eval takes int32; SUB's does not) -----

def _int32_model() -> tuple[bytes, list[np.ndarray]]:
    """CAST float32 -> int32 then MUL (as a converter writes an index computation), and
    ADD / MUL of int32 inputs with every fused activation and broadcasting."""
    rng = np.random.default_rng(44)
    b = ModelBuilder("int32_binary")
    x = b.tensor((2, 3, 8), "float32", name="x")
    a = b.tensor((2, 3, 8), "int32", name="a")
    c = b.tensor((1, 8), "int32", name="c")
    xi = b.tensor((2, 3, 8), "int32", name="xi")
    b.op("CAST", [x], [xi])
    outs = []
    y = b.tensor((2, 3, 8), "int32", name="cast_mul")
    b.op("MUL", [xi, b.const(np.arange(1, 9, dtype=np.int32).reshape(1, 8))], [y])
    outs.append(y)
    for opcode, act in itertools.product(("ADD", "MUL"), ("NONE", "RELU", "RELU6",
                                                          "RELU_N1_TO_1")):
        y = b.tensor((2, 3, 8), "int32", name=f"{opcode.lower()}_{act.lower()}")
        b.op(opcode, [a, c], [y], {"fused_activation_function": act})
        outs.append(y)
    model = b.build([x, a, c], outs)
    av = rng.integers(-(2**31), 2**31, (2, 3, 8), dtype=np.int64).astype(np.int32)
    av[0] = rng.integers(-9, 9, (3, 8))  # small values: the activations bite
    xs = [(rng.standard_normal((2, 3, 8)) * 50).astype(np.float32), av,
          rng.integers(-3000, 3000, (1, 8)).astype(np.int32)]
    return model, xs


def test_int32_add_and_mul_bit_exact_with_tflm() -> None:
    model, xs = _int32_model()
    g = load_model_bytes(model)
    assert {g.tensors[op.outputs[0]].dtype.name for op in g.ops if op.opcode == "MUL"} \
        == {"INT32"}
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs)
    assert len(got) == len(ref) == 9
    for k, (a, r) in enumerate(zip(got, ref, strict=True)):
        np.testing.assert_array_equal(a, np.asarray(r).reshape(a.shape), err_msg=str(k))
    np.testing.assert_array_equal(got[2], got[1])  # TFLM's int32 ADD ignores its RELU
    assert np.any(got[6] != got[5])  # ... MUL's clamps


@pytest.mark.qemu
@needs_qemu
def test_int32_add_and_mul_on_cortex_m7_bit_exact_with_tflm() -> None:
    from nnopt.boards import load_board

    model, xs = _int32_model()
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs, target="qemu-m7", board=load_board("nucleo_f767zi"))
    for a, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(a, np.asarray(r).reshape(a.shape))


def test_refuses_int32_sub_by_name() -> None:
    msg = _refusal(binary_model("SUB", (2, 3), (2, 3), dtype="int32"))
    assert "op 0 (SUB)" in msg and "INT32" in msg


def test_refuses_int32_mul_of_mixed_inputs() -> None:
    b = ModelBuilder("mixed")
    x = b.tensor((4,), "int32", name="x")
    w = b.tensor((4,), "float32", name="w")
    y = b.tensor((4,), "int32", name="y")
    b.op("MUL", [x, w], [y])
    msg = _refusal(b.build([x, w], [y]))
    assert "op 0 (MUL)" in msg and "int32 inputs for an int32 output" in msg


@pytest.mark.parametrize("dtype", ["int16", "int32"])
def test_int16_int32_maximum_minimum_bit_exact_with_tflm(dtype: str) -> None:
    rng = np.random.default_rng(45)
    info = np.iinfo(dtype)
    b = ModelBuilder(f"pick_{dtype}")
    q = {"scale": 0.01, "zero_point": 0} if dtype == "int16" else {}
    a = b.tensor((2, 3, 8), dtype, name="a", **q)
    c = b.tensor((3, 1), dtype, name="c", **q)
    outs = []
    for opcode in ("MAXIMUM", "MINIMUM"):
        y = b.tensor((2, 3, 8), dtype, name=opcode.lower(), **q)
        b.op(opcode, [a, c], [y])
        outs.append(y)
    model = b.build([a, c], outs)
    xs = [rng.integers(info.min, info.max, (2, 3, 8), endpoint=True).astype(dtype),
          rng.integers(info.min, info.max, (3, 1), endpoint=True).astype(dtype)]
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, np.asarray(r).reshape(g.shape))


# ----- int16 ADD, SUB, MUL and int64 MAXIMUM, MINIMUM (issue 44: TFLM's Eval takes them) --

def _int16_model() -> tuple[bytes, list[np.ndarray]]:
    """int16 ADD/SUB (zero points 0 as the converter writes them, and others) and MUL
    with every fused activation and broadcasting."""
    rng = np.random.default_rng(46)
    b = ModelBuilder("int16_binary")
    qa, qc = {"scale": 0.002, "zero_point": 0}, {"scale": 0.0007, "zero_point": 0}
    a = b.tensor((2, 3, 8), "int16", name="a", **qa)
    c = b.tensor((3, 1), "int16", name="c", **qc)
    outs = []
    for opcode, act in itertools.product(("ADD", "SUB", "MUL"),
                                         ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")):
        y = b.tensor((2, 3, 8), "int16", name=f"{opcode.lower()}_{act.lower()}",
                     scale=0.004 if opcode != "MUL" else 0.0009, zero_point=0)
        b.op(opcode, [a, c], [y], {"fused_activation_function": act})
        outs.append(y)
    for opcode in ("ADD", "SUB"):  # non-zero zero points and a saturating output scale
        p = b.tensor((2, 3, 8), "int16", name=f"{opcode.lower()}_zp_p", scale=0.003,
                     zero_point=-1200, data=rng.integers(-32768, 32768, (2, 3, 8))
                     .astype(np.int16))
        q = b.tensor((2, 3, 8), "int16", name=f"{opcode.lower()}_zp_q", scale=0.001,
                     zero_point=700, data=rng.integers(-32768, 32768, (2, 3, 8))
                     .astype(np.int16))
        y = b.tensor((2, 3, 8), "int16", name=f"{opcode.lower()}_zp", scale=0.0011,
                     zero_point=300)
        b.op(opcode, [p, q], [y])
        outs.append(y)
    model = b.build([a, c], outs)
    info = np.iinfo(np.int16)
    xs = [rng.integers(info.min, info.max, (2, 3, 8), endpoint=True).astype(np.int16),
          rng.integers(info.min, info.max, (3, 1), endpoint=True).astype(np.int16)]
    xs[0][0, 0] = rng.integers(-900, 900, 8)  # small values: the activations bite
    return model, xs


def test_int16_add_sub_mul_bit_exact_with_tflm() -> None:
    model, xs = _int16_model()
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs)
    assert len(got) == len(ref) == 14
    for k, (a, r) in enumerate(zip(got, ref, strict=True)):
        np.testing.assert_array_equal(a, np.asarray(r).reshape(a.shape), err_msg=str(k))
    assert np.any(got[1] != got[0])  # the RELU bites


def test_int64_maximum_minimum_bit_exact_with_tflm() -> None:
    rng = np.random.default_rng(47)
    b = ModelBuilder("pick_int64")
    a = b.tensor((2, 3, 8), "int64", name="a")
    c = b.tensor((3, 1), "int64", name="c")
    outs = []
    for opcode in ("MAXIMUM", "MINIMUM"):
        y = b.tensor((2, 3, 8), "int64", name=opcode.lower())
        b.op(opcode, [a, c], [y])
        outs.append(y)
    model = b.build([a, c], outs)
    info = np.iinfo(np.int64)
    xs = [rng.integers(info.min, info.max, (2, 3, 8), endpoint=True, dtype=np.int64),
          rng.integers(info.min, info.max, (3, 1), endpoint=True, dtype=np.int64)]
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, np.asarray(r).reshape(g.shape))
