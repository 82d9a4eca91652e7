"""The one exception root of nnopt.

Every error a user can cause (bad model, unsupported op, over budget, tampered blob,
bad option) is an :class:`NnoptError`: the CLI and the west command print its message
and hint and exit non-zero, never a traceback.
"""

from __future__ import annotations


class NnoptError(Exception):
    """Root of every error nnopt reports to a user."""

    exit_code: int = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\nHint: {self.hint}"
        return self.message


class ModelError(NnoptError):
    """The model file is unreadable, corrupt or not TFLite."""


class UnsupportedError(NnoptError):
    """The model uses an operator, dtype or feature nnopt does not support."""


class PlanError(NnoptError):
    """Planning failed or a plan broke an invariant."""


class BudgetError(NnoptError):
    """The model (or firmware) does not fit the memory budget."""

    exit_code = 2


class BoardError(NnoptError):
    """Unknown board or malformed board data."""


class ToolchainError(NnoptError):
    """A compiler, linker or emulator is missing or failed."""


class ElfError(NnoptError):
    """A firmware ELF file is unreadable or not for a supported target."""


class BlobError(NnoptError):
    """An external-flash or model blob is corrupt, truncated or fails authentication."""
