"""Shared fixtures: where the real models are, helpers to load them, and host C builds
(``cbuild``: tests/support/cbuild.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # tests.support importable as `support`

MODELS = Path(os.environ.get("NNOPT_MODELS", REPO.parent / "shared" / "models"))
SHIPPED = REPO / "models"  # models shipped in the repo (samples, defaults)

from support.cbuild import CBuild  # noqa: E402  (needs the sys.path entry above)


def model_path(rel: str) -> Path:
    """Path of a shared model like 'mlperf_tiny/vww_96_int8.tflite' (or a shipped one)."""
    for base in (MODELS, SHIPPED):
        p = base / rel
        if p.is_file():
            return p
        if (base / Path(rel).name).is_file():
            return base / Path(rel).name
    pytest.skip(f"model {rel} not found under {MODELS} (set NNOPT_MODELS)")


ALL_MODELS = sorted(str(p.relative_to(MODELS)) for p in MODELS.glob("*/*.tflite"))


@pytest.fixture
def models_dir() -> Path:
    if not MODELS.is_dir():
        pytest.skip(f"shared models not found at {MODELS}")
    return MODELS


@pytest.fixture
def cbuild(tmp_path: Path) -> CBuild:
    """Host C builds (tests/support/cbuild.py) into the test's temporary directory."""
    return CBuild(tmp_path)
