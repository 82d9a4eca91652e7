"""Out-of-core execution (SwapNN): weights stream from external flash in AEAD-sealed
chunks through two staging buffers while the previous chunk is computed.

- :mod:`.costmodel`: latency with and without overlap, I/O-bound layers.
- :mod:`.placement`: internal vs external flash, chunking, staging size, prefetch
  order (:func:`plan_swap` -> :class:`SwapPlan`).
- :mod:`.sealed_blob`: the versioned, sealed external-flash image (writer and reader).
- :mod:`.mbedtls_build`: mbedTLS from Debian's source package for the C runtime.

How the compiler, code generator, runner and CLI call these: ``README.md`` here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..ir import Graph
from .costmodel import CostParams, Timeline, simulate
from .placement import (
    SWAP_MODES,
    ChunkEntry,
    SwapOptions,
    SwapPlan,
    TensorPlacement,
    blob_chunks,
    layout_tuple,
    plan_swap,
)
from .sealed_blob import ALGORITHMS, algorithm_id, key_from_config, layout_id, write_swap_blob


@dataclass(frozen=True)
class WrittenBlob:
    path: Path
    layout_id: bytes
    algorithm: int
    bytes: int


def swap_layout_id(swap: SwapPlan, model_sha256: str) -> bytes:
    """The 16-byte id the firmware compiles in and the blob header carries."""
    return layout_id(model_sha256, algorithm_id(swap.algorithm), layout_tuple(swap))


def write_model_blob(path: Path, graph: Graph, swap: SwapPlan, model_sha256: str,
                     key: bytes, salt: bytes | None = None) -> WrittenBlob:
    """Seal every chunk of ``swap`` (in streaming order) into the blob at ``path``."""
    alg = algorithm_id(swap.algorithm)
    lid = swap_layout_id(swap, model_sha256)
    write_swap_blob(path, blob_chunks(graph, swap), key, algorithm=alg, layout=lid, salt=salt)
    return WrittenBlob(path, lid, alg, path.stat().st_size)


__all__ = [
    "ALGORITHMS",
    "SWAP_MODES",
    "ChunkEntry",
    "CostParams",
    "SwapOptions",
    "SwapPlan",
    "TensorPlacement",
    "Timeline",
    "WrittenBlob",
    "key_from_config",
    "plan_swap",
    "simulate",
    "swap_layout_id",
    "write_model_blob",
]
