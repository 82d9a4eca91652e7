"""How the product uses the swap subsystem: the swap plan recorded in a Plan, the AEAD
key of a build, the generated sources (with the blob when weights stream), the build
flags of a swap build, and the runtime's blob errors as user errors.

``nnopt optimize`` and ``nnopt run`` (``nnopt.commands``) and the runner
(``nnopt.runner``) call these; the planning step is :func:`nnopt.planner.plan_swap_for`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..boards import Board
from ..cdefs import Status
from ..codegen.c_model import GeneratedSources, generate
from ..errors import BlobError, PlanError
from ..plan import Plan
from ..planner import PlannedModel
from .blob import KEY_BYTES, algorithm_id, generate_key, key_from_config
from .placement import SwapPlan


def swap_of(plan: Plan) -> SwapPlan | None:
    """The Plan's swap plan when weights stream, else None."""
    if plan.swap is None or not plan.swap.get("enabled"):
        return None
    return SwapPlan.from_json(plan.swap)


def key_bytes(swap: SwapPlan) -> int:
    return KEY_BYTES[algorithm_id(swap.algorithm)]


def configured_key(swap: SwapPlan, *, key_hex: str | None = None,
                   key_file: Path | None = None,
                   env: Mapping[str, str] | None = None) -> tuple[bytes, str] | None:
    """The key from ``--swap-key``, ``--swap-key-file``, ``$NNOPT_SWAP_KEY`` or
    ``$NNOPT_SWAP_KEY_FILE`` (first wins) and where it came from, or None."""
    return key_from_config(algorithm_id(swap.algorithm), key_hex=key_hex, key_file=key_file,
                           env=os.environ if env is None else env)


def write_new_key(swap: SwapPlan, path: Path) -> bytes:
    """A random key for ``swap``'s algorithm, written as hex to ``path`` (mode 0600)."""
    key = generate_key(algorithm_id(swap.algorithm))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")
    os.chmod(path, 0o600)  # an existing file keeps its mode through O_CREAT
    return key


@dataclass(frozen=True)
class GeneratedModel:
    sources: GeneratedSources
    blob: Path | None  # <name>_swap.bin next to the sources when weights stream


def generate_model(planned: PlannedModel, out_dir: Path, *, allocator: str = "static",
                   key: bytes | None = None) -> GeneratedModel:
    """``<name>_model.c/.h`` (and ``<name>_swap.bin`` when the plan streams weights,
    sealed with ``key``) in ``out_dir``."""
    swap = swap_of(planned.plan)
    if swap is None:
        return GeneratedModel(generate(planned, out_dir, allocator=allocator), None)
    if allocator != "static":
        raise PlanError(f"streamed weights need the static allocator, not {allocator!r}",
                        hint="drop --allocator dynamic, or use --swap off")
    if key is None:
        raise PlanError("a model with streamed weights needs a swap key",
                        hint="pass --swap-key HEX or --swap-key-file PATH")
    from .codegen import generate_swapped  # imports the code generator's emitter

    out = generate_swapped(planned, out_dir, swap, key)
    return GeneratedModel(out.sources, out.blob)


def build_defines(target: str, board: Board | None) -> dict[str, str]:
    """Defines of a swap firmware: the external flash model of the QEMU port
    (port/baremetal/extflash_semihost.c) from the board's figures."""
    if target == "host" or board is None:
        return {}
    ext = board.external_flash
    out: dict[str, str] = {}
    if ext.get("bandwidth_bytes_per_s"):
        out["NNRT_EXTFLASH_BYTES_PER_S"] = f"{int(ext['bandwidth_bytes_per_s'])}u"
    if board.clock_hz:
        out["NNRT_EXTFLASH_CPU_HZ"] = f"{int(board.clock_hz)}u"
    return out


#: The runtime's blob statuses (nnrt/swap.h) as user errors.
_BLOB_ERRORS: Mapping[str, str] = {
    Status.ERR_AUTH.name: "failed authentication (NNRT_ERR_AUTH): it was modified, or it "
    "was sealed with another key than the one compiled into this build",
    Status.ERR_FORMAT.name: "is not a valid blob for this build (NNRT_ERR_FORMAT): "
    "truncated, a malformed header or chunk table, or built for another model or plan",
    Status.ERR_IO.name: "could not be read (NNRT_ERR_IO): missing, unreadable or shorter "
    "than its header says",
}


def blob_error(blob: Path, log: str) -> BlobError | None:
    """The BlobError for a run that stopped on a blob status (``log``: the harness's
    output), or None when the failure was something else."""
    for name, what in _BLOB_ERRORS.items():
        if f"(NNRT_{name})" in log:
            return BlobError(f"the weight blob {blob} {what}; no output was written",
                             hint="use the blob `nnopt optimize` wrote for this model and "
                             "these options, with the key it was sealed with "
                             "(--swap-key / --swap-key-file)")
    return None
