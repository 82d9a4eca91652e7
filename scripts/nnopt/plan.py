"""The Plan: everything decided about a model, as one serialisable object.

Reports, code generation and the run-time-loaded mode read the Plan; nothing
recomputes it. ``Plan.to_json()`` is the JSON report's core (a contract: field names
named in the issues are kept exactly).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

PLAN_FORMAT = 1


@dataclass(frozen=True)
class BufferEntry:
    tensor: int
    offset: int
    size: int
    first: int  # position in `schedule`
    last: int
    alias_of: int | None = None  # root tensor when this tensor shares its bytes
    # the RAM region whose arena holds it when the plan spreads activations over
    # several regions (passes.region_place); "" = the arena region (omitted in JSON)
    region: str = ""


@dataclass(frozen=True)
class ScratchEntry:
    op: int  # op index
    offset: int
    size: int
    position: int  # position in `schedule`
    region: str = ""  # as BufferEntry.region


@dataclass(frozen=True)
class StateEntry:
    """A variable tensor in the persistent state region (outside the arena): kept
    across invocations, set to ``init`` (every byte) by the model's reset, as TFLM's
    ResetVariableTensors does at allocation (the zero point for int8, else 0)."""

    tensor: int
    offset: int  # in the state region
    size: int
    init: int = 0  # the byte every element starts as
    # a resource variable's reset contents when not one byte throughout (CALL_ONCE's
    # init subgraph assigned it: nnopt.frontend.variables), as hex; "" otherwise
    init_data: str = ""


@dataclass(frozen=True)
class FeatureMapEntry:
    """A feature map evicted to storage between two uses (passes.fm_evict): sealed and
    written as tile ``tile`` after schedule position ``write_after`` from arena offset
    ``src_offset``, read back and authenticated before ``read_before`` into
    ``dst_offset`` (each with room for the 16-byte tag after ``bytes``)."""

    tensor: int
    tile: int
    write_after: int
    read_before: int
    src_offset: int
    dst_offset: int
    bytes: int
    device: str  # the board's storage device


@dataclass(frozen=True)
class StoredEntry:
    """A feature map kept in storage as sealed row chunks (ops in row bands,
    passes.fm_bands): tile ``first_tile + c`` holds rows ``[c * chunk_rows, ...)``,
    ``chunk_bytes`` each (the last ``last_bytes``). Written whole after the positions
    of ``put_after`` from the arena offset beside each, read whole before the positions
    of ``get_before`` into theirs; the banded ops of ``Plan.bands`` move it band by
    band."""

    tensor: int
    first_tile: int
    chunks: int
    chunk_rows: int
    chunk_bytes: int
    last_bytes: int
    device: str
    # "application": a graph input the application writes to storage before the
    # inference (nnrt_fmstore_input_write); "" (omitted in JSON): an op writes it
    written_by: str = ""
    put_after: tuple[tuple[int, int], ...] = ()  # (position, arena offset)
    get_before: tuple[tuple[int, int], ...] = ()  # (position, arena offset)


@dataclass(frozen=True)
class WeightEntry:
    tensor: int
    size: int
    pool: str  # "flash" (internal, .rodata/.nnrt_weights) or "external" (streamed)


@dataclass(frozen=True)
class FusionEntry:
    op: int  # op index folded away
    into: int  # op index that does its work
    kind: str


@dataclass(frozen=True)
class OverlapEntry:
    """A permitted overlap of a dying input (src) and an op's output (dst) in the arena
    (passes.inplace_ops, passes.tiling): safe offset differences and the order used."""

    src: int  # root tensor read
    dst: int  # root tensor written
    first: int  # schedule positions where both are live
    last: int
    forward_max: int | None  # off(dst) - off(src) <= this: safe in increasing order
    backward_min: int | None  # off(dst) - off(src) >= this: safe in decreasing order
    mode: str  # "forward", "backward" (the planned offsets overlap) or "disjoint"
    reason: str


@dataclass(frozen=True)
class InplaceOpEntry:
    """An op run in place beyond element-wise ops (passes.inplace_ops)."""

    op: int  # op index
    kind: str  # "depthwise_channel" (output over input, rows of 4 channels scratch) or
    # "rows" (row by row on sub-views, so the output may overlap the dying input)
    direction: str = "forward"  # "rows": "forward" (row 0 first) or "backward"


@dataclass(frozen=True)
class TileEntry:
    """One tensor of a tiled stage: where its per-patch region lives."""

    tensor: int
    kind: str  # "tile" (dense tile buffer), "input"/"output" (the full tensor, accessed
    # through each patch's window directly), "gather"/"scatter" (a tile buffer copied
    # from/to the full tensor)
    offset: int  # arena offset of the tile buffer (tile/gather/scatter)
    size: int  # tile buffer bytes (max over patches)
    regions: tuple[tuple[int, int, int, int], ...]  # per patch: y0, y1, x0, x1


@dataclass(frozen=True)
class StageEntry:
    """A prefix (or segment) of the schedule run patch by patch (MCUNetV2)."""

    ops: tuple[int, ...]  # op indices in execution order
    first: int  # schedule positions
    last: int
    grid: tuple[int, int]  # patches down and across the stage output
    order: str  # "forward" (raster) or "backward" (reverse raster)
    inputs: tuple[int, ...]  # boundary input tensors (full)
    output: int  # boundary output tensor (full)
    tiles: tuple[TileEntry, ...]
    macs: int  # multiply-accumulates of the stage as tiled
    base_macs: int  # and without tiling
    # Cortex-M7 instructions estimated by passes.cost: what tiling adds, and the whole
    # model without it (0: not recorded)
    extra_instructions: int = 0
    model_instructions: int = 0


@dataclass(frozen=True)
class StepEntry:
    position: int
    op: int
    opcode: str
    live_bytes: int  # live-sum at this step (planned buffers, without scratch)
    scratch_bytes: int


@dataclass(frozen=True)
class TensorPlacement:
    """Where a candidate weight of out-of-core execution lives, and why."""

    tensor: int
    op: int
    opcode: str
    bytes: int
    pool: str  # "flash" (internal) or "external"
    reason: str
    macs_per_byte: float  # inf: no MACs (JSON: null)
    io_bound_if_streamed: bool
    axis: int  # output-channel axis of the tensor
    channels: int
    row_bytes: int  # bytes of one output channel
    splittable: bool  # may be cut into several chunks
    chunks: int = 0
    channels_per_chunk: int = 0


@dataclass(frozen=True)
class ChunkEntry:
    """One sealed chunk of streamed weights, in streaming order."""

    index: int  # position in the streaming order == blob table index
    op: int
    tensor: int
    axis: int
    c0: int
    c1: int
    plain_bytes: int
    buffer: int  # staging buffer (index % 2)
    issue_after: int  # the read is issued by wait(issue_after); -1: at invoke start
    issue_op: int  # op during which the read is issued (-1: before the first op)
    # a slice [k0, k1) of the input depth (weight rows too large for a staging
    # buffer: fully connected layers); k1 == 0: the whole depth (omitted in JSON)
    k0: int = 0
    k1: int = 0


@dataclass(frozen=True)
class SwapOpCost:
    """The cost model's times for one streamed op (costmodel.OpTiming.to_json())."""

    op: int
    opcode: str
    macs: int
    compute_us: float
    weight_bytes: int
    chunks: int
    read_us: float
    decrypt_us: float
    stall_us: float
    io_bound: bool


@dataclass(frozen=True)
class SwapCost:
    """The cost model's prediction for the chosen configuration
    (costmodel.Timeline.to_json(): milliseconds, slowdowns, the streamed ops)."""

    baseline_ms: float
    serial_ms: float
    overlap_ms: float
    decrypt_ms: float
    read_ms: float
    stall_ms: float
    slowdown: float
    serial_slowdown: float
    io_bound_ops: tuple[int, ...]
    ops: tuple[SwapOpCost, ...]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SwapCost:
        return cls(d["baseline_ms"], d["serial_ms"], d["overlap_ms"], d["decrypt_ms"],
                   d["read_ms"], d["stall_ms"], d["slowdown"], d["serial_slowdown"],
                   tuple(d["io_bound_ops"]), tuple(SwapOpCost(**o) for o in d["ops"]))


@dataclass(frozen=True)
class SwapPlan:
    """Out-of-core execution: which weights stream from external flash, in which chunks,
    through which staging buffers, at what predicted cost (nnopt.swap.placement)."""

    mode: str
    enabled: bool
    algorithm: str
    external_kind: str
    internal_flash_bytes: int
    code_reserve_bytes: int
    metadata_bytes: int
    internal_budget_bytes: int  # for weights (-1: no budget)
    internal_weight_bytes: int
    external_weight_bytes: int
    fits_internal_flash: bool
    staging_region: str
    staging_budget_bytes: int
    staging_bytes: int  # per buffer, plaintext capacity (largest chunk)
    staging_buffer_bytes: int  # per buffer, with the tag, rounded to 16
    fits_staging: bool
    sram_bytes: int  # staging buffers + chunk table + crypto state
    arena_fits: bool | None
    needs_channel_range_kernels: bool
    tensors: tuple[TensorPlacement, ...]
    chunks: tuple[ChunkEntry, ...]
    cost: SwapCost  # the chosen configuration
    staging_candidates: Mapping[int, float]  # staging bytes -> predicted overlap ms
    notes: tuple[str, ...]
    # The board storage device holding the weight blob (boards' weight_storage, e.g.
    # "sd_card"); "": the board's external_flash (the JSON then has no "device" key)
    device: str = ""
    # True: more chunks than RAM holds table entries: the driver reads each chunk's
    # entry when it issues the chunk (nnrt_swap_config_t.table_on_demand); omitted in
    # JSON when False
    table_on_demand: bool = False

    @property
    def external_tensors(self) -> tuple[int, ...]:
        return tuple(t.tensor for t in self.tensors if t.pool == "external")

    @property
    def chunk_count(self) -> int:
        return len(self.chunks)

    @property
    def predicted_slowdown(self) -> float:
        return float(self.cost.slowdown)

    def benchmark_row(self) -> dict[str, Any]:
        """The per-model swap figures a benchmark table shows (measured instruction
        overhead comes from a QEMU run, not from here)."""
        return {
            "enabled": self.enabled, "algorithm": self.algorithm,
            "internal_weight_bytes": self.internal_weight_bytes,
            "external_weight_bytes": self.external_weight_bytes,
            "chunks": self.chunk_count, "staging_bytes": self.staging_buffer_bytes,
            "staging_region": self.staging_region, "swap_sram_bytes": self.sram_bytes,
            "predicted_slowdown": round(self.predicted_slowdown, 4),
            "predicted_serial_slowdown": self.cost.serial_slowdown,
            "io_bound_ops": list(self.cost.io_bound_ops),
            "fits": self.fits_internal_flash and self.fits_staging,
        }

    def weights_with_pools(self, weights: Sequence[WeightEntry]) -> tuple[WeightEntry, ...]:
        """The Plan's weight entries with ``pool="external"`` for streamed tensors."""
        ext = set(self.external_tensors)
        return tuple(replace(w, pool="external") if w.tensor in ext else w for w in weights)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["cost"]["io_bound_ops"] = list(self.cost.io_bound_ops)
        d["cost"]["ops"] = [asdict(o) for o in self.cost.ops]
        d["chunk_count"] = self.chunk_count
        d["predicted_slowdown"] = round(self.predicted_slowdown, 4)
        d["staging_candidates"] = {str(k): v for k, v in self.staging_candidates.items()}
        if not self.device:  # plans on the external flash keep their JSON byte for byte
            del d["device"]
        if not self.table_on_demand:
            del d["table_on_demand"]
        for c in d["chunks"]:
            if not c["k1"]:  # whole-depth chunks: the JSON of earlier releases
                del c["k0"], c["k1"]
        for t in d["tensors"]:
            if math.isinf(t["macs_per_byte"]):
                t["macs_per_byte"] = None
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SwapPlan:
        tensors = tuple(TensorPlacement(**{**t, "macs_per_byte": math.inf
                                           if t["macs_per_byte"] is None
                                           else t["macs_per_byte"]}) for t in d["tensors"])
        fields = {k: v for k, v in d.items() if k in cls.__dataclass_fields__
                  and k not in ("tensors", "chunks", "cost")}
        fields["staging_candidates"] = {int(k): v for k, v in d["staging_candidates"].items()}
        fields["notes"] = tuple(d["notes"])
        return cls(**fields, tensors=tensors, cost=SwapCost.from_json(d["cost"]),
                   chunks=tuple(ChunkEntry(**c) for c in d["chunks"]))


@dataclass(frozen=True)
class Plan:
    model: str
    source_sha256: str
    schedule: tuple[int, ...]
    optimal: bool
    schedule_strategy: str
    peak_live_bytes: int
    peak_live_bytes_file_order: int
    peak_live_bytes_unfused: int  # chosen order, before fusion and in-place
    lower_bound_bytes: int
    schedule_lower_bound_bytes: int
    arena_bytes: int
    arena_strategy: str
    arena_candidates: dict[str, int]  # strategy -> arena bytes it reached
    alignment: int
    buffers: tuple[BufferEntry, ...]
    scratch: tuple[ScratchEntry, ...]
    weights: tuple[WeightEntry, ...]
    fusions: tuple[FusionEntry, ...]
    inplace: tuple[tuple[int, int], ...]  # (output tensor, input tensor) pairs
    steps: tuple[StepEntry, ...]
    weight_bytes: int
    planning_seconds: float  # wall time of plan_model: every plan it made (fallbacks too)
    board: str | None = None
    sram_budget_bytes: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    # Below the op bound (passes.inplace_ops, passes.tiling); empty when not used.
    overlaps: tuple[OverlapEntry, ...] = ()
    inplace_ops: tuple[InplaceOpEntry, ...] = ()
    stages: tuple[StageEntry, ...] = ()
    macs: int = 0  # multiply-accumulates per inference as planned (tiling included)
    base_macs: int = 0  # without tiling
    # Out-of-core execution (nnopt.swap.placement.plan_swap); None when swapping was
    # not planned. In the JSON: SwapPlan.to_json().
    swap: SwapPlan | None = None
    # The planning budget (passes.plan_budget): {"seconds": limit or None (mapped onto a
    # count of work per search), "exhausted": the searches whose count ran out (their
    # best so far kept), "wall_clock_guard" (only when it fired): the searches the
    # time guard (the planner's CPU time) stopped, whose result then depends on the
    # machine, "fallback":
    # "classic" when the classic plan was smaller than what the searches found (cut
    # short, or not below the live peak)}.
    planning_time_budget: dict[str, Any] = field(default_factory=dict)
    # Persistent state (variable tensors, nnopt.passes.state): a region of its own
    # beside the arena, never reused; the arena plans everything else.
    state: tuple[StateEntry, ...] = ()
    state_bytes: int = 0
    # Split-like ops (SPLIT, UNPACK, contiguous SLICE ...) whose outputs the plan keeps
    # as views of their input (no copy; passes.lifetimes.view_parents); omitted when
    # empty. The planner plans with and without them and keeps the smaller arena.
    views: tuple[int, ...] = ()
    # Arenas in other RAM regions than the board's arena region (passes.region_place:
    # the single arena did not fit): region name -> bytes; omitted when empty.
    # ``arena_bytes`` stays the arena region's arena.
    arenas: dict[str, int] = field(default_factory=dict)
    # Feature maps out of core (passes.fm_evict): the tiles written to and read back
    # from storage per inference; omitted when empty.
    feature_maps: tuple[FeatureMapEntry, ...] = ()
    # Ops in row bands (passes.fm_bands): each a one-op stage whose "gather" inputs are
    # read from the tile store band by band and whose "scatter" output is written to
    # it; and the feature maps stored as row chunks. Omitted when empty.
    bands: tuple[StageEntry, ...] = ()
    stored: tuple[StoredEntry, ...] = ()
    # --feature-maps auto refused: why no op could run in row bands (passes.fm_bands)
    feature_maps_refused: tuple[str, ...] = ()
    # What the feature maps out of core move and cost (nnopt.swap.fmap.plan_traffic,
    # recorded by the swap step): per tensor the bytes written and read per inference
    # and the device, slowdown, wear, energy. JSON: ``swap.feature_maps``; empty: none.
    feature_map_traffic: Mapping[str, Any] = field(default_factory=dict)

    @property
    def activation_bytes(self) -> int:
        """Every arena's bytes: the arena region's and the other regions'."""
        return self.arena_bytes + sum(self.arenas.values())

    @property
    def sram_bytes(self) -> int:
        """Arena plus persistent state: the SRAM the model's data needs."""
        return self.arena_bytes + self.state_bytes

    @property
    def fragmentation(self) -> float:
        """Share of the arena not explained by the live peak: 1 - peak/arena."""
        if self.arena_bytes == 0:
            return 0.0
        return max(0.0, 1.0 - self.peak_live_bytes / self.arena_bytes)

    def buffer_of(self, tensor: int) -> BufferEntry:
        for b in self.buffers:
            if b.tensor == tensor:
                return b
        raise KeyError(tensor)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["format"] = PLAN_FORMAT
        d["fragmentation"] = round(self.fragmentation, 4)
        d["schedule"] = list(self.schedule)
        d["inplace"] = [{"tensor": o, "into": i} for o, i in self.inplace]
        for b in d["buffers"]:
            if b["alias_of"] is None:
                del b["alias_of"]
            if not b["region"]:
                del b["region"]
        for sc in d["scratch"]:
            if not sc["region"]:
                del sc["region"]
        if not self.arenas:
            del d["arenas"]
        if not self.feature_maps:
            del d["feature_maps"]
        if not self.bands:
            del d["bands"]
        if not self.stored:
            del d["stored"]
        if not self.feature_maps_refused:
            del d["feature_maps_refused"]
        for e in d.get("stored", ()):
            if not e["written_by"]:
                del e["written_by"]
        d["swap"] = self.swap.to_json() if self.swap is not None else None
        del d["feature_map_traffic"]
        if self.feature_map_traffic:  # feature maps out of core: beside the weights
            d["swap"] = {**(d["swap"] or {"enabled": False}),
                         "feature_maps": dict(self.feature_map_traffic)}
        if not self.planning_time_budget:  # plans read from before the budget existed
            del d["planning_time_budget"]
        if self.state:
            d["sram_bytes"] = self.sram_bytes
            for e in d["state"]:
                if not e["init_data"]:
                    del e["init_data"]  # one byte throughout: the JSON of earlier releases
        else:  # stateless: the JSON of earlier releases, field for field
            del d["state"], d["state_bytes"]
        if self.views:
            d["views"] = list(self.views)
        else:
            del d["views"]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Plan:
        return cls(
            model=d["model"], source_sha256=d["source_sha256"],
            schedule=tuple(d["schedule"]), optimal=d["optimal"],
            schedule_strategy=d["schedule_strategy"], peak_live_bytes=d["peak_live_bytes"],
            peak_live_bytes_file_order=d["peak_live_bytes_file_order"],
            peak_live_bytes_unfused=d["peak_live_bytes_unfused"],
            lower_bound_bytes=d["lower_bound_bytes"],
            schedule_lower_bound_bytes=d["schedule_lower_bound_bytes"],
            arena_bytes=d["arena_bytes"], arena_strategy=d["arena_strategy"],
            arena_candidates=dict(d["arena_candidates"]), alignment=d["alignment"],
            buffers=tuple(BufferEntry(**b) for b in d["buffers"]),
            scratch=tuple(ScratchEntry(**s) for s in d["scratch"]),
            weights=tuple(WeightEntry(**w) for w in d["weights"]),
            fusions=tuple(FusionEntry(**f) for f in d["fusions"]),
            inplace=tuple((x["tensor"], x["into"]) for x in d["inplace"]),
            steps=tuple(StepEntry(**s) for s in d["steps"]),
            weight_bytes=d["weight_bytes"], planning_seconds=d["planning_seconds"],
            board=d.get("board"), sram_budget_bytes=d.get("sram_budget_bytes"),
            options=dict(d.get("options", {})),
            overlaps=tuple(OverlapEntry(**o) for o in d.get("overlaps", ())),
            inplace_ops=tuple(InplaceOpEntry(**o) for o in d.get("inplace_ops", ())),
            stages=tuple(_stage_from_json(x) for x in d.get("stages", ())),
            macs=int(d.get("macs", 0)), base_macs=int(d.get("base_macs", 0)),
            swap=SwapPlan.from_json(d["swap"]) if d.get("swap") is not None
            and "chunks" in d["swap"] else None,
            feature_map_traffic=dict((d.get("swap") or {}).get("feature_maps", {})),
            feature_maps_refused=tuple(d.get("feature_maps_refused", ())),
            planning_time_budget=dict(d.get("planning_time_budget", {})),
            state=tuple(StateEntry(**e) for e in d.get("state", ())),
            state_bytes=int(d.get("state_bytes", 0)),
            views=tuple(d.get("views", ())),
            arenas={str(k): int(v) for k, v in d.get("arenas", {}).items()},
            feature_maps=tuple(FeatureMapEntry(**e) for e in d.get("feature_maps", ())),
            bands=tuple(_stage_from_json(x) for x in d.get("bands", ())),
            stored=tuple(StoredEntry(**{**e, "put_after": tuple(map(tuple, e["put_after"])),
                                        "get_before": tuple(map(tuple, e["get_before"]))})
                         for e in d.get("stored", ())),
        )


def _stage_from_json(d: dict[str, Any]) -> StageEntry:
    tiles = tuple(TileEntry(t["tensor"], t["kind"], t["offset"], t["size"],
                            tuple(tuple(r) for r in t["regions"]))
                  for t in d["tiles"])
    return StageEntry(tuple(d["ops"]), d["first"], d["last"], tuple(d["grid"]),
                      d["order"], tuple(d["inputs"]), d["output"], tiles, d["macs"],
                      d["base_macs"], d.get("extra_instructions", 0),
                      d.get("model_instructions", 0))
