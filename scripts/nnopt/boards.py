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
    # The memory hierarchy (issue 39; optional, 0/"" when the board file says nothing):
    # sustained bytes per second the core reads and writes it at, the access latency in
    # core cycles (wait states + 1), energy per byte moved, and where the figures come
    # from (a datasheet section, the devicetree).
    bandwidth_bytes_per_s: float = 0.0
    latency_cycles: int = 0
    energy_pj_per_byte: float = 0.0
    source: str = ""


#: Kinds of storage device (:class:`Storage`): internal flash (memory-mapped), NOR on
#: SPI/QSPI, an SD card over SPI or SDMMC, Zephyr's flash simulator.
STORAGE_KINDS = ("internal_flash", "spi_nor", "qspi_nor", "sd_spi", "sd", "flash_simulator")


@dataclass(frozen=True)
class Storage:
    """A non-volatile storage device of the board (the hierarchy below RAM): what the
    swap planner may read weights from and write feature maps to. Every figure is the
    part's datasheet value named in ``source`` (the board YAML comments cite them)."""

    name: str
    kind: str  # one of STORAGE_KINDS
    size: int  # bytes
    read_bytes_per_s: float  # sustained read over the board's bus
    write_bytes_per_s: float  # sustained programming rate (page program), erase excluded
    latency_s: float  # fixed cost per transfer (command, address, dummy cycles, DMA set-up)
    erase_block: int  # bytes erased at once (NOR sector, flash sector, SD allocation unit)
    program_unit: int  # bytes programmed at once (NOR page, SD block)
    erase_s: float  # time to erase one erase block
    endurance_cycles: int  # program/erase cycles each erase block is rated for
    read_energy_nj_per_byte: float
    write_energy_nj_per_byte: float  # programming, erase excluded
    erase_energy_nj_per_block: float  # one erase of one erase block
    wear_leveled: bool = False  # the device spreads writes itself (SD card controller)
    memory_mapped: bool = False  # readable as memory (internal flash): no copy needed
    region: str = ""  # the ROM region it is, for memory-mapped internal flash
    source: str = ""

    @property
    def writable(self) -> bool:
        return self.write_bytes_per_s > 0 and self.endurance_cycles > 0

    @classmethod
    def from_data(cls, name: str, d: Mapping[str, Any]) -> Storage:
        kind = str(d["kind"])
        if kind not in STORAGE_KINDS:
            raise BoardError(f"storage device {name} has kind {kind!r}",
                             hint="kind is one of " + ", ".join(STORAGE_KINDS))
        return cls(
            name=name, kind=kind, size=int(d["size"]),
            read_bytes_per_s=float(d["read_bytes_per_s"]),
            write_bytes_per_s=float(d.get("write_bytes_per_s", 0)),
            latency_s=float(d.get("latency_s", 0)),
            erase_block=int(d.get("erase_block", 0)),
            program_unit=int(d.get("program_unit", 1)),
            erase_s=float(d.get("erase_s", 0)),
            endurance_cycles=int(d.get("endurance_cycles", 0)),
            read_energy_nj_per_byte=float(d.get("read_energy_nj_per_byte", 0)),
            write_energy_nj_per_byte=float(d.get("write_energy_nj_per_byte", 0)),
            erase_energy_nj_per_block=float(d.get("erase_energy_nj_per_block", 0)),
            wear_leveled=bool(d.get("wear_leveled", False)),
            memory_mapped=bool(d.get("memory_mapped", False)),
            region=str(d.get("region", "")),
            source=str(d.get("source", "")),
        )


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
    # The memory hierarchy (issue 39), all optional:
    # storage devices by name (internal flash, external NOR, SD card ...)
    storage: Mapping[str, Storage] = field(default_factory=dict)
    # RAM regions the planner may spread activations over when one arena does not fit
    # the arena region (fastest first); empty: the arena region only
    activation_regions: tuple[str, ...] = ()
    # the storage device feature maps are written to when RAM cannot hold them
    feature_map_storage: str = ""

    @property
    def sram_bytes(self) -> int:
        """Bytes of the region the arena goes to."""
        return self.regions[self.arena_region].size

    @property
    def activation_region_list(self) -> list[Region]:
        """RAM regions activations may use, fastest first (the arena region alone when
        the board declares none)."""
        return [self.regions[r] for r in self.activation_regions or (self.arena_region,)]

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
                             float(r.get("bandwidth_bytes_per_s", 0)),
                             int(r.get("latency_cycles", 0)),
                             float(r.get("energy_pj_per_byte", 0)),
                             str(r.get("source", "")))
                for name, r in data["regions"].items()
            }
            storage = {name: Storage.from_data(name, d)
                       for name, d in (data.get("storage") or {}).items()}
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
                storage=storage,
                activation_regions=tuple(str(r) for r in data.get("activation_regions") or ()),
                feature_map_storage=str(data.get("feature_map_storage") or ""),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise BoardError(f"{source}: malformed board data ({err!r})",
                             hint="see boards/nnopt/README.md for the format") from err
        if board.arena_region not in board.regions:
            raise BoardError(f"{source}: arena_region {board.arena_region!r} is not a region")
        for name in board.activation_regions:
            if name not in board.regions or board.regions[name].kind != "ram":
                raise BoardError(f"{source}: activation region {name!r} is not a RAM region",
                                 hint="RAM regions: " + ", ".join(
                                     x.name for x in board.ram_regions))
        if board.activation_regions and board.arena_region not in board.activation_regions:
            raise BoardError(f"{source}: activation_regions must include arena_region "
                             f"{board.arena_region!r}")
        if board.feature_map_storage and board.feature_map_storage not in board.storage:
            raise BoardError(f"{source}: feature_map_storage {board.feature_map_storage!r} "
                             "is not a storage device",
                             hint="devices: " + (", ".join(board.storage) or "none"))
        for d in board.storage.values():
            if d.region and d.region not in board.regions:
                raise BoardError(f"{source}: storage {d.name} names region {d.region!r}, "
                                 "which the board does not have")
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
    if not path.is_file():
        raise BoardError(
            f"unknown board {name!r}",
            hint="known boards: " + ", ".join(known_boards())
            + " (add one as boards/nnopt/<name>.yaml)",
        )
    return Board.from_file(path)
