"""The rows of bench_firmware.py: one model's figures on every core measured (nnopt's
and TFLM's), and the cores it can measure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnopt.firmware.toolchain import Target

M7_BOARD = "nucleo_f767zi"
M3_BOARD = "mps2_an385"


@dataclass(frozen=True)
class BenchCore:
    """A core nnopt's firmware is measured on: its target and board (docs/cores.md)."""

    target: Target
    board: str


#: Every core ``--cores`` can select, by short name (nnopt.firmware.cores). The M7 is
#: the base of every row (TFLM side by side); the M3 keeps its own columns and table;
#: the others fill ``Row.cores`` and the "every core" table. A new core is one entry.
BENCH_CORES: dict[str, BenchCore] = {
    "m7": BenchCore("qemu-m7", M7_BOARD),
    "m3": BenchCore("qemu-m3", M3_BOARD),
    "m4": BenchCore("qemu", "mps2_an386"),
    "m33": BenchCore("qemu", "mps2_an521"),
    "m55": BenchCore("qemu", "mps3_an547"),
    "m0": BenchCore("qemu", "qemu_cortex_m0"),
    "rv32": BenchCore("qemu", "qemu_riscv32"),  # RV32IMAC, QEMU virt (minstret)
}
#: Cores measured by default (the figures of benchmarks/README.md).
DEFAULT_CORES = ("m7", "m3")
#: The cores whose figures are the row's own fields (``Row``: the M7's, ``m3_*``); the
#: others' are ``Row.cores[core]`` (:class:`CoreFigures`).
ROW_CORES = ("m7", "m3")


@dataclass
class CoreFigures:
    """nnopt's firmware on one more core (``--cores``): instructions (first
    invocation), ROM and RAM (data + bss, arena included, stack reservation excluded)
    of its ELF on that board, its outputs against the interpreter's, or why not."""

    board: str
    instructions: int | None = None
    rom_bytes: int | None = None
    ram_bytes: int | None = None
    arena_bytes: int | None = None
    bit_exact: bool | None = None
    error: str | None = None
    # TFLM built for the same core (tflm_targets.py: ``<kernels>_<core>``), the same
    # fields as the M7's ``Row.tflm_<kernels>_*`` (RISC-V: reference kernels only)
    tflm_cmsis_nn_instructions: int | None = None
    tflm_cmsis_nn_rom_bytes: int | None = None
    tflm_cmsis_nn_ram_bytes: int | None = None
    tflm_cmsis_nn_arena_bytes: int | None = None
    tflm_cmsis_nn_code_bytes: int | None = None
    tflm_cmsis_nn_stack_bytes: int | None = None
    tflm_cmsis_nn_bit_exact: bool | None = None
    tflm_cmsis_nn_error: str | None = None
    tflm_cmsis_nn_measured_at: str | None = None
    tflm_cmsis_nn_cached: bool = False
    tflm_cmsis_nn_outputs_sha256: list[str] | None = None
    tflm_ref_instructions: int | None = None
    tflm_ref_rom_bytes: int | None = None
    tflm_ref_ram_bytes: int | None = None
    tflm_ref_arena_bytes: int | None = None
    tflm_ref_code_bytes: int | None = None
    tflm_ref_stack_bytes: int | None = None
    tflm_ref_bit_exact: bool | None = None
    tflm_ref_error: str | None = None
    tflm_ref_measured_at: str | None = None
    tflm_ref_cached: bool = False
    tflm_ref_outputs_sha256: list[str] | None = None
    ratio_cmsis_nn: float | None = None  # instructions / tflm_cmsis_nn_instructions
    ratio_ref: float | None = None  # instructions / tflm_ref_instructions


@dataclass
class Row:
    model: str
    path: str
    ops: int
    macs: int
    group: str = ""
    core: str = "m7"  # the core of the row's own figures (the others: m3_*, cores)
    instructions: int | None = None  # nnopt, Cortex-M7 (QEMU), the first invocation
    m3_instructions: int | None = None
    rom_bytes: int | None = None  # M7 ELF, all ROM regions
    ram_bytes: int | None = None  # M7 ELF, all RAM regions (stack reservation excluded)
    stack_reserved: int | None = None
    arena_bytes: int = 0
    scratch_bytes: int = 0
    runtime_code_bytes: int | None = None  # libnnrt.a text + rodata in the M7 link
    model_const_bytes: int | None = None  # weights and per-op constants (ROM)
    code_bytes: int | None = None  # ROM - model constants
    tflm_min_arena: int | None = None
    tflm_error: str | None = None
    kernel_symbols: dict[str, int] = field(default_factory=dict)
    specialize: str = "auto"
    specialized_rom_bytes: int | None = None  # <model>_spec_* functions (generated code)
    specialized_symbols: dict[str, int] = field(default_factory=dict)
    state_bytes: int = 0  # persistent state (variable tensors), beside the arena
    invocations: int = 1  # inferences per firmware run (state carried over)
    bit_exact: bool | None = None  # nnopt's outputs == the tflite-micro interpreter's
    # on the M7 and, when it ran, on the M3 firmware == the interpreter's or, where
    # they differ, == TFLM's own M3 firmware's (m3_same_as_tflm_m3)
    m3_bit_exact: bool | None = None  # the M3 firmware's == the interpreter's (None: no
    # M3 run)
    error: str | None = None  # why nnopt has no figures for this model
    # TFLM as the same kind of M7 firmware (tflm_firmware.py), per kernel variant:
    # instructions (first invocation), ROM (all flash regions) and RAM (data + bss,
    # the arena included, stack reservation excluded) of its ELF, its 32-bit arena
    # (arena_used_bytes(), with which the firmware was linked), the ROM minus the
    # .tflite array, stack used, whether its outputs match the interpreter's, or why
    # it could not be measured
    tflm_cmsis_nn_instructions: int | None = None
    tflm_cmsis_nn_rom_bytes: int | None = None
    tflm_cmsis_nn_ram_bytes: int | None = None
    tflm_cmsis_nn_arena_bytes: int | None = None
    tflm_cmsis_nn_code_bytes: int | None = None
    tflm_cmsis_nn_stack_bytes: int | None = None
    tflm_cmsis_nn_bit_exact: bool | None = None
    tflm_cmsis_nn_error: str | None = None
    tflm_cmsis_nn_measured_at: str | None = None  # UTC, when the figures were measured
    tflm_cmsis_nn_cached: bool = False  # the figures came from the cache (tflm_cache.py)
    tflm_ref_instructions: int | None = None
    tflm_ref_rom_bytes: int | None = None
    tflm_ref_ram_bytes: int | None = None
    tflm_ref_arena_bytes: int | None = None
    tflm_ref_code_bytes: int | None = None
    tflm_ref_stack_bytes: int | None = None
    tflm_ref_bit_exact: bool | None = None
    tflm_ref_error: str | None = None
    tflm_ref_measured_at: str | None = None
    tflm_ref_cached: bool = False
    tflm_cmsis_nn_outputs_sha256: list[str] | None = None
    tflm_ref_outputs_sha256: list[str] | None = None
    # TFLM as Cortex-M3 firmware (mps2_an385, the same harness; tflm_firmware.M3_VARIANTS),
    # measured beside nnopt's M3 firmware: the same fields
    tflm_cmsis_nn_m3_instructions: int | None = None
    tflm_cmsis_nn_m3_rom_bytes: int | None = None
    tflm_cmsis_nn_m3_ram_bytes: int | None = None
    tflm_cmsis_nn_m3_arena_bytes: int | None = None
    tflm_cmsis_nn_m3_code_bytes: int | None = None
    tflm_cmsis_nn_m3_stack_bytes: int | None = None
    tflm_cmsis_nn_m3_bit_exact: bool | None = None
    tflm_cmsis_nn_m3_error: str | None = None
    tflm_cmsis_nn_m3_measured_at: str | None = None
    tflm_cmsis_nn_m3_cached: bool = False
    tflm_cmsis_nn_m3_outputs_sha256: list[str] | None = None
    tflm_ref_m3_instructions: int | None = None
    tflm_ref_m3_rom_bytes: int | None = None
    tflm_ref_m3_ram_bytes: int | None = None
    tflm_ref_m3_arena_bytes: int | None = None
    tflm_ref_m3_code_bytes: int | None = None
    tflm_ref_m3_stack_bytes: int | None = None
    tflm_ref_m3_bit_exact: bool | None = None
    tflm_ref_m3_error: str | None = None
    tflm_ref_m3_measured_at: str | None = None
    tflm_ref_m3_cached: bool = False
    tflm_ref_m3_outputs_sha256: list[str] | None = None
    # nnopt's M3 outputs byte-identical with those of TFLM's M3 firmware (every M3
    # variant that ran): where the M3's libm (newlib's soft-float expf/logf) differs
    # from the host's, TFLM on the same core is the reference (None: not compared)
    m3_same_as_tflm_m3: bool | None = None
    ratio_cmsis_nn: float | None = None  # instructions / tflm_cmsis_nn_instructions
    ratio_ref: float | None = None  # instructions / tflm_ref_instructions
    ratio_m3_cmsis_nn: float | None = None  # m3_instructions / tflm_cmsis_nn_m3_instructions
    ratio_m3_ref: float | None = None  # m3_instructions / tflm_ref_m3_instructions
    # an ONNX model (path): both sides ran the .tflite nnopt convert wrote from it
    # nnopt on the other cores of --cores (m4, m33, m55, m0 ...), by short name
    cores: dict[str, CoreFigures] = field(default_factory=dict)
    convert_command: str | None = None  # the nnopt convert command line
    converted_path: str | None = None  # the .tflite measured
    converted_sha256: str | None = None
    onnx_same_code: bool | None = None  # nnopt's C from the .onnx == from the .tflite
