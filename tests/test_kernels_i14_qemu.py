"""The operator test models of issue 14 (PRELU/ELU/reductions/ARG_*, comparisons/logical/
SELECT_V2, unary math/CAST/FLOOR_DIV/FLOOR_MOD/ADD_N, TFLite_Detection_PostProcess) as
Cortex-M7 firmware on QEMU, against TFLite Micro on the host: integer and bool tensors
bit-exact, float32 within 1e-5 relative (the target's libm computes sinf/expf/expm1f ...,
TFLM's host build glibc's), every traced tensor of each model."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

import test_kernels_compare
import test_kernels_detection
import test_kernels_math_unary
import test_kernels_prelu_elu_reduce
from nnopt.boards import load_board
from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm
from support.cases import tflm_and_cortex_m7
from support.markers import needs_qemu

pytestmark = [pytest.mark.qemu, pytest.mark.slow, needs_qemu]

MODULES = [test_kernels_prelu_elu_reduce, test_kernels_compare, test_kernels_math_unary]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_cases_on_cortex_m7(module: ModuleType) -> None:
    ref, got = tflm_and_cortex_m7(module.MODEL, module.INPUTS,
                                  board=load_board("nucleo_f767zi"))
    for cid, t in module.OUT_OF.items():
        r, g = ref[t], got[t]
        assert g.shape == r.shape and g.dtype == r.dtype, cid
        if r.dtype == np.float32:
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-30, err_msg=cid)
        else:
            np.testing.assert_array_equal(g, r, err_msg=cid)


def test_detection_postprocess_on_cortex_m7() -> None:
    """Every case of test_kernels_detection (one firmware build): num_detections and the
    selected classes exact, boxes and scores within 1e-5 relative (the decoding's exp is
    newlib's double exp on the target, glibc's in TFLM's host build)."""
    m = test_kernels_detection
    _, ref = run_tflm(m.MODEL, m.INPUTS)
    _, got = run_nnopt(m.MODEL, m.INPUTS, target="qemu-m7",
                       board=load_board("nucleo_f767zi"), options=PlanOptions(order="file"))
    for cid, case in m.CASES.items():
        try:
            m.compare(case, ref, got, rtol=1e-5)
        except AssertionError as err:
            raise AssertionError(f"{cid}: {err}") from err
