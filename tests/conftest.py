"""Shared fixtures: where the real models are, helpers to load them, host C builds
(``cbuild``: tests/support/cbuild.py), and the mbedTLS sources of the swap tests
(``mbed``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from nnopt.errors import ToolchainError
from nnopt.paths import find_model, shared_models_dir, shipped_models_dir
from nnopt.swap.mbedtls_build import MbedtlsSources, mbedtls_sources

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # tests.support importable as `support`

MODELS = shared_models_dir()  # NNOPT_MODELS or ../shared/models (absent in a plain clone)
SHIPPED = shipped_models_dir()  # models shipped in the repo (samples, defaults, core tests)

from support.cbuild import CBuild  # noqa: E402  (needs the sys.path entry above)


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


def _classify() -> tuple[list[str], dict[str, str], list[str]]:
    """Split the shared models into those nnopt imports and those it refuses (with why),
    and, of the imported, those the tflite-micro oracle cannot run: float16 weights
    (TFLM's DEQUANTIZE refuses float16 input; their oracle is the full TFLite runtime,
    tests/test_realworld.py), kept out of the first list.

    Collection-time and cheap (the importer only, ~1 s for all of them): the model tests
    parametrise over what nnopt supports, and test_frontend asserts that every other model
    is refused with a clean error naming its operators (the coverage issues turn those
    into supported ones).
    """
    from nnopt.errors import UnsupportedError
    from nnopt.frontend.tflite import load_model

    ok: list[str] = []
    refused: dict[str, str] = {}
    not_tflm: list[str] = []
    for p in sorted(MODELS.glob("*/*.tflite")):
        rel = str(p.relative_to(MODELS))
        try:
            g = load_model(p)
        except UnsupportedError as err:
            refused[rel] = err.message
            continue
        (not_tflm if any(e.kind == "float16" for e in g.expansions) else ok).append(rel)
    return ok, refused, not_tflm


ALL_MODELS, REFUSED_MODELS, LITERT_MODELS = _classify()


@pytest.fixture
def models_dir() -> Path:
    if not MODELS.is_dir():
        pytest.skip(f"shared models not found at {MODELS}")
    return MODELS


@pytest.fixture(scope="module")
def mbed_ok(mbed: MbedtlsSources) -> None:
    """Skips the test without the mbedTLS sources (the swap tests' ``usefixtures``)."""


@pytest.fixture
def cbuild(tmp_path: Path) -> CBuild:
    """Host C builds (tests/support/cbuild.py) into the test's temporary directory."""
    return CBuild(tmp_path)


@pytest.fixture(scope="session")
def mbed() -> MbedtlsSources:
    """The mbedTLS sources the swap driver is built with (skips without them)."""
    try:
        return mbedtls_sources()
    except ToolchainError as err:
        pytest.skip(f"mbedTLS sources unavailable: {err.message}")
