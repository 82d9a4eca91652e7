"""Board data: the memory regions of a part, read from ``boards/nnopt/<name>.yaml``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import BoardError
from .paths import boards_dir


@dataclass(frozen=True)
class Region:
    name: str
    kind: str  # "rom" or "ram"
    origin: int
    size: int


@dataclass(frozen=True)
class Emulation:
    machine: str  # qemu-system-arm -M value
    origins: Mapping[str, int]  # region name -> address on the emulated machine


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    zephyr_board: str
    cpu: str  # "cortex-m7", "cortex-m3", ...
    fpu: str | None
    clock_hz: int
    regions: Mapping[str, Region]
    arena_region: str
    emulation: Emulation | None
    external_flash: Mapping[str, Any] = field(default_factory=dict)

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
                name: Region(name, str(r["kind"]), int(r["origin"]), int(r["size"]))
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
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise BoardError(f"{source}: malformed board data ({err!r})",
                             hint="see boards/nnopt/README.md for the format") from err
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


def load_board(name: str) -> Board:
    """Load a board by name (``nucleo_f767zi``) or Zephyr name (``mps2/an385``)."""
    key = name.replace("/", "_")
    path = boards_dir() / f"{key}.yaml"
    if not path.is_file() and "/" in name:
        # a Zephyr board target with its qualifiers (mps2/an521/cpu0): the board whose
        # zephyr_board it is
        for b in (Board.from_file(f) for f in sorted(boards_dir().glob("*.yaml"))):
            if b.zephyr_board == name:
                return b
    if not path.is_file():
        raise BoardError(
            f"unknown board {name!r}",
            hint="known boards: " + ", ".join(known_boards())
            + " (add one as boards/nnopt/<name>.yaml)",
        )
    return Board.from_file(path)
