"""The ``nnopt`` command line: a thin shell over the library.

Every user error is an :class:`~nnopt.errors.NnoptError`: printed as ``error: ...`` with
its hint, exit status ``err.exit_code`` (2 over budget, 64 usage error, 1 otherwise), no
traceback; any other exception is reported as an internal error (status 3). Both through
:func:`nnopt.errors.describe_error`, which the west commands use too. Command-line
mistakes argparse finds (unknown option, bad value, missing argument) exit 64 too
(:class:`Parser`), so a CI script tells a typo from "does not fit" (2).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from . import __version__
from .commands import board, check_elf, convert, ops, optimize, quantize, run_model, swap_provision
from .errors import (
    EXIT_STATUS_HELP,
    EXIT_USAGE,
    INTERNAL_ERROR_EXIT,
    describe_error,
    wants_traceback,
)


class Parser(argparse.ArgumentParser):
    """argparse with nnopt's usage-error status (64, not argparse's 2, which nnopt
    means as "over budget") and a hint; every command's parser is one (argparse makes
    subparsers of the parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("epilog", EXIT_STATUS_HELP)
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n"
                  f"hint: see `{self.prog} --help`\n")


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="nnopt",
        description="Make neural networks fit microcontrollers: plan memory, generate C, "
        "run and check firmware.")
    p.add_argument("--version", action="version", version=f"nnopt {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    optimize.add_parser(sub)
    run_model.add_parser(sub)
    check_elf.add_parser(sub)
    board.add_parser(sub)
    convert.add_parser(sub)
    quantize.add_parser(sub)
    swap_provision.add_parser(sub)
    ops.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`nnopt ops | head`): not an error of nnopt. Point stdout
        # at /dev/null so that the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as err:  # NnoptError: a user error; anything else: a bug in nnopt
        if wants_traceback(err):
            traceback.print_exc()
            return INTERNAL_ERROR_EXIT
        text, status = describe_error(err)
        print(text, file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
