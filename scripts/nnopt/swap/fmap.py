"""Feature maps out of core (issue 39), the planning half: where the board's RAM cannot
hold the activations, which feature maps go to external storage, what each costs per
inference (bytes written and read, per device), and the report's three figures:
predicted slowdown, flash wear and energy, from the board's storage data
(``boards/nnopt/*.yaml`` ``storage:``, every figure cited there).

A pure pass: :func:`plan_feature_maps` takes a planned model (its schedule and buffers)
and a board and returns a :class:`FeatureMapPlan`: the prediction for a model planned
all in RAM (the benchmark's table of models beyond the RAM). :func:`plan_traffic` costs
what a plan out of core actually moves (``Plan.feature_maps``, ``Plan.stored``,
``Plan.bands``: the tiles the generated code writes and reads) with the same figures;
the swap step records it (``Plan.feature_map_traffic``, JSON ``swap.feature_maps``).

Algorithm:

- **RAM.** The capacity is the sum of the board's activation regions (each minus what
  it keeps: the planner's ``REGION_RESERVE_BYTES`` outside the arena region, the
  weight-staging buffers when weights stream) -- the multi-region planner places what
  stays resident.
- **Eviction (Belady's rule over sizes).** The schedule is walked step by step. An op
  needs its inputs and outputs resident. When the resident feature maps exceed RAM,
  the one whose next use is furthest away is evicted (ties: the larger); a feature map
  evicted for the first time is written once (sealed); each later use reads it back.
- **Banded ops.** An op whose own working set (inputs + outputs + scratch) exceeds RAM
  runs in row bands (SwapNN's tiles): its inputs are read from storage band by band
  (each once, plus a halo of ``kernel - stride`` rows per band boundary) and its output
  written band by band; the number of bands is what fits half the RAM (the other half:
  double buffering).
- **Cost.** Per op, I/O time = bytes / device rate + a transfer set-up per tile (tile =
  the staging size) + programming (writes) + erases of the NOR erase blocks written;
  AEAD (seal and open) on the CPU at the swap cost model's cycles per byte is never
  hidden; reads and writes overlap compute (double buffering, DMA), so an op costs
  ``max(compute, io) + aead``. Slowdown = that sum / the all-in-RAM compute.
- **Wear.** Writes rotate over the device's free space (wear-aware placement: a ring of
  erase blocks, NOR; an SD card levels wear itself), so each erase block is erased
  ``written / free`` times per inference; life = endurance / that, in inferences, and in
  years at a stated inference rate.
- **Energy.** bytes read x read nJ/B + bytes written x write nJ/B + erases x erase
  energy (the device's datasheet figures), per inference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..boards import Board, Storage
from ..errors import PlanError
from ..ir import ConvOptions, Graph
from ..passes.region_place import REGION_RESERVE_BYTES
from ..plan import Plan, StoredEntry
from .costmodel import CostParams, op_cycles

#: Default inference rate for the wear figure: one inference per second, continuously.
DEFAULT_INFERENCES_PER_S = 1.0
SECONDS_PER_YEAR = 365.25 * 24 * 3600
#: Tile (one sealed transfer) size when none is given: 4 KiB, a NOR sector.
DEFAULT_TILE_BYTES = 4096


@dataclass(frozen=True)
class TensorTraffic:
    tensor: int
    bytes: int
    written: int  # bytes written per inference
    read: int  # bytes read per inference
    device: str
    reason: str  # "evicted" or "banded"


@dataclass(frozen=True)
class FeatureMapPlan:
    device: str  # storage device name ("" when nothing goes out)
    ram_bytes: int  # RAM the feature maps may use
    peak_live_bytes: int  # what all-in-RAM would need
    tensors: tuple[TensorTraffic, ...]
    banded_ops: tuple[int, ...]
    written_bytes: int
    read_bytes: int
    tile_bytes: int
    compute_s: float  # all in RAM (the swap cost model's compute)
    predicted_s: float  # with the feature-map traffic
    io_s: float
    aead_s: float
    erase_cycles_per_inference: float  # per erase block (wear-aware rotation)
    life_inferences: float  # before the rated endurance is reached
    life_years: float  # at inferences_per_s
    inferences_per_s: float
    energy_mj_per_inference: float  # I/O energy only (the part's run current not included)
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def enabled(self) -> bool:
        return bool(self.tensors)

    @property
    def slowdown(self) -> float:
        return self.predicted_s / self.compute_s if self.compute_s else 1.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["slowdown"] = round(self.slowdown, 4)
        d["sources"] = dict(self.sources)
        for k in ("life_inferences", "life_years"):
            if math.isinf(d[k]):
                d[k] = None  # JSON has no infinity: never wears out
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> FeatureMapPlan:
        f = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        f["tensors"] = tuple(TensorTraffic(**t) for t in d["tensors"])
        f["banded_ops"] = tuple(d["banded_ops"])
        for k in ("life_inferences", "life_years"):
            if f[k] is None:
                f[k] = math.inf
        return cls(**f)


def _halo_rows(graph: Graph, op_index: int) -> int:
    op = graph.op_by_index[op_index]
    o = op.options
    if isinstance(o, ConvOptions) and len(op.inputs) > 1 and op.inputs[1] >= 0:
        kh = graph.tensors[op.inputs[1]].shape[1]
        return max(0, (kh - 1) * o.dilation_h + 1 - o.stride_h)
    return 0


def plan_feature_maps(graph: Graph, plan: Plan, board: Board, *,
                      ram_bytes: int | None = None, device: str | None = None,
                      tile_bytes: int = DEFAULT_TILE_BYTES,
                      inferences_per_s: float = DEFAULT_INFERENCES_PER_S,
                      reserved_on_device: int = 0,
                      params: CostParams | None = None) -> FeatureMapPlan:
    """Which feature maps go to storage and what they cost (see the module doc).

    ``ram_bytes``: RAM for feature maps (default: the board's activation regions, each
    less its reserve); ``device``: the storage device (default: the board's
    ``feature_map_storage``); ``reserved_on_device``: bytes of the device holding
    other data (the weight blob), excluded from the wear rotation."""
    name = device or board.feature_map_storage
    if not name:
        raise PlanError(f"board {board.name} names no storage for feature maps",
                        hint="add `feature_map_storage:` and a `storage:` device to its yaml")
    if name not in board.storage:
        raise PlanError(f"board {board.name} has no storage device {name!r}",
                        hint="devices: " + (", ".join(board.storage) or "none"))
    dev = board.storage[name]
    if not dev.writable:
        raise PlanError(f"storage device {name} of board {board.name} is not writable "
                        "(no write rate or endurance)")
    if ram_bytes is None:
        ram_bytes = sum(r.size - (0 if r.name == board.arena_region else REGION_RESERVE_BYTES)
                        for r in board.activation_region_list) - plan.state_bytes
    params = params or CostParams.for_board(board)
    schedule = list(plan.schedule)
    roots = [b for b in plan.buffers if b.alias_of is None]
    size = {b.tensor: b.size for b in roots}
    root_of = {b.tensor: (b.alias_of if b.alias_of is not None else b.tensor)
               for b in plan.buffers}
    scratch_at = {s.position: s.size for s in plan.scratch}
    uses: dict[int, list[int]] = {}
    producer_pos: dict[int, int] = {}
    for pos, idx in enumerate(schedule):
        op = graph.op_by_index[idx]
        for t in op.inputs:
            r = root_of.get(t)
            if r is not None:
                uses.setdefault(r, []).append(pos)
        for t in op.outputs:
            r = root_of.get(t)
            if r is not None:
                producer_pos.setdefault(r, pos)
                uses.setdefault(r, []).append(pos)
    last = {r: max(u) for r, u in uses.items()}

    def next_use(r: int, pos: int) -> int:
        later = [u for u in uses.get(r, ()) if u > pos]
        return later[0] if later else 1 << 30

    resident: set[int] = set()
    written: dict[int, int] = {}
    read: dict[int, int] = {}
    reason: dict[int, str] = {}
    banded: list[int] = []
    io_per_pos: dict[int, tuple[int, int]] = {}  # pos -> (read bytes, written bytes)
    for pos, idx in enumerate(schedule):
        op = graph.op_by_index[idx]
        ins = list(dict.fromkeys(root_of[t] for t in op.inputs if t in root_of))
        outs = list(dict.fromkeys(root_of[t] for t in op.outputs if t in root_of))
        need = set(ins) | set(outs)
        work = sum(size[t] for t in need) + scratch_at.get(pos, 0)
        r_bytes = w_bytes = 0
        if work > ram_bytes:
            # row bands: stream every input from storage and the output to it
            banded.append(idx)
            out_rows = max((graph.tensors[t].shape[1] for t in op.outputs
                            if len(graph.tensors[t].shape) == 4), default=1)
            bands = max(1, min(out_rows, math.ceil(2 * work / max(ram_bytes, 1))))
            halo = _halo_rows(graph, idx)
            for t in ins:
                in_rows = max(1, graph.tensors[t].shape[1]) if len(
                    graph.tensors[t].shape) == 4 else 1
                extra = size[t] * halo * (bands - 1) // in_rows
                if t not in written:  # resident input: written out once to be banded
                    written[t] = size[t]
                    w_bytes += size[t]
                read[t] = read.get(t, 0) + size[t] + extra
                r_bytes += size[t] + extra
                reason.setdefault(t, "banded")
            for t in outs:
                written[t] = size[t]
                w_bytes += size[t]
                reason[t] = "banded"
            resident -= need
        else:
            for t in ins:
                if t not in resident:
                    if t in written:
                        read[t] = read.get(t, 0) + size[t]
                        r_bytes += size[t]
                    resident.add(t)
            resident |= set(outs)
            # evict the furthest next use until the resident set fits
            while sum(size[t] for t in resident) + scratch_at.get(pos, 0) > ram_bytes:
                cands = [t for t in resident if t not in need]
                if not cands:
                    break
                victim = max(cands, key=lambda t: (next_use(t, pos), size[t], t))
                resident.discard(victim)
                if victim not in written and last.get(victim, -1) > pos:
                    written[victim] = size[victim]
                    w_bytes += size[victim]
                    reason.setdefault(victim, "evicted")
        io_per_pos[pos] = (r_bytes, w_bytes)
        resident = {t for t in resident if last.get(t, -1) > pos or t in graph.outputs}
    traffic = {t: (size[t], written.get(t, 0), read.get(t, 0), reason[t]) for t in written}
    return _costed(graph, plan, dev, name, ram_bytes, schedule, io_per_pos, traffic,
                   tuple(banded), tile_bytes, inferences_per_s, reserved_on_device, params)


def plan_traffic(graph: Graph, plan: Plan, board: Board, *,
                 inferences_per_s: float = DEFAULT_INFERENCES_PER_S,
                 reserved_on_device: int = 0, params: CostParams | None = None
                 ) -> FeatureMapPlan:
    """What a plan's feature maps out of core move and cost, from the tiles the
    generated code writes and reads (``Plan.feature_maps``: whole feature maps evicted;
    ``Plan.stored`` and ``Plan.bands``: row chunks, whole or band by band), each tile
    with its 16-byte tag; costed as :func:`plan_feature_maps` (the same device, rates,
    AEAD and compute figures)."""
    tag = 16
    dev_name = (plan.feature_maps[0].device if plan.feature_maps
                else plan.stored[0].device if plan.stored else board.feature_map_storage)
    if dev_name not in board.storage:
        raise PlanError(f"board {board.name} has no storage device {dev_name!r}",
                        hint="devices: " + (", ".join(board.storage) or "none"))
    dev = board.storage[dev_name]
    params = params or CostParams.for_board(board)
    io: dict[int, list[int]] = {}
    tw: dict[int, int] = {}
    tr: dict[int, int] = {}
    reason: dict[int, str] = {}

    def move(pos: int, t: int, nbytes: int, write: bool, why: str) -> None:
        io.setdefault(pos, [0, 0])[1 if write else 0] += nbytes
        (tw if write else tr)[t] = (tw if write else tr).get(t, 0) + nbytes
        reason.setdefault(t, why)

    for e in plan.feature_maps:
        move(e.write_after, e.tensor, e.bytes + tag, True, "evicted")
        move(e.read_before, e.tensor, e.bytes + tag, False, "evicted")
    stored = {m.tensor: m for m in plan.stored}

    def chunk_len(m: StoredEntry, c: int) -> int:
        return (m.last_bytes if c == m.chunks - 1 else m.chunk_bytes) + tag

    for m in plan.stored:
        whole = sum(chunk_len(m, c) for c in range(m.chunks))
        if m.written_by == "application":  # a graph input, sealed and written before op 0
            move(0, m.tensor, whole, True, "input")
        for p, _ in m.put_after:
            move(p, m.tensor, whole, True, "banded")
        for q, _ in m.get_before:
            move(q, m.tensor, whole, False, "banded")
    for st in plan.bands:
        for te in st.tiles:
            sm = stored.get(te.tensor)
            if sm is None or te.kind not in ("gather", "scatter"):
                continue
            for r in te.regions:
                c0, c1 = r[0] // sm.chunk_rows, -(-r[1] // sm.chunk_rows)
                move(st.first, sm.tensor, sum(chunk_len(sm, c) for c in range(c0, c1)),
                     te.kind == "scatter", "banded")
    size = {b.tensor: b.size for b in plan.buffers}
    traffic = {t: (size.get(t, graph.tensors[t].nbytes), tw.get(t, 0), tr.get(t, 0),
                   reason[t]) for t in reason}
    ram = plan.arena_bytes + sum(plan.arenas.values())
    return _costed(graph, plan, dev, dev_name, ram, list(plan.schedule),
                   {p: (v[0], v[1]) for p, v in io.items()}, traffic,
                   tuple(st.ops[0] for st in plan.bands), DEFAULT_TILE_BYTES,
                   inferences_per_s, reserved_on_device, params)


def _costed(graph: Graph, plan: Plan, dev: Storage, name: str, ram_bytes: int,
            schedule: Sequence[int], io_per_pos: Mapping[int, tuple[int, int]],
            traffic: Mapping[int, tuple[int, int, int, str]], banded: tuple[int, ...],
            tile_bytes: int, inferences_per_s: float, reserved_on_device: int,
            params: CostParams) -> FeatureMapPlan:
    """The figures of a traffic (bytes read and written per schedule position; per
    tensor: bytes, written, read, reason): slowdown, wear, energy."""
    compute = [op_cycles(graph, graph.op_by_index[i], params) / params.clock_hz
               for i in schedule]
    aead_bpc = params.aead_cycles_per_byte
    io_total = aead_total = 0.0
    predicted = 0.0
    erases = 0.0
    for pos, c in enumerate(compute):
        r_b, w_b = io_per_pos.get(pos, (0, 0))
        tiles = math.ceil(r_b / tile_bytes) + math.ceil(w_b / tile_bytes)
        blocks = w_b / dev.erase_block if dev.erase_block and not dev.wear_leveled else 0.0
        io = (r_b / dev.read_bytes_per_s + w_b / dev.write_bytes_per_s
              + tiles * dev.latency_s + blocks * dev.erase_s)
        aead = ((r_b + w_b) * aead_bpc + tiles * params.aead_cycles_per_chunk) / params.clock_hz
        erases += blocks
        io_total += io
        aead_total += aead
        predicted += max(c, io) + aead
    total_w = sum(v[1] for v in traffic.values())
    total_r = sum(v[2] for v in traffic.values())
    free = max(dev.size - reserved_on_device, 1)
    per_block = total_w / free  # wear-aware rotation over the free space
    life = dev.endurance_cycles / per_block if per_block else math.inf
    years = life / inferences_per_s / SECONDS_PER_YEAR if per_block else math.inf
    energy_nj = (total_r * dev.read_energy_nj_per_byte + total_w * dev.write_energy_nj_per_byte
                 + erases * dev.erase_energy_nj_per_block)
    tensors = tuple(TensorTraffic(t, v[0], v[1], v[2], name, v[3])
                    for t, v in sorted(traffic.items()))
    return FeatureMapPlan(
        device=name if tensors else "", ram_bytes=ram_bytes,
        peak_live_bytes=plan.peak_live_bytes, tensors=tensors, banded_ops=banded,
        written_bytes=total_w, read_bytes=total_r, tile_bytes=tile_bytes,
        compute_s=sum(compute), predicted_s=predicted, io_s=io_total, aead_s=aead_total,
        erase_cycles_per_inference=per_block, life_inferences=life, life_years=years,
        inferences_per_s=inferences_per_s, energy_mj_per_inference=energy_nj / 1e6,
        sources=_sources(dev, params))


def _sources(dev: Storage, params: CostParams) -> dict[str, str]:
    return {"device": dev.source, "compute": params.sources.get("macs_per_cycle", ""),
            "aead": params.sources.get("aead_cycles_per_byte", "")}


def report_lines(fm: FeatureMapPlan | Mapping[str, Any]) -> list[str]:
    """The report's lines: traffic, slowdown, wear and energy, with their sources (a
    plan or its JSON, ``Plan.feature_map_traffic``)."""
    if not isinstance(fm, FeatureMapPlan):
        fm = FeatureMapPlan.from_json(fm)
    if not fm.enabled:
        return [f"feature maps: all in RAM ({fm.peak_live_bytes:,} B live peak <= "
                f"{fm.ram_bytes:,} B)"]
    years = "never" if math.isinf(fm.life_years) else f"{fm.life_years:,.1f} years"
    return [
        f"feature maps out of core on {fm.device}: {len(fm.tensors)} tensors, "
        f"{fm.written_bytes:,} B written and {fm.read_bytes:,} B read per inference"
        + (f"; {len(fm.banded_ops)} ops in row bands" if fm.banded_ops else ""),
        f"  predicted slowdown {fm.slowdown:.2f}x ({fm.compute_s * 1e3:,.1f} ms in RAM -> "
        f"{fm.predicted_s * 1e3:,.1f} ms; I/O {fm.io_s * 1e3:,.1f} ms, AEAD "
        f"{fm.aead_s * 1e3:,.1f} ms)",
        f"  wear: {fm.erase_cycles_per_inference:.3g} erase cycles per block per inference;"
        f" {years} at {fm.inferences_per_s:g} inference/s",
        f"  energy: {fm.energy_mj_per_inference:,.2f} mJ per inference for the I/O "
        f"(source: {fm.sources.get('device', '')})",
    ]


def totals_by_device(plans: Sequence[FeatureMapPlan]) -> dict[str, tuple[int, int]]:
    """(written, read) bytes per device over several plans (benchmark tables)."""
    out: dict[str, tuple[int, int]] = {}
    for p in plans:
        w, r = out.get(p.device, (0, 0))
        out[p.device] = (w + p.written_bytes, r + p.read_bytes)
    return out
