"""The TFLite frontend: real models import; bad input is a typed, named error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ALL_MODELS, REFUSED_MODELS, REPO, model_path
from nnopt.cdefs import DType
from nnopt.errors import ModelError, NnoptError, UnsupportedError
from nnopt.frontend.tflite import load_model, load_model_bytes, model_name
from support.tflite_builder import ModelBuilder


@pytest.mark.parametrize("rel", ALL_MODELS)
def test_real_models_import_and_verify(rel: str) -> None:
    g = load_model(model_path(rel))
    g.verify()
    assert g.ops and g.inputs and g.outputs
    for op in g.ops:
        for t in op.outputs:
            assert not g.tensors[t].is_constant


@pytest.mark.parametrize("rel", sorted(REFUSED_MODELS))
def test_unsupported_models_refused_by_name(rel: str) -> None:
    # Models whose operators nnopt has no kernel for yet (../shared/models/families):
    # refused at import with the operators named and the supported list as the hint.
    with pytest.raises(UnsupportedError) as info:
        load_model(model_path(rel))
    assert "does not support" in info.value.message
    assert info.value.hint and "CONV_2D" in info.value.hint


def test_vww_figures_match_anchors() -> None:
    g = load_model(model_path("mlperf_tiny/vww_96_int8.tflite"))
    assert len(g.ops) == 31
    assert g.weight_bytes == 219_072
    assert max(g.op_bound(op) for op in g.ops) == 55_296
    first = g.ops[0]
    assert first.opcode == "CONV_2D"
    w = g.tensors[first.inputs[1]]
    assert w.dtype == DType.INT8 and w.quant is not None and w.quant.per_channel
    assert w.array().shape == w.shape


def test_model_name_is_c_identifier() -> None:
    assert model_name(Path("a/vww-96 int8.tflite")) == "vww_96_int8"
    assert model_name(Path("9lives.tflite")) == "m_9lives"


def _corrupt_variant(name: str) -> bytes:
    """The corruption ``name`` of a real model (built inside the test: a missing model
    skips that test, never the collection)."""
    good = model_path("mlperf_tiny/kws_ref_model.tflite").read_bytes()
    rng = np.random.default_rng(1)
    flipped = bytearray(good)
    flipped[8:64] = rng.integers(0, 256, 56, dtype=np.uint8).tobytes()
    return {
        "empty": b"",
        "tiny": b"TFL",
        "png": b"\x89PNG\r\n\x1a\n" + bytes(100),
        "random": rng.integers(0, 256, 4096, dtype=np.uint8).tobytes(),
        "truncated_header": good[:16],
        "truncated_half": good[: len(good) // 2],
        "truncated_tail": good[:-1000],
        "root_offset_garbage": good[:4] + good[4:8] + bytes(200),
        "flipped_tables": bytes(flipped),
    }[name]


@pytest.mark.parametrize("name", ["empty", "tiny", "png", "random", "truncated_header",
                                  "truncated_half", "truncated_tail", "root_offset_garbage",
                                  "flipped_tables"])
def test_corrupt_models_raise_model_error(name: str) -> None:
    with pytest.raises(NnoptError) as info:
        load_model_bytes(_corrupt_variant(name), source=name)
    assert isinstance(info.value, ModelError | UnsupportedError)
    assert name in info.value.message


def test_missing_file() -> None:
    with pytest.raises(ModelError, match="not found"):
        load_model("/nonexistent/model.tflite")


def _model_with(opcode: str) -> bytes:
    b = ModelBuilder()
    x = b.tensor((1, 4), "float32")
    y = b.tensor((1, 4), "float32")
    b.op(opcode, [x], [y])
    return b.build([x], [y])


def test_unsupported_op_is_named_with_supported_list() -> None:
    # (EXP is supported since the float32 math kernels; RANK is not, nor in TFLM)
    with pytest.raises(UnsupportedError) as info:
        load_model_bytes(_model_with("RANK"), source="m.tflite")
    msg = str(info.value)
    assert "RANK (op 0)" in msg and "CONV_2D" in msg and "Hint:" in msg


def test_unsupported_dtype_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # The test builder writes only supported dtypes; narrow the frontend's table
    # instead so that a real model's INT32 bias tensor takes the refusal path.
    import nnopt.frontend.tflite as fe

    monkeypatch.setattr(fe, "_TENSOR_TYPES", {k: v for k, v in fe._TENSOR_TYPES.items()
                                              if v != DType.INT32})
    with pytest.raises(UnsupportedError, match="has type INT32"):
        load_model(model_path("mlperf_tiny/vww_96_int8.tflite"))


def test_cli_corrupt_model_exits_1_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(model_path("tflm/hello_world_int8.tflite").read_bytes()[:300])
    res = subprocess.run([sys.executable, "-m", "nnopt.cli", "optimize", str(bad)],
                         capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 1
    assert "error:" in res.stderr and "Traceback" not in res.stderr
