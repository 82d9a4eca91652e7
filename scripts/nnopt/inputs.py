"""Random model inputs of the right shape and dtype (for `nnopt run --seed` and tests)."""

from __future__ import annotations

import numpy as np

from .ir import NUMPY_DTYPE, Graph


def random_inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    """Integers over their full range; floats from N(0, 1)."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for t in graph.inputs:
        tensor = graph.tensors[t]
        dt = np.dtype(NUMPY_DTYPE[tensor.dtype])
        if dt.kind in "iu":
            info = np.iinfo(dt)
            out.append(rng.integers(int(info.min), int(info.max) + 1, size=tensor.shape,
                                    dtype=dt))
        else:
            out.append(rng.standard_normal(tensor.shape).astype(dt))
    return out
