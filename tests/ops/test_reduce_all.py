"""REDUCE_ALL: bit-exact against TFLite Micro over bool tensors computed at run time
(a GREATER of the int8 graph input) and a bool graph input, every axis set of a 4-D
tensor that TFLM reduces (single, several, negative, repeated, all), keep_dims or not,
on the host and as Cortex-M7 firmware under QEMU; and the refusals (a non-bool input,
computed axes)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cases import differing_tensors
from support.markers import needs_qemu
from support.shapes import inferred_shape_mismatches
from support.tflite_builder import ModelBuilder

SHAPE = (2, 3, 4, 5)
AXES = [(0,), (1,), (3,), (-1,), (1, 2), (0, 3), (2, 2), (-3, 3), (0, 1, 2, 3)]


def _reduced(axes: tuple[int, ...], keep: bool) -> tuple[int, ...]:
    red = {a % len(SHAPE) for a in axes}
    return tuple(1 if d in red else n for d, n in enumerate(SHAPE)
                 if keep or d not in red)


def _model() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("reduce all cases")
    x = b.tensor(SHAPE, "int8", name="x", scale=0.1, zero_point=0)
    flags = b.tensor(SHAPE, "bool", name="flags")
    z = b.const(np.asarray([-100], np.int8), scale=0.1, zero_point=0)
    c = b.tensor(SHAPE, "bool")
    b.op("GREATER", [x, z], [c])  # mostly true: the AND is not trivially false
    out_of: dict[str, int] = {}
    for src, name in ((c, "computed"), (flags, "input")):
        for (k, axes), keep in itertools.product(enumerate(AXES), (False, True)):
            y = b.tensor(_reduced(axes, keep), "bool")
            b.op("REDUCE_ALL", [src, b.const(np.asarray(axes, np.int32))], [y],
                 {"keep_dims": keep})
            out_of[f"{name}-{k}-{'keep' if keep else 'drop'}"] = y
    return b.build([x, flags], [y]), out_of


MODEL, OUT_OF = _model()


def _inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.integers(-90, 128, size=SHAPE).astype(np.int8)
    x.reshape(-1)[rng.integers(0, x.size, 3)] = -128  # a few false elements
    flags = rng.random(SHAPE) < 0.93
    return [x, flags]


@pytest.mark.parametrize("target", [
    "host", pytest.param("qemu-m7", marks=[pytest.mark.slow, pytest.mark.qemu,
                                           needs_qemu])])
def test_bit_exact_with_tflm(target: str) -> None:
    for seed in ((1, 2) if target == "host" else (3,)):
        _, ref = run_tflm(MODEL, _inputs(seed))
        _, got = run_nnopt(MODEL, _inputs(seed), target=target,
                           options=PlanOptions(order="file"))
        bad = differing_tensors(ref, got, OUT_OF)
        assert len(OUT_OF) == 36 and not bad, f"seed {seed}: {bad}"
        # the cases are not all one value: the AND is exercised both ways
        values = {bool(v) for t in OUT_OF.values() for v in ref[t].reshape(-1)}
        assert values == {True, False}


def test_refuses_a_non_bool_input() -> None:
    b = ModelBuilder()
    x = b.tensor((2, 3), "int8", scale=0.1, zero_point=0)
    y = b.tensor((2,), "int8", scale=0.1, zero_point=0)
    b.op("REDUCE_ALL", [x, b.const(np.asarray([1], np.int32))], [y], {"keep_dims": False})
    with pytest.raises(UnsupportedError, match=r"REDUCE_ALL.*REDUCE_ALL of bool"):
        check_graph(load_model_bytes(b.build([x], [y])))


def test_refuses_computed_axes() -> None:
    b = ModelBuilder()
    x = b.tensor((2, 3), "bool")
    axis = b.tensor((1,), "int32")
    y = b.tensor((2,), "bool")
    b.op("REDUCE_ALL", [x, axis], [y], {"keep_dims": False})
    with pytest.raises(UnsupportedError, match=r"REDUCE_ALL.*must be a constant int32"):
        check_graph(load_model_bytes(b.build([x, axis], [y])))


def test_the_shape_function_gives_the_reduced_shape() -> None:
    n, bad = inferred_shape_mismatches(load_model_bytes(MODEL), "REDUCE_ALL")
    assert n == 36 and not bad, bad
