"""Board data: the memory regions of a part, read from ``boards/nnopt/<name>.yaml``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import BoardError, NnoptError, UnknownBoardError
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
    machine: str  # QEMU -M value (qemu-system-arm or -riscv32, by the board's arch)
    origins: Mapping[str, int]  # region name -> address on the emulated machine


#: Internal flash kept free for the runtime's code, vectors and the application when
#: checking weights at plan time (measured: runtime + harness ~20-40 KB at -O2;
#: nnopt.memory_budget.check_budget).
ROM_CODE_RESERVE = 64 * 1024


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
    # The memory hierarchy (issue 39), all optional:
    # storage devices by name (internal flash, external NOR, SD card ...)
    storage: Mapping[str, Storage] = field(default_factory=dict)
    # RAM regions the planner may spread activations over when one arena does not fit
    # the arena region (fastest first); empty: the arena region only
    activation_regions: tuple[str, ...] = ()
    # the storage device feature maps are written to when RAM cannot hold them
    feature_map_storage: str = ""
    # storage devices a streamed weight blob larger than ``external_flash`` may go to,
    # in order of preference (the first that holds it: nnopt.swap.pipeline); empty:
    # the external flash only
    weight_storage: tuple[str, ...] = ()

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
                             node=str(r.get("node") or ""),
                             bandwidth_bytes_per_s=float(r.get("bandwidth_bytes_per_s", 0)),
                             latency_cycles=int(r.get("latency_cycles", 0)),
                             energy_pj_per_byte=float(r.get("energy_pj_per_byte", 0)),
                             source=str(r.get("source", "")))
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
                source=str(data.get("source") or source),
                arch=str(data.get("arch", "arm")),
                storage=storage,
                activation_regions=tuple(str(r) for r in data.get("activation_regions") or ()),
                feature_map_storage=str(data.get("feature_map_storage") or ""),
                weight_storage=tuple(str(d) for d in data.get("weight_storage") or ()),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise BoardError(f"{source}: malformed board data ({err!r})",
                             hint="see boards/nnopt/README.md for the format") from err
        if board.arch not in ARCHES:
            raise BoardError(f"{source}: arch {board.arch!r} is not one of "
                             + ", ".join(ARCHES), hint="arch is 'arm' (default) or 'riscv'")
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
        for name in board.weight_storage:
            if name not in board.storage or board.storage[name].memory_mapped:
                raise BoardError(f"{source}: weight_storage {name!r} is not an external "
                                 "storage device",
                                 hint="devices: " + (", ".join(
                                     d.name for d in board.storage.values()
                                     if not d.memory_mapped) or "none"))
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


def spare_flash(board_name: str | None, weight_bytes: int) -> int | None:
    """Bytes of the internal flash of the board named ``board_name`` left beside
    ``weight_bytes`` of weights kept there and :data:`ROM_CODE_RESERVE` (what
    ``nnopt.memory_budget.check_budget`` compares): what layouts that widen weights may
    add (``nnopt.lowering.fc.fit_flash``). None without a board nnopt knows."""
    if not board_name:
        return None
    try:
        board = load_board(board_name)
    except NnoptError:
        return None
    return sum(r.size for r in board.rom_regions) - ROM_CODE_RESERVE - weight_bytes
