"""Layout operators (DEPTH_TO_SPACE, SPACE_TO_DEPTH, MIRROR_PAD, REVERSE_V2,
BROADCAST_TO, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, SHAPE, FILL, ZEROS_LIKE):
bit-exact against TFLite Micro for every element type its kernel takes, odd shapes,
batch 2, paddings/crops on every axis, in one multi-op model (one build, one oracle
run); refusals of what TFLM's kernels do not run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from nnopt.boards import load_board
from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.lowering.layout import mirror_index
from nnopt.ops import check_graph
from support.cases import (
    Results,
    assert_case_matches,
    differing_tensors,
    oracle_results,
    tflm_and_cortex_m7,
)
from support.cbuild import CBuild, c_source, kernel_sources
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder

QUANT: dict[str, dict[str, Any]] = {
    "int8": {"scale": 0.05, "zero_point": -3},
    "int16": {"scale": 0.001, "zero_point": 0},
    "int32": {}, "float32": {}, "uint8": {}, "bool": {}, "int64": {},
}
I8_F32 = ("int8", "float32")
ANY = ("int8", "int16", "int32", "float32", "uint8", "bool", "int64")


class _Cases:
    def __init__(self) -> None:
        self.b = ModelBuilder("layout cases")
        self.rng = np.random.default_rng(11)
        self.out_of: dict[str, int] = {}

        self.arrays: dict[int, np.ndarray] = {}
        self.s2b: dict[str, tuple[int, list[int], list[list[int]]]] = {}

    def data(self, shape: Sequence[int], dtype: str) -> int:
        if dtype == "float32":
            arr: np.ndarray = self.rng.standard_normal(shape).astype(np.float32)
        elif dtype == "bool":
            arr = self.rng.integers(0, 2, size=shape).astype(np.bool_)
        else:
            info = np.iinfo(np.dtype(dtype))
            arr = self.rng.integers(info.min, info.max, size=shape, endpoint=True
                                    ).astype(dtype)
        t = self.b.tensor(tuple(shape), dtype, data=arr, **QUANT[dtype])
        self.arrays[t] = arr
        return t

    def case(self, cid: str, opcode: str, inputs: list[int], shape: Sequence[int],
             dtype: str, options: dict[str, Any] | None = None) -> None:
        y = self.b.tensor(tuple(shape), dtype, **QUANT[dtype])
        self.b.op(opcode, inputs, [y], options or {})
        self.out_of[cid] = y

    def i32(self, values: Sequence[Any]) -> int:
        return self.b.const(np.asarray(values, dtype=np.int32))


def _build() -> tuple[bytes, dict[str, int], int, int]:
    c = _Cases()
    for dt in I8_F32:
        for shape, bs in (((2, 3, 5, 8), 2), ((1, 2, 3, 27), 3), ((2, 2, 1, 3), 1)):
            n, h, w, ch = shape
            c.case(f"d2s-{dt}-{shape}-{bs}", "DEPTH_TO_SPACE", [c.data(shape, dt)],
                   (n, h * bs, w * bs, ch // (bs * bs)), dt, {"block_size": bs})
        for shape, bs in (((2, 6, 4, 3), 2), ((1, 9, 6, 2), 3)):
            n, h, w, ch = shape
            c.case(f"s2d-{dt}-{shape}-{bs}", "SPACE_TO_DEPTH", [c.data(shape, dt)],
                   (n, h // bs, w // bs, ch * bs * bs), dt, {"block_size": bs})
        for mode, shape, pads in (
                ("REFLECT", (2, 3, 4, 5), [[1, 1], [2, 0], [0, 3], [1, 2]]),
                ("SYMMETRIC", (2, 3, 4, 5), [[2, 1], [3, 2], [1, 4], [0, 5]]),
                ("REFLECT", (7,), [[6, 3]]),
                ("SYMMETRIC", (3, 4), [[0, 0], [4, 1]])):
            out = [p[0] + s + p[1] for s, p in zip(shape, pads, strict=True)]
            c.case(f"mirror-{dt}-{mode}-{shape}-{pads}", "MIRROR_PAD",
                   [c.data(shape, dt), c.i32(pads)], out, dt,
                   {"mode": 0 if mode == "REFLECT" else 1})
        for shape, block, crops in (((8, 3, 4, 2), [2, 2], [[1, 0], [0, 3]]),
                                    ((6, 2, 3, 3), [2, 3], [[0, 1], [2, 2]]),
                                    ((6, 4, 3), [3], [[2, 1]])):
            nb = shape[0] // int(np.prod(block))
            spatial = [shape[1 + d] * block[d] - sum(crops[d]) for d in range(len(block))]
            c.case(f"b2s-{dt}-{shape}-{block}-{crops}", "BATCH_TO_SPACE_ND",
                   [c.data(shape, dt), c.i32(block), c.i32(crops)],
                   (nb, *spatial, shape[-1]), dt)
        for shape, block, pads in (((2, 5, 4, 3), [2, 3], [[1, 0], [1, 1]]),
                                   ((1, 4, 4, 1), [2, 2], [[0, 0], [0, 0]]),
                                   ((1, 5, 2), [2], [[0, 1]])):
            nb = shape[0] * int(np.prod(block))
            spatial = [(shape[1 + d] + sum(pads[d])) // block[d] for d in range(len(block))]
            x = c.data(shape, dt)
            cid = f"s2b-{dt}-{shape}-{block}-{pads}"
            c.case(cid, "SPACE_TO_BATCH_ND", [x, c.i32(block), c.i32(pads)],
                   (nb, *spatial, shape[-1]), dt)
            c.s2b[cid] = (x, block, pads)
    for dt in ANY:
        for axes in ([1], [-1], [1, 2], [0, 1, 2, 3], [0]):
            c.case(f"reverse-{dt}-{axes}", "REVERSE_V2",
                   [c.data((2, 3, 4, 5), dt), c.i32(axes)], (2, 3, 4, 5), dt)
        for src, dst in (((3, 1, 5), (2, 3, 4, 5)), ((1,), (2, 3)), ((4, 1), (2, 3, 4, 7)),
                         ((2, 1, 3), (2, 5, 3))):
            c.case(f"bcast-{dt}-{src}-{dst}", "BROADCAST_TO",
                   [c.data(src, dt), c.i32(dst)], dst, dt)
    for dt in ("int8", "int32", "float32"):
        c.case(f"fill-{dt}", "FILL", [c.i32([2, 3, 5]), c.data((), dt)], (2, 3, 5), dt)
    for dt in ("int8", "int32", "float32", "int64"):
        c.case(f"zeros-{dt}", "ZEROS_LIKE", [c.data((3, 1, 4), dt)], (3, 1, 4), dt)
    c.case("shape-4d", "SHAPE", [c.data((2, 3, 4, 5), "int8")], (4,), "int32")
    # graph inputs: FILL of a runtime scalar, SHAPE and MIRROR_PAD of an activation
    v = c.b.tensor((), "float32", name="v")
    c.case("fill-input", "FILL", [c.i32([3, 2]), v], (3, 2), "float32")
    x = c.b.tensor((1, 3, 3, 2), "int8", name="x", **QUANT["int8"])
    c.case("shape-input", "SHAPE", [x], (4,), "int32")
    c.case("mirror-input", "MIRROR_PAD", [x, c.i32([[0, 0], [2, 2], [1, 1], [0, 0]])],
           (1, 7, 5, 2), "int8", {"mode": 0})
    s2b = {cid: _space_to_batch(c.arrays[t], block, pads)
           for cid, (t, block, pads) in c.s2b.items()}
    return c.b.build([v, x], [c.out_of["mirror-input"]]), c.out_of, s2b


def _space_to_batch(x: np.ndarray, block: list[int], pads: list[list[int]]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """TensorFlow's SPACE_TO_BATCH_ND in numpy (pad with the zero point, 0 for float):
    the expected output, and the mask of its padding elements."""
    if x.ndim == 3:
        x, block, pads = x[:, :, None, :], [*block, 1], [*pads, [0, 0]]
    zp = QUANT["int8"]["zero_point"] if x.dtype == np.int8 else 0
    width = [(0, 0), tuple(pads[0]), tuple(pads[1]), (0, 0)]
    padded = np.pad(x, width, constant_values=zp)
    real = np.pad(np.ones(x.shape, bool), width, constant_values=False)
    n, h, w, ch = padded.shape
    bh, bw = block

    def move(a: np.ndarray) -> np.ndarray:
        a = a.reshape(n, h // bh, bh, w // bw, bw, ch).transpose(2, 4, 0, 1, 3, 5)
        return a.reshape(bh * bw * n, h // bh, w // bw, ch)
    return move(padded), ~move(real)


MODEL, OUT_OF, S2B = _build()
INPUTS = [np.asarray(-2.75, dtype=np.float32),
          np.arange(-9, 9, dtype=np.int8).reshape(1, 3, 3, 2)]


@pytest.fixture(scope="module")
def results() -> Results:
    return oracle_results(MODEL, INPUTS, OUT_OF)


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(set(OUT_OF) - set(S2B)))
def test_bit_exact(results: Results, cid: str) -> None:
    assert_case_matches(*results[cid], same_bits=True)


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(S2B))
def test_space_to_batch(results: Results, cid: str) -> None:
    """Bit-exact with TFLM on every element taken from the input; the padding is the
    zero point (0.0 for float32), as TensorFlow defines it. TFLM's own padding bytes
    are undefined: its SpaceToBatchND memsets them with SpaceToBatchParams.output_offset
    from a persistent buffer its Prepare never initialises
    (tensorflow/lite/micro/kernels/space_to_batch_nd.cc)."""
    ref, got = results[cid]
    expected, pad = S2B[cid]
    got4 = got.reshape(expected.shape)
    np.testing.assert_array_equal(got4.view(np.uint8), expected.view(np.uint8))
    ref4 = ref.reshape(expected.shape)
    np.testing.assert_array_equal(got4[~pad].view(np.uint8), ref4[~pad].view(np.uint8))


def test_mirror_index_follows_tflm() -> None:
    # REFLECT of [a b c] by 2 on both sides: c b | a b c | b a
    assert [mirror_index(i, 2, 3, 1) for i in range(7)] == [2, 1, 0, 1, 2, 1, 0]
    # SYMMETRIC: b a | a b c | c b
    assert [mirror_index(i, 2, 3, 0) for i in range(7)] == [1, 0, 0, 1, 2, 2, 1]


def _one(opcode: str, dtype: str, x_shape: Sequence[int], extra: list[Any],
         y_shape: Sequence[int], options: dict[str, Any] | None = None,
         y_dtype: str | None = None) -> bytes:
    b = ModelBuilder()
    x = b.tensor(tuple(x_shape), dtype, **QUANT[dtype])
    ins = [x] + [b.const(np.asarray(e, dtype=np.int32)) for e in extra]
    y = b.tensor(tuple(y_shape), y_dtype or dtype, **QUANT[y_dtype or dtype])
    b.op(opcode, ins, [y], options or {})
    return b.build([x], [y])


@pytest.mark.parametrize(("model", "match"), [
    (_one("DEPTH_TO_SPACE", "int16", (1, 1, 1, 4), [], (1, 2, 2, 1), {"block_size": 2}),
     r"op 0 \(DEPTH_TO_SPACE\).*INT16.*int8, float32"),
    (_one("MIRROR_PAD", "float32", (3,), [[[3, 0]]], (6,), {"mode": 0}),
     r"MIRROR_PAD.*reach outside the input.*REFLECT"),
    (_one("REVERSE_V2", "float32", (2, 3, 4), [[0, 2]], (2, 3, 4)),
     r"REVERSE_V2.*contiguous"),
    (_one("BROADCAST_TO", "int8", (3, 2), [[3, 4]], (3, 4)), r"does not broadcast"),
    (_one("SHAPE", "int8", (2, 3), [], (2,), y_dtype="float32"), r"SHAPE.*int32"),
    (_one("SPACE_TO_BATCH_ND", "int8", (1, 5, 4, 1), [[2, 2], [[0, 0], [0, 0]]],
          (4, 2, 2, 1)), r"divisible by the block"),
])
def test_refuses_what_tflm_does_not_run(model: bytes, match: str) -> None:
    with pytest.raises(UnsupportedError, match=match):
        check_graph(load_model_bytes(model))


@pytest.mark.qemu
@pytest.mark.slow
@needs_qemu
def test_bit_exact_on_cortex_m7() -> None:
    """The same model as Cortex-M7 firmware (nucleo_f767zi) under QEMU: every case
    byte for byte equal to TFLM (SPACE_TO_BATCH_ND's padding aside: TFLM leaves it undefined)."""
    ref, got = tflm_and_cortex_m7(MODEL, INPUTS, board=load_board("nucleo_f767zi"))
    differ = differing_tensors(ref, got, OUT_OF, set(OUT_OF) - set(S2B), bytewise=True)
    differ += [cid for cid, (expected, _) in sorted(S2B.items())
               if not np.array_equal(got[OUT_OF[cid]].reshape(expected.shape).view(np.uint8),
                                     expected.view(np.uint8))]
    assert differ == []


def test_kernels_refuse_bad_descriptors(cbuild: CBuild) -> None:
    """nnrt_gather_axes_x8, nnrt_space_to_batch_x8 and nnrt_resize_bilinear_* return
    NNRT_ERR_ARG for bad descriptors (tests/c/layout_kernels.c) and compute good ones."""
    exe = cbuild.program("layout_test", [c_source("layout_kernels.c"),
                                         *kernel_sources("shape", "resize")], debug=True)
    res = cbuild.run(exe)
    assert res.returncode == 0 and res.stdout.strip() == "OK", res.stdout + res.stderr
