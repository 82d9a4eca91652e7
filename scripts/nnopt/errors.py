"""The one exception root of nnopt.

Every error a user can cause (bad model, unsupported op, over budget, tampered blob,
bad option) is an :class:`NnoptError`: the CLI and the west commands print its message
and hint (:func:`describe_error`) and exit non-zero, never a traceback.
"""

from __future__ import annotations

import os

#: The exit statuses of ``nnopt`` (and of ``west nn-optimize`` / ``nn-check``), in one
#: place: each error class below carries its own as ``exit_code``.
EXIT_OK = 0
#: Any error that is neither a usage error nor over budget (bad model, toolchain ...).
EXIT_ERROR = 1
#: The model (or firmware) does not fit the memory budget: a CI script can tell it apart.
EXIT_OVER_BUDGET = 2
#: An internal error (a bug in nnopt, not a user error).
INTERNAL_ERROR_EXIT = 3
#: A command-line mistake: unknown option, bad option value, missing argument, unknown
#: board (``EX_USAGE`` of BSD's sysexits.h).
EXIT_USAGE = 64

#: What ``nnopt --help`` and every command's ``--help`` say about the exit status.
EXIT_STATUS_HELP = f"""\
exit status:
  {EXIT_OK:<3} success (the model fits, or no budget was given)
  {EXIT_OVER_BUDGET:<3} over the memory budget (the report is still printed)
  {EXIT_USAGE:<3} usage error: unknown option, bad option value, unknown board
  {EXIT_ERROR:<3} any other error: bad model, unsupported operator, toolchain
  {INTERNAL_ERROR_EXIT:<3} internal error (a bug in nnopt: please report it)"""


class NnoptError(Exception):
    """Root of every error nnopt reports to a user."""

    exit_code: int = EXIT_ERROR

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

    exit_code = EXIT_OVER_BUDGET


class UsageError(NnoptError):
    """A command-line mistake: an option's value is invalid or options conflict."""

    exit_code = EXIT_USAGE


class BoardError(NnoptError):
    """Unknown board or malformed board data."""


class UnknownBoardError(BoardError, UsageError):
    """A board name that names no board (a usage error: exit status 64)."""

    exit_code = EXIT_USAGE


class ToolchainError(NnoptError):
    """A compiler, linker or emulator is missing or failed."""


class ElfError(NnoptError):
    """A firmware ELF file is unreadable or not for a supported target."""


class BlobError(NnoptError):
    """An external-flash or model blob is corrupt, truncated or fails authentication."""


_BUG_NOTE = ("This is a bug in nnopt; rerun with NNOPT_DEBUG=1 for details and report it "
             "with the model.")


def describe_error(exc: Exception, *, error_label: str = "error: ",
                   hint_label: str = "hint: ") -> tuple[str, int]:
    """What a front end (the ``nnopt`` command line, ``west nn-optimize``, ``west
    nn-check``) shows for an exception that stopped a command, and its exit status.

    An :class:`NnoptError`: ``error_label`` + its message, then ``hint_label`` + its hint
    on a second line when it has one; status ``exit_code``
    (:data:`EXIT_OVER_BUDGET`, :data:`EXIT_USAGE`, else :data:`EXIT_ERROR`).
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
