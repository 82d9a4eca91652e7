"""Layout operators that move elements without arithmetic: DEPTH_TO_SPACE,
SPACE_TO_DEPTH, MIRROR_PAD, REVERSE_V2, BROADCAST_TO, SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND, and the ones whose output does not depend on the input values:
SHAPE, FILL, ZEROS_LIKE. Options and traits; the lowerings are in
:mod:`nnopt.lowering.layout`.

None of them is element-wise or an alias (each output element comes from another
position of the input, or from no input element at all), so the planner gives the
output its own buffer, live together with the input during the op.
"""

from __future__ import annotations

from typing import Any

import tflite

from ..ir import BlockSizeOptions, MirrorPadOptions, OpOptions
from ..lowering import layout as layout_lowering
from .base import ANY, OpDef, Options, audited, table, tflm, write_fields, writer

MIRROR_MODES = {tflite.MirrorPadMode.REFLECT: "REFLECT",
                tflite.MirrorPadMode.SYMMETRIC: "SYMMETRIC"}


def _read_depth_to_space(op: Any) -> OpOptions:
    o = table(tflite.DepthToSpaceOptions, op)
    return BlockSizeOptions(o.BlockSize() if o is not None else 1)


def _read_space_to_depth(op: Any) -> OpOptions:
    o = table(tflite.SpaceToDepthOptions, op)
    return BlockSizeOptions(o.BlockSize() if o is not None else 1)


def _read_mirror_pad(op: Any) -> OpOptions:
    o = table(tflite.MirrorPadOptions, op)
    return MirrorPadOptions(MIRROR_MODES.get(o.Mode(), f"mode {o.Mode()}")
                            if o is not None else "REFLECT")


_write_block_size = write_fields(BlockSizeOptions)


def _mirror_pad_fields(o: MirrorPadOptions) -> dict[str, int]:
    codes = {v: k for k, v in MIRROR_MODES.items()}
    if o.mode not in codes:
        raise ValueError(f"mirror pad {o.mode}; REFLECT or SYMMETRIC")
    return {"mode": codes[o.mode]}


_write_mirror_pad = writer(MirrorPadOptions, _mirror_pad_fields)


DEFINITIONS = (
    OpDef("DEPTH_TO_SPACE", "D2S", layout_lowering.DEPTH_TO_SPACE,
          Options("DepthToSpaceOptions", _read_depth_to_space, _write_block_size),
          blob=False),
    OpDef("SPACE_TO_DEPTH", "S2D", layout_lowering.SPACE_TO_DEPTH,
          Options("SpaceToDepthOptions", _read_space_to_depth, _write_block_size),
          blob=False),
    OpDef("MIRROR_PAD", "MPAD", layout_lowering.MIRROR_PAD,
          Options("MirrorPadOptions", _read_mirror_pad, _write_mirror_pad), blob=False),
    OpDef("REVERSE_V2", "REVERSE", layout_lowering.REVERSE, Options("ReverseV2Options"),
          blob=False),
    OpDef("BROADCAST_TO", "BCAST", layout_lowering.BROADCAST_TO, Options("BroadcastToOptions"),
          blob=False),
    OpDef("SPACE_TO_BATCH_ND", "S2B", layout_lowering.SPACE_TO_BATCH,
          Options("SpaceToBatchNDOptions"), blob=False),
    OpDef("BATCH_TO_SPACE_ND", "B2S", layout_lowering.BATCH_TO_SPACE,
          Options("BatchToSpaceNDOptions"), blob=False),
    OpDef("SHAPE", "SHAPE", layout_lowering.SHAPE, Options("ShapeOptions"), blob=False),
    OpDef("FILL", "FILL", layout_lowering.FILL, Options("FillOptions"), blob=False),
    OpDef("ZEROS_LIKE", "ZEROS", layout_lowering.ZEROS_LIKE, Options("ZerosLikeOptions"),
          blob=False),
)


# what TFLM's kernels take (nnopt.ops.base.TflmKernel: the audit docs/operators.md shows)
DEFINITIONS = audited(DEFINITIONS, {
    "DEPTH_TO_SPACE": tflm("depth_to_space.cc", "float32", "int8"),
    "SPACE_TO_DEPTH": tflm("space_to_depth.cc", "float32", "int8"),
    "MIRROR_PAD": tflm("mirror_pad.cc", "float32", "int8"),
    "REVERSE_V2": tflm(None),
    "BROADCAST_TO": tflm("broadcast_to.cc", ANY),
    "SPACE_TO_BATCH_ND": tflm("space_to_batch_nd.cc", "float32", "int8"),
    "BATCH_TO_SPACE_ND": tflm("batch_to_space_nd.cc", "float32", "int8"),
    "SHAPE": tflm("shape.cc", ANY),
    "FILL": tflm("fill.cc", "float32", "int32", "int8"),
    "ZEROS_LIKE": tflm("zeros_like.cc", "float32", "int8", "int32", "int64"),
})
