"""Bad ONNX input: each a clear NnoptError with a hint, exit 1, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from nnopt.cli import main
from support import onnx_models


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = main(list(args))
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return rc, err


def _write(tmp_path: Path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_not_onnx_nor_tflite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _run(capsys, "optimize", _write(tmp_path, "m.onnx", b"hello, world\n"),
                   "--table", "none")
    assert rc == 1
    assert "neither a TFLite model" in err and "nor an ONNX model" in err
    assert "hint:" in err and "torch.onnx.export" in err


@pytest.mark.parametrize("fraction", [0.02, 0.3, 0.5, 0.9, 0.999])
def test_truncated_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                        fraction: float) -> None:
    data = onnx_models.cnn_model()
    cut = data[:max(8, int(len(data) * fraction))]
    rc, err = _run(capsys, "optimize", _write(tmp_path, "t.onnx", cut), "--table", "none")
    assert rc == 1
    assert "corrupt or truncated" in err or "not a valid ONNX model" in err, err
    assert "hint:" in err


def test_unsupported_op_named_with_its_node(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _run(capsys, "run", _write(tmp_path, "u.onnx", onnx_models.unsupported_model()),
                   "--seed", "1")
    assert rc == 1
    assert "Erf (node 'Erf_2')" in err
    assert "hint: supported ONNX operators:" in err and "Conv" in err and "Gemm" in err


def test_dynamic_dimensions_need_input_shape(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "d.onnx", onnx_models.dynamic_model())
    rc, err = _run(capsys, "optimize", path, "--table", "none")
    assert rc == 1
    assert "input 'input' has dynamic dimensions [batch, 3, h, w]" in err
    assert "--input-shape input=" in err
    rc, err = _run(capsys, "optimize", path, "--table", "none",
                   "--input-shape", "input=1,3,12,12")
    assert rc == 0, err
    for bad, msg in (("input=1,3", "2 dimensions given"), ("other=1,3,8,8", "not an input"),
                     ("input=1,x,8,8", "is not NAME=D1,D2")):
        rc, err = _run(capsys, "optimize", path, "--table", "none", "--input-shape", bad)
        assert rc == 1 and msg in err and "hint:" in err, err


def test_input_shape_on_a_static_tflite_model(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """.tflite takes --input-shape too (dynamic models: tests/test_realworld.py); a
    static input keeps its shape, another one is refused by name."""
    from support.tflite_builder import unary_model

    path = _write(tmp_path, "m.tflite", unary_model("RELU", (1, 4)))
    rc, err = _run(capsys, "optimize", path, "--table", "none", "--input-shape",
                   "input=1,4")
    assert rc == 0, err
    for bad, msg in (("input=1,5", "only its -1 dimensions may change"),
                     ("x=1,4", "the model has no input of that name")):
        rc, err = _run(capsys, "optimize", path, "--input-shape", bad)
        assert rc == 1 and msg in err and "hint:" in err, err


@pytest.mark.parametrize("opset", [5, 22])
def test_opset_outside_6_to_21(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               opset: int) -> None:
    rc, err = _run(capsys, "optimize", _write(tmp_path, "o.onnx",
                                              onnx_models.opset_model(opset)))
    assert rc == 1
    assert f"uses ONNX opset {opset}; nnopt reads opsets 6 to 21" in err and "hint:" in err


@pytest.mark.parametrize("opset", [6, 9, 13, 21])
def test_opsets_in_range_are_upgraded_and_import(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 opset: int) -> None:
    rc, err = _run(capsys, "optimize", _write(tmp_path, "o.onnx",
                                              onnx_models.opset_model(opset)), "--table", "none")
    assert rc == 0, err


def test_input_value_pins_an_input_and_bad_values_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from support import onnx_recurrent

    path = _write(tmp_path, "if.onnx", onnx_recurrent.if_loop_model())
    out = str(tmp_path / "if.tflite")
    rc, err = _run(capsys, "convert", path, "-o", out)
    assert rc == 1 and "If node 'If_mode'" in err and "--input-value" in err
    rc, err = _run(capsys, "convert", path, "-o", out, "--input-value", "mode=1")
    assert rc == 0 and Path(out).is_file()
    for bad, why in (("mode", "is not NAME=V1"), ("rate=1", "not an input"),
                     ("mode=0.5", "not integers")):
        rc, err = _run(capsys, "convert", path, "-o", out, "--input-value", bad)
        assert rc != 0 and why in err and "hint:" in err, err


def test_input_value_on_a_tflite_model_is_refused_by_name(capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    """--input-value pins ONNX inputs only; a .tflite model is refused naming the option
    (exit 1, no traceback), not silently planned without the pin."""
    model = Path(__file__).resolve().parents[1] / "models" / "vww_96_int8.tflite"
    rc, err = _run(capsys, "optimize", str(model), "-o", str(tmp_path),
                   "--input-value", "input=1")
    assert rc == 1
    assert "--input-value applies to ONNX models only" in err
    assert not list(tmp_path.iterdir())
