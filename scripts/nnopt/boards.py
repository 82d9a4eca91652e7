"""Board data: the memory regions of a part, read from ``boards/nnopt/<name>.yaml``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import BoardError, UnknownBoardError
from .paths import boards_dir

#: Values of a board's ``arch`` (the firmware layer has a toolchain and port for each).
ARCHES: tuple[str, ...] = ("arm", "riscv")


@dataclass(frozen=True)
class Region:
    name: str
    kind: str  # "rom" or "ram"
    origin: int
    size: int
    node: str = ""  # the devicetree node it came from ("sram0: /soc/memory@20000000")


@dataclass(frozen=True)
class Emulation:
    machine: str  # QEMU -M value (qemu-system-arm or -riscv32, by the board's arch)
    origins: Mapping[str, int]  # region name -> address on the emulated machine


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    zephyr_board: str
    cpu: str  # Arm: the -mcpu value ("cortex-m7"); RISC-V: the -march value ("rv32imac")
    fpu: str | None
    clock_hz: int
    regions: Mapping[str, Region]
    arena_region: str
    emulation: Emulation | None
    external_flash: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""  # where the data came from: the board file, or "devicetree <path>"
    arch: str = "arm"  # instruction-set family the firmware layer builds for: arm, riscv

    @property
    def sram_bytes(self) -> int:
        """Bytes of the region the arena goes to."""
        return self.regions[self.arena_region].size

    @property
    def rom_regions(self) -> list[Region]:
        return [r for r in self.regions.values() if r.kind == "rom"]

    @property
    def ram_regions(self) -> list[Region]:
        return [r for r in self.regions.values() if r.kind == "ram"]

    @classmethod
    def from_data(cls, data: Mapping[str, Any], source: str = "<data>") -> Board:
        try:
            regions = {
                name: Region(name, str(r["kind"]), int(r["origin"]), int(r["size"]),
                             node=str(r.get("node") or ""))
                for name, r in data["regions"].items()
            }
            for r in regions.values():
                if r.kind not in ("rom", "ram"):
                    raise BoardError(f"{source}: region {r.name} has kind {r.kind!r}",
                                     hint="kind is 'rom' or 'ram'")
            emu = data.get("emulation")
            emulation = (
                Emulation(str(emu["machine"]), {k: int(v) for k, v in emu["origins"].items()})
                if emu else None
            )
            board = cls(
                name=str(data["name"]),
                description=str(data.get("description", "")),
                zephyr_board=str(data.get("zephyr_board", data["name"])),
                cpu=str(data["cpu"]),
                fpu=None if data.get("fpu") is None else str(data["fpu"]),
                clock_hz=int(data.get("clock_hz", 0)),
                regions=regions,
                arena_region=str(data.get("arena_region", "sram")),
                emulation=emulation,
                external_flash=dict(data.get("external_flash") or {}),
                source=str(data.get("source") or source),
                arch=str(data.get("arch", "arm")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise BoardError(f"{source}: malformed board data ({err!r})",
                             hint="see boards/nnopt/README.md for the format") from err
        if board.arch not in ARCHES:
            raise BoardError(f"{source}: arch {board.arch!r} is not one of "
                             + ", ".join(ARCHES), hint="arch is 'arm' (default) or 'riscv'")
        if board.arena_region not in board.regions:
            raise BoardError(f"{source}: arena_region {board.arena_region!r} is not a region")
        return board

    @classmethod
    def from_file(cls, path: Path) -> Board:
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as err:
            raise BoardError(f"cannot read board file {path}: {err}") from err
        return cls.from_data(data, source=str(path))


def known_boards() -> list[str]:
    return sorted(p.stem for p in boards_dir().glob("*.yaml"))


def builtin_board_file(name: str) -> Path | None:
    """The board file for ``name``: ``boards/nnopt/<name>.yaml`` (``mps2/an385`` ->
    ``mps2_an385.yaml``), else the file whose ``zephyr_board`` is the Zephyr board
    target or its longest prefix (``nucleo_f767zi/stm32f767xx`` -> nucleo_f767zi);
    None when no file describes the board."""
    path = boards_dir() / f"{name.replace('/', '_')}.yaml"
    if path.is_file():
        return path
    parts = [p for p in name.split("/") if p]
    if parts:
        parts[0] = parts[0].split("@", 1)[0]
    by_zephyr: dict[str, Path] = {}
    for p in sorted(boards_dir().glob("*.yaml")):
        try:
            data = yaml.safe_load(p.read_text())
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict):
            by_zephyr.setdefault(str(data.get("zephyr_board", p.stem)), p)
    for n in range(len(parts), 0, -1):
        hit = by_zephyr.get("/".join(parts[:n]))
        if hit is not None:
            return hit
    return None


def load_board(name: str) -> Board:
    """Load a board by name (``nucleo_f767zi``) or Zephyr board target (``mps2/an385``,
    ``nucleo_f767zi/stm32f767xx``) from its board file in ``boards/nnopt/``. Any other
    Zephyr board comes from its devicetree: :func:`nnopt.zephyr_tree.find_board`."""
    path = builtin_board_file(name)
    if path is None:
        raise UnknownBoardError(
            f"unknown board {name!r}",
            hint="known boards: " + ", ".join(known_boards())
            + " (add one as boards/nnopt/<name>.yaml)",
        )
    return Board.from_file(path)
