"""Checks the ONNX import tests share: a model against onnxruntime, the Cortex-M7
firmware against the host build, and a mutated model loading or failing cleanly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nnopt.boards import load_board
from nnopt.errors import NnoptError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt
from nnopt.testing.onnx_oracle import float_error, run_onnxruntime
from support.mutation import mutate


def assert_matches_onnxruntime(model: bytes, runs: Sequence[list[np.ndarray]],
                               tol: float = 1e-4) -> None:
    """nnopt's outputs of each run's inputs within ``tol`` of onnxruntime's (graph
    optimisations off), shapes equal."""
    for xs in runs:
        refs = run_onnxruntime(model, xs)
        got, _ = run_nnopt(model, xs)
        for a, r in zip(got, refs, strict=True):
            assert a.shape == r.shape
            assert float_error(a, r) <= tol


def m7_equals_host(model: bytes, xs: list[np.ndarray]) -> list[np.ndarray]:
    """The model planned for nucleo_f767zi run on the host and as Cortex-M7 firmware
    under QEMU: byte-identical outputs; returns the firmware's."""
    board = load_board("nucleo_f767zi")
    host, _ = run_nnopt(model, xs, options=PlanOptions(board=board))
    m7, _ = run_nnopt(model, xs, target="qemu-m7", board=board)
    assert [h.tobytes() for h in host] == [m.tobytes() for m in m7]
    return m7


def assert_mutation_fails_cleanly_or_loads(model: bytes, seed: int) -> None:
    """The model mutated with ``seed`` (:func:`support.mutation.mutate`): a clean
    NnoptError or a graph with outputs."""
    _, data = mutate(model, seed)
    try:
        g = load_model_bytes(data)
    except NnoptError:
        return
    assert g.outputs
