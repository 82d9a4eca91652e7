"""Where nnopt's own files live (board data, the C runtime) relative to the package."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import NnoptError


def repo_root() -> Path:
    """The nnopt repository root (the package is installed editable from it).

    ``NNOPT_ROOT`` overrides, for unusual installs.
    """
    env = os.environ.get("NNOPT_ROOT")
    root = Path(env) if env else Path(__file__).resolve().parents[2]
    if not (root / "modules" / "nnrt").is_dir():
        raise NnoptError(
            f"cannot find the nnopt repository at {root} (no modules/nnrt there)",
            hint="install nnopt editable from its repository (pip install -e .) "
            "or set NNOPT_ROOT to the repository root",
        )
    return root


def boards_dir() -> Path:
    return repo_root() / "boards" / "nnopt"


def nnrt_dir() -> Path:
    return repo_root() / "modules" / "nnrt"


def nnrt_include_dirs() -> tuple[Path, Path]:
    """The include path of everything built against nnrt (the runtime, generated model
    code, harnesses): the public API (``modules/nnrt/include``: ``nnrt/...``) and the
    private kernel headers (``modules/nnrt/kernels``: ``internal/...``, and
    ``nnrt/kernels/spec.h``, the bodies that specialised generated code instantiates,
    which only generated code includes from outside the kernels). Zephyr's build
    exports the same two (modules/nnrt/CMakeLists.txt)."""
    return nnrt_dir() / "include", nnrt_dir() / "kernels"


def shipped_models_dir() -> Path:
    """The models shipped in the repository (``models/``, provenance in its SOURCES.md)."""
    return repo_root() / "models"


def shared_models_dir() -> Path:
    """The project's larger model set: ``NNOPT_MODELS``, else ``../shared/models`` beside
    the repository (may not exist: a plain clone has only the shipped models)."""
    env = os.environ.get("NNOPT_MODELS")
    return Path(env) if env else repo_root().parent / "shared" / "models"


def find_model(rel: str) -> Path | None:
    """A model named like ``mlperf_tiny/vww_96_int8.tflite``: in the shared set (by that
    path, or by its file name directly under it), else shipped in ``models/`` (by file
    name); None when neither has it. The one lookup tests and benchmarks use."""
    name = Path(rel).name
    shared = shared_models_dir()
    for p in (shared / rel, shared / name, shipped_models_dir() / name):
        if p.is_file():
            return p
    return None
