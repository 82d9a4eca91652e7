"""Weight placement for out-of-core execution: internal flash or external flash,
chunking by output channel, staging size and the prefetch schedule.

A pure pass (no I/O): :func:`plan_swap` takes the graph codegen emits, the Plan (for
the schedule, the weights and the arena size) and the Board, and returns a
:class:`SwapPlan`. Only the filter tensors of CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED are candidates; biases and every other constant stay internal (they are
small and read element by element).

Algorithm (bullets, in the order it runs):

- **Budget.** Internal flash for weights = the flash region minus a documented code
  reserve (:data:`CODE_RESERVE_BYTES`: runtime, kernels, generated op code, mbedTLS)
  minus the requantisation tables the lowerings emit (8 bytes per output channel plus a
  parameter block per op, :func:`metadata_bytes`).
- **Which tensors stream** (``mode="auto"``, only when the weights exceed the budget):
  candidates that would be I/O-bound when streamed (weight delivery slower than their
  compute, :func:`~nnopt.swap.costmodel.io_bound_if_streamed`) come last; within each
  group they are ranked by the time streaming them would add per byte freed
  (:func:`~nnopt.swap.costmodel.stream_penalty_s`: decryption, which is never hidden,
  plus the part of the read that compute cannot cover), cheapest first, ties by size
  (larger first) then tensor index. They are taken greedily until the weights fit, then
  the last-ranked ones that are no longer needed are given back. So I/O-bound tensors
  (fully connected: 1 MAC per byte) stay internal and convolutions, which reuse each
  weight OH*OW times, stream. (With software AEAD the added time per byte is the same
  decryption for both; the I/O-bound rule keeps the layers whose latency would track
  the weight stream, and whose reads would stall with faster crypto, internal.)
  ``mode="force"`` streams every candidate; ``mode="off"`` none. Greedy by ratio is
  the fractional-knapsack rule: not optimal for the 0/1 problem, but the penalty is
  nearly linear in bytes, so the gap is at most one tensor's penalty.
- **Chunking.** A streamed tensor is cut along its output channels (conv OHWI and FC:
  axis 0, rows contiguous; depthwise ``[1,KH,KW,C]``: axis 3, kept as one chunk) into
  the fewest chunks of at most ``staging_bytes`` each, balanced (every chunk has the
  same number of channels except a smaller last one). Several chunks per layer need kernels that
  compute an output-channel range (``kernel_channel_ranges``); without them only
  layers whose output channel slice is contiguous (one output row: FC with batch 1, a
  conv with a 1x1 output) may split, the others must fit one chunk.
- **Staging size.** Two buffers of equal size (ping-pong). Their budget: the DTCM when
  the board has one (DMA-reachable, uncached, not used by the arena planner) minus
  :data:`DTCM_RESERVE_BYTES`, else the arena region left after the arena and
  :data:`SRAM_RESERVE_BYTES`. Candidate sizes (powers of two from 1 KiB, the smallest
  feasible size, the largest that fits) are simulated with the cost model; among the
  sizes whose predicted latency is within :data:`STAGING_TOLERANCE` of the best, the one
  needing the least RAM (two buffers plus the chunk table, 32 bytes per chunk) wins.
- **Prefetch schedule.** Chunks are numbered in execution order; that number is their
  index in the blob. Chunk 0 is read when an inference starts; chunk k+1 is issued
  right after chunk k's read completes (``wait(k)``), before chunk k is decrypted and
  computed, into the other staging buffer (``k % 2``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..boards import Board
from ..errors import PlanError
from ..ir import Graph, Op
from ..ops import known
from ..ops.base import Weights
from ..plan import ChunkEntry as ChunkEntry
from ..plan import Plan, SwapCost
from ..plan import SwapPlan as SwapPlan
from ..plan import TensorPlacement as TensorPlacement
from .costmodel import (
    ChunkCost,
    CostParams,
    io_bound_if_streamed,
    macs_per_weight_byte,
    simulate,
    stream_penalty_s,
)
from .sealed_blob import ALGORITHMS, ENTRY_BYTES, HEADER_BYTES, TAG_BYTES, ChunkSpec

SWAP_MODES = ("auto", "off", "force")

#: Internal flash kept for everything that is not a weight: nnrt runtime and kernels,
#: the generated op functions, the mbedTLS subset (PSA core, AES/GCM, ChaCha20-Poly1305:
#: about 40 KB for arm-none-eabi -O2), startup and harness. TFLM's code alone is
#: 35-85 KB (ANCHORS.md "TFLM code"); 192 KiB leaves room for both and for growth.
CODE_RESERVE_BYTES = 192 * 1024
#: Per output channel of a conv/depthwise/FC: an int32 multiplier and an int32 shift.
REQUANT_BYTES_PER_CHANNEL = 8
#: Per weighted op: the const parameter block and pointers (about 100 bytes).
PARAMS_BYTES_PER_OP = 128
#: DTCM left for other NNRT_DTCM data when the staging buffers live there.
DTCM_RESERVE_BYTES = 8 * 1024
#: Arena-region bytes left for the stack (firmware default 8 KiB), .data and .bss.
SRAM_RESERVE_BYTES = 16 * 1024
#: Staging budget when there is no board (host runs with --swap force).
DEFAULT_STAGING_BUDGET = 64 * 1024
#: RAM of the swap runtime besides the staging buffers and the chunk table: driver
#: context, PSA key slots and the mbedTLS allocation pool (nnopt's mbedTLS config).
CRYPTO_STATE_BYTES = 2 * 1024
#: Smallest staging candidate and the relative latency slack when picking the size.
MIN_STAGING = 1024
#: The most chunks a staging candidate may make (more are not simulated: their per-chunk
#: AEAD and transfer set-up make them slower than larger sizes anyway).
MAX_CHUNKS = 50_000
STAGING_TOLERANCE = 0.005



@dataclass(frozen=True)
class SwapOptions:
    mode: str = "auto"  # auto | off | force
    algorithm: str | None = None  # None: the board's external_flash.crypto
    code_reserve_bytes: int = CODE_RESERVE_BYTES
    internal_flash_bytes: int | None = None  # None: the board's flash region
    staging_bytes: int | None = None  # per-buffer plaintext capacity; None: cost model
    staging_region: str | None = None  # None: dtcm if present, else the arena region
    staging_budget_bytes: int | None = None  # bytes for both buffers; overrides region
    kernel_channel_ranges: bool = True  # kernels can compute an output-channel range
    cost: CostParams | None = None  # None: CostParams.for_board(board, algorithm)
    # Ops whose weights must stay internal: the code generator emits them with a
    # plan-specific lowering (sub-views: folded padding, in place, tiles), while a
    # streamed op runs its registered lowering on each chunk.
    keep_internal: frozenset[int] = frozenset()
    # Ops whose weights may stream only whole (one chunk): the plan runs them on
    # sub-views, and a sliced chunk runs the registered lowering (nnopt.swap.codegen).
    whole_only: frozenset[int] = frozenset()
    # Ops the plan runs in row bands (op -> bands) whose weights stream anyway: their
    # output-channel slices are read again for every band (float32 convolutions: the
    # band code runs each slice on the band, nnopt.codegen.bands)
    banded: Mapping[int, int] = field(default_factory=dict)
    # The storage device of the board the weight blob goes to (one of board.storage,
    # e.g. "sd_card"); None: the board's external_flash
    device: str | None = None


# ----- analysis -----

def metadata_bytes(graph: Graph) -> int:
    """Flash of the requantisation tables and parameter blocks of weighted ops."""
    total = 0
    for op in graph.ops:
        if _weights(op) is not None and len(op.inputs) > 1 and op.inputs[1] >= 0:
            w = graph.tensors[op.inputs[1]]
            per_channel = w.quant is not None and w.quant.per_channel
            channels = len(w.quant.scale) if per_channel and w.quant else 1
            total += REQUANT_BYTES_PER_CHANNEL * channels + PARAMS_BYTES_PER_OP
    return total


def _uses(graph: Graph) -> dict[int, list[Op]]:
    uses: dict[int, list[Op]] = {}
    for op in graph.ops:
        for t in dict.fromkeys(op.inputs):
            if t >= 0:
                uses.setdefault(t, []).append(op)
    return uses


def _weights(op: Op) -> Weights | None:
    """How the op's weights slice by output channel (its definition), None if it has
    no weights nnopt streams."""
    d = known(op)
    return d.weights if d is not None else None


def _rows_per_batch(graph: Graph, op: Op) -> int:
    """Output rows (N*OH*OW, or FC batches) of an op: 1 means a channel slice of the
    output is contiguous."""
    y = graph.tensors[op.outputs[0]]
    w = graph.tensors[op.inputs[1]]
    ws = _weights(op)
    channels = w.shape[ws.axis] if ws is not None else w.shape[0]
    return y.num_elements // channels if channels else 0


def _candidate(graph: Graph, op: Op, uses: Mapping[int, list[Op]], params: CostParams,
               kernel_ranges: bool) -> TensorPlacement | None:
    ws = _weights(op)
    if ws is None or len(op.inputs) < 2 or op.inputs[1] < 0:
        return None
    w = graph.tensors[op.inputs[1]]
    if not w.is_constant or len(w.shape) not in (2, 4) or w.nbytes == 0:
        return None
    if len(uses.get(w.index, [])) != 1:
        return None  # shared weights: keep internal
    axis = ws.axis % len(w.shape)
    channels = w.shape[axis]
    row = w.nbytes // channels
    if not ws.channel_ranges:
        splittable = False
    else:
        splittable = kernel_ranges or _rows_per_batch(graph, op) == 1
    splittable = splittable and channels > 1
    return TensorPlacement(
        tensor=w.index, op=op.index, opcode=op.opcode, bytes=w.nbytes, pool="flash",
        reason="", macs_per_byte=macs_per_weight_byte(graph, op, w.nbytes),
        io_bound_if_streamed=io_bound_if_streamed(graph, op, w.nbytes, params),
        axis=axis, channels=channels, row_bytes=row, splittable=splittable)


def _staging_budget(board: Board | None, plan: Plan, opts: SwapOptions) -> tuple[str, int]:
    if opts.staging_budget_bytes is not None:
        return opts.staging_region or "explicit", opts.staging_budget_bytes
    if board is None:
        return opts.staging_region or "sram", DEFAULT_STAGING_BUDGET
    region = opts.staging_region
    if region is None:
        dtcm = board.regions.get("dtcm")
        region = ("dtcm" if dtcm is not None and dtcm.kind == "ram"
                  and board.arena_region != "dtcm" else board.arena_region)
    if region not in board.regions or board.regions[region].kind != "ram":
        raise PlanError(f"staging region {region!r} is not a RAM region of {board.name}",
                        hint="RAM regions: " + ", ".join(r.name for r in board.ram_regions))
    size = board.regions[region].size
    if region == board.arena_region:
        return region, size - plan.arena_bytes - SRAM_RESERVE_BYTES
    # an activation arena the planner put in this region (passes.region_place)
    return region, size - DTCM_RESERVE_BYTES - plan.arenas.get(region, 0)


def _chunk_channels(t: TensorPlacement, staging: int) -> int:
    """Channels per chunk for a staging capacity (the whole tensor if unsplittable)."""
    if not t.splittable or t.bytes <= staging:
        return t.channels
    per = max(1, staging // t.row_bytes)
    n = math.ceil(t.channels / per)
    return math.ceil(t.channels / n)


#: The least inputs of a depth slice (a weight row in pieces).
MIN_DEPTH_SLICE = 64


def _depth_of(graph: Graph, op: Op, t: TensorPlacement) -> int:
    """The input depth K when the op's weight rows may stream in depth slices (its
    definition's ``depth_slices``: fully connected, batch 1, 2-D weights; K below the
    blob entry's 16-bit limit), else 0."""
    ws = _weights(op)
    w = graph.tensors[t.tensor]
    if (ws is None or not ws.depth_slices or not t.splittable or len(w.shape) != 2
            or t.axis != 0 or _rows_per_batch(graph, op) != 1 or w.shape[1] >= 1 << 16):
        return 0
    return int(w.shape[1])


def _min_staging(t: TensorPlacement, depth: int = 0) -> int:
    if depth:
        return min(t.row_bytes, MIN_DEPTH_SLICE * (t.row_bytes // depth))
    return t.row_bytes if t.splittable else t.bytes


def _chunks_for(streamed: Sequence[TensorPlacement], schedule: Sequence[int],
                staging: int, depth: Mapping[int, int] | None = None,
                banded: Mapping[int, int] | None = None) -> list[ChunkEntry]:
    """Chunks in streaming order. A tensor whose rows exceed ``staging`` and that may
    slice its depth (``depth[tensor]`` = K) streams blocks of rows x depth slices: for
    each block of rows, its slices [k0, k1) in input order (the partial sums of one
    block live between them)."""
    by_op = {t.op: t for t in streamed}
    out: list[ChunkEntry] = []
    prev_op = -1
    for idx in schedule:
        t = by_op.get(idx)
        if t is None:
            continue
        k_all = (depth or {}).get(t.tensor, 0)
        if k_all and t.row_bytes > staging:
            elem = t.row_bytes // k_all
            parts = math.ceil(t.row_bytes / staging)
            kw = math.ceil(k_all / parts)
            per = max(1, staging // (kw * elem))
            per = math.ceil(t.channels / math.ceil(t.channels / per))
            for c0 in range(0, t.channels, per):
                c1 = min(t.channels, c0 + per)
                for k0 in range(0, k_all, kw):
                    k1 = min(k_all, k0 + kw)
                    k = len(out)
                    out.append(ChunkEntry(k, t.op, t.tensor, t.axis, c0, c1,
                                          (c1 - c0) * (k1 - k0) * elem, k % 2, k - 1,
                                          prev_op if k else -1, k0, k1))
                    prev_op = t.op
            continue
        per = _chunk_channels(t, staging)
        for _band in range((banded or {}).get(t.op, 1)):  # a banded op: every band again
            for c0 in range(0, t.channels, per):
                c1 = min(t.channels, c0 + per)
                k = len(out)
                out.append(ChunkEntry(k, t.op, t.tensor, t.axis, c0, c1,
                                      (c1 - c0) * t.row_bytes, k % 2, k - 1,
                                      prev_op if k else -1))
                prev_op = t.op
    return out


def _costs(chunks: Sequence[ChunkEntry], streamed: Mapping[int, TensorPlacement],
           banded: Mapping[int, int] | None = None) -> list[ChunkCost]:
    return [ChunkCost(c.op, c.plain_bytes, (c.c1 - c.c0) / streamed[c.tensor].channels
                      * (c.plain_bytes / ((c.c1 - c.c0) * streamed[c.tensor].row_bytes)
                         if c.k1 else 1.0) / (banded or {}).get(c.op, 1))
            for c in chunks]


def _round16(n: int) -> int:
    return (n + 15) // 16 * 16


def _swap_ram(chunks: Sequence[ChunkEntry], on_demand: bool = False) -> int:
    """Staging-region bytes: two staging buffers and the chunk table (on demand: two
    entries)."""
    if not chunks:
        return 0
    return (2 * _round16(max(c.plain_bytes for c in chunks) + TAG_BYTES)
            + ENTRY_BYTES * (2 if on_demand else len(chunks)))


def _ram_within(chunks: Sequence[ChunkEntry], budget: int) -> tuple[int, bool]:
    """(staging-region bytes, table on demand): the whole table in RAM when it fits
    the budget, else two entries read on demand."""
    whole = _swap_ram(chunks)
    if whole <= budget or len(chunks) <= 2:
        return whole, False
    return _swap_ram(chunks, True), True


# ----- the pass -----

def plan_swap(graph: Graph, plan: Plan, board: Board | None,
              options: SwapOptions | None = None) -> SwapPlan:
    """Decide placement, chunks, staging size and prefetch order (see module doc)."""
    opts = options or SwapOptions()
    if opts.mode not in SWAP_MODES:
        raise PlanError(f"unknown swap mode {opts.mode!r}", hint="use auto, off or force")
    ext = dict(board.external_flash) if board else {}
    alg = (opts.algorithm or str(ext.get("crypto") or "chacha20-poly1305")).lower()
    if alg not in ALGORITHMS:
        raise PlanError(f"unknown AEAD algorithm {alg!r}",
                        hint="use " + " or ".join(ALGORITHMS))
    if opts.device is not None and (board is None or opts.device not in board.storage):
        raise PlanError(f"weight device {opts.device!r} is not a storage device of the board",
                        hint="see the board's storage: (boards/nnopt/README.md)")
    params = opts.cost or (CostParams.for_storage(board, opts.device, alg)
                           if board is not None and opts.device is not None
                           else CostParams.for_board(board, alg))
    if opts.mode == "force" and board is not None and not ext:
        raise PlanError(f"--swap force: board {board.name} declares no external flash",
                        hint="add `external_flash:` to its yaml (boards/nnopt/README.md)")
    notes: list[str] = []

    flash = opts.internal_flash_bytes
    if flash is None and board is not None:
        roms = [r for r in board.rom_regions if r.name == "flash"] or board.rom_regions
        flash = roms[0].size if roms else None
    meta = metadata_bytes(graph)
    weights_total = sum(w.size for w in plan.weights)
    budget = (flash - opts.code_reserve_bytes - meta) if flash is not None else None
    if budget is not None and budget < 0:
        notes.append(f"the code reserve ({opts.code_reserve_bytes} B) and requantisation "
                     f"tables ({meta} B) alone exceed internal flash ({flash} B)")

    uses = _uses(graph)
    cands: dict[int, TensorPlacement] = {}
    for op in graph.ops:
        c = _candidate(graph, op, uses, params,
                       opts.kernel_channel_ranges and op.index not in opts.whole_only)
        if c is not None:
            cands[c.tensor] = c
    region, stage_budget = _staging_budget(board, plan, opts)
    max_stage = (stage_budget // 2 - TAG_BYTES) // 16 * 16
    if opts.staging_bytes is not None:
        max_stage = opts.staging_bytes
    ops = graph.op_by_index
    depth = {t: d for t, c in cands.items() if (d := _depth_of(graph, ops[c.op], c))}
    feasible = {t: c for t, c in cands.items()
                if _min_staging(c, depth.get(t, 0)) <= max_stage
                and c.op not in opts.keep_internal}
    for t, c in cands.items():
        if c.op in opts.keep_internal:
            cands[t] = replace(c, reason="internal: the plan runs this op on views "
                               "(folded padding, in place or tiled)")
        elif t not in feasible:
            cands[t] = replace(c, reason=f"needs {_min_staging(c, depth.get(t, 0))} B of "
                               f"staging in one piece, at most {max_stage} B available")

    # -- which tensors stream --
    penalty = {t: stream_penalty_s(graph, ops[c.op], c.bytes, params)
               for t, c in feasible.items()}
    chosen: list[int] = []
    excess = weights_total - budget if budget is not None else 0
    if opts.mode == "force":
        chosen = sorted(feasible)
    elif opts.mode == "auto" and excess > 0:
        if not ext:
            notes.append("weights exceed internal flash but the board declares no "
                         "external flash")
        else:
            ranked = sorted(feasible, key=lambda t: (feasible[t].io_bound_if_streamed,
                                                     penalty[t] / feasible[t].bytes,
                                                     -feasible[t].bytes, t))
            freed = 0
            for t in ranked:
                if freed >= excess:
                    break
                chosen.append(t)
                freed += feasible[t].bytes
            for t in sorted(chosen, key=lambda t: (not feasible[t].io_bound_if_streamed,
                                                   -penalty[t] / feasible[t].bytes, t)):
                if freed - feasible[t].bytes >= excess:
                    chosen.remove(t)
                    freed -= feasible[t].bytes
            chosen.sort()
    enabled = bool(chosen)
    ext_bytes = sum(feasible[t].bytes for t in chosen)
    internal = weights_total - ext_bytes
    fits_flash = budget is None or internal <= budget
    if not fits_flash:
        notes.append(f"internal weights {internal} B exceed the budget of {budget} B "
                     f"(flash {flash} B - code reserve {opts.code_reserve_bytes} B - "
                     f"tables {meta} B)"
                     + ("" if opts.mode != "off" else "; use --swap auto"))

    # -- staging size and chunks --
    streamed = {t: feasible[t] for t in chosen}
    schedule = plan.schedule
    candidates: dict[int, float] = {}
    staging = 0
    chunks: list[ChunkEntry] = []
    if enabled:
        need = max(_min_staging(c, depth.get(t, 0)) for t, c in streamed.items())
        if opts.staging_bytes is not None:
            sizes = [max(opts.staging_bytes, need)]
        else:
            top = max(max_stage, need)
            sizes = sorted({need, top, *(1 << p for p in range(10, 31)
                                         if need < (1 << p) < top and (1 << p) >= MIN_STAGING)})
            # sizes that would cut the stream into more than MAX_CHUNKS chunks are not
            # tried (VGG16's 494 MB at 256 B: 1.9 M chunks, each with its AEAD set-up)
            streamed_bytes = sum(c.bytes * opts.banded.get(c.op, 1) for c in streamed.values())
            sizes = [x for x in sizes if streamed_bytes / x <= MAX_CHUNKS] or [top]
        results: dict[int, tuple[float, int, list[ChunkEntry]]] = {}
        for s in sizes:
            ch = _chunks_for(list(streamed.values()), schedule, s, depth, opts.banded)
            tl = simulate(graph, schedule, _costs(ch, streamed, opts.banded), params)
            results[s] = (tl.overlap_s, _swap_ram(ch), ch)
            candidates[s] = round(tl.overlap_s * 1e3, 4)
        # the whole chunk table in RAM where a size allows it, else the table on demand
        fitting = ({s: v for s, v in results.items() if v[1] <= stage_budget}
                   or {s: (v[0], _swap_ram(v[2], True), v[2]) for s, v in results.items()
                       if _swap_ram(v[2], True) <= stage_budget}
                   or results)
        best = min(v[0] for v in fitting.values())
        pick = min((v[1], s) for s, v in fitting.items()
                   if v[0] <= best * (1 + STAGING_TOLERANCE))[1]
        chunks = results[pick][2]
        staging = max(c.plain_bytes for c in chunks)
    timeline = simulate(graph, schedule, _costs(chunks, streamed, opts.banded), params)
    buffer_bytes = _round16(staging + TAG_BYTES) if enabled else 0
    ram, on_demand = _ram_within(chunks, stage_budget)
    fits_staging = not enabled or ram <= stage_budget
    if enabled and not fits_staging:
        notes.append(f"two staging buffers of {buffer_bytes} B and a chunk table of "
                     f"{ENTRY_BYTES * len(chunks)} B do not fit the {stage_budget} B left "
                     f"in {region}")
    arena_fits: bool | None = None
    if board is not None:
        arena_fits = plan.arena_bytes <= board.sram_bytes
        if not arena_fits:
            notes.append(f"the activation arena ({plan.arena_bytes} B) exceeds "
                         f"{board.arena_region} ({board.sram_bytes} B): activations need "
                         "tiling, which the swap plan does not cover")

    per_tensor_chunks: dict[int, list[ChunkEntry]] = {}
    for ce in chunks:
        per_tensor_chunks.setdefault(ce.tensor, []).append(ce)
    placements: list[TensorPlacement] = []
    for t in sorted(cands):
        c = cands[t]
        if t in streamed:
            ch = per_tensor_chunks[t]
            c = replace(c, pool="external", chunks=len(ch), channels_per_chunk=ch[0].c1 - ch[0].c0,
                        reason="forced" if opts.mode == "force" else
                        "streams: compute hides the read" if not c.io_bound_if_streamed
                        else "streams although I/O-bound: needed to fit")
        elif not c.reason:
            c = replace(c, reason="internal: I/O-bound if streamed" if c.io_bound_if_streamed
                        else "internal: fits the budget")
        placements.append(c)
    needs_ranges = any(not _contiguous_ok(graph, ops[c.op]) for c in streamed.values()
                       if len(per_tensor_chunks[c.tensor]) > 1)
    sram = ram + CRYPTO_STATE_BYTES if enabled else 0
    return SwapPlan(
        mode=opts.mode, enabled=enabled, algorithm=alg,
        external_kind=(board.storage[opts.device].kind
                       if board is not None and opts.device is not None
                       else str(ext.get("kind", "none" if board else "default"))),
        device=opts.device or "",
        internal_flash_bytes=flash or 0, code_reserve_bytes=opts.code_reserve_bytes,
        metadata_bytes=meta, internal_budget_bytes=budget if budget is not None else -1,
        internal_weight_bytes=internal, external_weight_bytes=ext_bytes,
        fits_internal_flash=fits_flash, staging_region=region,
        staging_budget_bytes=stage_budget, staging_bytes=staging,
        staging_buffer_bytes=buffer_bytes, fits_staging=fits_staging, sram_bytes=sram,
        arena_fits=arena_fits, needs_channel_range_kernels=needs_ranges,
        tensors=tuple(placements), chunks=tuple(chunks),
        cost=SwapCost.from_json(timeline.to_json()),
        staging_candidates=candidates, notes=tuple(notes),
        table_on_demand=enabled and on_demand)


def blob_bytes(swap: SwapPlan) -> int:
    """About the bytes of the sealed weight blob of a swap plan: the streamed weights,
    per chunk its tag, table entry and alignment, and the header."""
    return (sum(c.plain_bytes for c in swap.chunks)  # a banded op's slices once a band
            + (TAG_BYTES + ENTRY_BYTES + 16) * len(swap.chunks) + HEADER_BYTES)


def _contiguous_ok(graph: Graph, op: Op) -> bool:
    ws = _weights(op)
    return ws is not None and ws.contiguous_slice and _rows_per_batch(graph, op) == 1


# ----- chunk contents -----

def chunk_bytes(graph: Graph, chunk: ChunkEntry) -> bytes:
    """The plaintext of a chunk: the tensor's output channels [c0, c1) in the layout the
    kernel reads (axis 0: the rows as stored; another axis: the slice made contiguous)."""
    arr = graph.tensors[chunk.tensor].array()
    if chunk.k1:  # rows [c0, c1) x inputs [k0, k1), row-major (fully connected)
        return np.ascontiguousarray(arr[chunk.c0:chunk.c1, chunk.k0:chunk.k1]).tobytes()
    sl = np.take(arr, np.arange(chunk.c0, chunk.c1), axis=chunk.axis)
    return np.ascontiguousarray(sl).tobytes()


def blob_chunks(graph: Graph, swap: SwapPlan) -> list[ChunkSpec]:
    return [ChunkSpec(c.tensor, c.c0, c.c1, chunk_bytes(graph, c),
                      c.k0 | c.k1 << 16 if c.k1 else 0) for c in swap.chunks]


def layout_tuple(swap: SwapPlan) -> list[tuple[int, ...]]:
    return [(c.tensor, c.c0, c.c1, c.plain_bytes, *((c.k0, c.k1) if c.k1 else ()))
            for c in swap.chunks]
