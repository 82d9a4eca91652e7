"""Feature maps evicted to storage (issue 39): when even the board's RAM regions cannot
hold the live feature maps, whole feature maps leave RAM between their uses and come
back sealed (the runtime's tile store, ``nnrt/fmstore.h``).

A pure pass: :func:`evict` takes the buffers of a plan (root tensors with lifetimes
over the schedule, scratch), the RAM capacity and the tensors that may leave (no
aliases, not a graph input or output), and returns new buffers -- an evicted tensor
becomes one buffer per resident *segment* -- and the :class:`Eviction` records that
say where each tile is written (after the last use of a segment) and read back (before
the first use of the next). Each segment buffer has room for the AEAD tag after the
feature map (tiles are sealed in place).

Rule (Belady's, over sizes): walking the schedule, when the resident feature maps and
the op's scratch exceed the capacity, the resident tensor the current op does not use
whose next use is furthest away (ties: the larger) leaves. Ops whose own inputs and
outputs exceed the capacity are not handled here (row bands: ``passes.fm_bands``,
which runs first and leaves this pass the rest): the pass returns None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from .lifetimes import Buffer

#: Bytes after each evicted segment for the AEAD tag (sealed in place).
TAG_BYTES = 16


@dataclass(frozen=True)
class Eviction:
    tensor: int
    tile: int  # tile index in the store (one per eviction)
    write_after: int  # schedule position after which the tile is sealed and written
    read_before: int  # schedule position before which it is read back and opened
    src_key: str  # buffer key of the segment written
    dst_key: str  # buffer key of the segment read into
    bytes: int  # feature-map bytes (the tag comes on top)


def evict(buffers: Sequence[Buffer], uses: Mapping[int, Sequence[int]], capacity: int,
          evictable: frozenset[int], align: int = 16
          ) -> tuple[list[Buffer], list[Eviction]] | None:
    """Segment buffers and evictions (see the module doc); None when an op alone does
    not fit, or nothing evictable relieves a step. ``uses``: root tensor -> the schedule
    positions that read or write it (sorted)."""
    def cost(b: Buffer) -> int:
        return (b.size + TAG_BYTES + align - 1) // align * align if b.tensor in evictable \
            else (b.size + align - 1) // align * align

    n = max((b.last for b in buffers), default=-1) + 1
    roots = {b.tensor: b for b in buffers if b.tensor is not None}
    scratch_at: dict[int, int] = {}
    for b in buffers:
        if b.tensor is None:
            scratch_at[b.first] = scratch_at.get(b.first, 0) + cost(b)
    resident: set[int] = set()
    seg_start: dict[int, int] = {}
    last_use: dict[int, int] = {}
    segments: dict[int, list[tuple[int, int]]] = {}
    gaps: dict[int, list[tuple[int, int]]] = {}  # tensor -> (write_after, read_before)
    pending_read: dict[int, int] = {}  # evicted tensor -> the position it left after

    def next_use(t: int, pos: int) -> int:
        return next((u for u in uses.get(t, ()) if u > pos), 1 << 30)

    for pos in range(n):
        need = {t for t, u in uses.items() if pos in u and t in roots}
        if sum(cost(roots[t]) for t in need) + scratch_at.get(pos, 0) > capacity:
            return None
        for t in need:
            if t not in resident:
                resident.add(t)
                seg_start[t] = pos
                if t in pending_read:
                    gaps.setdefault(t, []).append((pending_read.pop(t), pos))
        # tensors whose lifetime ended leave without a write
        for t in list(resident):
            if roots[t].last < pos:
                resident.discard(t)
                segments.setdefault(t, []).append((seg_start[t], last_use[t]))
        for t in need:
            last_use[t] = pos
        while sum(cost(roots[t]) for t in resident) + scratch_at.get(pos, 0) > capacity:
            cands = [t for t in resident if t not in need and t in evictable]
            if not cands:
                return None
            victim = max(cands, key=lambda t: (next_use(t, pos), roots[t].size, t))
            resident.discard(victim)
            segments.setdefault(victim, []).append((seg_start[victim], last_use[victim]))
            pending_read[victim] = last_use[victim]
    for t in resident:
        segments.setdefault(t, []).append((seg_start[t], last_use.get(t, roots[t].last)))
    out: list[Buffer] = []
    evictions: list[Eviction] = []
    for b in buffers:
        if b.tensor is None or b.tensor not in gaps:
            out.append(b)
            continue
        segs = segments[b.tensor]
        keys = [f"{b.key}@{i}" for i in range(len(segs))]
        for k, (first, last) in zip(keys, segs, strict=True):
            out.append(replace(b, key=k, size=b.size + TAG_BYTES, first=first, last=last))
        for i, (w, r) in enumerate(gaps[b.tensor]):
            evictions.append(Eviction(b.tensor, 0, w, r, keys[i], keys[i + 1], b.size))
    evictions.sort(key=lambda e: (e.write_after, e.tensor))
    evictions = [replace(e, tile=i) for i, e in enumerate(evictions)]
    return out, evictions
