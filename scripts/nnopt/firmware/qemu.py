"""QEMU facts and the QEMU command line for nnrt bare-metal firmware
(:func:`nnopt.firmware.toolchain.run` uses them): ``qemu-system-arm`` or
``qemu-system-riscv32`` by the board's arch (:mod:`nnopt.firmware.arch`), ``-M`` the
board's ``emulation.machine``.

QEMU runs with semihosting on the host's files (the program's arguments become the
semihosting command line; the firmware's startup splits it into ``argv``) and with
``-icount shift=0``: every executed instruction advances virtual time by exactly 1 ns,
so SysTick on the processor clock counts instructions deterministically: one tick per
10^9 / SYSCLK instructions (:data:`SYSCLK_HZ` per machine, checked by
tests/test_firmware.py). On the mps2 machines the processor clock is 25 MHz, one tick
per 40 instructions (:data:`INSTRUCTIONS_PER_TICK`); where the ratio is a fraction
(16 MHz: 62.5) the firmware scales by numerator / denominator. On RISC-V the
port reads ``minstret``, which QEMU under ``-icount`` answers with the instruction count
itself (target/riscv/csr.c): one count per instruction on ``virt`` and ``sifive_e``
(checked by tests/test_firmware_riscv.py).

A program reports a measured instruction count by printing a line
``nnrt: instructions=<N>`` (the harness does, around ``invoke()`` only);
:attr:`nnopt.firmware.toolchain.RunResult.instructions` is the last such number.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path

from ..boards import Board
from ..errors import ToolchainError
from .arch import ARCH_TOOLS, arch_tools

QEMU = ARCH_TOOLS["arm"].qemu
QEMU_HINT = ARCH_TOOLS["arm"].qemu_hint

#: The processor clock that drives SysTick (SYST_CSR = 7) on each QEMU machine:
#: hw/arm/mps2.c (mps2-an385/an386/an500: 25 MHz), hw/arm/mps2-tz.c (mps2-an521:
#: 20 MHz, mps3-an547: 32 MHz), hw/arm/nrf51_soc.c (microbit: HCLK 16 MHz); each
#: measured by tests/test_firmware.py (test_instructions_per_tick_calibration).
SYSCLK_HZ: Mapping[str, int] = {
    "mps2-an385": 25_000_000, "mps2-an386": 25_000_000, "mps2-an500": 25_000_000,
    "mps2-an521": 20_000_000, "mps3-an547": 32_000_000, "microbit": 16_000_000,
}

#: Machines whose counter counts instructions themselves (RISC-V: minstret).
INSTRUCTION_COUNTERS: frozenset[str] = frozenset({"virt", "sifive_e"})

#: Instructions per SysTick tick under ``-icount shift=0`` (1 ns per instruction) on
#: the machines where that is a whole number.
INSTRUCTIONS_PER_TICK: Mapping[str, int] = {
    **{m: 10**9 // hz for m, hz in SYSCLK_HZ.items() if 10**9 % hz == 0},
    **{m: 1 for m in INSTRUCTION_COUNTERS}}

#: Extra QEMU options per machine: virt would otherwise boot OpenSBI before the
#: firmware (Zephyr's boards/qemu/riscv32/board.cmake passes the same).
MACHINE_ARGS: Mapping[str, tuple[str, ...]] = {"virt": ("-bios", "none")}


def instructions_per_tick_ratio(machine: str) -> Fraction:
    """Instructions per counter tick on ``machine``: 1 where the counter counts
    instructions (RISC-V minstret), else per SysTick tick (40 for a machine not listed:
    the 25 MHz of the mps2 family)."""
    if machine in INSTRUCTION_COUNTERS:
        return Fraction(1)
    hz = SYSCLK_HZ.get(machine)
    return Fraction(40) if hz is None else Fraction(10**9, hz)


#: Exit codes of the bare-metal port (modules/nnrt/include/nnrt/port.h).
PORT_EXIT_CODES: Mapping[int, str] = {
    100: "CPU fault",
    101: "stack overflow",
    102: "semihosting command line unreadable or too long",
}

#: Longest semihosting command line the firmware accepts (NNRT_PORT_CMDLINE_MAX - 1).
CMDLINE_MAX = 1023

_INSTRUCTIONS_RE = re.compile(r"^nnrt: instructions=(\d+)\s*$", re.MULTILINE)


def qemu_available(arch: str = "arm") -> bool:
    """Whether the QEMU binary of ``arch`` (``qemu-system-arm`` by default) is on PATH."""
    return shutil.which(ARCH_TOOLS[arch].qemu) is not None


def quote_arg(arg: str) -> str:
    """Quote one argument for the firmware's command-line splitter (see port.h)."""
    if arg and not any(c in arg for c in ' \t\n\r"\\'):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def semihosting_cmdline(exe: Path, args: Sequence[str]) -> str:
    """The command line the firmware will read with SYS_GET_CMDLINE."""
    return " ".join(quote_arg(a) for a in (str(exe), *args))


def qemu_command(exe: Path, board: Board, args: Sequence[str]) -> list[str]:
    """The full QEMU command line for running ``exe`` with ``args`` on ``board``."""
    if board.emulation is None:
        raise ToolchainError(f"board {board.name} cannot be emulated (no emulation section)")
    tools = arch_tools(board)
    qemu = shutil.which(tools.qemu)
    if qemu is None:
        raise ToolchainError(f"{tools.qemu} not found on PATH", hint=tools.qemu_hint)
    cmdline = semihosting_cmdline(exe, args)
    if len(cmdline.encode()) > CMDLINE_MAX:
        raise ToolchainError(
            f"command line for the firmware is {len(cmdline.encode())} bytes, the firmware "
            f"takes at most {CMDLINE_MAX}",
            hint="use shorter (absolute) paths, or build with a bigger "
                 "-DNNRT_PORT_CMDLINE_MAX")
    # QEMU's option parser: ',' separates keys, ',,' is a literal comma.
    sh_args = "".join(",arg=" + quote_arg(a).replace(",", ",,") for a in (str(exe), *args))
    return [
        qemu, "-M", board.emulation.machine, *MACHINE_ARGS.get(board.emulation.machine, ()),
        "-nographic", "-monitor", "none",
        "-semihosting-config", "enable=on,target=native" + sh_args,
        "-icount", "shift=0",
        "-kernel", str(exe),
    ]


def parse_instructions(stdout: str) -> int | None:
    """The last ``nnrt: instructions=N`` line of a program's output."""
    found = _INSTRUCTIONS_RE.findall(stdout)
    return int(found[-1]) if found else None
