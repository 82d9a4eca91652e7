"""Real-world .tflite models (issue 24, ../shared/models/realworld/) and the front-end
features they need: float16 weights expanded at build time (their DEQUANTIZE folded),
MediaPipe's custom Convolution2DTransposeBias on TRANSPOSE_CONV.

TFLM refuses both MediaPipe models (its DEQUANTIZE takes no float16 input; it has no
Convolution2DTransposeBias), so their oracle is the full TFLite runtime
(``ai-edge-litert``): its reference kernels where they run the model (the face detector:
nnopt is bit-exact with them), else its default XNNPACK delegate (the only LiteRT
kernel of Convolution2DTransposeBias: within :data:`XNNPACK_ATOL` of it, XNNPACK's own
float summation order). The models TFLM runs are in the TFLM tests (conftest's
ALL_MODELS: test_models_bitexact, test_models_qemu, test_stateful).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import LITERT_MODELS, model_path
from nnopt.cli import main
from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.harness import random_inputs, run_litert, run_nnopt
from support.tflite_builder import ModelBuilder

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert (the LiteRT oracle) not "
                    "installed: pip install -e '.[dev]'")

FACE = "realworld/mp_face_detection_short_range.tflite"
SELFIE = "realworld/mp_selfie_segmentation.tflite"
#: nnopt vs LiteRT's XNNPACK delegate, float32 outputs in [0, 1] (selfie segmentation's
#: sigmoid; measured 5.1e-5 on seeds 1 and 2) and on the small transposed convolutions.
XNNPACK_ATOL = 2e-4


def test_mediapipe_models_are_the_litert_oracle_ones() -> None:
    """conftest keeps the float16 models out of the TFLM-oracle tests."""
    present = [rel for rel in (FACE, SELFIE) if rel in LITERT_MODELS]
    if not present:
        pytest.skip("shared real-world models not found")
    assert present == [FACE, SELFIE]


@pytest.mark.parametrize("seed", [1, 2])
def test_face_detector_bit_exact_with_litert_reference_kernels(seed: int) -> None:
    data = model_path(FACE).read_bytes()
    inputs = random_inputs(data, seed)
    outs, _ = run_nnopt(data, inputs)
    ref = run_litert(data, inputs)[0]
    assert [o.shape for o in outs] == [(1, 896, 16), (1, 896, 1)]
    for got, want in zip(outs, ref, strict=True):
        np.testing.assert_array_equal(got, want.reshape(got.shape))


def test_face_detector_float16_expansion_and_its_rom_cost() -> None:
    g = load_model_bytes(model_path(FACE).read_bytes())
    assert not any(op.opcode == "DEQUANTIZE" for op in g.ops)
    assert len(g.ops) == 164 - 74  # every DEQUANTIZE of the file folded
    (e,) = g.expansions
    assert (e.kind, e.tensors, e.file_bytes, e.rom_bytes) == ("float16", 74, 202_780,
                                                              405_560)
    assert e.cost_bytes == 202_780
    assert g.weight_bytes - e.rom_bytes == 352  # the int32 shape operands


def test_selfie_segmentation_within_tolerance_of_litert() -> None:
    data = model_path(SELFIE).read_bytes()
    g = load_model_bytes(data)
    assert [op.opcode for op in g.ops].count("TRANSPOSE_CONV") == 1
    inputs = random_inputs(data, 1)
    (got,), _ = run_nnopt(data, inputs)
    (want,) = run_litert(data, inputs, reference=False)[0]
    assert got.shape == (1, 256, 256, 1)
    assert np.abs(got - want.reshape(got.shape)).max() <= XNNPACK_ATOL


# ----- float16 weights on a built model -----

W16 = np.array([[0.1, -2.5, 65504.0], [1e-7, 3.0, -0.333]], dtype=np.float16)


def _float16_fc(reader: str = "DEQUANTIZE", activation: bool = False) -> bytes:
    """x [1,3] float32 -> FULLY_CONNECTED with float16 weights [2,3] and bias [2] (each
    a DEQUANTIZE of a FLOAT16 constant, as TF's float16 quantisation writes them); with
    ``reader`` another op reads the float16 weights; ``activation``: the input is float16."""
    b = ModelBuilder("float16")
    x = b.tensor((1, 3), "float16" if activation else "float32", name="x")
    w16 = b.const(W16, name="w16")
    b16 = b.const(np.array([0.5, -1.0], np.float16), name="b16")
    w, bias = b.tensor((2, 3), "float32", name="w"), b.tensor((2,), "float32", name="b")
    b.op(reader, [w16], [w])
    b.op("DEQUANTIZE", [b16], [bias])
    y = b.tensor((1, 2), "float32", name="y")
    b.op("FULLY_CONNECTED", [x, w, bias], [y])
    return b.build([x], [y])


def test_float16_weights_widen_exactly_and_their_dequantize_goes() -> None:
    data = _float16_fc()
    g = load_model_bytes(data)
    assert [op.opcode for op in g.ops] == ["FULLY_CONNECTED"]
    w = g.tensors[g.ops[0].inputs[1]]
    np.testing.assert_array_equal(w.array(), W16.astype(np.float32))
    (e,) = g.expansions
    assert (e.tensors, e.file_bytes, e.rom_bytes) == (2, 16, 32)
    x = np.array([[1.0, -0.5, 2.0e-3]], np.float32)
    (got,), _ = run_nnopt(data, [x])
    (want,) = run_litert(data, [x])[0]
    np.testing.assert_array_equal(got, want)


def test_optimize_reports_the_expansion_cost(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "f16.tflite"
    model.write_bytes(_float16_fc())
    assert main(["optimize", str(model), "--json", str(tmp_path / "r.json"),
                 "--table", "none"]) == 0
    assert ("float16 weights expanded to float32: 2 tensor(s), 16 B in the file -> "
            "32 B in ROM (+16 B)") in capsys.readouterr().out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["expansions"] == [{"kind": "float16", "tensors": 2, "file_bytes": 16,
                                     "rom_bytes": 32, "cost_bytes": 16}]


@pytest.mark.parametrize("kw, match", [
    ({"activation": True}, r"tensor 0 \(x\) is a FLOAT16 activation"),
    ({"reader": "RELU"}, r"op 0 \(RELU\) reads float16 tensor 1 \(w16\)"),
])
def test_float16_refused_by_name(kw: dict[str, object], match: str) -> None:
    with pytest.raises(UnsupportedError, match=match) as info:
        load_model_bytes(_float16_fc(**kw))  # type: ignore[arg-type]
    assert info.value.hint and "float16" in info.value.hint


# ----- Convolution2DTransposeBias -----

def _tconv_bias(in_hw: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int],
                padding: int, ic: int = 3, oc: int = 2, out_hw: tuple[int, int] | None = None
                ) -> bytes:
    """One Convolution2DTransposeBias (float32 weights [OC,KH,KW,IC], bias [OC]) with
    MediaPipe's options (padding 1 SAME / 2 VALID, stride_w, stride_h)."""
    rng = np.random.default_rng(sum(in_hw) + 7 * sum(kernel) + sum(stride) + padding)
    if out_hw is None:
        ext = []
        for n, k, s in zip(in_hw, kernel, stride, strict=True):
            pad = max(0, k - (n - 1) % s - 1) if padding == 1 else 0
            ext.append(s * (n - 1) + k - pad)
        out_hw = (ext[0], ext[1])
    b = ModelBuilder("tconv_bias")
    x = b.tensor((1, *in_hw, ic), "float32", name="x")
    w = b.const(rng.standard_normal((oc, *kernel, ic)).astype(np.float32), name="w")
    bias = b.const(rng.standard_normal(oc).astype(np.float32), name="bias")
    y = b.tensor((1, *out_hw, oc), "float32", name="y")
    opts = np.array([padding, stride[1], stride[0]], "<i4").tobytes()
    b.custom_op("Convolution2DTransposeBias", [x, w, bias], [y], opts)
    return b.build([x], [y])


@pytest.mark.parametrize("in_hw, kernel, stride, padding", [
    ((4, 5), (2, 2), (2, 2), 1),   # the selfie model's: exact doubling
    ((4, 5), (4, 4), (2, 2), 1),   # SAME with padding (odd extent)
    ((3, 4), (3, 3), (2, 3), 1),   # (XNNPACK, the oracle, takes no stride > kernel)
    ((3, 4), (3, 3), (1, 2), 2),   # VALID
    ((5, 3), (3, 3), (3, 1), 2),
])
def test_transpose_conv_bias_matches_litert(in_hw: tuple[int, int],
                                            kernel: tuple[int, int],
                                            stride: tuple[int, int], padding: int) -> None:
    data = _tconv_bias(in_hw, kernel, stride, padding)
    (op,) = load_model_bytes(data).ops
    assert op.opcode == "TRANSPOSE_CONV"
    x = np.random.default_rng(3).standard_normal((1, *in_hw, 3)).astype(np.float32)
    (got,), _ = run_nnopt(data, [x])
    (want,) = run_litert(data, [x], reference=False)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


@pytest.mark.parametrize("kw, match", [
    ({"padding": 0}, "padding 0 is neither SAME"),
    ({"out_hw": (8, 8)}, r"is \[1, 8, 8, 2\]; the kernel writes \[1, 8, 9, 2\]"),
])
def test_transpose_conv_bias_refused_by_name(kw: dict[str, object], match: str) -> None:
    args = {"in_hw": (4, 5), "kernel": (2, 2), "stride": (2, 2), "padding": 1, **kw}
    with pytest.raises(UnsupportedError, match=match) as info:
        load_model_bytes(_tconv_bias(**args))  # type: ignore[arg-type]
    assert info.value.hint and "TRANSPOSE_CONV" in info.value.hint
