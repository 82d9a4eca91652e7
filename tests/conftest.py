"""Shared fixtures: where the real models are, and helpers to load them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nnopt.paths import find_model, shared_models_dir, shipped_models_dir

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # tests.support importable as `support`

MODELS = shared_models_dir()  # NNOPT_MODELS or ../shared/models (absent in a plain clone)
SHIPPED = shipped_models_dir()  # models shipped in the repo (samples, defaults, core tests)


def model_path(rel: str) -> Path:
    """Path of a model like 'mlperf_tiny/vww_96_int8.tflite' (shared, or shipped in models/).

    Inside a test: skips it, with the reason, when the model is absent. Never call it at
    collection time (use find_model there): a module-level skip is a collection error.
    """
    p = find_model(rel)
    if p is None:
        pytest.skip(f"model {rel} not found under {MODELS} nor {SHIPPED} "
                    "(set NNOPT_MODELS to the shared model set)")
    return p


ALL_MODELS = sorted(str(p.relative_to(MODELS)) for p in MODELS.glob("*/*.tflite"))


@pytest.fixture
def models_dir() -> Path:
    if not MODELS.is_dir():
        pytest.skip(f"shared models not found at {MODELS}")
    return MODELS
