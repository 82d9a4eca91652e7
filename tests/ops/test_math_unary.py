"""FLOOR, CEIL, ROUND, SIN, COS, SQUARE, ABS (float32; ABS int8 on all 256 inputs and
int16; RSQRT int8 on every valid input), LOGICAL_NOT (bool) and CAST (every
pair TFLM's cast.cc takes), FLOOR_DIV and FLOOR_MOD (float32, broadcasting, divisors
of both signs), ADD_N (2 to 5 inputs, float32 and int8 with TFLM's zero-point quirk): bit-exact
against TFLite Micro in one multi-op model (one build, one oracle run). The inputs hold
halves (ROUND's ties go to even), negative zero, large magnitudes (SIN/COS argument
reduction), tiny and huge values (SQUARE to inf); odd shapes."""

from __future__ import annotations

import numpy as np

from support.cases import (
    assert_cortex_m7_matches,
    case_model_tests,
)
from support.markers import slow_on_qemu
from support.tflite_builder import ModelBuilder

FLOAT_OPS = ("FLOOR", "CEIL", "ROUND", "SIN", "COS", "SQUARE", "ABS")
SHAPES = [(1, 7, 5, 3), (11,), (2, 3, 13)]
BINARY_SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1, 5), (1, 4, 1)), ((7,), (1,))]
CAST_FROM = ("int8", "int16", "int32", "uint32", "float32", "bool")
CAST_TO = ("int8", "int16", "int32", "uint32", "float32")


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    special = np.asarray([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -0.0, 1e-30, -1e-30,
                          3.4e19, -3.4e19, 8388607.5, -8388607.5, 1e6 + 0.5, 12345.678,
                          -0.49999997, 0.49999997, 100.0, -7.25], dtype=np.float32)
    rest = (rng.standard_normal(n) * np.float32(10.0) ** rng.integers(-3, 5, n)).astype(np.float32)
    return np.concatenate([special, rest])[:n].astype(np.float32)


def _cast_values(rng: np.random.Generator, dtype: str) -> np.ndarray:
    """21 values per source type: fractions of both signs (truncation toward zero), and
    integers that wrap in the narrower types."""
    if dtype == "float32":
        return np.concatenate([np.asarray([-1.75, -0.5, 0.5, 1.75, 127.9, -128.9, -0.0],
                                          dtype=np.float32),
                               rng.uniform(-120, 120, 14).astype(np.float32)])
    if dtype == "bool":
        return rng.integers(0, 2, 21).astype(bool)
    info = np.iinfo(np.dtype(dtype))
    edge = [info.min, info.max, 0, -1, 1, 300 % (info.max + 1), -129 % (info.max + 1)]
    return np.concatenate([np.asarray(edge), rng.integers(info.min, info.max, 14)]
                          ).astype(dtype)


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("unary math cases")
    rng = np.random.default_rng(21)
    out_of: dict[str, int] = {}
    for opcode in FLOAT_OPS:
        for k, shape in enumerate(SHAPES):
            n = int(np.prod(shape))
            x = b.tensor(shape, "float32", data=_values(rng, n).reshape(shape))
            y = b.tensor(shape, "float32")
            b.op(opcode, [x], [y])
            out_of[f"{opcode.lower()}-{k}"] = y
    for k, shape in enumerate(SHAPES):
        x = b.tensor(shape, "bool", data=rng.integers(0, 2, size=shape).astype(bool))
        y = b.tensor(shape, "bool")
        b.op("LOGICAL_NOT", [x], [y])
        out_of[f"logical_not-{k}"] = y
    for src in CAST_FROM:
        for dst in CAST_TO:
            data = _cast_values(rng, src).reshape(3, 7)
            if (src, dst) == ("float32", "uint32"):  # C leaves negative -> unsigned undefined
                data = np.abs(data)
            x = b.tensor((3, 7), src, data=data)
            y = b.tensor((3, 7), dst)
            b.op("CAST", [x], [y])
            out_of[f"cast-{src}-{dst}"] = y
    for opcode in ("FLOOR_DIV", "FLOOR_MOD"):
        for k, (sa, sb) in enumerate(BINARY_SHAPES):
            x1 = b.tensor(sa, "float32", data=(rng.standard_normal(sa) * 7).astype(np.float32))
            div = rng.choice(np.asarray([-3.0, -2.5, -1.0, 0.75, 2.0, 3.5, 1e-3],
                                        dtype=np.float32), size=sb)
            x2 = b.tensor(sb, "float32", data=div)
            y = b.tensor(tuple(np.broadcast_shapes(sa, sb)), "float32")
            b.op(opcode, [x1, x2], [y])
            out_of[f"{opcode.lower()}-{k}"] = y
    for k, (n, shape) in enumerate([(2, (1, 5, 7)), (3, (13,)), (5, (2, 3, 4))]):
        xs = [b.tensor(shape, "float32", data=(rng.standard_normal(shape) * 9).astype(
            np.float32)) for _ in range(n)]
        y = b.tensor(shape, "float32")
        b.op("ADD_N", xs, [y])
        out_of[f"add_n-float32-{k}"] = y
        for j, ((si, zi), (so, zo)) in enumerate([((0.05, 0), (0.1, 0)), ((0.02, -9),
                                                                           (0.07, 11))]):
            xq = [b.tensor(shape, "int8", data=rng.integers(-128, 128, shape).astype(np.int8),
                           scale=si, zero_point=zi) for _ in range(n)]
            yq = b.tensor(shape, "int8", scale=so, zero_point=zo)
            b.op("ADD_N", xq, [yq])
            out_of[f"add_n-int8-{k}-q{j}"] = yq
    every_byte = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    for k, ((si, zi), (so, zo)) in enumerate([((0.05, 0), (0.05, 0)), ((0.05, 7), (0.03, -100)),
                                              ((0.1, -128), (0.2, -128)), ((0.02, 3), (0.02, -5))]):
        x = b.tensor((16, 16), "int8", data=every_byte, scale=si, zero_point=zi)
        y = b.tensor((16, 16), "int8", scale=so, zero_point=zo)
        b.op("ABS", [x], [y])
        out_of[f"abs-int8-{k}"] = y
    i16 = np.concatenate([np.asarray([-32768, 32767, 0, -1, 1]),
                          rng.integers(-32768, 32768, 30)]).astype(np.int16).reshape(5, 7)
    for k, q in enumerate([{}, {"scale": 0.001, "zero_point": 0}]):
        for so in ((0.001, 0.0004) if q else (None,)):
            x = b.tensor((5, 7), "int16", data=i16, **q)
            y = b.tensor((5, 7), "int16", **({"scale": so, "zero_point": 0} if q else {}))
            b.op("ABS", [x], [y])
            out_of[f"abs-int16-{k}-{so}"] = y
    for k, ((si, zi), (so, zo)) in enumerate([((0.05, -128), (0.05, -128)),
                                              ((0.003, -100), (0.2, -128)),
                                              ((0.5, -128), (0.01, 0)),
                                              ((0.02, -128), (0.05, -128)),
                                              ((0.5, -128), (0.01, -100)),
                                              ((1e-4, -20), (0.7, -128)),
                                              ((3.0, 5), (0.002, 0))]):
        valid = np.arange(zi, 128, dtype=np.int64)
        data = np.resize(valid, 16 * 16).astype(np.int8).reshape(16, 16)
        x = b.tensor((16, 16), "int8", data=data, scale=si, zero_point=zi)
        y = b.tensor((16, 16), "int8", scale=so, zero_point=zo)
        b.op("RSQRT", [x], [y])
        out_of[f"rsqrt-int8-{k}"] = y
    # graph input through a chain (in place over dying inputs)
    x = b.tensor((1, 4, 5), "float32", name="x")
    cur = x
    for opcode in FLOAT_OPS:
        nxt = b.tensor((1, 4, 5), "float32")
        b.op(opcode, [cur], [nxt])
        out_of[f"chain-{opcode.lower()}"] = nxt
        cur = nxt
    return b.build([x], [cur]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.linspace(-6.5, 6.5, 20, dtype=np.float32).reshape(1, 4, 5)]


results, test_bit_exact = case_model_tests(MODEL, INPUTS, OUT_OF, same_dtype=True)


@slow_on_qemu
def test_cases_on_cortex_m7() -> None:
    """Every case as Cortex-M7 firmware under QEMU, against TFLM on the host."""
    assert_cortex_m7_matches(MODEL, INPUTS, OUT_OF)
