"""What differs per instruction-set family (a board's ``arch``) in a bare-metal build:
compiler and archiver, code-generation flags, the QEMU binary, and the port files that
are this family's own (its startup). Everything else (the runtime, the harness, the
semihosting port, the linker script's layout) is shared.

- ``arm``: ``arm-none-eabi-gcc`` (newlib), ``-mcpu=<cpu> -mthumb`` and the board's FPU,
  ``qemu-system-arm``, ``port/baremetal/startup.c``.
- ``riscv``: ``riscv64-unknown-elf-gcc`` with picolibc (Debian's toolchain has no
  newlib), ``-march=<cpu> -mabi=ilp32`` (the board's ``cpu`` is the ISA string: GCC 12
  selects its ``rv32imac/ilp32`` multilib of libgcc and picolibc from exactly these two,
  ``riscv64-unknown-elf-gcc -print-multi-lib``), ``qemu-system-riscv32``,
  ``port/baremetal/riscv/startup.c``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..boards import Board
from ..errors import ToolchainError


@dataclass(frozen=True)
class ArchTools:
    """The tools and port files of one ``arch``."""

    cc: str
    ar: str
    qemu: str
    cc_hint: str  # how to install the compiler (Debian)
    qemu_hint: str  # how to install the QEMU binary (Debian)
    port_files: tuple[str, ...]  # under modules/nnrt/port/baremetal/: this arch's own


ARCH_TOOLS: dict[str, ArchTools] = {
    "arm": ArchTools(
        cc="arm-none-eabi-gcc", ar="arm-none-eabi-ar", qemu="qemu-system-arm",
        cc_hint="install the Arm bare-metal toolchain: "
                "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi",
        qemu_hint="install QEMU for Arm: apt-get install qemu-system-arm",
        port_files=("startup.c",)),
    "riscv": ArchTools(
        cc="riscv64-unknown-elf-gcc", ar="riscv64-unknown-elf-ar",
        qemu="qemu-system-riscv32",
        cc_hint="install the RISC-V bare-metal toolchain and its C library: "
                "apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf",
        qemu_hint="install QEMU for RISC-V: apt-get install qemu-system-misc",
        port_files=("riscv/startup.c",)),
}

#: Every arch's own port files: the shared port is the rest of port/baremetal/*.c.
ARCH_PORT_FILES: frozenset[str] = frozenset(
    f for tools in ARCH_TOOLS.values() for f in tools.port_files)


def arch_tools(board: Board) -> ArchTools:
    """The tools of ``board``'s arch."""
    try:
        return ARCH_TOOLS[board.arch]
    except KeyError:
        raise ToolchainError(f"board {board.name}: no bare-metal toolchain for arch "
                             f"{board.arch!r}", hint="arch: " + ", ".join(ARCH_TOOLS)) from None


def machine_flags(board: Board) -> list[str]:
    """Code-generation flags for ``board`` (also passed to the link)."""
    if board.arch == "riscv":
        if board.fpu:
            raise ToolchainError(
                f"board {board.name}: RISC-V with an FPU ({board.fpu}) is not supported",
                hint="RV32 boards build soft float: fpu: null (-mabi=ilp32)")
        # picolibc.specs: its headers for the compile, its libc/libm (the multilib of
        # -march/-mabi) for the link; the linker script is ours (-T), so not picolibc.ld.
        return [f"-march={board.cpu}", "-mabi=ilp32", "--specs=picolibc.specs"]
    flags = [f"-mcpu={board.cpu}", "-mthumb"]
    if board.fpu:
        flags += [f"-mfpu={board.fpu}", "-mfloat-abi=hard"]
    else:
        flags += ["-mfloat-abi=soft"]
    return flags
