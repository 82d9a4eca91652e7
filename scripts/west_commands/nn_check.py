"""``west nn-check``: run ``nnopt check-elf`` on an existing Zephyr build directory.

A thin command. It finds the build directory the way Zephyr's
``scripts/west_commands/build_helpers.py`` does (``-d``, else the ``build.dir-fmt``
configuration or ``build``, else the current directory when that is a build), reads
the board from its ``CMakeCache.txt`` (``CACHED_BOARD``, set by
``zephyr_check_cache(BOARD ...)`` in Zephyr's ``cmake/modules/boards.cmake``), maps it
to the nnopt board whose ``zephyr_board`` matches (``boards/nnopt/*.yaml``), and calls
:func:`nnopt.commands.check_elf.run` on ``<build>/zephyr/<kernel>.elf``: the same check,
report, messages and exit status as ``nnopt check-elf`` (0 within budget, 2 over
budget, 1 any other error) and as the post-link step that ``nnopt_add_model()``
registers (``zephyr/cmake/nnopt.cmake``). Errors are reported through ``self.die()`` with
the text of :func:`nnopt.errors.describe_error` (message and hint, as the CLI).

Parsing the cache directly keeps this command independent of Zephyr's Python helpers
(importing ``build_helpers`` needs ``ZEPHYR_BASE/scripts/west_commands`` on the path
and uses the deprecated ``west.log``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from west.commands import CommandError, WestCommand

SCRIPTS_DIR = Path(__file__).resolve().parents[1]  # <repo>/scripts
DEFAULT_BUILD_DIR = "build"

DESCRIPTION = """\
Check the firmware of a Zephyr build directory against the memory budget of its board
with `nnopt check-elf`: ROM and RAM per memory region, what uses them, the largest
symbols. The board comes from the build's CMakeCache.txt (CACHED_BOARD) and is mapped
to the nnopt board whose zephyr_board matches (boards/nnopt/*.yaml); a board without
one is checked against the build's own devicetree (zephyr/edt.pickle, read with the
ZEPHYR_BASE of its cache: docs/boards.md); --board overrides.

Exit status: 0 within budget, 2 over budget, 1 any other error (as nnopt check-elf)."""


def _import(module: str) -> ModuleType:
    """A module of nnopt, from the installed package or else from this repository's
    scripts/ directory (dependencies must still be installed)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name is None or not (err.name == "nnopt" or err.name.startswith("nnopt.")):
            raise  # nnopt is there but one of its dependencies is not
        for name in [m for m in sys.modules if m == "nnopt" or m.startswith("nnopt.")]:
            del sys.modules[name]
        sys.path.insert(0, os.fspath(SCRIPTS_DIR))
        return importlib.import_module(module)


class NnCheck(WestCommand):
    def __init__(self) -> None:
        super().__init__(
            "nn-check",
            "check a Zephyr build's zephyr.elf against the nnopt memory budget",
            DESCRIPTION,
            # Like `west build -d DIR`, usable on a build directory outside a workspace.
            requires_workspace=False,
        )

    def do_add_parser(self, parser_adder: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = parser_adder.add_parser(
            self.name, help=self.help, description=self.description,
            formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("-d", "--build-dir", metavar="DIR",
                            help="build directory (default: the build.dir-fmt "
                            f"configuration or '{DEFAULT_BUILD_DIR}', else the current "
                            "directory if it is a build)")
        parser.add_argument("-b", "--board", metavar="NAME",
                            help="nnopt board whose budget applies (default: the one "
                            "matching the build's Zephyr board, else the build's own "
                            "devicetree, zephyr/edt.pickle)")
        parser.add_argument("--json", type=Path, metavar="PATH",
                            help="also write the report as JSON")
        parser.add_argument("--top", type=int, default=10, metavar="N",
                            help="how many of the largest symbols to list (default 10)")
        return parser

    def do_run(self, args: argparse.Namespace, unknown: list[str]) -> None:
        try:
            check_elf = _import("nnopt.commands.check_elf")
            zb = _import("nnopt.zephyr_build")
            errors = _import("nnopt.errors")
        except ImportError as err:
            self.die(f"cannot import nnopt: {err}\n"
                     f"Hint: install nnopt and its requirements into west's Python "
                     f"({sys.executable}): pip install -e {SCRIPTS_DIR.parent}")
        dir_fmt = self.config.get("build.dir-fmt") if self.has_config else None
        try:
            build_dir = zb.find_build_dir(args.build_dir, dir_fmt, Path.cwd())
            elf = zb.elf_path(build_dir)
            board, edt, zephyr_base = ((args.board, None, None) if args.board
                                       else zb.budget_of_build(build_dir))
            self.dbg(f"nn-check: {elf} against board {board}"
                     + (f" (devicetree {edt})" if edt else ""))
            ns = argparse.Namespace(firmware=elf, board=board, edt=edt, zephyr_base=zephyr_base,
                                    json=args.json, top=args.top)
            status = int(check_elf.run(ns))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:  # reported as the CLI does (nnopt.errors.describe_error)
            text, code = errors.describe_for_west(err)
            self.die(text, exit_code=code)
        if status:
            # The report (printed by check_elf.run) already says what is over budget.
            raise CommandError(returncode=status)  # type: ignore[no-untyped-call]
