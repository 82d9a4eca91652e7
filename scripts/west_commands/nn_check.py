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
registers (``zephyr/cmake/nnopt.cmake``).

Parsing the cache directly keeps this command independent of Zephyr's Python helpers
(importing ``build_helpers`` needs ``ZEPHYR_BASE/scripts/west_commands`` on the path
and uses the deprecated ``west.log``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Iterable, Mapping
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
to the nnopt board whose zephyr_board matches (boards/nnopt/*.yaml); --board overrides.

Exit status: 0 within budget, 2 over budget, 1 any other error (as nnopt check-elf)."""


class BuildDirError(Exception):
    """The build directory, its cache or its ELF cannot be used."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def read_cmake_cache(path: Path) -> dict[str, str]:
    """``NAME:TYPE=VALUE`` lines of a CMakeCache.txt as {NAME: VALUE}."""
    entries: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        if not line or line.startswith(("#", "//")):
            continue
        m = re.match(r"([^:=]+)(?::[^=]*)?=(.*)$", line)
        if m:
            entries[m.group(1).strip()] = m.group(2)
    return entries


def is_zephyr_build(path: Path) -> bool:
    """A CMake build directory configured by Zephyr (its cache knows the toolchain)."""
    cache = path / "CMakeCache.txt"
    if not cache.is_file():
        return False
    entries = read_cmake_cache(cache)
    return "ZEPHYR_TOOLCHAIN_VARIANT" in entries or "ZEPHYR_BASE" in entries


def find_build_dir(dir_arg: str | None, dir_fmt: str | None, cwd: Path) -> Path:
    """``-d`` if given; else ``build.dir-fmt`` (or ``build``), unless that is not a
    Zephyr build and the current directory is one (as Zephyr's build_helpers)."""
    if dir_arg:
        return Path(dir_arg)
    fmt = dir_fmt or DEFAULT_BUILD_DIR
    # Placeholders ({board}, {app} ...) need the values of a `west build` invocation;
    # take the fixed part before the first one.
    fixed = fmt.split("{", 1)[0].rstrip("/\\") or DEFAULT_BUILD_DIR
    guess = Path(fixed) if Path(fixed).is_absolute() else cwd / fixed
    if not is_zephyr_build(guess) and is_zephyr_build(cwd):
        return cwd
    return guess


def board_candidates(target: str) -> list[str]:
    """A board target (``board[@rev][/soc[/cluster[/variant]]]``, Zephyr's
    cmake/modules/boards.cmake) without its revision, then ever shorter prefixes:
    ``nucleo_f767zi@1/stm32f767xx`` -> [``nucleo_f767zi/stm32f767xx``, ``nucleo_f767zi``]."""
    parts = [p for p in target.split("/") if p]
    if parts:
        parts[0] = parts[0].split("@", 1)[0]
    return ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]


def nnopt_board_for(target: str, zephyr_boards: Mapping[str, str]) -> str | None:
    """The nnopt board (file name) whose zephyr_board is the target or its shortest
    matching prefix; ``zephyr_boards`` maps nnopt board names to zephyr_board."""
    for candidate in board_candidates(target):
        for name in sorted(zephyr_boards):
            if zephyr_boards[name] == candidate:
                return name
    return None


def elf_path(build_dir: Path) -> Path:
    """The final ELF of a build: <build>/zephyr/<CONFIG_KERNEL_BIN_NAME>.elf; for a
    sysbuild directory with one application image, that image's."""
    if not build_dir.is_dir():
        raise BuildDirError(f"build directory {build_dir} does not exist",
                            hint="build first (west build -b BOARD APP) or pass -d DIR")
    if not is_zephyr_build(build_dir):
        raise BuildDirError(f"{build_dir} is not a Zephyr build directory "
                            "(no CMakeCache.txt with ZEPHYR_TOOLCHAIN_VARIANT)",
                            hint="pass the build directory with -d")
    zephyr_dir = build_dir / "zephyr"
    if not zephyr_dir.is_dir():
        images = sorted(p.parent.parent for p in build_dir.glob("*/zephyr/.config"))
        if len(images) == 1:
            return elf_path(images[0])
        names = ", ".join(p.name for p in images) or "none"
        raise BuildDirError(f"{build_dir} is a sysbuild directory with images: {names}",
                            hint=f"pass the image's directory, e.g. -d {build_dir}/<image>")
    name = "zephyr"
    config = zephyr_dir / ".config"
    if config.is_file():
        m = re.search(r'^CONFIG_KERNEL_BIN_NAME="([^"]+)"', config.read_text(), re.M)
        if m:
            name = m.group(1)
    elf = zephyr_dir / f"{name}.elf"
    if not elf.is_file():
        raise BuildDirError(f"{elf} does not exist", hint="the build has not linked yet: "
                            "run west build first")
    return elf


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


def zephyr_board_table(boards_module: ModuleType) -> dict[str, str]:
    """{nnopt board name: zephyr_board} for every board nnopt knows."""
    names: Iterable[str] = boards_module.known_boards()
    return {name: str(boards_module.load_board(name).zephyr_board) for name in names}


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
                            "matching the build's Zephyr board)")
        parser.add_argument("--json", type=Path, metavar="PATH",
                            help="also write the report as JSON")
        parser.add_argument("--top", type=int, default=10, metavar="N",
                            help="how many of the largest symbols to list (default 10)")
        return parser

    def do_run(self, args: argparse.Namespace, unknown: list[str]) -> None:
        try:
            check_elf = _import("nnopt.commands.check_elf")
            boards = _import("nnopt.boards")
            nnopt_error: type[Exception] = _import("nnopt.errors").NnoptError
        except ImportError as err:
            self.die(f"cannot import nnopt: {err}\n"
                     f"Hint: install nnopt and its requirements into west's Python "
                     f"({sys.executable}): pip install -e {SCRIPTS_DIR.parent}")
        dir_fmt = self.config.get("build.dir-fmt") if self.has_config else None
        try:
            build_dir = find_build_dir(args.build_dir, dir_fmt, Path.cwd())
            elf = elf_path(build_dir)
            board = args.board or self._board_of(build_dir, boards)
        except BuildDirError as err:
            self.die(err.message + (f"\nHint: {err.hint}" if err.hint else ""))
        self.dbg(f"nn-check: {elf} against board {board}")
        ns = argparse.Namespace(firmware=elf, board=board, json=args.json, top=args.top)
        try:
            status = int(check_elf.run(ns))
        except nnopt_error as err:
            message = getattr(err, "message", str(err))
            hint = getattr(err, "hint", None)
            self.die(message + (f"\nHint: {hint}" if hint else ""),
                     exit_code=int(getattr(err, "exit_code", 1)))
        if status:
            # The report (printed by check_elf.run) already says what is over budget.
            raise CommandError(returncode=status)  # type: ignore[no-untyped-call]

    def _board_of(self, build_dir: Path, boards: ModuleType) -> str:
        cache = read_cmake_cache(build_dir / "CMakeCache.txt")
        target = cache.get("CACHED_BOARD") or cache.get("BOARD")
        if not target:
            raise BuildDirError(f"{build_dir}/CMakeCache.txt names no board (CACHED_BOARD)",
                                hint="pass the nnopt board with --board")
        board = nnopt_board_for(target, zephyr_board_table(boards))
        if board is None:
            known = ", ".join(sorted(boards.known_boards()))
            raise BuildDirError(f"no nnopt board for Zephyr board {target!r}",
                                hint=f"pass --board (known: {known}) or add "
                                "boards/nnopt/<name>.yaml with zephyr_board: " + target)
        return board
