"""How the product uses the swap subsystem: the swap step of planning (the swap plan
recorded in a Plan, :func:`plan_swap_for`), the AEAD key of a build, the build flags of
a swap build, and the runtime's blob errors as user errors.

The compile driver (:mod:`nnopt.driver`) and the runner (:mod:`nnopt.runner`) call
these; the driver generates the sources (``nnopt.swap.codegen`` when weights stream).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ..boards import Board
from ..cdefs import DType, Status
from ..errors import BlobError, NnoptError, PlanError
from ..ops import known
from ..plan import Plan, SwapPlan
from ..planner import PlannedModel
from .fmap import plan_traffic
from .placement import SWAP_MODES, SwapOptions, blob_bytes, plan_swap
from .provision import KeyStoreError
from .sealed_blob import algorithm_id, generate_key, key_from_config


def swap_of(plan: Plan) -> SwapPlan | None:
    """The Plan's swap plan when weights stream, else None."""
    if plan.swap is None or not plan.swap.enabled:
        return None
    return plan.swap


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


def plan_swap_for(planned: PlannedModel, board: Board | None, mode: str = "auto",
                  staging_bytes: int | None = None,
                  algorithm: str | None = None, stream_banded: bool = False) -> PlannedModel:
    """Out-of-core execution (issue 5): decide which weights stream from external flash
    (:func:`nnopt.swap.plan_swap`) and record it in the Plan: ``Plan.swap`` (the
    :class:`~nnopt.plan.SwapPlan`) and ``pool="external"`` on the streamed weights.

    ``mode``: "off" plans nothing; "auto" plans only for a board that declares
    ``external_flash`` and streams only what does not fit internal flash; "force"
    streams every streamable weight (without a board: default QSPI figures).
    ``algorithm``: None for the board's ``external_flash.crypto``. The weights of ops
    in row bands stream (slice by slice, again for every band) only where nothing else
    fits, or with ``stream_banded`` (tests).
    """
    if mode not in SWAP_MODES:
        raise PlanError(f"unknown swap mode {mode!r}", hint="use auto, off or force")
    if board is not None and (planned.plan.feature_maps or planned.plan.stored):
        # feature maps out of core: what they move per inference and cost
        fm = plan_traffic(planned.graph, planned.plan, board)
        planned = replace(planned, plan=replace(planned.plan,
                                                feature_map_traffic=fm.to_json()))
    if mode == "off" or (mode == "auto" and (board is None or not board.external_flash)):
        return planned
    opts = SwapOptions(mode=mode, algorithm=algorithm, staging_bytes=staging_bytes,
                       kernel_channel_ranges=False,
                       keep_internal=_unstreamable_ops(planned))
    swap = _plan_fitting(planned, board, opts, stream_banded)
    device = _weight_device(swap, board)
    if device is not None:  # the blob exceeds the external flash: a larger device
        swap = _plan_fitting(planned, board, replace(opts, device=device), stream_banded)
    plan = replace(planned.plan, weights=swap.weights_with_pools(planned.plan.weights),
                   swap=swap)
    return replace(planned, plan=plan)


def _plan_fitting(planned: PlannedModel, board: Board | None, opts: SwapOptions,
                  stream_banded: bool = False) -> SwapPlan:
    """The swap plan with whole layers, or with output-channel slices of every layer
    where that does not fit (layers too large for the staging buffers stream in slices:
    a strided slice through the slice buffer, nnopt.swap.codegen); only where the
    whole-layer plan does not fit, so the plans that fit stay as they were."""
    swap = plan_swap(planned.graph, planned.plan, board, opts)
    if stream_banded or not (swap.fits_internal_flash and swap.fits_staging):
        sliced = plan_swap(planned.graph, planned.plan, board,
                           replace(opts, kernel_channel_ranges=True,
                                   whole_only=_viewed_ops(planned)))
        if sliced.fits_internal_flash and sliced.fits_staging and not stream_banded:
            swap = sliced
        elif banded := _band_streamable(planned):
            # the row-banded layers' weights stream too, once per band
            by_band = plan_swap(planned.graph, planned.plan, board,
                                replace(opts, kernel_channel_ranges=True,
                                        whole_only=_viewed_ops(planned),
                                        keep_internal=opts.keep_internal - set(banded),
                                        banded=banded))
            if by_band.fits_internal_flash or not sliced.fits_internal_flash or stream_banded:
                swap = by_band
    return swap


def _band_streamable(planned: PlannedModel) -> dict[int, int]:
    """Ops in row bands whose weights may stream slice by slice for every band (op ->
    bands): float32 convolutions (output channels on axis 0, kernels that compute a
    channel range; nnopt.codegen.bands runs each slice on the band)."""
    graph = planned.graph
    out: dict[int, int] = {}
    for st in planned.plan.bands:
        op = graph.op_by_index[st.ops[0]]
        d = known(op)
        if (d is None or d.weights is None or d.weights.axis != 0
                or not d.weights.channel_ranges or d.weights.depth_slices
                or len(op.inputs) < 2 or op.inputs[1] < 0):
            continue
        w = graph.tensors[op.inputs[1]]
        if w.is_constant and w.dtype == DType.FLOAT32 and len(w.shape) == 4:
            out[op.index] = st.grid[0] * st.grid[1]
    return out


def _weight_device(swap: SwapPlan, board: Board | None) -> str | None:
    """The board storage device for a weight blob larger than its external flash: the
    first of ``board.weight_storage`` that holds it (None: the blob fits the external
    flash, nothing streams, or no listed device holds it: the budget check then names
    the overflow)."""
    if board is None or not swap.enabled or not board.weight_storage:
        return None
    need = blob_bytes(swap)
    if need <= int(board.external_flash.get("size", 0)):
        return None
    return next((d for d in board.weight_storage if board.storage[d].size >= need), None)


def _unstreamable_ops(planned: PlannedModel) -> frozenset[int]:
    """Ops whose weights must stay internal: those run inside a tiled stage or in row
    bands (the stage code calls their kernels per patch or band), and those run on
    sub-views (folded padding, in place, row by row: nnopt.codegen.views) that could be
    cut into channel slices (one output row); a streamed op on views runs the plan's
    lowering on a whole chunk."""
    plan, graph = planned.plan, planned.graph
    ops: set[int] = set()
    for stage in (*plan.stages, *plan.bands):  # tiled stages, ops in row bands
        ops.update(stage.ops)
    viewed = _viewed_ops(planned)
    for op in graph.ops:
        y = graph.tensors[op.outputs[0]] if op.outputs else None
        if op.index in viewed and y is not None and y.shape and y.num_elements == y.shape[-1]:
            ops.add(op.index)
    return frozenset(ops)


def _viewed_ops(planned: PlannedModel) -> frozenset[int]:
    """Ops the plan runs on sub-views (folded padding, in place, row by row)."""
    plan, graph = planned.plan, planned.graph
    viewed = {e.op for e in plan.inplace_ops}
    viewed.update(op.index for op in graph.ops
                  if getattr(op.options, "explicit_padding", None) is not None)
    return frozenset(viewed)


def build_defines(target: str, board: Board | None, device: str = "") -> dict[str, str]:
    """Defines of a swap firmware: the external flash model of the QEMU port
    (port/baremetal/extflash_semihost.c) from the board's figures; ``device``: the
    storage device holding the blob (``SwapPlan.device``; "" the external flash), whose
    read rate and set-up time per transfer the model then takes."""
    if target == "host" or board is None:
        return {}
    ext = board.external_flash
    out: dict[str, str] = {}
    if device:
        d = board.storage[device]
        out["NNRT_EXTFLASH_BYTES_PER_S"] = f"{int(d.read_bytes_per_s)}u"
        if board.clock_hz and d.latency_s:
            out["NNRT_EXTFLASH_SETUP_CYCLES"] = f"{round(d.latency_s * board.clock_hz)}u"
    elif ext.get("bandwidth_bytes_per_s"):
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
