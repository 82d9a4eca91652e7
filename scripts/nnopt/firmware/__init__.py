"""Build C programs for the host or as bare-metal Cortex-M firmware, run them (QEMU for
firmware) and generate the linker scripts that enforce a board's memory budget.

- :mod:`.toolchain`: :class:`BuildSpec`, :func:`build` (cached by content),
  :class:`RunResult`, :func:`run`.
- :mod:`.linker`: the GNU ld script for a board (emulated or real addresses).
- :mod:`.cores`: the processor cores (architecture, kernel paths) by ``-mcpu``.
- :mod:`.qemu`: the QEMU command line, machine facts (instructions per SysTick tick).
"""

from .cores import CORES, Core, core_of
from .linker import FirmwareLayout, board_layout, linker_script
from .qemu import INSTRUCTIONS_PER_TICK, SYSCLK_HZ, qemu_available, qemu_command
from .toolchain import (
    DEFAULT_BOARDS,
    TARGETS,
    BuildSpec,
    RunResult,
    Target,
    build,
    default_cache_dir,
    run,
)

__all__ = [
    "CORES",
    "DEFAULT_BOARDS",
    "INSTRUCTIONS_PER_TICK",
    "SYSCLK_HZ",
    "TARGETS",
    "BuildSpec",
    "Core",
    "FirmwareLayout",
    "RunResult",
    "Target",
    "board_layout",
    "build",
    "core_of",
    "default_cache_dir",
    "linker_script",
    "qemu_available",
    "qemu_command",
    "run",
]
