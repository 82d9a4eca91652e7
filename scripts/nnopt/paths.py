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
