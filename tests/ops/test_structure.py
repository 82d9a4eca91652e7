"""SPLIT, SPLIT_V, UNPACK and PACK: bit-exact against TFLite Micro (int8, int16, int32,
float32; every axis, negative axes, SPLIT_V with an inferred size), in one multi-op
model (one build, one oracle run); plus the views the planner makes of split outputs
(no copy, same results) and the refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ops import check_graph, definition
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cases import (
    Results,
    assert_case_matches,
    differing_tensors,
    mismatched_cases,
    oracle_results,
    tflm_and_cortex_m7,
)
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder

DTYPES = ("int8", "int16", "int32", "float32")
SHAPE = (2, 3, 4, 6)


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    info = np.iinfo(np.dtype(dtype))
    lo, hi = max(info.min, -30000), min(info.max, 30000)
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def _q(dtype: str) -> dict[str, Any]:
    return {"scale": 0.05, "zero_point": -3} if dtype == "int8" else {}


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("structure cases")
    rng = np.random.default_rng(11)
    out_of: dict[str, int] = {}
    for dtype in DTYPES:
        for axis in (0, 1, 2, 3, -1, -3):
            a = axis % 4
            x = b.tensor(SHAPE, dtype, data=_data(rng, SHAPE, dtype), **_q(dtype))
            # SPLIT into equal parts (the extent of the axis divides by n)
            n = {2: 2, 3: 3, 4: 2, 6: 3}[SHAPE[a]]
            part = list(SHAPE)
            part[a] //= n
            ys = [b.tensor(part, dtype, **_q(dtype)) for _ in range(n)]
            b.op("SPLIT", [b.const(np.asarray([axis], dtype=np.int32)), x], ys,
                 {"num_splits": n})
            out_of.update({f"split-{dtype}-ax{axis}-{i}": y for i, y in enumerate(ys)})
            # SPLIT_V into unequal parts, one size inferred (-1)
            if SHAPE[a] >= 3:
                sizes = [1, -1, SHAPE[a] - 3, 1] if SHAPE[a] > 3 else [1, -1, 1]
                real = [s if s >= 0 else 1 for s in sizes]
                real[1] = SHAPE[a] - (sum(real) - 1)
                vs = []
                for s in real:
                    shp = list(SHAPE)
                    shp[a] = s
                    vs.append(b.tensor(shp, dtype, **_q(dtype)))
                b.op("SPLIT_V", [x, b.const(np.asarray(sizes, dtype=np.int32)),
                                 b.const(np.asarray([axis], dtype=np.int32))], vs,
                     {"num_splits": len(vs)})
                out_of.update({f"splitv-{dtype}-ax{axis}-{i}": y for i, y in enumerate(vs)})
            # UNPACK along the axis
            rest = SHAPE[:a] + SHAPE[a + 1:]
            us = [b.tensor(rest, dtype, **_q(dtype)) for _ in range(SHAPE[a])]
            b.op("UNPACK", [x], us, {"num": SHAPE[a], "axis": axis})
            out_of.update({f"unpack-{dtype}-ax{axis}-{i}": y for i, y in enumerate(us)})
        # PACK three [3, 5] tensors along each axis of the [.., 3, ..] output
        ins = [b.tensor((3, 5), dtype, data=_data(rng, (3, 5), dtype), **_q(dtype))
               for _ in range(3)]
        for axis in (0, 1, 2, -1):
            shp = [3, 5]
            shp.insert(axis % 3, 3)
            y = b.tensor(shp, dtype, **_q(dtype))
            b.op("PACK", ins, [y], {"values_count": 3, "axis": axis})
            out_of[f"pack-{dtype}-ax{axis}"] = y
    # the graph input: split, unpacked and packed activations (views of the input)
    x = b.tensor((1, 4, 6), "int8", name="x", scale=0.1, zero_point=2)
    h = [b.tensor((1, 2, 6), "int8", scale=0.1, zero_point=2) for _ in range(2)]
    b.op("SPLIT", [b.const(np.asarray([1], dtype=np.int32)), x], h, {"num_splits": 2})
    rows = [b.tensor((2, 6), "int8", scale=0.1, zero_point=2) for _ in range(1)]
    b.op("UNPACK", [h[1]], rows, {"num": 1, "axis": 0})
    u = [b.tensor((1, 6), "int8", scale=0.1, zero_point=2) for _ in range(4)]
    b.op("UNPACK", [x], u, {"num": 4, "axis": 1})
    s = b.tensor((1, 6), "int8", scale=0.1, zero_point=2)
    b.op("ADD", [u[0], u[3]], [s])
    y = b.tensor((2, 1, 6), "int8", scale=0.1, zero_point=2, name="y")
    b.op("PACK", [s, u[2]], [y], {"values_count": 2, "axis": 0})
    z = b.tensor((2, 6), "int8", scale=0.1, zero_point=2, name="z")
    b.op("ADD", [rows[0], rows[0]], [z])
    out_of.update({"graph-split": h[0], "graph-unpack": u[1], "graph-pack": y, "graph-z": z})
    return b.build([x], [y, z, h[0]]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.arange(-12, 12, dtype=np.int8).reshape(1, 4, 6)]


@pytest.fixture(scope="module")
def results() -> Results:
    return oracle_results(MODEL, INPUTS, OUT_OF)


def test_bit_exact_summary(results: Results) -> None:
    bad = mismatched_cases(results)
    assert len(results) > 200
    assert not bad, f"{len(bad)} cases differ from TFLM: {bad[:8]}"


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(OUT_OF))
def test_bit_exact(results: Results, cid: str) -> None:
    assert_case_matches(*results[cid])


def test_split_outputs_of_one_row_are_views() -> None:
    g = load_model_bytes(MODEL)
    graph_ops = [op for op in g.ops if op.inputs and g.inputs[0] in op.inputs]
    views = [definition(op).output_views(g, op) for op in graph_ops]
    by_op = {op.opcode: v for op, v in zip(graph_ops, views, strict=True)}
    split = by_op["SPLIT"]
    assert split is not None and split.source == g.inputs[0]
    assert [off for _, off in split.outputs] == [0, 12]
    # UNPACK of [1, 4, 6] along axis 1: one row of 4 blocks of 6 bytes
    unpack = by_op["UNPACK"]
    assert unpack is not None and [off for _, off in unpack.outputs] == [0, 6, 12, 18]
    # a split of several rows is no byte range of the input
    many = next(op for op in g.ops if op.opcode == "SPLIT"
                and g.tensors[op.inputs[1]].shape == SHAPE
                and int(g.tensors[op.inputs[0]].array()[0]) == 3)
    assert definition(many).output_views(g, many) is None


def _one(opcode: str, inputs: list[int], outputs: list[int], b: ModelBuilder,
         options: dict[str, Any]) -> Any:
    b.op(opcode, inputs, outputs, options)
    return load_model_bytes(b.build([i for i in inputs if i == 0], outputs))


def test_refuses_a_non_constant_axis() -> None:
    b = ModelBuilder()
    x = b.tensor((2, 4), "float32")
    axis = b.tensor((1,), "int32")
    ys = [b.tensor((2, 2), "float32") for _ in range(2)]
    b.op("SPLIT", [axis, x], ys, {"num_splits": 2})
    with pytest.raises(UnsupportedError, match=r"op 0 \(SPLIT\).*axis"):
        check_graph(load_model_bytes(b.build([axis, x], ys)))


def test_refuses_an_unsupported_dtype() -> None:
    b = ModelBuilder()
    x = b.tensor((2, 4), "uint8")
    ys = [b.tensor((4,), "uint8") for _ in range(2)]
    b.op("UNPACK", [x], ys, {"num": 2, "axis": 0})
    with pytest.raises(UnsupportedError, match=r"op 0 \(UNPACK\).*UINT8.*supported: int8"):
        check_graph(load_model_bytes(b.build([x], ys)))


def test_planner_places_split_outputs_inside_the_input() -> None:
    from nnopt.planner import plan_model

    b = ModelBuilder()
    x = b.tensor((1, 8, 4), "int8", name="x", scale=0.1)
    parts = [b.tensor((1, 4, 4), "int8", scale=0.1) for _ in range(2)]
    b.op("SPLIT", [b.const(np.asarray([1], dtype=np.int32)), x], parts, {"num_splits": 2})
    rows = [b.tensor((1, 4), "int8", scale=0.1) for _ in range(4)]
    b.op("UNPACK", [parts[1]], rows, {"num": 4, "axis": 1})
    ys = [b.tensor((1, 4), "int8", scale=0.1) for _ in range(2)]
    b.op("ADD", [rows[3], rows[0]], [ys[0]])
    relu_out = b.tensor((1, 4, 4), "int8", scale=0.1)
    b.op("RELU", [parts[0]], [relu_out])
    b.op("ADD", [ys[0], rows[1]], [ys[1]])
    model = b.build([x], [ys[1], relu_out])
    planned = plan_model(load_model_bytes(model), PlanOptions(order="file"))
    entry = {e.tensor: e for e in planned.plan.buffers}
    base = entry[x].offset
    assert entry[parts[0]].alias_of == x and entry[parts[0]].offset == base
    assert entry[parts[1]].alias_of == x and entry[parts[1]].offset == base + 16
    # a view of a view: UNPACK rows of the second half
    assert [entry[r].offset - base for r in rows] == [16, 20, 24, 28]
    assert planned.plan.views  # the SPLIT and the UNPACK
    # the split and unpack steps hold nothing but the input (no copies)
    steps = {s.opcode: s for s in planned.plan.steps}
    assert steps["SPLIT"].live_bytes == 32 and steps["UNPACK"].live_bytes == 32
    inputs = [np.arange(-16, 16, dtype=np.int8).reshape(1, 8, 4)]
    ref, _ = run_tflm(model, inputs)
    got, _ = run_nnopt(model, inputs, options=PlanOptions(order="file"))
    for r, o in zip(ref, got, strict=True):
        np.testing.assert_array_equal(o, r.reshape(o.shape))


# GATHER: (input shape, coordinates shape, axis, batch_dims); EMBEDDING_LOOKUP below
GATHERS = [((5, 3), (4,), 0, 0), ((2, 6, 3), (2, 2), 1, 0), ((2, 6, 3), (2, 4), 1, 1),
           ((3, 4, 5), (), 2, 0), ((3, 4, 5), (3,), -1, 0), ((2, 3, 4, 2), (2, 3, 2), 2, 2),
           ((7,), (3, 2), 0, 0)]


def _gather_model() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("gather cases")
    rng = np.random.default_rng(23)
    out_of: dict[str, int] = {}
    for dtype in ("int8", "float32"):
        for k, (xs, cs, axis, bd) in enumerate(GATHERS):
            a = axis % len(xs)
            x = b.tensor(xs, dtype, data=_data(rng, xs, dtype), **_q(dtype))
            coords = rng.integers(0, xs[a], size=cs).astype(np.int32)
            y = b.tensor(xs[:a] + cs[bd:] + xs[a + 1:], dtype, **_q(dtype))
            b.op("GATHER", [x, b.const(coords)], [y], {"axis": axis, "batch_dims": bd})
            out_of[f"gather-{dtype}-{k}"] = y
    for dtype in ("int8", "float32"):
        for k, (rows, shape, n) in enumerate([(5, (3,), 4), (4, (2, 3), 1), (3, (1,), 6)]):
            x = b.tensor((rows, *shape), dtype, data=_data(rng, (rows, *shape), dtype),
                         **_q(dtype))
            ids = b.const(rng.integers(0, rows, size=(n,)).astype(np.int32))
            y = b.tensor((n, *shape), dtype, **_q(dtype))
            b.op("EMBEDDING_LOOKUP", [ids, x], [y])
            out_of[f"embedding-{dtype}-{k}"] = y
    for dtype in ("int8", "float32"):
        for k, (xs, ishape) in enumerate([((4, 3), (2, 1)), ((4, 3), (5, 2)),
                                          ((2, 3, 4), (2, 2, 2)), ((2, 3, 4), (3,)),
                                          ((3, 2, 2, 2), (1, 4))]):
            x = b.tensor(xs, dtype, data=_data(rng, xs, dtype), **_q(dtype))
            nd = ishape[-1]
            idx = np.stack([rng.integers(0, xs[d], size=ishape[:-1]) for d in range(nd)],
                           axis=-1).astype(np.int32)
            y = b.tensor(ishape[:-1] + xs[nd:], dtype, **_q(dtype))
            b.op("GATHER_ND", [x, b.const(idx)], [y])
            out_of[f"gather_nd-{dtype}-{k}"] = y
    # coordinates computed at run time: the graph input
    table = b.tensor((6, 4), "int8", data=_data(rng, (6, 4), "int8"), **_q("int8"))
    idx = b.tensor((3,), "int32", name="idx")
    y = b.tensor((3, 4), "int8", name="y", **_q("int8"))
    b.op("GATHER", [table, idx], [y], {"axis": 0})
    out_of["gather-graph-input"] = y
    return b.build([idx], [y]), out_of


@pytest.mark.parametrize("target", [
    "host", pytest.param("qemu-m7", marks=[
        pytest.mark.slow, pytest.mark.qemu,
        needs_qemu])])
def test_gather_bit_exact(target: str) -> None:
    model, out_of = _gather_model()
    inputs = [np.asarray([5, 0, 2], dtype=np.int32)]
    _, ref = run_tflm(model, inputs)
    _, got = run_nnopt(model, inputs, target=target, options=PlanOptions(order="file"))
    bad = [cid for cid, t in out_of.items()
           if got[t].shape != ref[t].reshape(got[t].shape).shape
           or not np.array_equal(got[t], ref[t].reshape(got[t].shape))]
    assert len(out_of) == 31 and not bad, bad


def test_gather_refuses_constant_coordinates_out_of_range() -> None:
    b = ModelBuilder()
    x = b.tensor((4, 2), "float32")
    y = b.tensor((2, 2), "float32")
    b.op("GATHER", [x, b.const(np.asarray([1, 4], dtype=np.int32))], [y], {"axis": 0})
    with pytest.raises(UnsupportedError, match=r"op 0 \(GATHER\).*outside \[0, 4\)"):
        check_graph(load_model_bytes(b.build([x], [y])))


def test_gather_fails_on_a_runtime_coordinate_out_of_range() -> None:
    # TFLM fails the invocation; so does the generated code, with the kernel's status
    from nnopt.errors import NnoptError

    model, _ = _gather_model()
    with pytest.raises(NnoptError, match="NNRT_ERR_ARG"):
        run_nnopt(model, [np.asarray([6, 0, 2], dtype=np.int32)],
                  options=PlanOptions(order="file"))


def test_embedding_lookup_refuses_the_hybrid_form() -> None:
    b = ModelBuilder()
    ids = b.tensor((2,), "int32")
    table = b.const(np.ones((4, 3), np.int8), scale=0.5)
    y = b.tensor((2, 3), "float32")
    b.op("EMBEDDING_LOOKUP", [ids, table], [y])
    with pytest.raises(UnsupportedError, match=r"EMBEDDING_LOOKUP.*hybrid"):
        check_graph(load_model_bytes(b.build([ids], [y])))


@pytest.mark.slow
@pytest.mark.qemu
@needs_qemu
def test_bit_exact_on_cortex_m7() -> None:
    ref, got = tflm_and_cortex_m7(MODEL, INPUTS)
    bad = differing_tensors(ref, got, OUT_OF, float_close=True)
    assert not bad, f"{len(bad)} cases differ from TFLM on Cortex-M7: {bad[:8]}"


def test_planner_keeps_copies_where_a_view_would_hold_its_input_longer() -> None:
    # x splits into a small a and a large b; b feeds two wide FCs while a waits for the
    # final concatenation: as a view, a keeps all of x alive through them; as a copy,
    # only its own 16 bytes. The planner plans both and keeps the copies.
    from nnopt.passes.plan_budget import PlanBudget
    from nnopt.planner import _plan, plan_model

    b = ModelBuilder()
    rng = np.random.default_rng(3)
    x = b.tensor((1, 64), "float32", name="x")
    a, c = b.tensor((1, 4), "float32"), b.tensor((1, 60), "float32")
    b.op("SPLIT_V", [x, b.const(np.asarray([4, 60], dtype=np.int32)),
                     b.const(np.asarray([1], dtype=np.int32))], [a, c], {"num_splits": 2})
    m = b.tensor((1, 200), "float32")
    w1 = b.const(rng.standard_normal((200, 60)).astype(np.float32))
    b.op("FULLY_CONNECTED", [c, w1, -1], [m])
    e = b.tensor((1, 60), "float32")
    w2 = b.const(rng.standard_normal((60, 200)).astype(np.float32))
    b.op("FULLY_CONNECTED", [m, w2, -1], [e])
    y = b.tensor((1, 64), "float32", name="y")
    b.op("CONCATENATION", [a, e], [y], {"axis": 1})
    model = b.build([x], [y])
    g = load_model_bytes(model)
    opts = PlanOptions(order="file")
    with_views = _plan(g, opts, None, PlanBudget(None, None), views=True).plan
    assert with_views.views
    planned = plan_model(g, opts)
    assert planned.plan.views == ()
    assert planned.plan.arena_bytes < with_views.arena_bytes
    inputs = [rng.standard_normal((1, 64)).astype(np.float32)]
    ref, _ = run_tflm(model, inputs)
    got, _ = run_nnopt(model, inputs, options=opts)
    np.testing.assert_allclose(got[0], ref[0].reshape(got[0].shape), rtol=1e-5, atol=1e-6)
