"""Real-world .tflite models (issue 24, ../shared/models/realworld/) and the front-end
features they need: float16 weights expanded at build time (their DEQUANTIZE folded),
MediaPipe's custom Convolution2DTransposeBias on TRANSPOSE_CONV.

TFLM refuses both MediaPipe models (its DEQUANTIZE takes no float16 input; it has no
Convolution2DTransposeBias), so their oracle is the full TFLite runtime
(``ai-edge-litert``): its reference kernels where they run the model (the face detector:
nnopt is bit-exact with them), else its default XNNPACK delegate (the only LiteRT
kernel of Convolution2DTransposeBias: within :data:`XNNPACK_ATOL` of it, XNNPACK's own
float summation order). The models TFLM runs are in the TFLM tests (conftest's
ALL_MODELS: test_models_bitexact, test_models_qemu, ops/test_sequence).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import LITERT_MODELS, model_path
from nnopt.cli import main
from nnopt.errors import NnoptError, UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.harness import random_inputs, run_litert, run_nnopt
from support.markers import needs_qemu
from support.tflite_builder import ModelBuilder

#: the tests that compare with LiteRT skip without it (the others run)
needs_litert = pytest.mark.skipif(
    importlib.util.find_spec("ai_edge_litert") is None,
    reason="ai-edge-litert (the LiteRT oracle) not installed: pip install -e '.[dev]'")

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


@needs_litert
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


@needs_litert
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


def _float16_fc(direct: bool = False, activation: bool = False) -> bytes:
    """x [1,3] float32 -> FULLY_CONNECTED with float16 weights [2,3] and bias [2] (each
    a DEQUANTIZE of a FLOAT16 constant, as TF's float16 quantisation writes them); with
    ``direct`` the FC reads the float16 weights itself; ``activation``: the input is
    float16."""
    b = ModelBuilder("float16")
    x = b.tensor((1, 3), "float16" if activation else "float32", name="x")
    w16 = b.const(W16, name="w16")
    b16 = b.const(np.array([0.5, -1.0], np.float16), name="b16")
    w, bias = b.tensor((2, 3), "float32", name="w"), b.tensor((2,), "float32", name="b")
    b.op("DEQUANTIZE", [w16], [w])
    b.op("DEQUANTIZE", [b16], [bias])
    y = b.tensor((1, 2), "float32", name="y")
    b.op("FULLY_CONNECTED", [x, w16 if direct else w, bias], [y])
    return b.build([x], [y])


@needs_litert
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
    ({"direct": True}, r"op 2 \(FULLY_CONNECTED\) reads float16 tensor 1 \(w16\)"),
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


@needs_litert
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


# ----- dynamic shapes (--input-shape on a .tflite model) -----

def mel_model(n: int | None) -> bytes:
    """A mel front end like openWakeWord's (framing RESHAPE, a strided CONV_2D as the
    STFT, power, a mel filterbank FC, log, and a MEAN over time): ``n=None`` dynamic,
    stored at [1,1] with signature [-1,-1] as TF's converter writes it (every tensor
    after it -1 in its time dimension); else static at input [1,n] (TFLM runs that)."""
    rng = np.random.default_rng(24)
    dyn = n is None
    m = 1 if dyn else n
    frames = max(1, (m - 8) // 4 + 1)
    b = ModelBuilder("mel_like")

    def t(shape: tuple[int, ...], sig: tuple[int, ...], name: str) -> int:
        return b.tensor(shape, "float32", name=name, signature=sig if dyn else None)

    x = t((1, m), (-1, -1), "input")
    r = t((1, 1, m, 1), (-1, 1, -1, 1), "framed")
    b.op("RESHAPE", [x, b.const(np.array([1, 1, -1, 1], np.int32))], [r])
    w = b.const(rng.standard_normal((16, 1, 8, 1)).astype(np.float32) * 0.3)
    bias = b.const(rng.standard_normal(16).astype(np.float32) * 0.1)
    c = t((1, 1, frames, 16), (-1, 1, -1, 16), "stft")
    b.op("CONV_2D", [r, w, bias], [c], {"padding": "VALID", "stride_h": 1, "stride_w": 4})
    p = t((1, 1, frames, 16), (-1, 1, -1, 16), "power")
    b.op("MUL", [c, c], [p])
    mel = t((frames, 8), (-1, 8), "mel")
    b.op("FULLY_CONNECTED", [p, b.const(np.abs(rng.standard_normal((8, 16))).astype(
        np.float32)), -1], [mel])
    e = t((frames, 8), (-1, 8), "eps")
    b.op("ADD", [mel, b.const(np.full((1, 8), 1e-6, np.float32))], [e])
    lg = t((frames, 8), (-1, 8), "log")
    b.op("LOG", [e], [lg])
    y = t((1, 1, frames, 8), (-1, 1, -1, 8), "output")
    b.op("RESHAPE", [lg, b.const(np.array([1, 1, -1, 8], np.int32))], [y])
    mean = t((1, 1, 1, 8), (-1, 1, 1, 8), "mean")
    b.op("MEAN", [y, b.const(np.array([2], np.int32))], [mean], {"keep_dims": True})
    return b.build([x], [y, mean])


MEL = mel_model(None)


def test_dynamic_model_takes_its_shapes_from_input_shape() -> None:
    g = load_model_bytes(MEL, input_shapes={"input": (1, 1280)})
    static = load_model_bytes(mel_model(1280))
    assert [t.shape for t in g.tensors] == [t.shape for t in static.tensors]
    assert [g.tensors[t].shape for t in g.outputs] == [(1, 1, 319, 8), (1, 1, 1, 8)]


@needs_litert
def test_dynamic_model_runs_as_tflm_runs_its_static_twin() -> None:
    """Bit-exact with TFLM on the same network stored at [1,1280], within float32
    rounding of LiteRT's reference kernels on the dynamic file resized."""
    from nnopt.planner import plan_model
    from nnopt.runner import run_planned
    from nnopt.testing.harness import run_tflm

    x = np.random.default_rng(5).standard_normal((1, 1280)).astype(np.float32)
    pm = plan_model(load_model_bytes(MEL, input_shapes={"input": (1, 1280)}))
    res = run_planned(pm, [x.tobytes()], target="host")
    got = [np.frombuffer(d, np.float32) for d in res.outputs]
    tflm, _ = run_tflm(mel_model(1280), [x])
    for a, b in zip(got, tflm, strict=True):
        np.testing.assert_array_equal(a, b.reshape(-1))
    for a, b in zip(got, run_litert(MEL, [x])[0], strict=True):
        assert b.shape in ((1, 1, 319, 8), (1, 1, 1, 8))
        np.testing.assert_allclose(a, b.reshape(-1), rtol=1e-5, atol=1e-6)


def test_optimize_takes_input_shape_for_tflite(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "mel.tflite"
    model.write_bytes(MEL)
    assert main(["optimize", str(model), "--table", "none"]) == 1
    err = capsys.readouterr().err
    assert "graph input 0 (input) has a dynamic shape (stored [1, 1], signature " \
           "[-1, -1])" in err and "--input-shape input=" in err
    assert main(["optimize", str(model), "--table", "none", "--input-shape",
                 "input=1,1280"]) == 0


def _space_to_depth_dynamic(static_input: bool = False) -> bytes:
    b = ModelBuilder("s2d")
    x = b.tensor((1, 2, 2, 1), "float32", name="x",
                 signature=None if static_input else (1, -1, -1, 1))
    y = b.tensor((1, 1, 1, 4), "float32", name="y", signature=(1, -1, -1, 4))
    b.op("SPACE_TO_DEPTH", [x], [y], {"block_size": 2})
    return b.build([x], [y])


@pytest.mark.parametrize("model, shapes, match", [
    (MEL, {"input": (1, 4)}, r"op 1 \(CONV_2D\): at the --input-shape sizes extent 4 is "
     "smaller than the window 8"),
    (MEL, {"input": (1, 2, 640)}, r"shape \[1, 2, 640\] does not fit tensor 0"),
    (MEL, {"audio": (1, 1280)}, "the model has no input of that name"),
    (_space_to_depth_dynamic(), {"x": (1, 4, 4, 1)},
     r"op 0 \(SPACE_TO_DEPTH\): nnopt cannot infer its output shape"),
    (_space_to_depth_dynamic(True), {}, r"op 0 \(SPACE_TO_DEPTH\): nnopt cannot infer "
     r"its output shape \(its output is dynamic: shape signature \[1, -1, -1, 4\]\)"),
    (MEL, {}, r"graph input 0 \(input\) has a dynamic shape"),
], ids=["too-short", "rank", "name", "no-shape-function", "dynamic-output", "no-input-shape"])
def test_dynamic_shapes_refused_by_name(model: bytes, shapes: dict[str, tuple[int, ...]],
                                        match: str) -> None:
    from nnopt.errors import NnoptError

    with pytest.raises(NnoptError, match=match) as info:
        load_model_bytes(model, input_shapes=shapes)
    assert info.value.hint


# ----- DENSIFY (sparse weights) -----

def _sparse_fc(dense: np.ndarray, half: bool = False, **fmt: Any) -> bytes:
    """x [2, IN] -> FULLY_CONNECTED whose weights [OUT, IN] are DENSIFY of ``dense`` in
    the sparse format ``fmt`` (support.sparse.encode); ``half``: stored float16, then
    DEQUANTIZE (MediaPipe's full-range detector's chain)."""
    from support.sparse import encode

    dt = "float16" if half else "float32"
    values, sp = encode(dense.astype(dt), **fmt)
    b = ModelBuilder("densify")
    x = b.tensor((2, dense.shape[1]), "float32", name="x")
    ws = b.tensor(dense.shape, dt, name="w_sparse", data=values, sparsity=sp)
    w = b.tensor(dense.shape, dt, name="w_dense")
    b.op("DENSIFY", [ws], [w])
    if half:
        w32 = b.tensor(dense.shape, "float32", name="w")
        b.op("DEQUANTIZE", [w], [w32])
        w = w32
    y = b.tensor((2, dense.shape[0]), "float32", name="y")
    b.op("FULLY_CONNECTED", [x, w, -1], [y])
    return b.build([x], [y])


def _sparse_weights(shape: tuple[int, ...], seed: int, block: int = 1) -> np.ndarray:
    """Random weights with about 60 % zeros (in blocks of ``block`` along axis 1)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape).astype(np.float32)
    keep = rng.random((shape[0], shape[1] // block)) < 0.4
    keep[0] = False  # an empty row: a segment with no entry
    return w * np.repeat(keep, block, axis=1)


DENSIFY_CASES = {
    "csr": ({}, dict(traversal_order=(0, 1), sparse_levels=(1,))),
    "csc-uint16": ({}, dict(traversal_order=(1, 0), sparse_levels=(1,),
                            index_type="uint16")),
    "both-sparse-uint8": ({}, dict(traversal_order=(0, 1), sparse_levels=(0, 1),
                                   index_type="uint8")),
    "block4": ({"block": 4}, dict(traversal_order=(0, 1, 2), block_map=(1,),
                                  block_sizes=(4,), sparse_levels=(1,))),
}


@needs_litert
@pytest.mark.parametrize("case", sorted(DENSIFY_CASES))
@pytest.mark.parametrize("half", [False, True], ids=["float32", "float16"])
def test_densify_matches_litert(case: str, half: bool) -> None:
    wkw, fmt = DENSIFY_CASES[case]
    dense = _sparse_weights((6, 16), 3, **wkw)
    data = _sparse_fc(dense, half, **fmt)
    g = load_model_bytes(data)
    (op,) = g.ops
    w = g.tensors[op.inputs[1]]
    want_w = dense.astype(np.float16).astype(np.float32) if half else dense
    np.testing.assert_array_equal(w.array(), want_w)
    kinds = {e.kind: e for e in g.expansions}
    assert kinds["densify"].tensors == 1
    assert kinds["densify"].rom_bytes == dense.size * (2 if half else 4)
    x = np.random.default_rng(4).standard_normal((2, 16)).astype(np.float32)
    (got,), _ = run_nnopt(data, [x])
    (want,) = run_litert(data, [x])[0]
    np.testing.assert_array_equal(got, want)


def test_densify_refuses_corrupt_metadata() -> None:
    from nnopt.errors import ModelError
    from nnopt.tflite_builder import SparseLevel, Sparsity

    dense = _sparse_weights((6, 16), 3)
    b = ModelBuilder("bad")
    x = b.tensor((2, 16), "float32", name="x")
    sp = Sparsity((0, 1), (), (SparseLevel(6), SparseLevel(0, (0, 2, 40, 40, 40, 40, 40),
                                                            (1, 3), "int32")))
    ws = b.tensor(dense.shape, "float32", name="w_sparse", data=np.ones(2, np.float32),
                  sparsity=sp)
    w = b.tensor(dense.shape, "float32", name="w")
    b.op("DENSIFY", [ws], [w])
    y = b.tensor((2, 6), "float32", name="y")
    b.op("FULLY_CONNECTED", [x, w, -1], [y])
    with pytest.raises(ModelError, match=r"tensor 1 \(w_sparse\): sparsity parameters "
                       r"level 1 \(SPARSE_CSR\) has segments out of range"):
        load_model_bytes(b.build([x], [y]))


def test_densify_of_run_time_data_is_refused() -> None:
    b = ModelBuilder("densify_activation")
    x = b.tensor((2, 3), "float32", name="x")
    y = b.tensor((2, 3), "float32", name="y")
    b.op("DENSIFY", [x], [y])
    with pytest.raises(UnsupportedError, match=r"op 0 \(DENSIFY\) does not read one "
                       "sparse constant"):
        load_model_bytes(b.build([x], [y]))


# ----- IF whose branches take the enclosing graph's tensors -----

def _oww_if_branch(kind: str) -> tuple[ModelBuilder, list[int], list[int]]:
    """A branch as TF's converter outlines ``tf.cond``: the tensors it reads from the
    enclosing graph (the features and a constant weight) are its inputs. The then
    branch declares the features flat ([1,1536]: TFLM copies the bytes, checking only
    their count) and returns them as they came; else returns them at [1,16,96]."""
    s = ModelBuilder()
    w = s.tensor((8, 96), "float32")
    y = s.tensor((1, 8), "float32")
    f2 = s.tensor((16, 96), "float32")
    z = s.tensor((16, 8), "float32")
    if kind == "then":
        x = s.tensor((1, 1536), "float32")
        s.op("RESHAPE", [x, s.const(np.array([16, 96], np.int32))], [f2])
        s.op("FULLY_CONNECTED", [f2, w, -1], [z])
        s.op("SUM", [z, s.const(np.array([0], np.int32))], [y], {"keep_dims": False})
        return s, [x, w], [y, x]
    x = s.tensor((1, 16, 96), "float32")
    s.op("RESHAPE", [x, s.const(np.array([16, 96], np.int32))], [f2])
    s.op("FULLY_CONNECTED", [f2, w, -1], [z])
    s.op("MEAN", [z, s.const(np.array([0], np.int32))], [y], {"keep_dims": False})
    return s, [x, w], [y, x]


def oww_if_model() -> bytes:
    """Three subgraphs like openWakeWord's classifier: IF(c, features, weight) -> (score,
    features), then a RESHAPE of the IF's features output and a LOGISTIC of its score."""
    b = ModelBuilder("oww_if")
    x = b.tensor((1, 16, 96), "float32", name="x")
    c = b.tensor((), "bool", name="c")
    w = b.const(np.random.default_rng(0).standard_normal((8, 96)).astype(np.float32),
                name="w")
    y = b.tensor((1, 8), "float32", name="y")
    xo = b.tensor((1, 16, 96), "float32", name="xo")
    b.op("IF", [c, x, w], [y, xo], {"then_subgraph_index": b.add_subgraph(*_oww_if_branch(
        "then")), "else_subgraph_index": b.add_subgraph(*_oww_if_branch("else"))})
    r = b.tensor((1, 1536), "float32", name="r")
    b.op("RESHAPE", [xo, b.const(np.array([1, 1536], np.int32))], [r])
    o = b.tensor((1, 8), "float32", name="o")
    b.op("LOGISTIC", [y], [o])
    return b.build([x, c], [o, r])


OWW_IF = oww_if_model()


def _if_steps() -> list[list[np.ndarray]]:
    rng = np.random.default_rng(1)
    return [[rng.standard_normal((1, 16, 96)).astype(np.float32), np.array(k % 2 == 0)]
            for k in range(4)]


def _assert_if_bit_exact(target: str) -> None:
    from nnopt.testing.harness import run_nnopt_invocations, run_tflm_invocations

    steps = _if_steps()
    ref = run_tflm_invocations(OWW_IF, steps)
    got = run_nnopt_invocations(OWW_IF, steps, target=target)
    for k, (r, g) in enumerate(zip(ref, got, strict=True)):
        for a, b in zip(r, g, strict=True):
            np.testing.assert_array_equal(b, a.reshape(b.shape), err_msg=f"invocation {k}")
    assert not np.array_equal(ref[0][0], ref[1][0])  # both branches ran


def test_if_branches_reading_the_enclosing_graph_bit_exact() -> None:
    g = load_model_bytes(OWW_IF)
    assert not any(op.opcode == "IF" for op in g.ops)
    _assert_if_bit_exact("host")


@pytest.mark.qemu
@needs_qemu
def test_if_branches_reading_the_enclosing_graph_on_cortex_m7() -> None:
    _assert_if_bit_exact("qemu-m7")


def test_if_branch_of_another_size_refused_by_name() -> None:
    s = ModelBuilder()
    x = s.tensor((1, 10), "float32")
    y = s.tensor((1, 10), "float32")
    s.op("RELU", [x], [y])
    b = ModelBuilder("if_bad")
    xi = b.tensor((1, 12), "float32", name="x")
    c = b.tensor((), "bool", name="c")
    yo = b.tensor((1, 12), "float32", name="y")
    k = b.add_subgraph(s, [x], [y])
    b.op("IF", [c, xi], [yo], {"then_subgraph_index": k, "else_subgraph_index": k})
    with pytest.raises(UnsupportedError, match=r"input 0 \(t0\) differs in dtype, size or "
                       "quantisation from IF input 0"):
        load_model_bytes(b.build([xi, c], [yo]))


# ----- zero-element constants: RESHAPE to a scalar (issue 44) -----

def _scalar_branch(kind: str) -> tuple[ModelBuilder, list[int], list[int]]:
    """A branch that squeezes its [1, 1] score to a scalar (RESHAPE with the shape
    operand ``[]``: a constant of shape [0] with an empty buffer) and back."""
    s = ModelBuilder()
    x = s.tensor((1, 1), "float32")
    r = s.tensor((), "float32")
    s.op("RESHAPE", [x, s.const(np.zeros((0,), np.int32))], [r])
    y = s.tensor((), "float32")
    s.op("LOGISTIC" if kind == "then" else "TANH", [r], [y])
    o = s.tensor((1, 1), "float32")
    s.op("RESHAPE", [y, s.const(np.array([1, 1], np.int32))], [o])
    return s, [x], [o]


def scalar_if_model() -> bytes:
    """As openWakeWord's classifier writes its IF: the condition is
    ``RESHAPE(GREATER_EQUAL(score, 0), shape=[])`` with the shape a constant of shape [0]
    and an empty buffer (TF's converter's squeeze to a scalar); the branches reshape to
    a scalar too."""
    b = ModelBuilder("scalar_if")
    x = b.tensor((1, 4), "float32", name="x")
    s = b.tensor((1, 1), "float32", name="s")
    b.op("SUM", [x, b.const(np.array([1], np.int32))], [s], {"keep_dims": True})
    g = b.tensor((1, 1), "bool", name="g")
    b.op("GREATER_EQUAL", [s, b.const(np.zeros((1, 1), np.float32))], [g])
    c = b.tensor((), "bool", name="c")
    b.op("RESHAPE", [g, b.const(np.zeros((0,), np.int32), name="empty_shape")], [c])
    y = b.tensor((1, 1), "float32", name="y")
    b.op("IF", [c, s], [y], {"then_subgraph_index": b.add_subgraph(*_scalar_branch("then")),
                             "else_subgraph_index": b.add_subgraph(*_scalar_branch("else"))})
    return b.build([x], [y, c])


SCALAR_IF = scalar_if_model()


def test_zero_element_constant_is_a_constant() -> None:
    g = load_model_bytes(SCALAR_IF)
    (empty,) = [t for t in g.tensors if t.name == "empty_shape"]
    assert empty.shape == (0,) and empty.data == b""
    assert not any(op.opcode == "IF" for op in g.ops)
    assert [g.tensors[t].shape for t in g.outputs] == [(1, 1), ()]


def _assert_scalar_if_bit_exact(target: str) -> None:
    from nnopt.testing.harness import run_nnopt_invocations, run_tflm_invocations

    rng = np.random.default_rng(7)
    steps = [[(rng.standard_normal((1, 4)) + (-1) ** k).astype(np.float32)]
             for k in range(6)]
    ref = run_tflm_invocations(SCALAR_IF, steps)
    got = run_nnopt_invocations(SCALAR_IF, steps, target=target)
    for k, (r, o) in enumerate(zip(ref, got, strict=True)):
        for a, b in zip(r, o, strict=True):
            np.testing.assert_array_equal(b, a.reshape(b.shape), err_msg=f"invocation {k}")
    assert {bool(r[1]) for r in ref} == {True, False}  # both branches taken


def test_reshape_to_scalar_in_main_graph_and_branches_bit_exact() -> None:
    _assert_scalar_if_bit_exact("host")


@pytest.mark.qemu
@needs_qemu
def test_reshape_to_scalar_in_main_graph_and_branches_on_cortex_m7() -> None:
    _assert_scalar_if_bit_exact("qemu-m7")


def test_zero_element_tensor_that_an_op_writes_stays_an_activation() -> None:
    """Only a zero-element tensor nothing writes is a constant: a graph input of shape
    [0] is still an input (and refused by name, not taken for a constant)."""
    b = ModelBuilder("empty_in")
    x = b.tensor((0,), "int32", name="x")
    y = b.tensor((1, 1), "float32", name="y")
    w = b.tensor((1, 1), "float32", name="w")
    b.op("RESHAPE", [w, x], [y])
    g_bytes = b.build([x, w], [y])
    try:
        g = load_model_bytes(g_bytes)
    except NnoptError:
        return
    assert not g.tensors[x].is_constant


def _empty_operand_model(kind: str) -> bytes:
    b = ModelBuilder(f"empty_{kind}")
    x = b.tensor((1, 4), "float32", name="x")
    y = b.tensor((1, 4), "float32", name="y")
    if kind == "concat":
        b.op("CONCATENATION", [x, b.const(np.zeros((1, 0), np.float32))], [y], {"axis": 1})
    else:  # an empty axes list: the identity
        b.op(kind.upper(), [x, b.const(np.zeros((0,), np.int32))], [y], {"keep_dims": True})
    return b.build([x], [y])


@pytest.mark.parametrize("kind", ["mean", "sum", "concat"])
def test_empty_axes_and_empty_operands_bit_exact(kind: str) -> None:
    from nnopt.testing.harness import run_nnopt_invocations, run_tflm_invocations

    data = _empty_operand_model(kind)
    steps = [[np.random.default_rng(1).standard_normal((1, 4)).astype(np.float32)]]
    ref = run_tflm_invocations(data, steps)
    got = run_nnopt_invocations(data, steps)
    np.testing.assert_array_equal(got[0][0], ref[0][0])


def test_malformed_zero_element_constants_refused_cleanly() -> None:
    b = ModelBuilder("empty_add")
    x = b.tensor((1, 4), "float32", name="x")
    y = b.tensor((1, 4), "float32", name="y")
    b.op("ADD", [x, b.const(np.zeros((0,), np.float32))], [y])
    from nnopt.planner import PlanOptions, plan_model
    with pytest.raises(UnsupportedError, match="do not broadcast"):
        plan_model(load_model_bytes(b.build([x], [y])), PlanOptions())
    b = ModelBuilder("empty_out")
    x = b.tensor((1, 4), "float32", name="x")
    y = b.tensor((1, 4), "float32", name="y")
    e = b.tensor((0,), "float32", name="e")
    b.op("RELU", [x], [y])
    with pytest.raises(NnoptError, match="graph output 2 is never produced"):
        load_model_bytes(b.build([x], [y, e]))


# ----- the wake-word models TFLM runs: state carried over invocations -----

STREAMING = ["realworld/mww_okay_nabu_v1.tflite", "realworld/oww_hey_rhasspy_v0.1.tflite"]


def _assert_streaming_bit_exact(rel: str, target: str, invocations: int = 10) -> None:
    """``invocations`` runs of one program (microWakeWord's resource variables carry its
    streaming state) against one TFLM interpreter: every output equal."""
    from nnopt.boards import load_board
    from nnopt.inputs import random_inputs as graph_inputs
    from nnopt.testing.harness import run_nnopt_invocations, run_tflm_invocations

    data = model_path(rel).read_bytes()
    g = load_model_bytes(data)
    steps = [graph_inputs(g, seed) for seed in range(invocations)]
    ref = run_tflm_invocations(data, steps)
    kw = {} if target == "host" else {"board": load_board("nucleo_f767zi")}
    got = run_nnopt_invocations(data, steps, target=target, **kw)
    for k, (r, o) in enumerate(zip(ref, got, strict=True)):
        for a, b in zip(r, o, strict=True):
            np.testing.assert_array_equal(b, a.reshape(b.shape), err_msg=f"invocation {k}")
    assert len({r[0].tobytes() for r in ref}) > 1  # the outputs move with the state/input


@pytest.mark.parametrize("rel", STREAMING, ids=lambda r: Path(r).stem)
def test_wake_word_models_over_invocations_on_host(rel: str) -> None:
    _assert_streaming_bit_exact(rel, "host")


@pytest.mark.qemu
@needs_qemu
@pytest.mark.parametrize("rel", STREAMING, ids=lambda r: Path(r).stem)
def test_wake_word_models_over_invocations_on_cortex_m7(rel: str) -> None:
    _assert_streaming_bit_exact(rel, "qemu-m7")


def test_shape_functions_agree_with_every_shared_model() -> None:
    """Every op of every shared model with a shape function (or an element-wise trait):
    the output shapes inferred from its stored input shapes are the stored ones."""
    from conftest import ALL_MODELS
    from nnopt.ops import DEFINITIONS
    from nnopt.ops.shapes import ShapeError, ShapeQuery, output_shapes

    if not ALL_MODELS:
        pytest.skip("shared models not found")
    checked: dict[str, int] = {}
    for rel in (*ALL_MODELS, *LITERT_MODELS):
        g = load_model_bytes(model_path(rel).read_bytes())
        for op in g.ops:
            d = DEFINITIONS[op.opcode]
            q = ShapeQuery(op, tuple(g.tensors[t].shape if t >= 0 else None
                                     for t in op.inputs),
                           tuple(g.tensors[t].array() if t >= 0 and g.tensors[t].is_constant
                                 else None for t in op.inputs))
            try:
                got = output_shapes(d.infer_shape, d.elementwise, q)
            except ShapeError as err:  # a RESHAPE with its new shape in options only
                assert "no shape operand" in str(err), (rel, op, err)
                continue
            if got is None:
                continue
            assert got == tuple(g.tensors[t].shape for t in op.outputs), (rel, op)
            checked[op.opcode] = checked.get(op.opcode, 0) + 1
    # the definitions with a shape function that the models exercise
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "RESHAPE", "MEAN",
            "CONCATENATION", "AVERAGE_POOL_2D", "MAX_POOL_2D", "PAD", "SOFTMAX",
            "ADD", "MUL"} <= set(checked)


@pytest.mark.qemu
@needs_qemu
def test_build_time_expansions_on_cortex_m7() -> None:
    """The float16, DENSIFY, Convolution2DTransposeBias and dynamic-shape models as M7
    firmware: the host's outputs (each checked against its oracle above), bit for bit."""
    from nnopt.boards import load_board
    from nnopt.planner import PlanOptions, plan_model
    from nnopt.runner import run_planned

    board = load_board("nucleo_f767zi")
    x16 = np.array([[1.0, -0.5, 2.0e-3]], np.float32)
    cases = [
        (_float16_fc(), {}, [x16]),
        (_sparse_fc(_sparse_weights((6, 16), 3, block=4), True,
                    **DENSIFY_CASES["block4"][1]), {},
         [np.random.default_rng(4).standard_normal((2, 16)).astype(np.float32)]),
        (_tconv_bias((4, 5), (4, 4), (2, 2), 1), {},
         [np.random.default_rng(3).standard_normal((1, 4, 5, 3)).astype(np.float32)]),
        (MEL, {"input": (1, 1280)},
         [np.random.default_rng(5).standard_normal((1, 1280)).astype(np.float32)]),
    ]
    for data, shapes, inputs in cases:
        g = load_model_bytes(data, input_shapes=shapes)
        outs = {}
        for target in ("host", "qemu-m7"):
            pm = plan_model(g, PlanOptions(board=board))
            res = run_planned(pm, [x.tobytes() for x in inputs], target=target,
                              board=board)
            outs[target] = res.outputs
            if target == "qemu-m7":
                assert res.instructions is not None and res.instructions > 0
        assert outs["host"] == outs["qemu-m7"]
