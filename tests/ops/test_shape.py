"""CONCATENATION, PAD/PADV2, TRANSPOSE, STRIDED_SLICE, SLICE and the RESHAPE/SQUEEZE/
EXPAND_DIMS copy: bit-exact against TFLite Micro.

All cases run as one multi-op model (one build, one oracle run) and are checked one by
one: concatenation along every axis (negative too, 2-3 inputs, up to 6-D), every
padding placement (image style, channels, batch, 1-D to 5-D, PADV2 constants), all 24
permutations of a 4-D transpose and a sample of 5-D ones, strided slices with every
mask, negative strides, clamped and negative indices, slices with size -1 and int64
operands. Case operands are constants, so the reshape-like ops take their copy path
(the planner only aliases non-constant inputs); a non-constant RESHAPE checks the
aliased path.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nnopt.codegen.c_model import generate
from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ConcatOptions, StridedSliceOptions
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions, plan_model
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cases import Results, assert_case_matches, mismatched_cases, oracle_results
from support.cbuild import CBuild, c_source, kernel_sources
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder

QUANT: dict[str, Any] = {"scale": 0.07, "zero_point": -5}


class Cases:
    """Collects single-op cases into one ModelBuilder; every case input is a constant."""

    def __init__(self, b: ModelBuilder, seed: int = 9) -> None:
        self.b = b
        self.rng = np.random.default_rng(seed)
        self.out_of: dict[str, int] = {}

    def _q(self, dtype: str) -> dict[str, Any]:
        return dict(QUANT) if dtype == "int8" else {}

    def data(self, name: str, shape: tuple[int, ...], dtype: str) -> int:
        if dtype == "float32":
            arr: np.ndarray = (self.rng.standard_normal(shape) * 4).astype(np.float32)
        else:
            info = np.iinfo(np.dtype(dtype))
            arr = self.rng.integers(info.min, info.max + 1, size=shape).astype(dtype)
        q = self._q(dtype) if dtype != "int16" else {"scale": 0.001, "zero_point": 0}
        return self.b.tensor(shape, dtype, name=name, data=arr, **q)

    def out(self, cid: str, shape: tuple[int, ...], dtype: str, **q: Any) -> int:
        if not q:
            q = self._q(dtype) if dtype != "int16" else {"scale": 0.001, "zero_point": 0}
        y = self.b.tensor(shape, dtype, name=f"{cid}/y", **q)
        assert cid not in self.out_of, cid
        self.out_of[cid] = y
        return y


def _concat(c: Cases) -> None:
    specs = [
        ((2, 3, 4, 5), (2, 3, 4, 2), 3), ((2, 3, 4, 5), (2, 3, 1, 5), 2),
        ((2, 3, 4, 5), (2, 2, 4, 5), 1), ((2, 3, 4, 5), (1, 3, 4, 5), 0),
        ((2, 3, 4, 5), (2, 3, 4, 3), -1), ((2, 3, 4, 5), (4, 3, 4, 5), -4),
        ((3, 7), (3, 1), 1), ((5,), (3,), 0), ((2, 2, 3, 2, 2), (2, 2, 1, 2, 2), 2),
        ((2, 1, 2, 3, 2, 2), (2, 1, 2, 1, 2, 2), 3),
    ]
    for dtype in ("int8", "float32"):
        for i, (sa, sb, axis) in enumerate(specs):
            cid = f"concat-{dtype}-{len(sa)}d-axis{axis}-{i}"
            a, b = c.data(f"{cid}/a", sa, dtype), c.data(f"{cid}/b", sb, dtype)
            ax = axis % len(sa)
            shape = tuple(sa[d] + sb[d] if d == ax else sa[d] for d in range(len(sa)))
            c.b.op("CONCATENATION", [a, b], [c.out(cid, shape, dtype)], ConcatOptions(axis))
        cid = f"concat-{dtype}-three"
        ins = [c.data(f"{cid}/{k}", (1, 4, 4, n), dtype) for k, n in enumerate((3, 1, 5))]
        c.b.op("CONCATENATION", ins, [c.out(cid, (1, 4, 4, 9), dtype)], ConcatOptions(3))
        cid = f"concat-{dtype}-single"
        c.b.op("CONCATENATION", [c.data(f"{cid}/a", (2, 3), dtype)],
               [c.out(cid, (2, 3), dtype)], ConcatOptions(0))


def _pad(c: Cases) -> None:
    specs = [
        ("image", (1, 4, 5, 3), [[0, 0], [1, 2], [2, 1], [0, 0]]),
        ("channels", (1, 3, 3, 4), [[0, 0], [0, 0], [0, 0], [3, 1]]),
        ("batch", (2, 2, 3, 2), [[1, 1], [0, 0], [0, 0], [0, 0]]),
        ("all", (2, 2, 2, 2), [[1, 0], [0, 2], [1, 1], [2, 0]]),
        ("none", (2, 3, 2, 2), [[0, 0], [0, 0], [0, 0], [0, 0]]),
        ("1d", (7,), [[2, 3]]),
        ("2d", (3, 4), [[0, 1], [2, 0]]),
        ("5d", (1, 2, 3, 2, 2), [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]]),
    ]
    for dtype in ("int8", "float32"):
        for name, shape, pads in specs:
            cid = f"pad-{dtype}-{name}"
            x = c.data(f"{cid}/x", shape, dtype)
            p = c.b.const(np.asarray(pads, dtype=np.int32), name=f"{cid}/pads")
            out = tuple(d + a + b for d, (a, b) in zip(shape, pads, strict=True))
            c.b.op("PAD", [x, p], [c.out(cid, out, dtype)])
    # PAD of int8 with the output zero point at both ends of the range
    for zp in (-128, 127):
        cid = f"pad-int8-zp{zp}"
        q: dict[str, Any] = {"scale": 0.05, "zero_point": zp}
        x = c.b.tensor((1, 2, 2, 3), "int8", name=f"{cid}/x", **q,
                       data=c.rng.integers(-128, 128, size=(1, 2, 2, 3)).astype(np.int8))
        p = c.b.const(np.asarray([[0, 0], [1, 1], [1, 1], [0, 0]], dtype=np.int32))
        c.b.op("PAD", [x, p], [c.out(cid, (1, 4, 4, 3), "int8", **q)])
    # PADV2 with a constant value
    for dtype, value in (("int8", np.int8(77)), ("float32", np.float32(-2.5))):
        cid = f"padv2-{dtype}"
        x = c.data(f"{cid}/x", (1, 3, 2, 2), dtype)
        p = c.b.const(np.asarray([[0, 0], [2, 1], [0, 1], [1, 0]], dtype=np.int32))
        v = c.b.tensor((1,), dtype, name=f"{cid}/v", data=np.asarray([value]),
                       **c._q(dtype))
        c.b.op("PADV2", [x, p, v], [c.out(cid, (1, 6, 3, 3), dtype)])


def _transpose(c: Cases) -> None:
    shape4 = (2, 3, 4, 5)
    for perm in itertools.permutations(range(4)):
        for dtype in ("int8", "float32"):
            cid = f"transpose-{dtype}-{''.join(map(str, perm))}"
            x = c.data(f"{cid}/x", shape4, dtype)
            p = c.b.const(np.asarray(perm, dtype=np.int32))
            c.b.op("TRANSPOSE", [x, p], [c.out(cid, tuple(shape4[i] for i in perm), dtype)])
    shape5 = (2, 3, 1, 4, 2)
    perms5 = [(4, 3, 2, 1, 0), (0, 2, 1, 4, 3), (1, 0, 3, 4, 2), (0, 1, 2, 4, 3),
              (3, 0, 4, 2, 1), (2, 4, 0, 1, 3)]
    extra = [("int8", (6, 5), (1, 0)), ("float32", (4, 3, 2), (2, 0, 1)),
             ("int16", (3, 4, 5), (1, 2, 0))]
    cases = [("int8", shape5, p) for p in perms5] + [("float32", shape5, perms5[0])] + extra
    for dtype, shape, perm in cases:
        cid = f"transpose-{dtype}-{len(shape)}d-{''.join(map(str, perm))}"
        x = c.data(f"{cid}/x", shape, dtype)
        p = c.b.const(np.asarray(perm, dtype=np.int32))
        c.b.op("TRANSPOSE", [x, p], [c.out(cid, tuple(shape[i] for i in perm), dtype)])


@dataclass(frozen=True)
class SS:
    id: str
    shape: tuple[int, ...]
    begin: tuple[int, ...]
    end: tuple[int, ...]
    strides: tuple[int, ...]
    begin_mask: int = 0
    end_mask: int = 0
    shrink: int = 0


def _ss_shape(s: SS) -> tuple[int, ...]:
    """Output shape by numpy slicing (Python semantics, which TFLite follows)."""
    idx: list[Any] = []
    for d in range(len(s.shape)):
        if s.shrink & (1 << d):
            idx.append(s.begin[d])
            continue
        start = None if s.begin_mask & (1 << d) else s.begin[d]
        stop = None if s.end_mask & (1 << d) else s.end[d]
        idx.append(slice(start, stop, s.strides[d]))
    return tuple(np.empty(s.shape)[tuple(idx)].shape)


SS_CASES = [
    SS("basic", (4, 6), (1, 2), (3, 5), (1, 1)),
    SS("stride2", (1, 7, 8, 3), (0, 1, 0, 0), (1, 7, 8, 3), (1, 2, 3, 1)),
    SS("negative-idx", (5, 6), (-4, -5), (-1, -1), (1, 2)),
    SS("reverse", (4, 5), (3, 4), (-5, -6), (-1, -1)),
    SS("reverse-stride2", (1, 9, 3), (0, 8, 2), (1, -10, -4), (1, -2, -1)),
    SS("begin-mask", (3, 4, 5), (2, 3, 1), (3, 4, 4), (1, 1, 1), begin_mask=0b011),
    SS("end-mask", (3, 4, 5), (1, 1, 1), (0, 0, 3), (1, 1, 1), end_mask=0b011),
    SS("masks-reverse", (3, 4), (0, 0), (0, 0), (-1, -1), begin_mask=0b11, end_mask=0b11),
    SS("shrink", (2, 3, 4, 5), (1, 0, 2, 0), (2, 3, 3, 5), (1, 1, 1, 1), shrink=0b0101),
    SS("shrink-neg", (3, 4), (-1, 1), (0, 3), (1, 1), shrink=0b01),
    SS("clamp", (3, 4), (-100, 1), (100, 100), (1, 1)),
    SS("1d", (10,), (1,), (9,), (3,)),
]


def _strided_slice(c: Cases) -> None:
    for s in SS_CASES:
        for dtype in ("int8", "float32"):
            cid = f"strided-{dtype}-{s.id}"
            x = c.data(f"{cid}/x", s.shape, dtype)
            ops = [c.b.const(np.asarray(v, dtype=np.int32)) for v in (s.begin, s.end, s.strides)]
            c.b.op("STRIDED_SLICE", [x, *ops], [c.out(cid, _ss_shape(s), dtype)],
                   StridedSliceOptions(s.begin_mask, s.end_mask, 0, 0, s.shrink))


def _slice(c: Cases) -> None:
    specs = [
        ("basic", (4, 6, 3), (1, 2, 0), (2, 3, 3), np.int32),
        ("to-end", (1, 5, 5, 4), (0, 1, 2, 1), (1, -1, 2, -1), np.int32),
        ("int64", (3, 8), (1, 3), (2, 4), np.int64),
        ("5d", (2, 3, 4, 2, 3), (1, 0, 1, 0, 1), (1, 3, 2, 2, 2), np.int32),
        ("whole", (2, 3), (0, 0), (2, 3), np.int32),
    ]
    for dtype in ("int8", "float32"):
        for name, shape, begin, size, idt in specs:
            cid = f"slice-{dtype}-{name}"
            x = c.data(f"{cid}/x", shape, dtype)
            bt = c.b.const(np.asarray(begin, dtype=idt))
            st = c.b.const(np.asarray(size, dtype=idt))
            out = tuple(d - b if n == -1 else n
                        for d, b, n in zip(shape, begin, size, strict=True))
            c.b.op("SLICE", [x, bt, st], [c.out(cid, out, dtype)])


def _reshape_like(c: Cases) -> None:
    for dtype in ("int8", "float32"):
        cid = f"reshape-{dtype}"
        x = c.data(f"{cid}/x", (2, 3, 4), dtype)
        shp = c.b.const(np.asarray([4, 6], dtype=np.int32))
        c.b.op("RESHAPE", [x, shp], [c.out(cid, (4, 6), dtype)], {"new_shape": (4, 6)})
        cid = f"squeeze-{dtype}"
        x = c.data(f"{cid}/x", (1, 3, 1, 4), dtype)
        c.b.op("SQUEEZE", [x], [c.out(cid, (3, 4), dtype)], {"squeeze_dims": (0, 2)})
        cid = f"expand-{dtype}"
        x = c.data(f"{cid}/x", (3, 4), dtype)
        ax = c.b.const(np.asarray([1], dtype=np.int32))
        c.b.op("EXPAND_DIMS", [x, ax], [c.out(cid, (3, 1, 4), dtype)])


def add_cases(b: ModelBuilder) -> dict[str, int]:
    """Add every case to ``b``; returns case id -> result tensor. The harness runner
    takes at most 16 graph inputs and outputs, so case inputs are random constants and
    case results intermediate tensors (both sides trace every tensor)."""
    c = Cases(b)
    for add in (_concat, _pad, _transpose, _strided_slice, _slice, _reshape_like):
        add(c)
    return c.out_of


def _build() -> tuple[bytes, dict[str, int]]:
    """The shape cases in one model."""
    b = ModelBuilder("shape cases")
    out_of = add_cases(b)
    # The graph input: an aliased RESHAPE (no copy) feeding a transpose.
    x = b.tensor((2, 6), "int8", name="x", **QUANT)
    r = b.tensor((3, 4), "int8", name="x/reshaped", **QUANT)
    z = b.tensor((4, 3), "int8", name="z", **QUANT)
    b.op("RESHAPE", [x, b.const(np.asarray([3, 4], dtype=np.int32))], [r],
         {"new_shape": (3, 4)})
    b.op("TRANSPOSE", [r, b.const(np.asarray([1, 0], dtype=np.int32))], [z])
    out_of["aliased-reshape"] = r
    out_of["aliased-reshape-transposed"] = z
    return b.build([x], [z]), out_of


MODEL, OUT_OF = _build()
CASE_IDS = sorted(OUT_OF)
INPUTS = [np.arange(-6, 6, dtype=np.int8).reshape(2, 6)]


@pytest.fixture(scope="module")
def results() -> Results:
    return oracle_results(MODEL, INPUTS, OUT_OF)


@pytest.mark.slow
@pytest.mark.parametrize("cid", CASE_IDS)
def test_bit_exact(results: Results, cid: str) -> None:
    assert_case_matches(*results[cid])


@pytest.mark.slow
def test_cases_sanitized() -> None:
    """The shape cases built with ASan/UBSan: any out-of-bounds access or undefined
    behaviour in these kernels fails the run (the pool and element-wise files run
    theirs)."""
    assert not mismatched_cases(oracle_results(MODEL, INPUTS, OUT_OF, sanitize=True))


def test_reshape_aliasing() -> None:
    """Only the non-constant RESHAPE is an alias; the constant ones are copies."""
    plan = plan_model(load_model_bytes(MODEL), PlanOptions(order="file")).plan
    aliased = {b.tensor for b in plan.buffers if b.alias_of is not None}
    assert OUT_OF["aliased-reshape"] in aliased
    assert OUT_OF["reshape-int8"] not in aliased


# ----- refusals (no compilation) -----

def _refusal(build: Any) -> str:
    b = ModelBuilder()
    inputs, outputs = build(b)
    with pytest.raises(UnsupportedError) as err:
        check_graph(load_model_bytes(b.build(inputs, outputs)))
    return str(err.value)


def test_refuses_concat_with_different_quant() -> None:
    def build(b: ModelBuilder) -> tuple[list[int], list[int]]:
        x = b.tensor((1, 2), "int8", scale=0.1, zero_point=0)
        y = b.tensor((1, 2), "int8", scale=0.2, zero_point=0)
        z = b.tensor((1, 4), "int8", scale=0.1, zero_point=0)
        b.op("CONCATENATION", [x, y], [z], ConcatOptions(1))
        return [x, y], [z]
    msg = _refusal(build)
    assert "op 0 (CONCATENATION)" in msg and "quantisation" in msg


def test_refuses_strided_slice_ellipsis_and_5d() -> None:
    def build(b: ModelBuilder) -> tuple[list[int], list[int]]:
        x = b.tensor((2, 2, 2, 2, 2), "float32")
        y = b.tensor((1, 2, 2, 2, 2), "float32")
        cs = [b.const(np.asarray(v, dtype=np.int32))
              for v in ((0,) * 5, (1, 2, 2, 2, 2), (1,) * 5)]
        b.op("STRIDED_SLICE", [x, *cs], [y], StridedSliceOptions())
        return [x], [y]
    assert "up to 4-D" in _refusal(build)

    def build2(b: ModelBuilder) -> tuple[list[int], list[int]]:
        x = b.tensor((2, 2), "float32")
        y = b.tensor((1, 2), "float32")
        cs = [b.const(np.asarray(v, dtype=np.int32)) for v in ((0, 0), (1, 2), (1, 1))]
        b.op("STRIDED_SLICE", [x, *cs], [y], StridedSliceOptions(ellipsis_mask=1))
        return [x], [y]
    assert "ellipsis" in _refusal(build2)


def test_refuses_runtime_paddings_and_int64_paddings() -> None:
    for make in ("runtime", "int64"):
        def build(b: ModelBuilder, make: str = make) -> tuple[list[int], list[int]]:
            x = b.tensor((2, 2), "float32")
            if make == "runtime":
                p = b.tensor((2, 2), "int32")
            else:
                p = b.const(np.asarray([[1, 1], [0, 0]], dtype=np.int64))
            y = b.tensor((4, 2), "float32")
            b.op("PAD", [x, p], [y])
            return ([x, p] if make == "runtime" else [x]), [y]
        msg = _refusal(build)
        assert "op 0 (PAD)" in msg and "constant int32 paddings" in msg


def test_refuses_transpose_6d() -> None:
    def build(b: ModelBuilder) -> tuple[list[int], list[int]]:
        x = b.tensor((1, 2, 1, 2, 1, 2), "int8", **QUANT)
        y = b.tensor((2, 1, 2, 1, 2, 1), "int8", **QUANT)
        b.op("TRANSPOSE", [x, b.const(np.asarray([5, 4, 3, 2, 1, 0], dtype=np.int32))], [y])
        return [x], [y]
    assert "TRANSPOSE up to 5-D" in _refusal(build)


# ----- kernels at the C level: argument checks and in-place copy -----


def test_shape_kernels_c(cbuild: CBuild) -> None:
    exe = cbuild.program("shape_test", [c_source("shape_kernels.c"),
                                        *kernel_sources("shape")], debug=True)
    res = cbuild.run(exe)
    assert res.returncode == 0 and res.stdout.strip() == "OK", res.stdout + res.stderr


# ----- BROADCAST_ARGS -----

def _broadcast_args_model() -> tuple[bytes, dict[str, int]]:
    """BROADCAST_ARGS folded (both shapes constant: int32 and int64, unequal lengths,
    an int64 entry past 2^32 that TFLM's C ints wrap) and at run time (a graph-input
    shape, int32 and int64; SHAPE's output)."""
    b = ModelBuilder("broadcast args")
    out_of: dict[str, int] = {}
    folded = [("int32", [2, 1, 5], [3, 1]), ("int32", [1], [4, 1, 7, 1]),
              ("int64", [1, 4], [3, 1, 1]), ("int64", [2**32 + 6, 1], [6, 9]),
              ("int32", [2], [5, 1])]
    for k, (dtype, s1, s2) in enumerate(folded):
        y = b.tensor((max(len(s1), len(s2)),), dtype)
        b.op("BROADCAST_ARGS", [b.const(np.asarray(s1, dtype=dtype)),
                                b.const(np.asarray(s2, dtype=dtype))], [y])
        out_of[f"folded-{dtype}-{k}"] = y
    s32 = b.tensor((3,), "int32", name="s32")
    s64 = b.tensor((2,), "int64", name="s64")
    y32 = b.tensor((4,), "int32", name="y32")
    b.op("BROADCAST_ARGS", [s32, b.const(np.asarray([6, 1, 1, 4], dtype=np.int32))], [y32])
    y64 = b.tensor((3,), "int64", name="y64")
    b.op("BROADCAST_ARGS", [b.const(np.asarray([2, 1, 1], dtype=np.int64)), s64], [y64])
    x = b.tensor((1, 3, 1), "int8", name="x", scale=0.1, zero_point=0)
    shape = b.tensor((3,), "int32")
    b.op("SHAPE", [x], [shape])
    ys = b.tensor((3,), "int32", name="ys")
    b.op("BROADCAST_ARGS", [shape, b.const(np.asarray([2, 1, 8], dtype=np.int32))], [ys])
    out_of.update({"runtime-int32": y32, "runtime-int64": y64, "runtime-of-shape": ys})
    return b.build([s32, s64, x], [y32, y64, ys]), out_of


BROADCAST_ARGS_INPUTS = [np.asarray([1, 5, 4], dtype=np.int32), np.asarray([3, 7], dtype=np.int64),
                         np.zeros((1, 3, 1), dtype=np.int8)]


@pytest.mark.parametrize("target", ["host", pytest.param("qemu-m7", marks=[
    pytest.mark.qemu, pytest.mark.slow, needs_qemu])])
def test_broadcast_args_bit_exact(target: str) -> None:
    model, out_of = _broadcast_args_model()
    _, ref = run_tflm(model, BROADCAST_ARGS_INPUTS)
    _, got = run_nnopt(model, BROADCAST_ARGS_INPUTS, target=target,
                       options=PlanOptions(order="file"))
    for cid, t in out_of.items():
        assert_case_matches(ref[t], got[t], same_dtype=True, same_bits=True)
        assert got[t].dtype == ref[t].dtype, cid
    assert got[out_of["folded-int64-3"]].tolist() == [6, 9]  # 2^32 + 6 wrapped, as TFLM


def test_broadcast_args_folds_constant_shapes(tmp_path: Path) -> None:
    """Constant shapes: the result is a constant copied out (no BROADCAST_ARGS kernel);
    the 3 runtime ones call the kernel."""
    model, _ = _broadcast_args_model()
    generate(plan_model(load_model_bytes(model), PlanOptions()), tmp_path, name="m")
    c = "\n".join(p.read_text() for p in tmp_path.glob("*.c"))
    assert c.count("nnrt_broadcast_args(") == 3


def _broadcast_args_refusal(dtype: str, s1: list[int], s2: list[int]) -> str:
    b = ModelBuilder()
    x = b.tensor((1,), "int8", scale=0.1, zero_point=0)
    y = b.tensor((max(len(s1), len(s2)),), dtype)
    b.op("BROADCAST_ARGS", [b.const(np.asarray(s1, dtype=dtype)),
                            b.const(np.asarray(s2, dtype=dtype))], [y])
    z = b.tensor((1,), "int8", scale=0.1, zero_point=0)
    b.op("RELU", [x], [z])
    with pytest.raises(UnsupportedError) as err:
        check_graph(load_model_bytes(b.build([x], [y, z])))
    return err.value.message


def test_broadcast_args_refuses_by_name() -> None:
    msg = _broadcast_args_refusal("int32", [2, 3], [4, 3])
    assert "(BROADCAST_ARGS)" in msg and "[2, 3] and [4, 3]" in msg and "equal or 1" in msg
    msg = _broadcast_args_refusal("int16", [2], [1])
    assert "(BROADCAST_ARGS)" in msg and "int32 or int64" in msg


# ----- int64 / bool CONCATENATION, bool SLICE and STRIDED_SLICE (issue 44: TFLM's
# concatenation.cc, slice.cc and strided_slice.cc take them) -----

def test_int64_concat_and_bool_slices_bit_exact_with_tflm() -> None:
    rng = np.random.default_rng(49)
    b = ModelBuilder("wide_moves")
    a = b.tensor((2, 3, 4), "int64", name="a")
    c = b.const(rng.integers(-(2**62), 2**62, (2, 1, 4), dtype=np.int64), name="c")
    cat = b.tensor((2, 4, 4), "int64", name="cat")
    b.op("CONCATENATION", [a, c], [cat], ConcatOptions(1))
    m = b.tensor((3, 5), "bool", name="m")
    m2 = b.const(rng.integers(0, 2, (1, 5)).astype(np.bool_), name="m2")
    mcat = b.tensor((4, 5), "bool", name="mcat")
    b.op("CONCATENATION", [m, m2], [mcat], ConcatOptions(0))
    sl = b.tensor((2, 3), "bool", name="slice")
    b.op("SLICE", [mcat, b.const(np.array([1, 1], np.int32)),
                   b.const(np.array([2, 3], np.int32))], [sl])
    ss = b.tensor((2, 3), "bool", name="strided")
    b.op("STRIDED_SLICE", [mcat, b.const(np.array([0, 0], np.int32)),
                           b.const(np.array([4, 5], np.int32)),
                           b.const(np.array([2, 2], np.int32))], [ss], StridedSliceOptions())
    model = b.build([a, m], [cat, mcat, sl, ss])
    xs = [rng.integers(-(2**62), 2**62, (2, 3, 4), dtype=np.int64),
          rng.integers(0, 2, (3, 5)).astype(np.bool_)]
    ref, _ = run_tflm(model, xs)
    got, _ = run_nnopt(model, xs)
    assert len(got) == len(ref) == 4
    for k, (g, r) in enumerate(zip(got, ref, strict=True)):
        np.testing.assert_array_equal(g, np.asarray(r).reshape(g.shape), err_msg=str(k))
