"""Issue 24 (ONNX): the trained ONNX models of ``../shared/models/realworld/`` (see its
SOURCES.md) run by nnopt's generated code against onnxruntime with graph optimisations
off, float32 within 1e-4 x max(1, max|ref|); Silero VAD over several invocations with
its state carried (each step's ``stateN`` fed back as ``state``). Skipped when the
shared models are absent."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from conftest import model_path
from nnopt.frontend.tflite import load_model_bytes
from nnopt.planner import PlanOptions, plan_model
from nnopt.runner import run_planned
from nnopt.testing.onnx_oracle import float_error, run_onnxruntime
from support.markers import needs_qemu

TOL = 1e-4
SILERO_SHAPES = {"input": (1, 512), "state": (2, 1, 128)}
SILERO_VALUES = {"sr": (16000.0,)}


def _run(model: bytes, shapes: Mapping[str, tuple[int, ...]], xs: list[np.ndarray],
         target: str = "host",
         values: Mapping[str, tuple[float, ...]] | None = None) -> list[np.ndarray]:
    graph = load_model_bytes(model, input_shapes=shapes, input_values=values)
    planned = plan_model(graph, PlanOptions(), source_bytes=model)
    res = run_planned(planned, [x.tobytes() for x in xs], target=target)  # type: ignore[arg-type]
    g = planned.graph
    return [np.frombuffer(d, np.float32).reshape(g.tensors[t].shape)
            for t, d in zip(g.outputs, res.outputs, strict=True)]


def _check(name: str, shapes: dict[str, tuple[int, ...]], x: np.ndarray,
           target: str = "host") -> None:
    model = model_path(f"realworld/{name}").read_bytes()
    ref = run_onnxruntime(model, [x])
    got = _run(model, shapes, [x], target)
    for a, r in zip(got, ref, strict=True):
        assert a.shape == r.shape and float_error(a, r) <= TOL, float_error(a, r)


def _mel_input() -> np.ndarray:
    return (np.random.default_rng(0).standard_normal((1, 1280)) * 3000).astype(np.float32)


def _silero_steps(model: bytes, n: int, target: str = "host") -> None:
    graph = load_model_bytes(model, input_shapes=SILERO_SHAPES, input_values=SILERO_VALUES)
    assert [graph.tensors[t].name for t in graph.inputs] == ["input", "state"]
    planned = plan_model(graph, PlanOptions(), source_bytes=model)
    rng = np.random.default_rng(0)
    s_ref = s_got = np.zeros((2, 1, 128), np.float32)
    for step in range(n):
        x = (0.3 * np.sin(np.arange(512) * 0.05 * (step + 1))
             + 0.05 * rng.standard_normal(512)).astype(np.float32).reshape(1, 512)
        out_r, s_r = run_onnxruntime(model, [x, s_ref, np.array(16000, np.int64)])
        res = run_planned(planned, [x.tobytes(), s_got.tobytes()],
                          target=target)  # type: ignore[arg-type]
        out_g = np.frombuffer(res.outputs[0], np.float32).reshape(out_r.shape)
        s_g = np.frombuffer(res.outputs[1], np.float32).reshape(s_r.shape)
        assert float_error(out_g, out_r) <= TOL and float_error(s_g, s_r) <= TOL, step
        s_ref, s_got = s_r, s_g.copy()
    assert np.abs(s_ref).max() > 0.01  # the state moved


def test_mel_spectrogram_runs_on_the_host() -> None:
    _check("oww_melspectrogram.onnx", {"input": (1, 1280)}, _mel_input())


@pytest.mark.slow
def test_wakeforge_gru_runs_on_the_host() -> None:
    x = np.random.default_rng(0).standard_normal((1, 50, 128)).astype(np.float32)
    _check("wakeforge_alexa.onnx", {"features": (1, 50, 128)}, x)


def test_silero_vad_carries_its_state_over_four_invocations() -> None:
    _silero_steps(model_path("realworld/silero_vad_16k_op15.onnx").read_bytes(), 4)


def test_silero_vad_takes_its_sample_rate_at_run_time() -> None:
    """Unpinned, the int64 input sr is an input of the generated code (int64 at the
    boundary, narrowed to int32 by a checked CAST): the same outputs as onnxruntime."""
    model = model_path("realworld/silero_vad_16k_op15.onnx").read_bytes()
    graph = load_model_bytes(model, input_shapes=SILERO_SHAPES)
    assert [(graph.tensors[t].name, graph.tensors[t].dtype.name) for t in graph.inputs] == \
        [("input", "FLOAT32"), ("state", "FLOAT32"), ("sr", "INT64")]
    planned = plan_model(graph, PlanOptions(), source_bytes=model)
    x = (0.3 * np.sin(np.arange(512) * 0.05)).astype(np.float32).reshape(1, 512)
    s = (0.1 * np.random.default_rng(1).standard_normal((2, 1, 128))).astype(np.float32)
    sr = np.array(16000, np.int64)
    ref = run_onnxruntime(model, [x, s, sr])
    res = run_planned(planned, [x.tobytes(), s.tobytes(), sr.tobytes()], target="host")
    for r, d in zip(ref, res.outputs, strict=True):
        assert float_error(np.frombuffer(d, np.float32).reshape(r.shape), r) <= TOL


@pytest.mark.qemu
@pytest.mark.slow
@needs_qemu
def test_mel_spectrogram_and_silero_run_on_qemu_m7() -> None:
    _check("oww_melspectrogram.onnx", {"input": (1, 1280)}, _mel_input(), "qemu-m7")
    _silero_steps(model_path("realworld/silero_vad_16k_op15.onnx").read_bytes(), 3,
                  "qemu-m7")


@pytest.mark.qemu
@pytest.mark.slow
@needs_qemu
def test_wakeforge_gru_runs_on_qemu_m7() -> None:
    x = np.random.default_rng(0).standard_normal((1, 50, 128)).astype(np.float32)
    _check("wakeforge_alexa.onnx", {"features": (1, 50, 128)}, x, "qemu-m7")
