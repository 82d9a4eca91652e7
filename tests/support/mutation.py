"""The fuzz tests' deterministic model mutation (tests/test_model_fuzz.py and the
malformed-input tests of the importers)."""

from __future__ import annotations

import numpy as np

SPECIAL_WORDS = (0, 1, 0xFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x7F800000, 0x7FC00000)


def mutate(data: bytes, seed: int) -> tuple[str, bytes]:
    """One deterministic mutation of ``data``: bit flips, a truncation or an overwritten
    32-bit word (special values: 0, -1, INT_MIN, float inf/NaN, or random)."""
    rng = np.random.default_rng(seed)
    b = bytearray(data)
    kind = ("flip", "truncate", "word")[seed % 3]
    if kind == "flip":
        for _ in range(int(rng.integers(1, 9))):
            b[int(rng.integers(0, len(b)))] ^= 1 << int(rng.integers(0, 8))
    elif kind == "truncate":
        del b[int(rng.integers(0, len(b))):]
    else:
        i = int(rng.integers(0, len(b) // 4)) * 4
        word = int(rng.choice(SPECIAL_WORDS)) if rng.random() < 0.6 else int(
            rng.integers(0, 2**32))
        b[i:i + 4] = word.to_bytes(4, "little")
    return kind, bytes(b)
