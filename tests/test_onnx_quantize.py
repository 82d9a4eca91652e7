"""`nnopt quantize MODEL.onnx --calibration DATA.npz -o MODEL_int8.onnx`: onnxruntime's
quantize_static with MCU defaults; the result imports as int8 ops with per-channel
weights and runs in nnopt close to onnxruntime on the same quantised model."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from nnopt.cli import main
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.harness import run_nnopt
from nnopt.testing.onnx_oracle import output_steps, qdq_steps, run_onnxruntime
from support import onnx_models

pytest.importorskip("onnxruntime")


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    src = tmp_path / "cnn.onnx"
    src.write_bytes(onnx_models.cnn_model())
    cal = tmp_path / "cal.npz"
    rng = np.random.default_rng(0)
    np.savez(cal, input=rng.standard_normal((16, 1, 3, 16, 16)).astype(np.float32))
    return src, cal, tmp_path / "cnn_int8.onnx"


def _steps_off(model: bytes, shape: tuple[int, ...], *, seeds: int) -> np.ndarray:
    """How far nnopt's output is from onnxruntime's, in steps of the output's
    quantisation, on standard normal inputs of ``shape`` (one a seed)."""
    step = output_steps(model)[0]
    assert step is not None
    errs = []
    for seed in range(seeds):
        x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        got, _ = run_nnopt(model, [x])
        errs.append(qdq_steps(got[0], run_onnxruntime(model, [x])[0], step))
    return np.concatenate(errs)


def test_quantize_then_run_int8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, cal, out = _files(tmp_path)
    assert main(["quantize", str(src), "--calibration", str(cal), "-o", str(out)]) == 0
    assert "calibrated on 16 sample(s)" in capsys.readouterr().out
    model = out.read_bytes()
    g = load_model_bytes(model)
    convs = [op for op in g.ops if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D")]
    assert len(convs) == 3
    for op in convs:
        w = g.tensors[op.inputs[1]]
        assert g.tensors[op.inputs[0]].dtype.name == "INT8" and w.dtype.name == "INT8"
        assert w.quant is not None and w.quant.per_channel and set(w.quant.zero_point) == {0}
    assert g.tensors[g.inputs[0]].dtype.name == "FLOAT32"  # float interface kept
    assert _steps_off(model, (1, 3, 16, 16), seeds=5).max() <= 2 + 1e-4


def test_quantize_bad_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, _, out = _files(tmp_path)
    bad = tmp_path / "bad.npz"
    np.savez(bad, input=np.zeros((4, 3, 8, 8), np.float32))
    assert main(["quantize", str(src), "--calibration", str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "has shape [4, 3, 8, 8]" in err and "hint:" in err
    assert main(["quantize", str(src), "--calibration", str(tmp_path / "none.npz"),
                 "-o", str(out)]) == 1
    assert "calibration file not found" in capsys.readouterr().err
    assert not out.exists()


def test_quantize_names_onnxruntime_when_missing(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    src, cal, out = _files(tmp_path)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    assert main(["quantize", str(src), "--calibration", str(cal), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "needs onnxruntime" in err and "nnopt[quantize]" in err


def test_quantized_decoder_runs_conv_transpose_and_resize_in_int8(tmp_path: Path) -> None:
    src = tmp_path / "dec.onnx"
    src.write_bytes(onnx_models.decoder_model())
    cal = tmp_path / "cal.npz"
    np.savez(cal, input=np.random.default_rng(0).standard_normal((16, 1, 2, 6, 5)).astype(
        np.float32))
    out = tmp_path / "dec_int8.onnx"
    assert main(["quantize", str(src), "--calibration", str(cal), "-o", str(out)]) == 0
    model = out.read_bytes()
    g = load_model_bytes(model)
    convs = [op for op in g.ops if op.opcode == "CONV_2D"]
    assert len(convs) == 3 and all(g.tensors[op.outputs[0]].dtype.name == "INT8"
                                   for op in convs)
    e = _steps_off(model, (1, 2, 6, 5), seeds=4)
    assert np.mean(e <= 0.5 + 1e-4) >= 0.9 and e.max() <= 2 + 1e-4
