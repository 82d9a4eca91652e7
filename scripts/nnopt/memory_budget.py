"""A Plan against the memory budgets of its board: the arena against the SRAM budget,
the weights kept internal against the internal flash, and for streamed weights the
staging buffers and the external flash (:func:`check_budget`, a pure check that raises
one :class:`~nnopt.errors.BudgetError` naming every overflow).

"Budget" here is memory: the board's SRAM and flash. The planning work budget is
:mod:`nnopt.passes.plan_budget` (``--plan-budget``), a different thing."""

from __future__ import annotations

from collections.abc import Sequence

from .boards import ROM_CODE_RESERVE, Board
from .errors import BudgetError
from .plan import Plan, StageEntry, SwapPlan
from .swap.placement import blob_bytes
from .swap.sealed_blob import ENTRY_BYTES


def _tiling_note(plan: Plan) -> str:
    """How far tiling went when even it could not make the arena fit."""
    if not plan.stages:
        return ""
    st = plan.stages[0]
    extra = 100 * (plan.macs - plan.base_macs) / max(plan.base_macs, 1)
    return (f", even with patch-based tiling ({st.grid[0]}x{st.grid[1]} patches over "
            f"{len(st.ops)} ops, +{extra:.1f} % MACs: the smallest arena found)")


def check_budget(plan: Plan, board: Board | None = None) -> None:
    """Raise one BudgetError naming every overflow with its numbers: the arena against
    the SRAM budget and (with a board) the weights kept in internal flash against it."""
    problems: list[str] = []
    hints: list[str] = []
    budget = plan.sram_budget_bytes
    if budget is not None and plan.sram_bytes > budget:
        where = f"board {plan.board}" if plan.board else "the --sram budget"
        state = (f" plus {plan.state_bytes:,} bytes of persistent state"
                 if plan.state_bytes else "")
        problems.append(
            f"the activation arena needs {plan.arena_bytes:,} bytes{state} but {where} has "
            f"{budget:,} bytes: over by {plan.sram_bytes - budget:,} bytes "
            f"(largest single op: {plan.lower_bound_bytes:,} bytes)" + _tiling_note(plan)
            + ("; no row-band plan with the feature maps out of core: "
               + "; ".join(plan.feature_maps_refused) if plan.feature_maps_refused else ""))
        if (board is not None and board.feature_map_storage and not plan.feature_maps
                and not plan.stored and not plan.feature_maps_refused):
            # not planned out of core (--feature-maps off, the default): say how
            hints.append(f"--feature-maps auto (feature maps out of core on the board's "
                         f"{board.feature_map_storage}: ops over the RAM run in row bands, "
                         "tiling and in-place ops off)")
        hints.append("a board with more SRAM or a smaller input resolution")
    for region, size in sorted(plan.arenas.items()):
        cap = board.regions[region].size if board is not None and region in board.regions else 0
        if board is not None and size > cap:
            problems.append(f"the activation arena in {region} needs {size:,} bytes but "
                            f"board {board.name}'s {region} has {cap:,} bytes")
            hints.append("fewer activation regions (a board without activation_regions)")
    swap = plan.swap
    if board is not None and swap is not None and swap.enabled:
        _check_swap_budget(swap, board, problems, hints, plan.bands)
    elif board is not None:
        internal = sum(w.size for w in plan.weights if w.pool == "flash")
        flash = sum(r.size for r in board.rom_regions)
        if internal + ROM_CODE_RESERVE > flash:
            problems.append(
                f"the weights need {internal:,} bytes of internal flash but board "
                f"{board.name} has {flash:,} bytes ({ROM_CODE_RESERVE // 1024} KB kept for "
                f"code): over by {internal + ROM_CODE_RESERVE - flash:,} bytes"
                + ("" if swap is None else "; no weight can stream from external flash ("
                   + ("; ".join(sorted({t.reason for t in swap.tensors}))
                      or "only CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED filters can")
                   + ")"))
            hints.append(_stream_hint(plan, board))
    if problems:
        raise BudgetError("; and ".join(problems), hint="try " + ", or ".join(hints))


_BANDED_HINT = ("a part with more internal flash: of the layers run in row bands, only "
                "float32 convolutions stream their weights (int8 ones stay internal: "
                "docs/out-of-core.md, not done yet)")


def _stream_hint(plan: Plan, board: Board) -> str:
    """What to try when the weights exceed internal flash and none streams: the weight
    swap where it was off; where it was planned, the options that let the large layers
    stream (a layer the plan runs on views, in tiles, in place or with folded padding,
    streams only whole, so one larger than the staging buffers cannot stream)."""
    if not board.external_flash:
        return f"a board with external flash (board {board.name} declares none)"
    if plan.swap is None:
        return "streaming weights from external flash (--swap auto or force)"
    if plan.bands:
        return _BANDED_HINT
    if plan.stages or plan.inplace_ops:
        return ("--tiling off --inplace-ops off, so that layers larger than the staging "
                "buffers stream in output-channel slices (add --feature-maps auto if the "
                "activations then exceed RAM)")
    return ("a part with more internal flash, or a larger --swap-staging so that larger "
            "layers can stream")


def _check_swap_budget(swap: SwapPlan, board: Board, problems: list[str],
                       hints: list[str], bands: Sequence[StageEntry] = ()) -> None:
    """The budgets of a plan that streams weights: what stays internal against the
    internal flash (code reserve and requantisation tables included), the staging
    buffers against their RAM region, the blob against the external flash."""
    ext = swap.external_weight_bytes
    if not swap.fits_internal_flash:
        budget = swap.internal_budget_bytes
        problems.append(
            f"even with {ext:,} bytes of weights streamed from external flash, the "
            f"{swap.internal_weight_bytes:,} bytes of weights that cannot stream exceed "
            f"the internal flash budget of {budget:,} bytes (board {board.name}: "
            f"{swap.internal_flash_bytes:,} bytes of flash - "
            f"{swap.code_reserve_bytes:,} code reserve - {swap.metadata_bytes:,} "
            f"requantisation tables): over by {swap.internal_weight_bytes - budget:,} "
            "bytes")
        banded = {st.ops[0] for st in bands}
        if banded and any(t.op in banded and t.pool != "external" for t in swap.tensors):
            hints.append(_BANDED_HINT)
        else:
            hints.append("a part with more internal flash, or a larger --swap-staging so "
                         "that larger layers can stream")
    if not swap.fits_staging:
        table = ENTRY_BYTES * len(swap.chunks)
        problems.append(
            f"the swap staging buffers (2 x {swap.staging_buffer_bytes:,} bytes) and "
            f"chunk table ({table:,} bytes) do not fit the {swap.staging_budget_bytes:,} "
            f"bytes left in {swap.staging_region}")
        hints.append("a smaller --swap-staging")
    dev = board.storage.get(swap.device) if swap.device else None
    size = dev.size if dev is not None else int(board.external_flash.get("size", 0))
    blob = blob_bytes(swap)
    if size and blob > size:
        where = (f"the {dev.kind} {dev.name}" if dev is not None
                 else "the external flash")
        problems.append(f"the weight blob needs about {blob:,} bytes but {where} "
                        f"of board {board.name} has {size:,} bytes")
        hints.append("a larger external flash part" + (
            "" if board.weight_storage else
            ", or a larger storage device for the weights (the board's weight_storage: "
            "an SD card)"))
