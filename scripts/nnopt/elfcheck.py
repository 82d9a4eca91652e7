"""SRAM/ROM use of a linked firmware ELF against a board's memory budget (pyelftools).

What is counted, per region of the board:

- every allocated section (``SHF_ALLOC``, non-empty) at its run address (VMA): code,
  read-only data, weights in ROM regions; data, bss, arena, noinit, stack and heap
  reservations in RAM regions (``NOBITS`` sections take RAM, no ROM);
- the load image of every section whose load address (LMA, from the program headers)
  differs from its run address, e.g. ``.data``'s initial values: ROM at the LMA.

So for a firmware whose writable initialised sections are all copied from flash, ROM =
``text + data`` and RAM = ``data + bss`` as ``arm-none-eabi-size`` (Berkeley format)
prints them.

The ELF may be linked for the real part (e.g. Zephyr's ``zephyr.elf`` for nucleo_f767zi,
flash at 0x08000000) or for the board's emulated map (nnopt's QEMU firmware, regions at
the board's ``emulation.origins``); the map that places the most section bytes inside
the board's regions is used. A section that starts past the end of a region but
continues the sections before it (an overflowing link) counts against that region.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from elftools.common.exceptions import ELFError as PyElfError
from elftools.common.exceptions import ELFParseError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

from .boards import Board
from .errors import ElfError

#: Functions of kernels specialised to the model (nnopt.lowering.specialize.spec_symbol),
#: GCC clones (``.constprop.0``) included; group 1: the op.
_SPEC = re.compile(r"\w+_spec_op(\d+)(?:_\w+)?(?:\.\w+\.\d+)?$")

AddressMap = Literal["board", "emulation"]

#: Sections that continue the previous one within this many bytes still belong to its
#: region (alignment padding between output sections).
_CONTIGUOUS_SLACK = 4096
_ELF_MAGIC = b"\x7fELF"
_EM_ARM = 40
#: e_machine values of the firmware check-elf reads: Cortex-M (Arm) and RV32 (RISC-V).
_MACHINES = {_EM_ARM: "Arm", 243: "RISC-V"}


@dataclass(frozen=True)
class SectionUse:
    """One allocated section of the ELF."""

    name: str
    category: str  # vectors text rodata weights data bss arena noinit stack heap
    address: int  # run address (VMA)
    size: int
    region: str | None  # region of the run address (None: outside the board's regions)
    load_address: int | None = None  # LMA when it differs from the VMA (an image in ROM)
    load_region: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "category": self.category, "address": self.address,
                "size": self.size, "region": self.region, "load_address": self.load_address,
                "load_region": self.load_region}


@dataclass(frozen=True)
class RegionUse:
    """Use of one board region: ``used`` bytes of ``size`` (the real part's budget)."""

    name: str
    kind: str  # rom / ram
    origin: int  # in the ELF's address map
    size: int
    used: int
    categories: dict[str, int] = field(default_factory=dict)  # category -> bytes

    @property
    def free(self) -> int:
        return self.size - self.used

    @property
    def over(self) -> int:
        """Bytes over budget (0 when it fits)."""
        return max(0, self.used - self.size)

    @property
    def percent(self) -> float:
        return 100.0 * self.used / self.size if self.size else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "origin": self.origin,
                "size": self.size, "used": self.used, "free": self.free, "over": self.over,
                "categories": dict(self.categories)}


@dataclass(frozen=True)
class SymbolUse:
    """A sized function or object from the symbol table."""

    name: str
    size: int
    address: int
    kind: str  # "func" or "object"
    region: str | None
    section: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "address": self.address,
                "kind": self.kind, "region": self.region, "section": self.section}


@dataclass(frozen=True)
class ElfReport:
    """The result of :func:`check_elf`."""

    path: Path
    board: str
    address_map: AddressMap
    machine: str | None  # QEMU machine when the ELF uses the emulated map
    regions: tuple[RegionUse, ...]
    sections: tuple[SectionUse, ...]
    symbols: tuple[SymbolUse, ...]  # largest first
    arena_region: str
    has_dtcm: bool

    @property
    def rom_used(self) -> int:
        return sum(r.used for r in self.regions if r.kind == "rom")

    @property
    def ram_used(self) -> int:
        return sum(r.used for r in self.regions if r.kind == "ram")

    @property
    def specialized(self) -> tuple[SymbolUse, ...]:
        """Kernels code generation specialised to the model (``<model>_spec_op<k>*``
        functions, nnopt.lowering.specialize)."""
        return tuple(y for y in self.symbols if y.kind == "func" and _SPEC.match(y.name))

    @property
    def unplaced(self) -> tuple[SectionUse, ...]:
        """Allocated sections outside every region of the board."""
        return tuple(s for s in self.sections if s.region is None)

    @property
    def over_budget(self) -> bool:
        return any(r.over > 0 for r in self.regions)

    def region(self, name: str) -> RegionUse:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    def hints(self) -> list[str]:
        """What to move where, for each region over budget."""
        out: list[str] = []
        for r in self.regions:
            if r.over == 0:
                continue
            if r.kind == "rom":
                w = r.categories.get("weights", 0)
                out.append(
                    f"{r.name}: {r.over:,} B over. Move weights to external flash with "
                    f"--swap ({w:,} B of weights are in {r.name} now), or pick a smaller "
                    "model")
            else:
                arena = r.categories.get("arena", 0)
                tips = []
                if self.has_dtcm and r.name != "dtcm":
                    tips.append("put the arena (or hot buffers) in DTCM")
                if r.name == "dtcm":
                    tips.append("move DTCM data back to SRAM")
                tips.append("shrink the arena with tiling (patch-based execution of the "
                            "first layers)")
                tips.append("lower firmware.stack_size if the stack is oversized")
                text = "; ".join(tips)
                out.append(f"{r.name}: {r.over:,} B over ({arena:,} B of arena here). "
                           + text[:1].upper() + text[1:])
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "board": self.board,
            "address_map": self.address_map,
            "machine": self.machine,
            "rom_used": self.rom_used,
            "ram_used": self.ram_used,
            "over_budget": self.over_budget,
            "regions": [r.to_json() for r in self.regions],
            "sections": [s.to_json() for s in self.sections],
            "unplaced": [s.to_json() for s in self.unplaced],
            "symbols": [s.to_json() for s in self.symbols],
            "specialized_rom_bytes": sum(y.size for y in self.specialized),
            "hints": self.hints(),
        }


# ---- reading the ELF ------------------------------------------------------------------

@dataclass
class _RawSection:
    index: int
    name: str
    address: int
    size: int
    nobits: bool
    writable: bool
    executable: bool
    load_address: int | None


@dataclass
class _RawSymbol:
    name: str
    size: int
    address: int
    kind: str
    shndx: int


def _validate_header(path: Path) -> bytes:
    if not path.exists():
        raise ElfError(f"{path}: no such file", hint="give the path of the linked firmware ELF")
    if not path.is_file():
        raise ElfError(f"{path} is not a file", hint="give the path of the linked firmware ELF")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ElfError(f"cannot read {path}: {err.strerror or err}") from err
    hint = ("give the linked firmware, e.g. build/zephyr/zephyr.elf or the ELF nnopt built "
            "for QEMU (not a .bin/.hex image)")
    if len(data) < 52 or data[:4] != _ELF_MAGIC:
        if data[:4] == _ELF_MAGIC:
            raise ElfError(f"{path} is truncated ({len(data)} bytes, shorter than an ELF "
                           "header)", hint=hint)
        raise ElfError(f"{path} is not an ELF file", hint=hint)
    if data[4] != 1:
        cls = {2: "64-bit"}.get(data[4], f"class {data[4]}")
        raise ElfError(f"{path} is a {cls} ELF, not a 32-bit Arm or RISC-V firmware",
                       hint="check-elf reads Cortex-M and RV32 firmware (32-bit ELF)")
    if data[5] not in (1, 2):
        raise ElfError(f"{path}: bad ELF data encoding {data[5]}", hint=hint)
    endian = "<" if data[5] == 1 else ">"
    e_type, machine = struct.unpack_from(endian + "HH", data, 16)
    if machine not in _MACHINES:
        raise ElfError(f"{path} is an ELF for machine {machine}, not Arm (40) or RISC-V (243)",
                       hint="check-elf reads Cortex-M and RV32 firmware (32-bit ELF)")
    if e_type != 2:  # ET_EXEC
        what = {1: "an object file (not linked)", 3: "a shared object",
                4: "a core dump"}.get(e_type, f"of ELF type {e_type}")
        raise ElfError(f"{path} is {what}, not a linked firmware executable", hint=hint)
    shoff, = struct.unpack_from(endian + "I", data, 32)
    phoff, = struct.unpack_from(endian + "I", data, 28)
    phentsize, phnum, shentsize, shnum = struct.unpack_from(endian + "HHHH", data, 42)
    if shnum == 0 or shoff == 0:
        raise ElfError(f"{path} has no section headers", hint=hint)
    if shoff + shnum * shentsize > len(data) or phoff + phnum * phentsize > len(data):
        raise ElfError(f"{path} is truncated ({len(data):,} bytes; its headers end at "
                       f"{max(shoff + shnum * shentsize, phoff + phnum * phentsize):,})",
                       hint="rebuild the firmware or copy the whole file")
    return data


def _read(path: Path) -> tuple[list[_RawSection], list[_RawSymbol]]:
    _validate_header(path)
    try:
        with path.open("rb") as f:
            elf = ELFFile(f)
            segments = [
                (seg["p_vaddr"], seg["p_paddr"], seg["p_memsz"], seg["p_filesz"])
                for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD"
            ]
            sections: list[_RawSection] = []
            for index, sec in enumerate(elf.iter_sections()):
                flags = sec["sh_flags"]
                if not flags & SH_FLAGS.SHF_ALLOC or sec["sh_size"] == 0:
                    continue
                nobits = sec["sh_type"] == "SHT_NOBITS"
                addr = sec["sh_addr"]
                lma: int | None = None
                if not nobits:
                    for vaddr, paddr, memsz, filesz in segments:
                        if vaddr <= addr < vaddr + max(memsz, filesz):
                            lma = paddr + (addr - vaddr)
                            break
                sections.append(_RawSection(
                    index, sec.name, addr, sec["sh_size"], nobits,
                    bool(flags & SH_FLAGS.SHF_WRITE), bool(flags & SH_FLAGS.SHF_EXECINSTR),
                    lma if lma is not None and lma != addr else None))
            symbols: list[_RawSymbol] = []
            symtab = elf.get_section_by_name(".symtab")
            if symtab is not None and hasattr(symtab, "iter_symbols"):
                for sym in symtab.iter_symbols():
                    kind = sym["st_info"]["type"]
                    shndx = sym["st_shndx"]
                    if kind not in ("STT_FUNC", "STT_OBJECT") or sym["st_size"] == 0:
                        continue
                    if not isinstance(shndx, int):
                        continue  # SHN_UNDEF / SHN_ABS / SHN_COMMON
                    addr = sym["st_value"]
                    if kind == "STT_FUNC":
                        addr &= ~1  # Thumb bit
                    symbols.append(_RawSymbol(sym.name, sym["st_size"], addr,
                                              "func" if kind == "STT_FUNC" else "object",
                                              shndx))
    except ElfError:
        raise
    except (PyElfError, ELFParseError, struct.error, ValueError, KeyError, IndexError,
            OSError, UnicodeDecodeError, AttributeError, TypeError) as err:
        raise ElfError(f"{path}: corrupt or truncated ELF ({err})",
                       hint="rebuild the firmware or copy the whole file") from err
    return sections, symbols


# ---- placing sections in regions -------------------------------------------------------

def _origins(board: Board, address_map: AddressMap) -> dict[str, int]:
    if address_map == "emulation" and board.emulation is not None:
        return {n: board.emulation.origins.get(n, r.origin) for n, r in board.regions.items()}
    return {n: r.origin for n, r in board.regions.items()}


def _containing(addr: int, board: Board, origins: dict[str, int]) -> str | None:
    for name, region in board.regions.items():
        if origins[name] <= addr < origins[name] + region.size:
            return name
    return None


def _score(sections: Iterable[_RawSection], board: Board, origins: dict[str, int]) -> int:
    return sum(s.size for s in sections if _containing(s.address, board, origins))


def _place(sections: list[_RawSection], board: Board,
           origins: dict[str, int]) -> dict[int, str | None]:
    """Region of every section's run address, continuing overflowing chains."""
    placed: dict[int, str | None] = {}
    prev_end: int | None = None
    prev_region: str | None = None
    for s in sorted(sections, key=lambda s: (s.address, s.index)):
        region = _containing(s.address, board, origins)
        if (region is None and prev_region is not None and prev_end is not None
                and prev_end <= s.address <= prev_end + _CONTIGUOUS_SLACK):
            region = prev_region
        placed[s.index] = region
        if region is not None:
            prev_end, prev_region = max(s.address + s.size, prev_end or 0), region
        else:
            prev_end, prev_region = None, None
    return placed


def _load_region(lma: int, board: Board, origins: dict[str, int]) -> str | None:
    region = _containing(lma, board, origins)
    if region is not None:
        return region
    below = [(origins[n], n) for n, r in board.regions.items()
             if r.kind == "rom" and origins[n] <= lma]
    return max(below)[1] if below else None


def _category(s: _RawSection, kind: str | None) -> str:
    n = s.name.lstrip(".").lower()
    if n.startswith("nnrt_weights"):
        return "weights"
    if n.startswith("nnrt_arena"):
        return "arena"
    if n in ("isr_vector", "vectors", "vector_table", "exc_vector_table", "rom_start"):
        return "vectors"
    if n == "stack" or n.endswith("_stack") or n.startswith("stack"):
        return "stack"
    if n.startswith("heap") or n.endswith("_heap"):
        return "heap"
    if "noinit" in n:
        return "noinit"
    if kind == "rom" or not s.writable:
        return "text" if s.executable else "rodata"
    return "bss" if s.nobits else "data"


def check_elf(path: Path, board: Board) -> ElfReport:
    """Measure ``path`` against ``board``'s regions (see the module docstring).

    Raises :class:`~nnopt.errors.ElfError` when the file is missing, truncated, not an
    ELF, not 32-bit Arm, or has nothing in the board's regions.
    """
    path = Path(path)
    raw_sections, raw_symbols = _read(path)

    maps: list[AddressMap] = ["board"]
    if board.emulation is not None and _origins(board, "emulation") != _origins(board,
                                                                                 "board"):
        maps.append("emulation")
    scores = {m: _score(raw_sections, board, _origins(board, m)) for m in maps}
    address_map = max(maps, key=lambda m: (scores[m], m == "board"))
    if scores[address_map] == 0:
        raise ElfError(
            f"{path}: none of its sections lies in a memory region of board {board.name} "
            "(checked its real addresses"
            + (" and its emulated ones)" if len(maps) > 1 else ")"),
            hint="is the ELF linked for this board? pass the right --board")
    origins = _origins(board, address_map)
    placed = _place(raw_sections, board, origins)

    sections: list[SectionUse] = []
    usage: dict[str, dict[str, int]] = {n: {} for n in board.regions}
    for s in raw_sections:
        region = placed[s.index]
        kind = board.regions[region].kind if region else None
        cat = _category(s, kind)
        load_region = (_load_region(s.load_address, board, origins)
                       if s.load_address is not None else None)
        if load_region == region:
            load_region = None  # an image where it runs: no extra copy
        sections.append(SectionUse(s.name, cat, s.address, s.size, region,
                                   s.load_address if load_region else None, load_region))
        if region is not None:
            usage[region][cat] = usage[region].get(cat, 0) + s.size
        if load_region is not None:
            key = f"{cat} (load image)"
            usage[load_region][key] = usage[load_region].get(key, 0) + s.size

    regions = tuple(
        RegionUse(n, r.kind, origins[n], r.size, sum(usage[n].values()),
                  dict(sorted(usage[n].items(), key=lambda kv: (-kv[1], kv[0]))))
        for n, r in board.regions.items())

    region_of_section = {s.index: placed[s.index] for s in raw_sections}
    name_of_section = {s.index: s.name for s in raw_sections}
    symbols = sorted(
        (SymbolUse(y.name, y.size, y.address, y.kind, region_of_section.get(y.shndx),
                   name_of_section.get(y.shndx, "?"))
         for y in raw_symbols if y.shndx in region_of_section),
        key=lambda y: (-y.size, y.name, y.address))

    return ElfReport(
        path=path,
        board=board.name,
        address_map=address_map,
        machine=board.emulation.machine if address_map == "emulation" and board.emulation
        else None,
        regions=regions,
        sections=tuple(sorted(sections, key=lambda s: (s.address, s.name))),
        symbols=tuple(symbols),
        arena_region=board.arena_region,
        has_dtcm="dtcm" in board.regions,
    )


# ---- text report -----------------------------------------------------------------------

def format_report(report: ElfReport, top: int = 10) -> str:
    """A human-readable report: regions with breakdown, largest symbols, verdict."""
    where = (f"emulated addresses ({report.machine})" if report.address_map == "emulation"
             else "the board's addresses")
    lines = [f"{report.path}: board {report.board}, linked at {where}", ""]
    w = max([8, *(len(r.name) for r in report.regions)])  # devicetree names run longer
    header = f"{'region':<{w}} {'kind':<4} {'origin':>10} {'used':>11} {'size':>11} " \
             f"{'free':>11} {'use':>6}"
    lines.append(header)
    for r in report.regions:
        lines.append(f"{r.name:<{w}} {r.kind:<4} {r.origin:#010x} {r.used:>11,} {r.size:>11,} "
                     f"{max(r.free, 0):>11,} {r.percent:>5.1f}%"
                     + (f"  OVER by {r.over:,}" if r.over else ""))
        if r.categories:
            parts = [f"{k} {v:,}" for k, v in r.categories.items()]
            lines.append(" " * (w + 1) + ", ".join(parts))
    lines.append("")
    lines.append(f"ROM used {report.rom_used:,} B, RAM used {report.ram_used:,} B")
    spec = report.specialized
    if spec:
        ops = len({m.group(1) for y in spec if (m := _SPEC.match(y.name))})
        lines.append(f"of it kernels specialised to the model: {sum(y.size for y in spec):,} B "
                     f"({len(spec)} functions for {ops} ops, *_spec_op*)")
    for s in report.unplaced:
        lines.append(f"warning: section {s.name} ({s.size:,} B at {s.address:#010x}) is "
                     "outside every region of the board")
    if top > 0 and report.symbols:
        lines += ["", f"largest symbols (top {min(top, len(report.symbols))}):",
                  f"{'size':>11}  {'region':<8} {'kind':<6} name"]
        for y in report.symbols[:top]:
            lines.append(f"{y.size:>11,}  {y.region or '-':<8} {y.kind:<6} {y.name}")
    lines.append("")
    if report.over_budget:
        over = ", ".join(f"{r.name} by {r.over:,} B" for r in report.regions if r.over)
        lines.append(f"OVER BUDGET: {over}")
        lines += [f"hint: {h}" for h in report.hints()]
    else:
        lines.append(f"fits board {report.board}")
    return "\n".join(lines)
