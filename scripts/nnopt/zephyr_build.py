"""Zephyr build directories: find one, read its CMake cache, locate its ELF, and map its
board to an nnopt board. Used by ``west nn-check`` (a thin shell over this). Also what a
Zephyr build outside west needs from the environment: the toolchain variables and the
workspace's modules (tests/support/twister.py, tests/test_reproducible.py,
benchmarks/bench_zephyr.py)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from .boards import known_boards, load_board
from .errors import NnoptError

DEFAULT_BUILD_DIR = "build"  # west build's default (build.dir-fmt unset)


class BuildDirError(NnoptError):
    """The build directory, its cache or its ELF cannot be used."""


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


def board_candidates(target: str) -> list[str]:
    """A board target (``board[@rev][/soc[/cluster[/variant]]]``, Zephyr's
    cmake/modules/boards.cmake) without its revision, then ever shorter prefixes:
    ``nucleo_f767zi@1/stm32f767xx`` -> [``nucleo_f767zi/stm32f767xx``, ``nucleo_f767zi``]."""
    parts = [p for p in target.split("/") if p]
    if parts:
        parts[0] = parts[0].split("@", 1)[0]
    return ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]


def nnopt_board_for(target: str, zephyr_boards: dict[str, str] | None = None) -> str | None:
    """The nnopt board whose ``zephyr_board`` is the target or its longest matching
    prefix; ``zephyr_boards`` ({nnopt name: zephyr_board}) defaults to every known board."""
    table = zephyr_boards if zephyr_boards is not None else {
        name: load_board(name).zephyr_board for name in known_boards()}
    for candidate in board_candidates(target):
        for name in sorted(table):
            if table[name] == candidate:
                return name
    return None


def board_of_build(build_dir: Path) -> str:
    """The nnopt board for a Zephyr build directory (from CACHED_BOARD)."""
    cache = read_cmake_cache(build_dir / "CMakeCache.txt")
    target = cache.get("CACHED_BOARD") or cache.get("BOARD")
    if not target:
        raise BuildDirError(f"{build_dir}/CMakeCache.txt names no board (CACHED_BOARD)",
                            hint="pass the nnopt board with --board")
    board = nnopt_board_for(target)
    if board is None:
        raise BuildDirError(f"no nnopt board for Zephyr board {target!r}",
                            hint=f"pass --board (known: {', '.join(known_boards())}) or add "
                            "boards/nnopt/<name>.yaml with zephyr_board: " + target)
    return board


def budget_of_build(build_dir: Path) -> tuple[str, Path | None, Path | None]:
    """(board, devicetree, Zephyr tree) of a Zephyr build directory: the nnopt board for
    its Zephyr board when a board file describes it (devicetree None), else the build's
    target with its own devicetree, ``zephyr/edt.pickle`` (cmake/modules/dts.cmake's
    EDT_PICKLE), and the ZEPHYR_BASE of its CMake cache (whose edtlib reads it)."""
    cache = read_cmake_cache(build_dir / "CMakeCache.txt")
    target = cache.get("CACHED_BOARD") or cache.get("BOARD")
    if target and nnopt_board_for(target) is None:
        edt = build_dir / "zephyr" / "edt.pickle"
        if edt.is_file():
            base = cache.get("ZEPHYR_BASE")
            return target, edt, Path(base) if base else None
    return board_of_build(build_dir), None, None


def toolchain_env(env: Mapping[str, str]) -> dict[str, str] | str:
    """``env`` with a Zephyr toolchain: its own ``ZEPHYR_TOOLCHAIN_VARIANT``, else the GNU
    Arm toolchain on its PATH (``gnuarmemb``, ``GNUARMEMB_TOOLCHAIN_PATH`` the prefix of
    ``arm-none-eabi-gcc``); or why there is none."""
    if env.get("ZEPHYR_TOOLCHAIN_VARIANT"):
        return dict(env)
    gcc = shutil.which("arm-none-eabi-gcc", path=env.get("PATH"))
    if gcc is None:
        return ("no Zephyr toolchain: set ZEPHYR_TOOLCHAIN_VARIANT (zephyr SDK) or install "
                "gcc-arm-none-eabi for gnuarmemb")
    return {**env, "ZEPHYR_TOOLCHAIN_VARIANT": "gnuarmemb",
            "GNUARMEMB_TOOLCHAIN_PATH": os.fspath(Path(gcc).resolve().parent.parent)}


def workspace_modules(zephyr_base: Path, exclude: Path | None = None) -> list[Path]:
    """Every Zephyr module (a folder with ``zephyr/module.yml``) of the workspace around
    ``zephyr_base``, up to four levels below its parent (``modules/lib/cmsis-nn``,
    ``optional/modules/lib/tflite-micro``), sorted; not Zephyr itself, nor anything in
    ``exclude`` (a checkout added to the modules separately)."""
    top = zephyr_base.resolve().parent
    found = {p.parent.parent.resolve() for depth in range(1, 5)
             for p in top.glob("/".join(["*"] * depth) + "/zephyr/module.yml")}
    found.discard(zephyr_base.resolve())
    if exclude is not None:
        ex = exclude.resolve()
        found = {p for p in found if ex not in (p, *p.parents)}
    return sorted(found)
