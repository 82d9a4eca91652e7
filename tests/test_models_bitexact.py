"""Every shared model, end to end on the host: bit-exact with the tflite-micro
interpreter on every intermediate tensor (float models: 1e-5 relative), several inputs.

Comparing only the final output would hide wrong kernels behind a saturated softmax;
the first tensor that differs names the op that broke.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ALL_MODELS, model_path
from nnopt.planner import PlanOptions
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm
from support.cases import assert_outputs_match
from support.model_checks import SLOW, check_every_tensor

SANITIZED = ["tflm/hello_world_int8.tflite", "mlperf_tiny/kws_ref_model.tflite",
             "keras/lenet5_float.tflite", "keras/swiftnet_like.tflite",
             "keras/mobilenet_v3_small_075_96.tflite"]


def _params() -> list[object]:
    out = []
    for rel in ALL_MODELS:
        marks = [pytest.mark.slow] if rel in SLOW else []
        out.append(pytest.param(rel, marks=marks, id=rel.split("/")[-1].removesuffix(".tflite")))
    return out


@pytest.mark.parametrize("rel", _params())
def test_model_bit_exact_on_host(rel: str) -> None:
    data = model_path(rel).read_bytes()
    for seed in (0, 1):
        check_every_tensor(data, random_inputs(data, seed))


@pytest.mark.parametrize("rel", [
    "keras/nasnet_mobile_64.tflite",
    pytest.param("keras/densenet121_64.tflite", marks=[pytest.mark.slow]),
], ids=lambda r: r.split("/")[-1].removesuffix(".tflite"))
def test_default_plan_bit_exact_on_host(rel: str) -> None:
    """The commands' default plan (in-place operators and tiling auto) of the large
    branched graphs issue 18 plans incrementally: bit-exact on every tensor."""
    data = model_path(rel).read_bytes()
    check_every_tensor(data, random_inputs(data, 2), float_close=False,
                       options=PlanOptions(inplace_ops="auto", tiling="auto"))


@pytest.mark.parametrize("rel", SANITIZED, ids=lambda r: r.split("/")[-1])
def test_model_under_sanitizers(rel: str) -> None:
    data = model_path(rel).read_bytes()
    inputs = random_inputs(data, 7)
    ref_out, _ = run_tflm(data, inputs)
    outs, _ = run_nnopt(data, inputs, sanitize=True)
    assert_outputs_match(outs, ref_out)


@pytest.mark.parametrize("options", [
    PlanOptions(order="file", fuse=False, inplace=False),
    PlanOptions(arena_strategies=("greedy_by_size",)),
    PlanOptions(arena_strategies=("two_ended",)),
], ids=["file-order-no-opt", "greedy-by-size", "two-ended"])
def test_any_plan_runs_bit_exact(options: PlanOptions) -> None:
    """Whatever plan the tool can make runs and gives the same answer."""
    data = model_path("keras/swiftnet_like.tflite").read_bytes()
    inputs = random_inputs(data, 3)
    ref_out, _ = run_tflm(data, inputs)
    outs, _ = run_nnopt(data, inputs, options=options)
    np.testing.assert_array_equal(outs[0], ref_out[0].reshape(outs[0].shape))
