"""`nnopt convert MODEL.onnx -o MODEL.tflite`: the .tflite run by the tflite-micro
interpreter is bit-exact with `nnopt run` (generated C) on the ONNX model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import MODELS
from nnopt.cli import main
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.harness import run_nnopt, run_tflm
from support import onnx_models

SHARED = [f"{n}{q}" for n in ("lenet5_b", "mlp_ae_b", "mobilenetish_b", "resnetish_b",
                              "unetish_b") for q in ("", "_qdq")]


def _convert_and_compare(tmp_path: Path, onnx_bytes: bytes) -> None:
    src = tmp_path / "m.onnx"
    src.write_bytes(onnx_bytes)
    dst = tmp_path / "m.tflite"
    assert main(["convert", str(src), "-o", str(dst)]) == 0
    tfl = dst.read_bytes()
    assert tfl[4:8] == b"TFL3"
    g_onnx, g_tfl = load_model_bytes(onnx_bytes), load_model_bytes(tfl)
    for a, b in ((g_onnx.inputs, g_tfl.inputs), (g_onnx.outputs, g_tfl.outputs)):
        assert [(g_onnx.tensors[t].shape, g_onnx.tensors[t].dtype) for t in a] == \
            [(g_tfl.tensors[t].shape, g_tfl.tensors[t].dtype) for t in b]
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal(g_onnx.tensors[t].shape).astype(np.float32)
          for t in g_onnx.inputs]
    ref, _ = run_tflm(tfl, xs)
    got, _ = run_nnopt(onnx_bytes, xs)
    assert len(ref) == len(got)
    for r, g in zip(ref, got, strict=True):
        assert np.asarray(r).tobytes() == g.tobytes()


@pytest.mark.parametrize("build", [onnx_models.cnn_model, onnx_models.lenet_like_model,
                                   onnx_models.sequence_model, onnx_models.decoder_model,
                                   onnx_models.gather_model],
                         ids=["cnn", "lenet_like", "sequence", "decoder", "gather"])
def test_convert_helper_models_bit_exact_in_tflm(tmp_path: Path, build) -> None:  # type: ignore[no-untyped-def]
    _convert_and_compare(tmp_path, build())


@pytest.mark.parametrize("name", SHARED)
def test_convert_shared_models_bit_exact_in_tflm(tmp_path: Path, name: str) -> None:
    path = MODELS / "onnx" / f"{name}.onnx"
    if not path.is_file():
        pytest.skip(f"{path} not found (the shared models are not here)")
    _convert_and_compare(tmp_path, path.read_bytes())


def test_wide_concat_and_reflect_pad_run_in_tflm(tmp_path: Path) -> None:
    """TFLM's CONCATENATION takes at most 10 inputs: wider ones are imported as trees
    (so the converted file runs in the interpreter, bit-exactly as nnopt runs the ONNX
    model); a 'reflect' Pad is TFLite's MIRROR_PAD, its mode written into the file."""
    from nnopt.frontend.onnx.builder import MAX_CONCAT_INPUTS
    from nnopt.ir import MirrorPadOptions

    model = onnx_models.wide_concat_model()
    g = load_model_bytes(model)
    cats = [op for op in g.ops if op.opcode == "CONCATENATION"]
    assert len(cats) > 2 and max(len(op.inputs) for op in cats) <= MAX_CONCAT_INPUTS
    (mirror,) = [op for op in g.ops if op.opcode == "MIRROR_PAD"]
    assert mirror.options == MirrorPadOptions("REFLECT")
    _convert_and_compare(tmp_path, model)
    back = load_model_bytes((tmp_path / "m.tflite").read_bytes())
    assert [op.options for op in back.ops if op.opcode == "MIRROR_PAD"] == [mirror.options]


def test_convert_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "d.onnx"
    src.write_bytes(onnx_models.dynamic_model())
    assert main(["convert", str(src), "-o", str(tmp_path / "d.tflite")]) == 1
    assert "--input-shape" in capsys.readouterr().err
    assert not (tmp_path / "d.tflite").exists()
    assert main(["convert", str(src), "-o", str(tmp_path / "d.tflite"),
                 "--input-shape", "input=1,3,10,10"]) == 0
