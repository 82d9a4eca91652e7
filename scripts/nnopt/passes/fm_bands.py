"""Ops in row bands, their feature maps in storage (issue 39): when one op's own inputs
and outputs exceed the RAM, it runs band by band -- each band's input rows (with the
halo its window needs) read from the tile store, the kernel run on the band, the output
band sealed and written -- so neither its input nor its output is ever whole in RAM.

A pure pass: :func:`band_ops` takes the buffers of a plan (root tensors with lifetimes
over the schedule, scratch), the RAM capacity, each op's band form, the tensors that
must stay in RAM (``resident``: the graph's outputs, and its inputs unless in
``app_inputs``) and returns:

- the *stored* feature maps: every activation a banded op reads or writes (but the
  resident ones, views and what a form reads whole). Each lives in storage as sealed
  **row chunks**, one tile per chunk: a banded producer writes one chunk per band; an op
  that runs whole (it fits) writes its stored output whole from RAM and then chunk by
  chunk (last chunk first: each chunk is sealed in place and its tag overwrites the
  first bytes of the next one, already written), and an op that runs whole on a stored
  input reads all its chunks back (first chunk first) into a buffer of its own;
- per banded op its bands (output rows, whole chunks of its stored output: a band
  writes its chunks last first, like a whole output) and, per stored input, the chunks
  each band reads (the rows its window needs, rounded out to whole chunks);
- new buffers: the stored tensors' buffers are replaced by one-position buffers (the
  band buffers of each banded op, the whole segments around the ops that run whole on
  a stored tensor), which ``passes.fm_evict`` and the arena planner then place.

Each banded op's band form is its definition's (``passes.regions.band_of``): a window,
point-wise or computable row range of output rows (a band of output rows reads
``rows.span`` of each banded input; activations the form reads whole, a
squeeze-excitation vector, stay in RAM), or a reduction (a global average pool: the
bands are ranges of input rows, the small output stays in RAM and the kernel carries
the partial sums from band to band).

The number of bands of an op is the smallest whose band buffers fit ``band_bytes``
(the planner tries half the RAM, then less when the rest does not fit). A graph input
in ``app_inputs`` that a banded op reads is stored too: the application writes it
chunk by chunk before the inference (nnrt's input writer, ``nnrt_fmstore_input_write``)
and it is never whole in RAM (``BandPlan.app_written``; its chunks are the first tiles).
A feature map with aliases (a view, a reshape) stays whole in RAM, as do the tensors a
band form reads whole. Limits (None): a banded op without a band form (fully connected,
reshapes), several outputs, a stored tensor that is not 4-D, a graph input not in
``app_inputs`` or an output that alone leaves no room.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..ir import Graph
from ..ops.base import POINT, REDUCE, BandForm
from .fm_evict import TAG_BYTES
from .lifetimes import Buffer

#: Target bytes of a row chunk of a feature map that an op writes whole.
CHUNK_TARGET_BYTES = 16384


@dataclass(frozen=True)
class StoredMap:
    """A feature map in storage as row chunks: tile ``first_tile + c`` holds rows
    ``[c * chunk_rows, min(rows, (c + 1) * chunk_rows))``."""

    tensor: int
    rows: int
    row_bytes: int
    chunk_rows: int
    first_tile: int

    @property
    def chunks(self) -> int:
        return -(-self.rows // self.chunk_rows)

    def chunk_len(self, c: int) -> int:
        return (min(self.rows, (c + 1) * self.chunk_rows) - c * self.chunk_rows) * self.row_bytes

    def cover(self, lo: int, hi: int) -> tuple[int, int]:
        """Chunks [c0, c1) holding rows [lo, hi)."""
        return lo // self.chunk_rows, max(lo // self.chunk_rows + 1, -(-hi // self.chunk_rows))


@dataclass(frozen=True)
class BandedOp:
    op: int
    position: int
    bands: tuple[tuple[int, int], ...]  # output rows per band (REDUCE: input rows)
    # stored input -> per band the chunks [c0, c1) read
    reads: Mapping[int, tuple[tuple[int, int], ...]]
    buffers: Mapping[int, str]  # stored tensor -> key of its band buffer
    reduce: bool = False  # bands of input rows, partial sums carried (REDUCE)


@dataclass(frozen=True)
class BandPlan:
    stored: Mapping[int, StoredMap]
    banded: Mapping[int, BandedOp]  # position -> op
    puts: Mapping[int, tuple[tuple[int, str], ...]]  # position -> (tensor, segment key)
    gets: Mapping[int, tuple[tuple[int, str], ...]]  # position -> (tensor, segment key)
    buffers: tuple[Buffer, ...]
    app_written: frozenset[int] = frozenset()  # stored graph inputs (the application's)


def _chunk_rows(row_bytes: int, band_bytes: int) -> int:
    """Rows per chunk: CHUNK_TARGET_BYTES, or an eighth of the band budget if smaller."""
    return max(1, min(CHUNK_TARGET_BYTES, band_bytes // 8) // max(row_bytes, 1))


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _round(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def band_ops(graph: Graph, order: Sequence[int], buffers: Sequence[Buffer],
             band: Callable[[int], BandForm | None], capacity: int,
             band_bytes: int, resident: frozenset[int], first_tile: int,
             align: int = 16, app_inputs: frozenset[int] = frozenset()) -> BandPlan | None:
    """The band plan (see the module doc); None when it cannot be made. ``order``: op
    indices in schedule order; ``band(op)``: its band form."""
    root_of: dict[int, int] = {}
    size: dict[int, int] = {}
    aliased: set[int] = set()
    for b in buffers:
        if b.tensor is not None:
            root_of[b.tensor] = b.tensor
            size[b.tensor] = b.size
            for a in b.aliases:
                root_of[a] = b.tensor
                aliased.add(b.tensor)
    scratch_at: dict[int, int] = {}
    for b in buffers:
        if b.tensor is None:
            scratch_at[b.first] = scratch_at.get(b.first, 0) + _round(b.size, align)

    def acts(idx: int) -> tuple[list[int], list[int]]:
        op = graph.op_by_index[idx]
        ins = list(dict.fromkeys(root_of[t] for t in graph.activations(op) if t in root_of))
        outs = list(dict.fromkeys(root_of[t] for t in op.outputs if t in root_of))
        return ins, outs

    banded_pos = []
    for pos, idx in enumerate(order):
        ins, outs = acts(idx)
        # each a segment of its own with room for the tag, should it be stored
        work = sum(_round(size[t] + TAG_BYTES, align) for t in {*ins, *outs}) \
            + scratch_at.get(pos, 0)
        if work > capacity:
            banded_pos.append(pos)
    if not banded_pos:
        return None
    stored_set: set[int] = set()
    forms: dict[int, BandForm] = {}
    for pos in banded_pos:
        idx = order[pos]
        op = graph.op_by_index[idx]
        form = band(idx)
        if form is None or len(op.outputs) != 1:
            return None
        forms[pos] = form
        ins, outs = acts(idx)
        kept = {root_of[t] for t in form.whole if t in root_of}
        if form.kind == REDUCE:
            kept |= set(outs)  # one pixel, accumulated in RAM
        for t in (*ins, *outs):
            # a view's root and what the form reads whole stay whole in RAM
            if t not in resident and t not in kept and t not in aliased:
                stored_set.add(t)
    if any(len(graph.tensors[t].shape) != 4 for t in stored_set):
        return None
    # row geometry of the stored tensors (batch-1 NHWC)
    rows = {t: graph.tensors[t].shape[1] for t in stored_set}
    row_bytes = {t: size[t] // max(rows[t], 1) for t in stored_set}
    if any(rows[t] * row_bytes[t] != size[t] for t in stored_set):
        return None
    producer: dict[int, int] = {}
    consumers: dict[int, list[int]] = {}
    for pos, idx in enumerate(order):
        ins, outs = acts(idx)
        for t in outs:
            producer.setdefault(t, pos)
        for t in ins:
            consumers.setdefault(t, []).append(pos)
    stored: dict[int, StoredMap] = {}
    tile = first_tile
    banded: dict[int, BandedOp] = {}
    new_buffers: list[Buffer] = [b for b in buffers if b.tensor not in stored_set]
    banded_set = set(banded_pos)

    def chunking(t: int, chunk_rows: int) -> StoredMap:
        nonlocal tile
        m = StoredMap(t, rows[t], row_bytes[t], max(1, min(chunk_rows, rows[t])), tile)
        tile += m.chunks
        stored[t] = m
        return m

    app_written = frozenset(t for t in stored_set if t in app_inputs and t not in producer)
    for t in sorted(app_written):  # written by the application before the inference
        chunking(t, _chunk_rows(row_bytes[t], band_bytes))
    for pos, idx in enumerate(order):
        ins, outs = acts(idx)
        for t in outs:  # stored outputs of ops that run whole: chunked by size
            if t in stored_set and pos not in banded_set:
                chunking(t, _chunk_rows(row_bytes[t], band_bytes))
        if pos not in banded_set:
            continue
        form = forms[pos]
        reduce = form.kind == REDUCE
        y = outs[0]
        out_rows = graph.tensors[form.inputs[0] if reduce
                                 else graph.op_by_index[idx].outputs[0]].shape[1]
        fixed = scratch_at.get(pos, 0) + sum(_round(size[t], align) for t in {*ins, *outs}
                                              if t not in stored_set)
        found = None
        unit = _chunk_rows(row_bytes[y], band_bytes) if y in stored_set else 1
        if reduce and form.inputs[0] in stored:  # bands of whole input chunks
            unit = stored[form.inputs[0]].chunk_rows
        # band heights: every ceil(rows / n), rounded up to whole chunks, tallest first
        steps = sorted({_ceil(_ceil(out_rows, n), unit) * unit for n in range(1, out_rows + 1)},
                       reverse=True)
        for step in steps:
            bands = tuple((a, min(out_rows, a + step)) for a in range(0, out_rows, step))
            need = fixed
            reads: dict[int, tuple[tuple[int, int], ...]] = {}
            bufs: dict[int, int] = {}
            for x in ins:
                if x not in stored_set:
                    continue
                if x not in stored:
                    return None  # read before it is written (an input of the graph)
                m = stored[x]
                covers = []
                biggest = 0
                for a, z in bands:
                    lo, hi = (a, z) if form.kind in (POINT, REDUCE) else form.rows.span(a, z)
                    c0, c1 = m.cover(lo, max(hi, lo + 1))
                    covers.append((c0, c1))
                    biggest = max(biggest, sum(m.chunk_len(c) for c in range(c0, c1)))
                reads[x] = tuple(covers)
                bufs[x] = biggest + TAG_BYTES
            if y in stored_set:
                bufs[y] = step * row_bytes[y] + TAG_BYTES
            need += sum(_round(v, align) for v in bufs.values())
            if need <= band_bytes or step == steps[-1]:
                if need > capacity:
                    return None
                found = (bands, reads, bufs)
                break
        assert found is not None
        bands, reads, bufs = found
        if y in stored_set:
            chunking(y, unit)
        keys = {}
        for t, nbytes in bufs.items():
            key = f"band{idx}_t{t}"
            keys[t] = key
            new_buffers.append(Buffer(key, None, nbytes, pos, pos))
        banded[pos] = BandedOp(idx, pos, bands, reads, keys, reduce)
    puts: dict[int, list[tuple[int, str]]] = {}
    gets: dict[int, list[tuple[int, str]]] = {}
    for t in sorted(stored_set):
        p = producer.get(t)
        if p is None and t not in app_written:
            return None
        if p is not None and p not in banded_set:
            key = f"fm{t}@put{p}"
            new_buffers.append(Buffer(key, None, size[t] + TAG_BYTES, p, p))
            puts.setdefault(p, []).append((t, key))
        for q in consumers.get(t, []):
            if q not in banded_set:
                key = f"fm{t}@get{q}"
                new_buffers.append(Buffer(key, None, size[t] + TAG_BYTES, q, q))
                gets.setdefault(q, []).append((t, key))
    return BandPlan(stored, banded, {p: tuple(v) for p, v in puts.items()},
                    {q: tuple(v) for q, v in gets.items()}, tuple(new_buffers), app_written)


def band_blockers(graph: Graph, order: Sequence[int], buffers: Sequence[Buffer],
                  band: Callable[[int], BandForm | None], capacity: int,
                  resident: frozenset[int]) -> tuple[str, ...]:
    """Why no band plan exists, for the refusal: each op whose own inputs and outputs
    exceed ``capacity`` but that has no band form, and each tensor that must stay whole
    in RAM (a graph output, or an input that is also one: ``resident``) that such an op
    reads or writes and that alone exceeds it. Empty when neither is the reason."""
    size = {b.tensor: b.size for b in buffers if b.tensor is not None}
    for b in buffers:
        for a in b.aliases:
            size.setdefault(a, b.size)
    out: list[str] = []
    whole: set[int] = set()
    for idx in order:
        op = graph.op_by_index[idx]
        ts = {t for t in (*graph.activations(op), *op.outputs) if t in size}
        work = sum(size[t] for t in ts)
        if work <= capacity:
            continue
        if band(idx) is None:
            out.append(f"op {idx} ({op.opcode}) alone needs {work:,} bytes and has no "
                       "row-band form")
        whole |= {t for t in ts if t in resident and size[t] > capacity}
    for t in sorted(whole):
        kind = "output" if t in graph.outputs else "input"
        out.append(f"graph {kind} {graph.tensors[t].name or t} ({size[t]:,} bytes) must stay "
                   "whole in RAM (graph outputs are not stored)")
    return tuple(out)
