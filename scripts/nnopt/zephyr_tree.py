"""Any Zephyr board's devicetree outside a build, as nnopt board data (cached).

What Zephyr's CMake does to make a build's devicetree, done with Zephyr's own pieces and
no toolchain:

1. the board's directory and qualifiers from ``scripts/list_boards.py`` (hardware model
   v2: every ``board.yml`` under the board roots; ``--cmakeformat`` as
   ``cmake/modules/boards.cmake`` calls it), board roots being Zephyr's and the modules'
   ``settings: board_root`` (``scripts/zephyr_module.py``);
2. the board's ``.dts``: ``<dir>/<board>_<qualifiers>.dts``, else ``<dir>/<board>.dts``
   (``cmake/modules/dts.cmake``, DTS_SOURCE);
3. the host C preprocessor over it with the include directories of every DTS root
   (Zephyr, the board directory, the modules' ``settings: dts_root``): ``include``,
   ``include/zephyr``, ``dts/common``, ``dts/<arch>`` for every arch, ``dts``
   (``cmake/modules/pre_dt.cmake``) and the flags of ``zephyr_dt_preprocess()``
   (``cmake/modules/extensions.cmake``);
4. ``edtlib.EDT`` on the result with every root's ``dts/bindings`` (as
   ``scripts/dts/gen_edt.py`` does).

Board revisions' overlays, shields and application overlays are not applied: the budget
is the board's as Zephyr ships it (a build's own devicetree, with its overlays, is read
from its ``edt.pickle`` instead). The result is cached as board data under
``$NNOPT_CACHE_DIR`` (default ``$XDG_CACHE_HOME/nnopt`` or ``~/.cache/nnopt``), keyed by
the Zephyr tree, its version, the modules and the board target.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from .boards import Board, builtin_board_file, known_boards
from .devicetree import (
    DevicetreeError,
    UnknownZephyrBoardError,
    board_data,
    board_from_edt,
    import_edtlib,
)

WORKSPACE_VAR = "NNOPT_ZEPHYR_WORKSPACE"
CACHE_VAR = "NNOPT_CACHE_DIR"
#: Bump when what is cached changes.
CACHE_FORMAT = 1


@dataclass(frozen=True)
class ZephyrBoard:
    """A board as ``list_boards.py`` lists it."""

    name: str
    dirs: tuple[Path, ...]
    qualifiers: tuple[str, ...]


def find_zephyr_base(env: Mapping[str, str] | None = None,
                     cwd: Path | None = None) -> Path | None:
    """The Zephyr tree: ``ZEPHYR_BASE``; else ``NNOPT_ZEPHYR_WORKSPACE``'s ``zephyr/``;
    else the ``zephyr/`` of the west workspace around ``cwd`` (a folder with ``.west/``)."""
    env = os.environ if env is None else env
    if env.get("ZEPHYR_BASE"):
        return Path(env["ZEPHYR_BASE"])
    if env.get(WORKSPACE_VAR):
        return Path(env[WORKSPACE_VAR]) / "zephyr"
    here = (cwd or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".west").is_dir() and (d / "zephyr" / "VERSION").is_file():
            return d / "zephyr"
    return None


def zephyr_modules(zephyr_base: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The modules: ``ZEPHYR_MODULES`` (``;``-separated, as Zephyr's CMake takes it), else
    every folder with a ``zephyr/module.yml`` around the tree (west's places)."""
    env = os.environ if env is None else env
    listed = [Path(m) for m in env.get("ZEPHYR_MODULES", "").split(";") if m]
    if listed:
        return listed
    from .zephyr_build import workspace_modules

    return workspace_modules(zephyr_base)


def module_roots(modules: Sequence[Path], setting: str) -> list[Path]:
    """The modules' ``build: settings: <setting>`` folders (``board_root``,
    ``dts_root``; zephyr_module.py's schema), absolute."""
    roots = []
    for m in modules:
        yml = m / "zephyr" / "module.yml"
        try:
            data = yaml.safe_load(yml.read_text()) if yml.is_file() else None
        except (OSError, yaml.YAMLError):
            continue
        value = (((data or {}).get("build") or {}).get("settings") or {}).get(setting)
        if isinstance(value, str):
            roots.append((m / value).resolve())
    return roots


def list_zephyr_boards(zephyr_base: Path, modules: Sequence[Path]) -> dict[str, ZephyrBoard]:
    """Every board of the tree and the modules' board roots, by name (list_boards.py)."""
    script = zephyr_base / "scripts" / "list_boards.py"
    if not script.is_file():
        raise DevicetreeError(f"{zephyr_base} has no scripts/list_boards.py",
                              hint="ZEPHYR_BASE must be a Zephyr tree (3.7 or later)")
    roots = [zephyr_base, *module_roots(modules, "board_root")]
    cmd = [sys.executable, os.fspath(script), "--cmakeformat", "{NAME}|{DIR}|{QUALIFIERS}",
           "--arch-root", os.fspath(zephyr_base), "--soc-root", os.fspath(zephyr_base)]
    for r in roots:
        cmd += ["--board-root", os.fspath(r)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise DevicetreeError(f"Zephyr's list_boards.py failed: {proc.stderr.strip()[-400:]}",
                              hint="install Zephyr's Python requirements "
                                   "(pip install -r $ZEPHYR_BASE/scripts/requirements-base.txt)")
    boards: dict[str, ZephyrBoard] = {}
    for line in proc.stdout.splitlines():
        fields = dict(_cmake_pairs(part) for part in line.split("|") if ";" in part)
        if "NAME" not in fields:
            continue
        name = fields["NAME"][0]
        boards[name] = ZephyrBoard(name, tuple(Path(d) for d in fields.get("DIR", [])),
                                   tuple(q for q in fields.get("QUALIFIERS", []) if q))
    return boards


def _cmake_pairs(part: str) -> tuple[str, list[str]]:
    key, *values = part.split(";")
    return key, values


def resolve_target(target: str, boards: Mapping[str, ZephyrBoard],
                   builtin: Sequence[str] = ()) -> tuple[ZephyrBoard, str]:
    """(board, qualifiers) of a board target ``board[@revision][/qualifiers]``; a board
    with one SoC and no qualifiers given gets that SoC (as cmake/modules/boards.cmake)."""
    name, _, quals = target.partition("/")
    name = name.split("@", 1)[0]
    board = boards.get(name)
    if board is None:
        close = difflib.get_close_matches(name, list(boards), n=5, cutoff=0.6)
        hint = (f"did you mean {', '.join(close)}? " if close else "") + \
            "`west boards` lists the tree's boards"
        if builtin:
            hint += "; nnopt's own boards: " + ", ".join(builtin)
        raise UnknownZephyrBoardError(f"unknown board {target!r}: not in the Zephyr tree",
                                      hint=hint)
    if not quals:
        socs = [q for q in board.qualifiers if "/" not in q]
        if len(socs) == 1:
            quals = socs[0]
    elif quals not in board.qualifiers:
        raise DevicetreeError(f"board {name} has no qualifiers {quals!r}",
                              hint="its board targets: " + ", ".join(
                                  f"{name}/{q}" for q in board.qualifiers))
    return board, quals


def board_dts(board: ZephyrBoard, quals: str) -> Path:
    """The board's devicetree source (DTS_SOURCE of cmake/modules/dts.cmake)."""
    stems = [f"{board.name}_{quals.replace('/', '_')}" if quals else board.name, board.name]
    for d in board.dirs:
        for stem in stems:
            if (d / f"{stem}.dts").is_file():
                return d / f"{stem}.dts"
    raise DevicetreeError(f"board {board.name} has no {stems[0]}.dts in "
                          + ", ".join(map(os.fspath, board.dirs)),
                          hint="name the board target with its SoC, e.g. "
                               f"{board.name}/{board.qualifiers[0] if board.qualifiers else 'soc'}")


def _arch_names(zephyr_base: Path) -> list[str]:
    try:
        data = yaml.safe_load((zephyr_base / "arch" / "archs.yml").read_text())
        return [str(a["name"]) for a in data["archs"]]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return ["arm", "riscv"]


def dts_roots(zephyr_base: Path, board: ZephyrBoard, modules: Sequence[Path]) -> list[Path]:
    """DTS_ROOT (cmake/modules/pre_dt.cmake): the modules' dts roots, the board's
    directory and Zephyr, without duplicates."""
    roots: list[Path] = []
    for r in [*module_roots(modules, "dts_root"), *board.dirs[:1], zephyr_base]:
        r = r.resolve()
        if r not in roots:
            roots.append(r)
    return roots


def preprocess(dts: Path, roots: Sequence[Path], arches: Sequence[str], out: Path,
               zephyr_base: Path) -> None:
    """The host C preprocessor over ``dts`` as zephyr_dt_preprocess() runs it."""
    cpp = shutil.which("cpp")
    if cpp is None:
        raise DevicetreeError("no C preprocessor (cpp) on PATH to read the board's devicetree",
                              hint="install cpp (Debian: apt-get install cpp)")
    includes: list[str] = []
    for root in roots:
        for sub in ["include", "include/zephyr", "dts/common",
                    *(f"dts/{a}" for a in arches), "dts"]:
            if (root / sub).is_dir():
                includes += ["-isystem", os.fspath((root / sub).resolve())]
    cmd = [cpp, "-x", "assembler-with-cpp", "-nostdinc", *includes, "-include", os.fspath(dts),
           "-undef", "-D__DTS__", "-E", "-o", os.fspath(out),
           os.fspath(zephyr_base / "misc" / "empty_file.c")]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise DevicetreeError(f"preprocessing {dts} failed: {proc.stderr.strip()[-600:]}",
                              hint="a module with the board's dts includes may be missing "
                                   "(ZEPHYR_MODULES, e.g. hal_stm32 for STM32 pin control)")


def edt_for_board(zephyr_base: Path, target: str, modules: Sequence[Path],
                  builtin: Sequence[str] = ()) -> object:
    """The ``edtlib.EDT`` of a board target, made from the tree's sources."""
    edtlib = import_edtlib(zephyr_base)
    board, quals = resolve_target(target, list_zephyr_boards(zephyr_base, modules), builtin)
    dts = board_dts(board, quals)
    roots = dts_roots(zephyr_base, board, modules)
    bindings = [os.fspath(r / "dts" / "bindings") for r in roots
                if (r / "dts" / "bindings").is_dir()]
    vendor_prefixes: dict[str, str] = {}
    for r in roots:
        txt = r / "dts" / "bindings" / "vendor-prefixes.txt"
        if txt.is_file():
            vendor_prefixes.update(edtlib.load_vendor_prefixes_txt(os.fspath(txt)))
    with tempfile.TemporaryDirectory(prefix="nnopt-dts-") as tmp:
        out = Path(tmp) / "zephyr.dts.pre"
        preprocess(dts, roots, _arch_names(zephyr_base), out, zephyr_base)
        try:
            # The arguments of scripts/dts/gen_edt.py's EDT(...), warnings off.
            return edtlib.EDT(os.fspath(out), bindings, warn_reg_unit_address_mismatch=False,
                              default_prop_types=True, infer_binding_for_paths=["/zephyr,user"],
                              vendor_prefixes=vendor_prefixes)
        except edtlib.EDTError as err:
            raise DevicetreeError(f"devicetree error in {dts}: {err}") from err


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(CACHE_VAR):
        return Path(env[CACHE_VAR])
    xdg = env.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "nnopt"


def _cache_key(zephyr_base: Path, target: str, modules: Sequence[Path]) -> str:
    version = (zephyr_base / "VERSION").read_text() if (zephyr_base / "VERSION").is_file() else ""
    text = json.dumps([CACHE_FORMAT, os.fspath(zephyr_base.resolve()), version,
                       sorted(os.fspath(m) for m in modules), target])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def zephyr_board(target: str, *, builtin: Sequence[str] = (),
                 env: Mapping[str, str] | None = None, use_cache: bool = True) -> Board:
    """The board data of any Zephyr board target from its devicetree (cached)."""
    env = os.environ if env is None else env
    base = find_zephyr_base(env)
    if base is None:
        raise UnknownZephyrBoardError(
            f"unknown board {target!r}: not one of nnopt's boards, and no Zephyr tree to "
            "read its devicetree from",
            hint="set ZEPHYR_BASE to a Zephyr tree (or NNOPT_ZEPHYR_WORKSPACE to a west "
                 "workspace) for any Zephyr board, or use one of nnopt's boards: "
                 + ", ".join(builtin))
    if not (base / "VERSION").is_file():
        raise DevicetreeError(f"{base} is not a Zephyr tree (no VERSION file)",
                              hint="ZEPHYR_BASE names the zephyr/ folder of a workspace")
    modules = zephyr_modules(base, env)
    cached = cache_dir(env) / "boards" / f"{target.replace('/', '_')}-" \
        f"{_cache_key(base, target, modules)}.json"
    if use_cache and cached.is_file():
        try:
            return Board.from_data(json.loads(cached.read_text()), source=os.fspath(cached))
        except (OSError, ValueError):
            pass  # unreadable cache: made afresh below
    print(f"nnopt: reading the devicetree of {target} from {base} ...", file=sys.stderr,
          flush=True)
    edt = edt_for_board(base, target, modules, builtin)
    board = board_from_edt(edt, target, source=f"devicetree of {target} in {base}")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(board_data(board), indent=1) + "\n")
    except OSError:
        pass  # a read-only home: no cache, same result
    return board


def find_board(name: str, env: Mapping[str, str] | None = None) -> Board:
    """The board ``name`` names: nnopt's board file when one describes it (``nucleo_f767zi``,
    ``mps2/an385``: overrides and emulation data, :func:`nnopt.boards.load_board`), else,
    when a Zephyr tree is known (``ZEPHYR_BASE``, ``NNOPT_ZEPHYR_WORKSPACE`` or a west
    workspace around the current directory), the Zephyr board's devicetree."""
    path = builtin_board_file(name)
    if path is not None:
        return Board.from_file(path)
    return zephyr_board(name, builtin=known_boards(), env=env)
