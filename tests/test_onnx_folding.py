"""ONNX shapes that only constant folding reveals (issue 44): the importer folds the
constant chains, infers shapes again over the folded graph (ONNX shape inference with
data propagation) and repeats until nothing changes. The model is ``F.pad(x, (8, 8),
mode='reflect')`` as ``torch.onnx.export`` writes it (Silero VAD's STFT front), within
1e-4 x max(1, max|ref|) of onnxruntime (graph optimisations off) on the host and bit for
bit the host's outputs on Cortex-M7."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.onnx_oracle import float_error, run_onnxruntime
from support import onnx_models
from support.markers import needs_qemu
from support.onnx_checks import (
    assert_matches_onnxruntime,
    assert_mutation_fails_cleanly_or_loads,
    m7_equals_host,
)

PAD_CHAIN = onnx_models.torch_pad_chain_model()


def _inputs(seed: int) -> list[np.ndarray]:
    return [np.random.default_rng(seed).standard_normal((1, 64)).astype(np.float32)]


def test_pad_chain_folds_and_reflect_pad_matches_onnxruntime() -> None:
    g = load_model_bytes(PAD_CHAIN)
    assert [op.opcode for op in g.ops].count("MIRROR_PAD") == 1
    assert [g.tensors[t].shape for t in g.outputs] == [(1, 6, 1, 9), (1, 80)]
    assert_matches_onnxruntime(PAD_CHAIN, [_inputs(0), _inputs(1)])


def test_each_round_of_inference_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without re-inference: the refusal the issue quotes; one round (data propagation
    carries the Shape -> Slice -> Concat of the padded value too) settles it."""
    prepare = importlib.import_module("nnopt.frontend.onnx.prepare")
    monkeypatch.setattr(prepare, "MAX_INFER_ROUNDS", 0)
    with pytest.raises(UnsupportedError, match=r"Unsqueeze node .* value 'pad\d+_0' has no "
                       "static shape after shape inference"):
        load_model_bytes(onnx_models.torch_pad_chain_model(shape_of_pad=False))
    monkeypatch.setattr(prepare, "MAX_INFER_ROUNDS", 1)
    assert load_model_bytes(onnx_models.torch_pad_chain_model(shape_of_pad=False)).outputs
    g = load_model_bytes(PAD_CHAIN)  # the Shape of the padded value folded after it
    assert "SHAPE" not in {op.opcode for op in g.ops}


def test_reflect_pad_wider_than_the_axis_refused_by_name() -> None:
    """A malformed pads chain (reflect pads of 64 on an axis of 64): a clean refusal."""
    bad = onnx_models.torch_pad_chain_model(pad=64)
    with pytest.raises(UnsupportedError, match="reflect pads"):
        load_model_bytes(bad)


@pytest.mark.qemu
@needs_qemu
def test_pad_chain_on_cortex_m7_bit_exact_with_host() -> None:
    xs = _inputs(3)
    m7 = m7_equals_host(PAD_CHAIN, xs)
    refs = run_onnxruntime(PAD_CHAIN, xs)
    assert all(float_error(a, r) <= 1e-4 for a, r in zip(m7, refs, strict=True))


@pytest.mark.parametrize("seed", range(40))
def test_mutated_pad_chain_fails_cleanly_or_loads(seed: int) -> None:
    """The re-inference path under corrupt input: a clean NnoptError or a graph."""
    assert_mutation_fails_cleanly_or_loads(PAD_CHAIN, seed)
