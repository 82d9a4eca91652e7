"""What `nnopt run --stats` reports about one run: instructions per inference, memory
of the plan, and for firmware the ROM/RAM of its ELF and the code of the kernels
specialised to the model. Library code, so that benchmarks and tools read the same
figures as the command."""
from __future__ import annotations

from typing import Any

from .boards import Board
from .elfcheck import check_elf
from .lowering.specialize import specialized_rom_bytes
from .planner import PlannedModel
from .runner import RunOutput
from .swap.pipeline import swap_of


def run_stats(pm: PlannedModel, res: RunOutput, *, target: str, board: Board | None,
              allocator: str, arena_bytes: int,
              bytes_moved: int | None = None) -> dict[str, Any]:
    """The JSON object of ``--stats`` (field names are a contract: instructions,
    arena_bytes, rom_bytes, ram_bytes, specialized_rom_bytes, ...)."""
    stats: dict[str, Any] = {"instructions": res.instructions, "arena_bytes": arena_bytes,
                             "target": target, "model": pm.plan.model,
                             "allocator": allocator}
    if bytes_moved is not None:
        stats["bytes_moved"] = bytes_moved
    if res.invocations != 1:
        stats["invocations"] = res.invocations  # instructions: the first one's
    if pm.plan.state:
        stats["state_bytes"] = pm.plan.state_bytes
    stats["specialize"] = str(pm.plan.options.get("specialize", "auto"))
    if res.executable is not None:
        # the kernels specialised to this model: <model>_spec_* in the linked ELF
        stats["specialized_rom_bytes"] = specialized_rom_bytes(res.executable, pm.plan.model)
        if target != "host" and board is not None:
            report = check_elf(res.executable, board)
            stats["rom_bytes"] = report.rom_used
            stats["ram_bytes"] = report.ram_used
    if res.stack_bytes is not None:
        stats["stack_used_bytes"] = res.stack_bytes  # deepest use of the painted stack
    swap = swap_of(pm.plan)
    if swap is not None:
        stats["swap"] = swap.benchmark_row()
    return stats
