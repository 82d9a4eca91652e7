"""Write calibration.npz for `nnopt quantize`: samples of the model input, stacked on a
new leading axis (here random; use a few hundred real inputs from your training set)."""

import sys

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
rng = np.random.default_rng(0)
np.savez("calibration.npz", input=rng.standard_normal((n, 1, 1, 32, 32)).astype(np.float32))
print(f"wrote calibration.npz ({n} samples of [1, 1, 32, 32])")
