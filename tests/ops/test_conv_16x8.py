"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with 16x8 quantisation (int16
activations, int8 weights, int64 bias): bit-exact against TFLite Micro, in one
multi-op model (one build, one oracle run), on the host and as Cortex-M7 firmware.

Cases: strides (square and not), dilation, SAME/VALID, odd sizes, batch 2, grouped
convolution, depth multipliers 1-3, with and without bias (a depthwise conv always has
one: TFLM's 16x8 kernel requires it), per-channel and per-tensor weights, a per-tensor
FC weight zero point, fused activations, FC with keep_num_dims over a 3-D input."""

from __future__ import annotations

import math
import shutil
from typing import NamedTuple

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ConvOptions, FullyConnectedOptions
from nnopt.ops import check_graph
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cases import mismatched_cases
from support.tflite_builder import ModelBuilder

S_IN = 0.0011


class Case(NamedTuple):
    opcode: str
    batch: int
    in_hw: tuple[int, int]
    ic: int
    oc: int  # conv: filters; depthwise: depth multiplier; FC: units
    kernel: tuple[int, int] = (3, 3)
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    padding: str = "SAME"
    bias: bool = True
    per_channel: bool = True
    groups: int = 1
    activation: str = "NONE"
    weight_zp: int = 0  # FC per-tensor only

    @property
    def cid(self) -> str:
        (ih, iw), (kh, kw), (sh, sw), (dh, dw) = (self.in_hw, self.kernel, self.stride,
                                                  self.dilation)
        return (f"{self.opcode}-n{self.batch}-{ih}x{iw}x{self.ic}-o{self.oc}-k{kh}x{kw}"
                f"-s{sh}x{sw}-d{dh}x{dw}-{self.padding}-b{int(self.bias)}"
                f"-pc{int(self.per_channel)}-g{self.groups}-{self.activation}"
                f"-wz{self.weight_zp}")


CONV, DW, FC = "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"
CASES = [
    Case(CONV, 1, (5, 7), 3, 4),
    Case(CONV, 2, (6, 5), 2, 5, (3, 2), (2, 2), padding="VALID", bias=False),
    Case(CONV, 1, (9, 8), 3, 3, (3, 3), (1, 1), (2, 2)),
    Case(CONV, 1, (9, 9), 4, 2, (2, 3), (1, 2), (2, 1), "VALID", per_channel=False),
    Case(CONV, 1, (4, 5), 6, 6, (3, 3), (2, 3), groups=2, bias=False),
    Case(CONV, 1, (3, 3), 5, 3, (5, 5), activation="RELU"),
    Case(CONV, 1, (7, 6), 9, 7, (1, 1), (2, 2), activation="RELU6"),
    Case(CONV, 2, (1, 1), 600, 3, (1, 1)),  # more than 511 channels in one tap
    Case(DW, 1, (5, 7), 3, 1),
    Case(DW, 2, (6, 5), 2, 2, (3, 2), (2, 2), padding="VALID"),
    Case(DW, 1, (9, 8), 3, 3, (3, 3), (1, 1), (2, 2)),
    Case(DW, 1, (9, 9), 4, 1, (2, 3), (1, 2), (2, 1), "VALID", per_channel=False),
    Case(DW, 1, (4, 5), 5, 2, (5, 5), (3, 2), activation="RELU"),
    Case(DW, 1, (7, 6), 8, 1, (3, 3), (2, 2), activation="RELU6"),
    Case(FC, 3, (1, 1), 7, 5),
    Case(FC, 2, (1, 1), 13, 4, bias=False),
    Case(FC, 4, (1, 1), 6, 3, per_channel=False, weight_zp=5),
    Case(FC, 2, (3, 1), 5, 6, per_channel=False, activation="RELU"),  # 3-D input
    Case(FC, 1, (1, 1), 700, 3, per_channel=False, bias=False),
]


def _out_scale(fan_in: int, w_scale: float) -> float:
    """An output scale that puts typical accumulators near a third of the int16 range
    (so that few outputs saturate)."""
    return S_IN * w_scale * math.sqrt(fan_in) * 73.0 * 18900.0 / 11000.0


def _add(b: ModelBuilder, rng: np.random.Generator, c: Case) -> int:
    """Add case ``c``'s op with a constant int16 input; its output tensor."""
    ih, iw = c.in_hw
    kh, kw = c.kernel
    if c.opcode == FC:
        xshape: tuple[int, ...] = (c.batch, ih, c.ic) if ih > 1 else (c.batch, c.ic)
        wshape: tuple[int, ...] = (c.oc, c.ic)
        channels, axis, fan_in = c.oc, 0, c.ic
    elif c.opcode == CONV:
        xshape, wshape = (c.batch, ih, iw, c.ic), (c.oc, kh, kw, c.ic // c.groups)
        channels, axis, fan_in = c.oc, 0, kh * kw * c.ic // c.groups
    else:
        xshape, wshape = (c.batch, ih, iw, c.ic), (1, kh, kw, c.ic * c.oc)
        channels, axis, fan_in = c.ic * c.oc, 3, kh * kw
    x = b.tensor(xshape, "int16", scale=S_IN, zero_point=0,
                 data=rng.integers(-32768, 32768, xshape).astype(np.int16))
    scales = rng.uniform(0.002, 0.02, channels) if c.per_channel else np.array([0.011])
    lo = -127 + max(c.weight_zp, 0)
    w = b.const(rng.integers(lo, 128, wshape).astype(np.int8), scale=scales,
                zero_point=c.weight_zp, axis=axis)
    bias = -1
    if c.bias:
        bias = b.const(rng.integers(-4_000_000, 4_000_000, channels).astype(np.int64),
                       scale=S_IN * np.resize(scales, channels), axis=0)
    s_out = _out_scale(fan_in, float(np.mean(scales)))
    if c.opcode == FC:
        yshape: tuple[int, ...] = (c.batch, ih, c.oc) if ih > 1 else (c.batch, c.oc)
        y = b.tensor(yshape, "int16", scale=s_out, zero_point=0)
        b.op(FC, [x, w, bias], [y], FullyConnectedOptions(c.activation, keep_num_dims=ih > 1))
        return y
    sh, sw = c.stride
    dh, dw = c.dilation
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if c.padding == "SAME":
        oh, ow = -(-ih // sh), -(-iw // sw)
    else:
        oh, ow = (ih - ekh) // sh + 1, (iw - ekw) // sw + 1
    y = b.tensor((c.batch, oh, ow, channels), "int16", scale=s_out, zero_point=0)
    b.op(c.opcode, [x, w, bias], [y],
         ConvOptions(c.padding, sh, sw, dh, dw, c.activation,
                     depth_multiplier=c.oc if c.opcode == DW else 1))
    return y


def _build() -> tuple[bytes, dict[str, int]]:
    b = ModelBuilder("16x8 conv, depthwise and fully connected cases")
    rng = np.random.default_rng(1608)
    out_of = {c.cid: _add(b, rng, c) for c in CASES}
    # the graph input: a 16x8 conv of an activation, then a depthwise conv of its output
    x = b.tensor((1, 5, 4, 3), "int16", name="x", scale=S_IN, zero_point=0)
    w = b.const(rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8),
                scale=rng.uniform(0.002, 0.02, 4), axis=0)
    h = b.tensor((1, 5, 4, 4), "int16", name="h", scale=_out_scale(27, 0.011), zero_point=0)
    b.op(CONV, [x, w, -1], [h], ConvOptions("SAME", 1, 1))
    wd = b.const(rng.integers(-127, 128, (1, 3, 3, 4)).astype(np.int8),
                 scale=rng.uniform(0.002, 0.02, 4), axis=3)
    bd = b.const(rng.integers(-9000, 9000, 4).astype(np.int64), scale=[1e-6] * 4)
    y = b.tensor((1, 3, 2, 4), "int16", name="y", scale=0.02, zero_point=0)
    b.op(DW, [h, wd, bd], [y], ConvOptions("SAME", 2, 2))
    out_of["graph-input-conv"], out_of["graph-input-dw"] = h, y
    return b.build([x], [y]), out_of


MODEL, OUT_OF = _build()
INPUTS = [np.random.default_rng(7).integers(-32768, 32768, (1, 5, 4, 3)).astype(np.int16)]


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    _, ref = run_tflm(MODEL, INPUTS)
    # ASan + UBSan: no out-of-bounds access or undefined behaviour in the kernels
    _, got = run_nnopt(MODEL, INPUTS, options=PlanOptions(order="file"), sanitize=True)
    return {cid: (ref[t], got[t]) for cid, t in OUT_OF.items()}


@pytest.mark.slow
@pytest.mark.parametrize("cid", sorted(OUT_OF))
def test_bit_exact(results: dict[str, tuple[np.ndarray, np.ndarray]], cid: str) -> None:
    ref, got = results[cid]
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


def test_cases_are_not_saturated(results: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """The output scales leave most values inside the int16 range: the cases check the
    rounding, not the clamp."""
    for cid, (ref, _) in results.items():
        if "RELU" in cid:
            continue
        inside = np.mean(np.abs(ref.astype(np.int32)) < 32767)
        assert inside > 0.9, cid


def test_in_place_and_tiled_plans_bit_exact(
        results: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """Forced in-place ops and tiling (the 16x8 kernels run on sub-views, row by row
    over a dying input) give the same outputs."""
    _, got = run_nnopt(MODEL, INPUTS, options=PlanOptions(inplace_ops="force",
                                                          tiling="force"))
    assert not mismatched_cases({cid: (results[cid][0], got[t]) for cid, t in OUT_OF.items()})


def _single(opcode: str, bias_dtype: str | None, *, x_zp: int = 0,
            out_scale: float = 0.05) -> bytes:
    b = ModelBuilder()
    x = b.tensor((1, 4, 4, 2), "int16", scale=0.01, zero_point=x_zp)
    shape = (1, 3, 3, 2) if opcode == DW else (2, 3, 3, 2)
    w = b.const(np.ones(shape, dtype=np.int8), scale=[0.01] * 2, axis=3 if opcode == DW else 0)
    ins = [x, w]
    if bias_dtype is not None:
        ins.append(b.const(np.zeros(2, dtype=bias_dtype), scale=[1e-4] * 2))
    y = b.tensor((1, 4, 4, 2), "int16", scale=out_scale, zero_point=0)
    b.op(opcode, ins, [y], ConvOptions("SAME", 1, 1))
    return b.build([x], [y])


@pytest.mark.parametrize(("model", "message"), [
    (_single(CONV, "int32"), r"op 0 \(CONV_2D\): 16x8 bias tensor 2 .* is int32"),
    (_single(DW, "int32"), r"op 0 \(DEPTHWISE_CONV_2D\): 16x8 bias tensor 2 .* is int32"),
    (_single(DW, None), r"op 0 \(DEPTHWISE_CONV_2D\): a 16x8 depthwise .* without bias"),
    (_single(CONV, "int64", x_zp=3), r"op 0 \(CONV_2D\): int16 input tensor 0 .* zero point"),
    (_single(CONV, "int64", out_scale=1e-9), r"op 0 \(CONV_2D\): a requantisation shift"),
], ids=["conv-int32-bias", "dw-int32-bias", "dw-no-bias", "zero-point", "shift"])
def test_refuses_what_the_kernels_do_not_take(model: bytes, message: str) -> None:
    with pytest.raises(UnsupportedError, match=message):
        check_graph(load_model_bytes(model))


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                    or shutil.which("arm-none-eabi-gcc") is None,
                    reason="qemu-system-arm or arm-none-eabi-gcc not installed")
def test_bit_exact_on_cortex_m7(results: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """The same cases as firmware on QEMU Cortex-M7."""
    _, got = run_nnopt(MODEL, INPUTS, target="qemu-m7", options=PlanOptions(order="file"))
    bad = mismatched_cases({cid: (results[cid][0], got[t]) for cid, t in OUT_OF.items()})
    assert not bad, f"{len(bad)} cases differ on Cortex-M7: {bad[:5]}"


def test_model_blob_refuses_16x8_kernels_by_name() -> None:
    """The runtime-loaded blob carries no 16x8 kernel yet: writing one names the ops and
    kernels and points to the generated C."""
    from nnopt.blob.writer import write_blob
    from nnopt.planner import plan_model, with_dynamic

    pm = with_dynamic(plan_model(load_model_bytes(MODEL), PlanOptions(order="file")))
    with pytest.raises(UnsupportedError, match=r"op \d+ \(CONV_2D\): its int16 kernel "
                                               r"nnrt_conv2d_s16 is not in the model blob "
                                               r"format"):
        write_blob(pm)
