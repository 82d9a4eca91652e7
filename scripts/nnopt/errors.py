"""The one exception root of nnopt.

Every error a user can cause (bad model, unsupported op, over budget, tampered blob,
bad option) is an :class:`NnoptError`: the CLI and the west commands print its message
and hint (:func:`describe_error`) and exit non-zero, never a traceback.
"""

from __future__ import annotations

import os


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


#: Exit status of an internal error (a bug in nnopt, not a user error).
INTERNAL_ERROR_EXIT = 3

_BUG_NOTE = ("This is a bug in nnopt; rerun with NNOPT_DEBUG=1 for details and report it "
             "with the model.")


def describe_error(exc: Exception, *, error_label: str = "error: ",
                   hint_label: str = "hint: ") -> tuple[str, int]:
    """What a front end (the ``nnopt`` command line, ``west nn-optimize``, ``west
    nn-check``) shows for an exception that stopped a command, and its exit status.

    An :class:`NnoptError`: ``error_label`` + its message, then ``hint_label`` + its hint
    on a second line when it has one; status ``exit_code`` (2 over budget, 1 otherwise).
    Any other exception is a bug in nnopt: ``internal error: Type: text`` and where to
    report it, status :data:`INTERNAL_ERROR_EXIT`. Never a traceback (front ends show one
    only with ``NNOPT_DEBUG`` set). The labels follow each front end's conventions: the
    command line prints ``error:``/``hint:``; west's ``die()`` adds its own ``FATAL
    ERROR:`` prefix, so the west commands pass ``error_label=""`` and ``"Hint: "``."""
    if isinstance(exc, NnoptError):
        text = f"{error_label}{exc.message}"
        if exc.hint:
            text += f"\n{hint_label}{exc.hint}"
        return text, exc.exit_code
    return f"internal error: {type(exc).__name__}: {exc}\n{_BUG_NOTE}", INTERNAL_ERROR_EXIT


def wants_traceback(exc: Exception) -> bool:
    """Whether a front end should show ``exc``'s traceback instead of
    :func:`describe_error`'s text: only for a bug in nnopt (not an :class:`NnoptError`)
    and only with ``NNOPT_DEBUG`` set in the environment."""
    return not isinstance(exc, NnoptError) and bool(os.environ.get("NNOPT_DEBUG"))


def describe_for_west(exc: Exception) -> tuple[str, int]:
    """:func:`describe_error` with west's labels, for ``west nn-optimize`` and ``west
    nn-check`` to pass to ``WestCommand.die``: west prefixes ``FATAL ERROR:`` itself, so
    no error label, and ``Hint: ``. Re-raises ``exc`` when :func:`wants_traceback`, so
    west shows the bug's traceback."""
    if wants_traceback(exc):
        raise exc
    return describe_error(exc, error_label="", hint_label="Hint: ")
