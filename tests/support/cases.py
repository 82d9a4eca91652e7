"""Comparing a multi-op test model's outputs, case by case, with TFLM's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


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
