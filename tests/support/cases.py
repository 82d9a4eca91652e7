"""The multi-op kernel test models: one build holds many cases (``out_of``: case id ->
output tensor), one TFLM run and one nnopt run answer them all, and each case's
output is compared with TFLM's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from nnopt.planner import PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm

#: Each case's (TFLM's output, nnopt's output).
Results = dict[str, tuple[np.ndarray, np.ndarray]]


def oracle_results(model: bytes, inputs: Sequence[np.ndarray], out_of: Mapping[str, int],
                   *, sanitize: bool = False) -> Results:
    """Run ``model`` under TFLM and as nnopt's generated code (host, file order; under
    ASan + UBSan with ``sanitize``): each case's pair of outputs."""
    _, ref = run_tflm(model, inputs)
    _, got = run_nnopt(model, inputs, options=PlanOptions(order="file"), sanitize=sanitize)
    return {cid: (ref[t], got[t]) for cid, t in out_of.items()}


def assert_case_matches(ref: np.ndarray, got: np.ndarray, *, same_dtype: bool = False,
                        same_bits: bool = False, float_close: bool = False) -> None:
    """``got`` has ``ref``'s shape (and dtype, with ``same_dtype``) and its values:
    equal, or float32 within 1e-5 relative with ``float_close``; with ``same_bits``
    byte for byte too (-0.0 and 0.0 compare equal as values)."""
    assert got.shape == ref.shape
    if same_dtype:
        assert got.dtype == ref.dtype
    if float_close and got.dtype == np.float32:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, ref)
    if same_bits:
        np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))


def mismatched_cases(results: Results, *, float_close: bool = False) -> list[str]:
    """The case ids whose nnopt output differs from TFLM's in shape or values (float32
    within 1e-5 relative with ``float_close``, otherwise exactly)."""
    bad = []
    for cid, (ref, got) in results.items():
        if got.shape != ref.shape:
            bad.append(cid)
        elif float_close and got.dtype == np.float32:
            if not np.allclose(got, ref, rtol=1e-5, atol=1e-6):
                bad.append(cid)
        elif not np.array_equal(got, ref):
            bad.append(cid)
    return bad


def differing_cases(results: Mapping[str, tuple[np.ndarray, object]],
                    got: Sequence[np.ndarray], out_of: Mapping[str, int]) -> list[str]:
    """The case ids whose output in ``got`` (indexed by tensor, ``out_of[case]``) differs
    from TFLM's (``results[case][0]``): float32 within 1e-5 relative, others exactly."""
    bad = []
    for cid, (ref, _) in results.items():
        mine = got[out_of[cid]]
        if mine.dtype == np.float32:
            ok = np.allclose(mine, ref.reshape(mine.shape), rtol=1e-5, atol=1e-6)
        else:
            ok = np.array_equal(mine, ref.reshape(mine.shape))
        if not ok:
            bad.append(cid)
    return bad
