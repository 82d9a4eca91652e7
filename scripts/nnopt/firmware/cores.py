"""The processor cores nnopt builds bare-metal firmware for: one :class:`Core` per
core, keyed by the base of a board's ``cpu`` (its ``-mcpu`` value without ``+``
extensions: ``cortex-m33+nodsp`` is a ``cortex-m33``).

A core says which architecture profile it is (the startup code and the kernels select
their paths from the compiler's ACLE macros, ``__ARM_ARCH_6M__``,
``__ARM_FEATURE_DSP``, ``__ARM_FEATURE_MVE``; this table only documents what each
takes), its short name (``nnopt run --target qemu`` and ``bench_firmware.py --cores``
use it) and the QEMU program that emulates it. Everything else (FPU, DSP present or
not) is the board's: ``-mcpu={board.cpu}`` plus ``-mfpu`` when the board has an FPU.

Adding a core is one entry here, a board under ``boards/nnopt/`` and, for a new QEMU
machine, its clock in :data:`nnopt.firmware.qemu.SYSCLK_HZ`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..boards import Board, load_board
from ..errors import NnoptError, ToolchainError


@dataclass(frozen=True)
class Core:
    """One processor core."""

    short: str  # "m0", "m4", ...: --cores of bench_firmware.py, docs/cores.md
    cpu: str  # -mcpu base value: "cortex-m0"
    arch: str  # architecture profile: "armv6-m", "armv7-m", "armv7e-m", "armv8-m.main", ...
    qemu: str  # the QEMU system emulator
    kernels: str  # the kernel paths it takes (docs/cores.md)
    # the constant-weight layouts (names of the lowerings' layouts: "row-pair",
    # nnopt.lowering.fc) whose kernels run faster on this core than the tensor's own
    # order: code generation writes weights in no other (EmitContext.weight_layouts)
    weight_layouts: frozenset[str] = frozenset({"row-pair"})
    # the same for a board whose cpu leaves the DSP extension out ("+nodsp"), when it
    # differs (None: weight_layouts)
    nodsp_layouts: frozenset[str] | None = None


_ARM_QEMU = "qemu-system-arm"
# the DSP cores (SMLAD) without Helium: the fully connected row pairs, and the matrix
# core's pair rows (nnopt.lowering.gemm_pairs: 13 instead of 17 instructions per 16
# MACs; not on the M33, whose AN521 part has no DSP: its C form would be slower); the
# FCs' weights widened to int16 where the board's flash holds them
# (nnopt.lowering.fc.int16_layout: 11 instead of 14 per 16 MACs, twice the bytes), and
# the convolutions' likewise (nnopt.lowering.gemm_pairs.int16_rows: 17 instructions
# per 24 MACs in blocks of 3 channels, the pair rows 13 per 16)
_DSP_LAYOUTS = frozenset({"row-pair", "conv-row-pair", "fc-int16", "conv-int16"})

#: Every core nnopt's bare-metal firmware runs on, by -mcpu base value.
CORES: Mapping[str, Core] = {
    c.cpu: c for c in (
        Core("m0", "cortex-m0", "armv6-m", _ARM_QEMU,
             "portable C (Thumb-1: no DSP, no divide, no Thumb-2 inline assembly)"),
        Core("m0plus", "cortex-m0plus", "armv6-m", _ARM_QEMU,
             "portable C (as the Cortex-M0)"),
        Core("m3", "cortex-m3", "armv7-m", _ARM_QEMU,
             "portable C and the Thumb-2 inline assembly of the no-DSP paths"),
        Core("m4", "cortex-m4", "armv7e-m", _ARM_QEMU,
             "DSP (SMLAD, SXTB16, SSAT ...) as on the Cortex-M7",
             weight_layouts=_DSP_LAYOUTS),
        Core("m7", "cortex-m7", "armv7e-m", _ARM_QEMU,
             "DSP (SMLAD, SXTB16, SSAT ...)", weight_layouts=_DSP_LAYOUTS),
        Core("m33", "cortex-m33", "armv8-m.main", _ARM_QEMU,
             "DSP when the part has the extension, else as the Cortex-M3",
             # without DSP the FCs' packed words (nnopt.lowering.fc.pack23_layout: one
             # SMLAL for two units, twice the weights' bytes) instead of the row pairs'
             # C form (ad01_int8: benchmarks/README-kernels.md)
             nodsp_layouts=frozenset({"row-pair", "fc-pack23"})),
        Core("m55", "cortex-m55", "armv8.1-m.main", _ARM_QEMU,
             "DSP, and Helium (MVE) for the int8 matrix core, fully connected dot "
             "products and depthwise (internal/mve_*.h)",
             # Helium's fully connected rows read row-major weights: 0.23 instructions
             # per MAC in the loop, the row-pair layout's SMLAD loop 0.9; its matrix
             # core takes biases with the input offset's term (no weight sums)
             weight_layouts=frozenset({"offset-bias"})),
        Core("rv32", "rv32imac", "rv32imac", "qemu-system-riscv32",
             "portable C (no DSP, soft float; board arch riscv: nnopt.firmware.arch)"),
    )
}


def core_name(cpu: str) -> str:
    """The base ``-mcpu`` value of a board's ``cpu`` (``cortex-m33+nodsp`` -> cortex-m33)."""
    return cpu.split("+", 1)[0]


def core_of(board: Board) -> Core:
    """The core of ``board``; ToolchainError naming the known ones if nnopt has none."""
    core = CORES.get(core_name(board.cpu))
    if core is None:
        raise ToolchainError(
            f"board {board.name} has a {board.cpu}, for which nnopt builds no firmware",
            hint="cores: " + ", ".join(CORES) + " (add one in nnopt/firmware/cores.py)")
    return core


def weight_layouts(board_name: str | None) -> frozenset[str] | None:
    """The weight layouts that pay on the core of the board named ``board_name``
    (:attr:`Core.weight_layouts`); None when there is no board or nnopt does not know
    it or its core (a Zephyr board from its devicetree): every layout may then be used."""
    if not board_name:
        return None
    try:
        cpu = load_board(board_name).cpu
    except NnoptError:
        return None
    core = CORES.get(core_name(cpu))
    if core is None:
        return None
    if "+nodsp" in cpu and core.nodsp_layouts is not None:
        return core.nodsp_layouts
    return core.weight_layouts


def core_by_short(short: str) -> Core:
    """A core by its short name (``m33``)."""
    for core in CORES.values():
        if core.short == short:
            return core
    raise ToolchainError(f"unknown core {short!r}",
                         hint="cores: " + ", ".join(c.short for c in CORES.values()))
