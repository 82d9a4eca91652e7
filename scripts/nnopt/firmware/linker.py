"""GNU ld scripts for nnrt bare-metal firmware, generated from a :class:`Board`.

The script gives every board region its *real* size (the budget of the part) at the
address it has either on the emulated machine (``addresses="emulation"``, the default:
what QEMU runs) or on the real part (``addresses="board"``: for ELF checks and a future
flashing flow). ld then refuses any firmware that does not fit the real part::

    flash (rom):  .isr_vector (Arm) or .nnrt_reset (RISC-V: the reset entry, first in
                  the image) .text .rodata .ARM.extab/.exidx init arrays .nnrt_weights
                  and the load image of .data
    arena region: .stack (NOLOAD, lowest addresses), .data, .bss, .nnrt_arena (NOLOAD),
                  .heap (NOLOAD, only when asked for)
    dtcm:         .dtcm (NOLOAD, zeroed at reset), when the board has a ``dtcm`` region

RISC-V scripts also gather the small-data sections (``.sdata``/``.sbss``/``.srodata``)
and define ``__global_pointer$`` 2 KB into ``.data`` (the gp the startup loads, so ld
can relax accesses near it to one gp-relative instruction).

The stack sits at the bottom of the arena region so that an overflow runs off the
region (on the emulated map it lands in memory QEMU ignores) instead of silently
corrupting .bss; the startup code also paints it and checks a guard word at exit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from ..boards import Board, Region
from ..errors import BoardError, BudgetError, ToolchainError
from ..paths import boards_dir
from ..plan import Plan

Addresses = Literal["emulation", "board"]

DEFAULT_STACK_SIZE = 8192
DEFAULT_HEAP_SIZE = 0


@dataclass(frozen=True)
class FirmwareLayout:
    """The firmware-only settings of a board (``firmware:`` in its yaml file)."""

    stack_size: int = DEFAULT_STACK_SIZE
    heap_size: int = DEFAULT_HEAP_SIZE
    stack_region: str | None = None  # None: the board's arena_region


def _layout_from_data(data: Mapping[str, Any], source: str) -> FirmwareLayout:
    fw = data.get("firmware") or {}
    try:
        layout = FirmwareLayout(
            stack_size=int(fw.get("stack_size", DEFAULT_STACK_SIZE)),
            heap_size=int(fw.get("heap_size", DEFAULT_HEAP_SIZE)),
            stack_region=None if fw.get("stack_region") is None else str(fw["stack_region"]),
        )
    except (TypeError, ValueError, AttributeError) as err:
        raise BoardError(f"{source}: malformed firmware section ({err!r})",
                         hint="see boards/nnopt/README.md for the format") from err
    if layout.stack_size < 256 or layout.stack_size % 8:
        raise BoardError(f"{source}: firmware.stack_size {layout.stack_size} must be a "
                         "multiple of 8 and at least 256")
    if layout.heap_size < 0 or layout.heap_size % 8:
        raise BoardError(f"{source}: firmware.heap_size {layout.heap_size} must be a "
                         "non-negative multiple of 8")
    return layout


def board_layout(board: Board) -> FirmwareLayout:
    """Read the optional ``firmware:`` section of ``boards/nnopt/<board>.yaml``.

    :class:`~nnopt.boards.Board` does not carry it (yet), so it is read from the file;
    a board built from data (no file) gets the defaults.
    """
    path = boards_dir() / f"{board.name}.yaml"
    if not path.is_file():
        return FirmwareLayout()
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise BoardError(f"cannot read board file {path}: {err}") from err
    layout = _layout_from_data(data if isinstance(data, Mapping) else {}, str(path))
    region = layout.stack_region
    if region is not None and (region not in board.regions
                               or board.regions[region].kind != "ram"):
        raise BoardError(f"{path}: firmware.stack_region {region!r} is not a RAM region")
    return layout


def region_origins(board: Board, addresses: Addresses = "emulation") -> dict[str, int]:
    """Origin of every board region in the chosen address map."""
    if addresses == "board":
        return {name: r.origin for name, r in board.regions.items()}
    if board.emulation is None:
        raise ToolchainError(f"board {board.name} has no emulation section",
                             hint="add `emulation: {machine: ..., origins: {...}}` to its "
                             "yaml file (see boards/nnopt/README.md)")
    missing = [n for n in board.regions if n not in board.emulation.origins]
    if missing:
        raise ToolchainError(
            f"board {board.name}: no emulation origin for region(s) {', '.join(missing)}",
            hint="every region needs an address on the emulated machine")
    return {name: board.emulation.origins[name] for name in board.regions}


def flash_region(board: Board) -> Region:
    """The ROM region code goes to: ``flash`` if present, else the first ROM region."""
    if "flash" in board.regions and board.regions["flash"].kind == "rom":
        return board.regions["flash"]
    roms = board.rom_regions
    if not roms:
        raise ToolchainError(f"board {board.name} has no ROM region",
                             hint="firmware needs a region of kind 'rom' for its code")
    return roms[0]


def linker_script(board: Board, *, addresses: Addresses = "emulation",
                  stack_size: int | None = None, heap_size: int | None = None) -> str:
    """The GNU ld script for ``board`` (see the module docstring for the layout)."""
    layout = board_layout(board)
    stack = layout.stack_size if stack_size is None else stack_size
    heap = layout.heap_size if heap_size is None else heap_size
    if stack < 256 or stack % 8 or heap < 0 or heap % 8:
        raise ToolchainError(f"bad stack/heap size {stack}/{heap}",
                             hint="sizes are multiples of 8; the stack at least 256 bytes")
    origins = region_origins(board, addresses)
    flash = flash_region(board).name
    ram = board.arena_region
    if board.regions[ram].kind != "ram":
        raise ToolchainError(f"board {board.name}: arena_region {ram} is not RAM")
    stack_region = layout.stack_region or ram
    has_dtcm = "dtcm" in board.regions and board.regions["dtcm"].kind == "ram"
    riscv = board.arch == "riscv"
    where = (f"{board.emulation.machine} (emulation origins)"
             if addresses == "emulation" and board.emulation else "the real part")

    mem_lines = []
    for name, region in board.regions.items():
        attrs = "rx" if region.kind == "rom" else "rwx"
        mem_lines.append(f"  {name} ({attrs}) : ORIGIN = 0x{origins[name]:08x}, "
                         f"LENGTH = {region.size}")

    lines = [
        f"/* Generated by nnopt.firmware.linker for board {board.name}, addresses of",
        f" * {where}; region sizes are the real part's. Do not edit. */",
        "ENTRY(nnrt_reset_handler)",
        "",
        "MEMORY",
        "{",
        *mem_lines,
        "}",
        "",
        f"__nnrt_stack_size = {stack};",
        f"__nnrt_heap_size = {heap};",
        "",
        "SECTIONS",
        "{",
        *(_RISCV_RESET if riscv else _ARM_VECTORS),
        f"  }} > {flash}",
        "",
        "  .text :",
        "  {",
        "    *(.text .text.* .gnu.linkonce.t.*)",
        "    *(.glue_7) *(.glue_7t) *(.vfp11_veneer) *(.v4_bx)",
        "    KEEP(*(.init)) KEEP(*(.fini))",
        f"  }} > {flash}",
        "",
        "  .rodata :",
        "  {",
        "    *(.rodata .rodata.* .gnu.linkonce.r.*)",
        *(["    *(.srodata .srodata.*)"] if riscv else []),
        "    . = ALIGN(4);",
        f"  }} > {flash}",
        "",
        f"  .ARM.extab : {{ *(.ARM.extab* .gnu.linkonce.armextab.*) }} > {flash}",
        "  .ARM.exidx :",
        "  {",
        "    __exidx_start = .;",
        "    *(.ARM.exidx* .gnu.linkonce.armexidx.*)",
        "    __exidx_end = .;",
        f"  }} > {flash}",
        "",
        "  .init_array : ALIGN(4)",
        "  {",
        "    __nnrt_init_array_start = .;",
        "    KEEP(*(.preinit_array))",
        "    KEEP(*(SORT(.init_array.*)))",
        "    KEEP(*(.init_array))",
        "    __nnrt_init_array_end = .;",
        f"  }} > {flash}",
        "  .fini_array : ALIGN(4) { KEEP(*(SORT(.fini_array.*))) KEEP(*(.fini_array)) }"
        f" > {flash}",
        "",
        "  .nnrt_weights : ALIGN(16)",
        "  {",
        "    *(.nnrt_weights .nnrt_weights.*)",
        "    . = ALIGN(4);",
        f"  }} > {flash}",
        "",
    ]
    if stack_region == ram:
        lines += _stack_lines(ram)
    lines += [
        "  .data : ALIGN(4)",
        "  {",
        "    __nnrt_data_start = .;",
        "    *(.data .data.* .gnu.linkonce.d.*)",
        *(["    *(.sdata .sdata.*)"] if riscv else []),
        "    . = ALIGN(4);",
        "    __nnrt_data_end = .;",
        f"  }} > {ram} AT> {flash}",
        "  __nnrt_data_load = LOADADDR(.data);",
        *(["  __global_pointer$ = __nnrt_data_start + 0x800;"] if riscv else []),
        "",
        "  .bss (NOLOAD) : ALIGN(4)",
        "  {",
        "    __nnrt_bss_start = .;",
        *(["    *(.sbss .sbss.*)"] if riscv else []),
        "    *(.bss .bss.* .gnu.linkonce.b.*)",
        "    *(COMMON)",
        "    . = ALIGN(4);",
        "    __nnrt_bss_end = .;",
        f"  }} > {ram}",
        "",
        "  .nnrt_arena (NOLOAD) : ALIGN(16)",
        "  {",
        "    *(.nnrt_arena .nnrt_arena.*)",
        f"  }} > {ram}",
        "",
    ]
    if heap:
        lines += [
            "  .heap (NOLOAD) : ALIGN(8)",
            "  {",
            "    __nnrt_heap_start = .;",
            "    . += __nnrt_heap_size;",
            "    __nnrt_heap_end = .;",
            f"  }} > {ram}",
            "  end = __nnrt_heap_start; /* newlib's _sbrk start, if someone links one */",
            "",
        ]
    if stack_region != ram:
        lines += _stack_lines(stack_region)
    if has_dtcm:
        lines += [
            "  .dtcm (NOLOAD) : ALIGN(16)",
            "  {",
            "    __nnrt_dtcm_start = .;",
            "    *(.dtcm .dtcm.*)",
            "    . = ALIGN(4);",
            "    __nnrt_dtcm_end = .;",
            "  } > dtcm",
        ]
    else:
        lines += [
            "  __nnrt_dtcm_start = 0;",
            "  __nnrt_dtcm_end = 0;",
        ]
    lines += [
        "",
        "  /* not loaded: debug information and attributes */",
        "  .comment 0 : { *(.comment) }",
        ("  .riscv.attributes 0 : { KEEP(*(.riscv.attributes)) }" if riscv
         else "  .ARM.attributes 0 : { KEEP(*(.ARM.attributes)) }"),
        "}",
        "",
    ]
    return "\n".join(lines)


#: The first output section: Cortex-M's vector table (read at the image's start).
_ARM_VECTORS = ("  .isr_vector : ALIGN(128)", "  {", "    KEEP(*(.isr_vector))")
#: RISC-V: the reset entry (riscv/startup.c), where QEMU's reset vector jumps.
_RISCV_RESET = ("  .nnrt_reset :", "  {", "    KEEP(*(.nnrt_reset))")


def _stack_lines(region: str) -> list[str]:
    return [
        "  .stack (NOLOAD) : ALIGN(8)",
        "  {",
        "    __nnrt_stack_limit = .;",
        "    . += __nnrt_stack_size;",
        "    . = ALIGN(8);",
        "    __nnrt_stack_top = .;",
        f"  }} > {region}",
        "",
    ]


def firmware_arena_budget(board: Board) -> int:
    """Bytes of the arena region left for the arena and the persistent state once the
    firmware's stack (when it shares the region) and heap are reserved."""
    layout = board_layout(board)
    reserved = layout.heap_size
    if (layout.stack_region or board.arena_region) == board.arena_region:
        reserved += layout.stack_size
    return board.regions[board.arena_region].size - reserved


def check_firmware_budget(plan: Plan, board: Board) -> None:
    """BudgetError when the plan's arena and persistent state do not fit the arena
    region once the bare-metal firmware's stack and heap (``firmware:``) are reserved
    there: the budget a QEMU run enforces beyond :func:`nnopt.memory_budget.check_budget`
    (which knows the region, not the firmware). On a 16 KB part the 2 KB stack matters."""
    region = board.regions[board.arena_region]
    budget = firmware_arena_budget(board)
    reserved = region.size - budget
    if plan.sram_bytes > budget:
        state = (f" plus {plan.state_bytes:,} bytes of persistent state"
                 if plan.state_bytes else "")
        raise BudgetError(
            f"the activation arena needs {plan.arena_bytes:,} bytes{state} but board "
            f"{board.name} has {region.size:,} bytes of {board.arena_region}, "
            f"{reserved:,} of them the firmware's stack and heap: over by "
            f"{plan.sram_bytes - budget:,} bytes",
            hint="a board with more SRAM, a smaller input resolution, or a smaller "
                 "firmware.stack_size in boards/nnopt/" + board.name + ".yaml")
