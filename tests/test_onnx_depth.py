"""3-D Conv and pooling as 2-D ops over depth slices (:mod:`nnopt.frontend.onnx.depth`)
and transposes of more than 5 axes collapsed (size-1 axes dropped, neighbours merged):
issue 44. Within 1e-4 x max(1, max|ref|) of onnxruntime (optimisations off) on the
host; the Cortex-M7 build gives the host's bytes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.onnx.importer import collapse_transpose
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ops import check_graph
from support import onnx_models
from support.markers import needs_qemu
from support.onnx_checks import (
    assert_matches_onnxruntime,
    assert_mutation_fails_cleanly_or_loads,
    m7_equals_host,
)

DEPTH = onnx_models.depth_model()


def _inputs(seed: int) -> list[np.ndarray]:
    return [np.random.default_rng(seed).standard_normal((1, 2, 5, 6, 6)).astype(np.float32)]


def test_3d_conv_and_pools_match_onnxruntime() -> None:
    g = load_model_bytes(DEPTH)
    codes = [op.opcode for op in g.ops]
    assert codes.count("CONV_2D") == 3 * 3 - 2  # 3 output depths x 3 taps, 2 in the pads
    assert "MAX_POOL_2D" in codes and "AVERAGE_POOL_2D" in codes
    assert all(len(g.tensors[op.inputs[0]].shape) <= 5 for op in g.ops
               if op.opcode == "TRANSPOSE")
    assert_matches_onnxruntime(DEPTH, [_inputs(0), _inputs(1)])


@pytest.mark.parametrize("shape", [(1, 1, 3, 3, 4, 4), (2, 1, 3, 1, 4, 5), (2, 3, 4, 1, 1, 2),
                                   (1, 2, 1, 3, 1, 2, 2)])
def test_collapsed_transpose_moves_the_same_bytes(shape: tuple[int, ...]) -> None:
    x = np.arange(int(np.prod(shape))).reshape(shape)
    for perm in itertools.islice(itertools.permutations(range(len(shape))), 0, None, 37):
        red_shape, red_perm = collapse_transpose(shape, perm)
        want = x.transpose(perm).reshape(-1)
        got = x.reshape(red_shape).transpose(red_perm).reshape(-1)
        np.testing.assert_array_equal(got, want)
        assert len(red_perm) <= len(perm)


def test_3d_maxpool_with_ceil_mode_stays_refused_by_rank() -> None:
    with pytest.raises(UnsupportedError, match=r"rank 5") as err:
        check_graph(load_model_bytes(onnx_models.depth_model(ceil_mode=1)))
    assert err.value.hint


@pytest.mark.qemu
@needs_qemu
def test_3d_model_on_cortex_m7_bit_exact_with_host() -> None:
    m7_equals_host(DEPTH, _inputs(4))


@pytest.mark.parametrize("seed", range(30))
def test_mutated_3d_model_fails_cleanly_or_loads(seed: int) -> None:
    assert_mutation_fails_cleanly_or_loads(DEPTH, seed)
