"""``west nn-optimize``: the west face of ``nnopt optimize``.

A thin command: the parser is built by :func:`nnopt.commands.optimize.add_arguments`
and the work is done by :func:`nnopt.commands.optimize.run` (arguments -> the compile
driver :mod:`nnopt.driver` -> the report printed), so options, output and
exit status are those of ``nnopt optimize`` (0 fits, 2 over budget, 1 any other error,
3 an internal error). An error is reported through ``self.die()`` with the text of
:func:`nnopt.errors.describe_error` (message and hint, as the CLI), never as a
traceback.

If west's Python cannot import ``nnopt`` (not installed), the ``scripts/`` directory
of the repository this file lives in is put on ``sys.path``; its Python dependencies
(numpy, tflite, matplotlib ...) must still be installed.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from west.commands import WestCommand

SCRIPTS_DIR = Path(__file__).resolve().parents[1]  # <repo>/scripts

USAGE_NOTE = """\
Same options and exit status as `nnopt optimize` (this command calls it)."""


def _import_nnopt() -> tuple[ModuleType, ModuleType]:
    """nnopt.commands.optimize and nnopt.errors, from the installed package or else
    from this repository's scripts/ directory."""
    try:
        optimize = importlib.import_module("nnopt.commands.optimize")
    except ModuleNotFoundError as err:
        if err.name not in ("nnopt", "nnopt.commands", "nnopt.commands.optimize"):
            raise  # nnopt is there but one of its dependencies is not
        # Not installed, or shadowed: from the workspace top directory, the repository
        # directory itself (named nnopt) imports as an empty namespace package.
        for name in [m for m in sys.modules if m == "nnopt" or m.startswith("nnopt.")]:
            del sys.modules[name]
        sys.path.insert(0, os.fspath(SCRIPTS_DIR))
        optimize = importlib.import_module("nnopt.commands.optimize")
    return optimize, importlib.import_module("nnopt.errors")


class NnOptimize(WestCommand):
    def __init__(self) -> None:
        super().__init__(
            "nn-optimize",
            "plan a .tflite or ONNX model for a microcontroller, report memory, generate C",
            "Plan a .tflite or ONNX model for a microcontroller (see `nnopt optimize --help`).",
            requires_workspace=False,
        )
        self._import_error: ImportError | None = None

    def do_add_parser(self, parser_adder: Any) -> argparse.ArgumentParser:
        # No self.die() here: west has not given the command its config yet (die()
        # would recurse). An import failure is reported by do_run instead.
        try:
            _import_nnopt()
        except ImportError as err:
            self._import_error = err
            parser: argparse.ArgumentParser = parser_adder.add_parser(
                self.name, help=self.help, description=f"{self.description}\n\n"
                f"(nnopt cannot be imported: {err})")
            parser.add_argument("args", nargs=argparse.REMAINDER)
            return parser
        optimize, errors = _import_nnopt()
        parser = parser_adder.add_parser(
            self.name, help=self.help,
            description=f"{optimize.DESCRIPTION}\n\n{USAGE_NOTE}",
            epilog=errors.EXIT_STATUS_HELP,  # nnopt's statuses (west's own typos: west's 2)
            formatter_class=argparse.RawDescriptionHelpFormatter)
        optimize.add_arguments(parser)
        return parser

    def do_run(self, args: argparse.Namespace, unknown: list[str]) -> None:
        if self._import_error is not None:
            self.die(f"cannot import nnopt: {self._import_error}\n"
                     f"Hint: install nnopt and its requirements into west's Python "
                     f"({sys.executable}): pip install -e {SCRIPTS_DIR.parent}")
        optimize, errors = _import_nnopt()
        self.dbg(f"nnopt.commands.optimize from {optimize.__file__}")
        try:
            status = int(optimize.run(args))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # reported as the CLI does (nnopt.errors.describe_error)
            text, code = errors.describe_for_west(err)
            self.die(text, exit_code=code)
        if status:
            sys.exit(status)
