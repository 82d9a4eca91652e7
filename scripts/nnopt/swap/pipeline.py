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
from ..errors import BlobError, NnoptError, PlanError
from ..plan import Plan
from ..planner import PlannedModel
from .blob import KEY_BYTES, algorithm_id, generate_key, key_from_config
from .placement import SwapPlan
from .provision import KeyStoreError


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


def configured_key_for(algorithm: int, *, key_hex: str | None = None,
                       key_file: Path | None = None,
                       env: Mapping[str, str] | None = None) -> tuple[bytes, str] | None:
    """:func:`configured_key` for an algorithm id (NNRT_SWAP_ALG_*) without a plan."""
    return key_from_config(algorithm, key_hex=key_hex, key_file=key_file,
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
                   key: bytes | None = None, key_id: int | None = None) -> GeneratedModel:
    """``<name>_model.c/.h`` (and ``<name>_swap.bin`` when the plan streams weights,
    sealed with ``key``) in ``out_dir``. With ``key_id`` the sources open the blob by
    that PSA key id (the device holds the key) and contain no key byte."""
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

    out = generate_swapped(planned, out_dir, swap, key, key_id=key_id)
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


def blob_error(blob: Path, log: str, *, key_id: int | None = None,
               key_store: Path | None = None) -> NnoptError | None:
    """The error for a run that stopped on a blob or key status (``log``: the harness's
    output; ``key_id``/``key_store``: a build that opens the blob by PSA key id), or
    None when the failure was something else."""
    if key_id is not None:
        err = _key_id_error(blob, log, key_id, key_store)
        if err is not None:
            return err
    for name, what in _BLOB_ERRORS.items():
        if f"(NNRT_{name})" in log:
            return BlobError(f"the weight blob {blob} {what}; no output was written",
                             hint="use the blob `nnopt optimize` wrote for this model and "
                             "these options, with the key it was sealed with "
                             "(--swap-key / --swap-key-file)")
    return None


def _key_id_error(blob: Path, log: str, key_id: int,
                  key_store: Path | None) -> NnoptError | None:
    where = f" in the key store {key_store}" if key_store is not None else ""
    hint = ("provision the key the blob was sealed with under this id (`nnopt "
            "swap-provision --key-store DIR --swap-key-id ID --swap-key HEX`; on a device "
            "psa_import_key() with PSA_KEY_LIFETIME_PERSISTENT, usage DECRYPT and the "
            "blob's algorithm only), or pass the id it was provisioned under")
    at_attach = "attach failed" in log  # runner_main.c: the open refused the key
    if at_attach and f"(NNRT_{Status.ERR_ARG.name})" in log:
        return KeyStoreError(
            f"key id 0x{key_id:08x} is not usable for the weight blob {blob} "
            f"(NNRT_ERR_ARG): no key with that id{where}, or the key's type, algorithm or "
            "usage does not fit the blob (its AEAD, usage DECRYPT); no output was written",
            hint=hint)
    if at_attach and f"(NNRT_{Status.ERR_CRYPTO.name})" in log:
        return KeyStoreError(
            f"the key store{where} failed to provide key id 0x{key_id:08x} "
            "(NNRT_ERR_CRYPTO: unreadable or corrupt storage); no output was written",
            hint="re-provision the key (nnopt swap-provision --replace)")
    if f"(NNRT_{Status.ERR_AUTH.name})" in log:
        return BlobError(
            f"the weight blob {blob} failed authentication (NNRT_ERR_AUTH) with the key "
            f"stored under key id 0x{key_id:08x}{where}: the blob was modified, or sealed "
            "with another key than that one; no output was written", hint=hint)
    return None
