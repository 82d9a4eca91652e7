"""The pair-row weight layout of the int8 matrix core: its one definition in Python.

nnrt's ``internal/gemm_body.h`` (``nnrt_gemm_pair_body_rp()``, whose comment describes
the layout) reads it in the specialised convolutions whose channels all have channel
records. Per channel pair (a, b) = (2j, 2j + 1), per chunk of 4 depth positions, two
words E = [h_0 h_2] and O = [h_1 h_3] of the int16 halfwords ``h_i = 256 * w_b[i] +
w_a[i]``: one SMLAD of a raw word accumulates the mixed sum 256 * b + a, SXTB16 of it
and a second SMLAD a alone, so 16 MACs of a 2 x 2 block take 13 instructions instead of
17 (Cortex-M7, measured: benchmarks/README-kernels.md). b's sum is (mixed - a) / 256,
exact modulo 2^32 where :func:`exact` holds; the channel records carry the mixed start
value (:func:`mixed_records`). Code generation writes the layout only for the cores
whose data asks for it (:attr:`nnopt.firmware.cores.Core.weight_layouts`); other builds
of the same generated code read it through a C path (slower, never wrong).

Where the board's flash holds twice the bytes (``nnopt.lowering.fc.fit_flash``), the
weights are widened to int16 instead (:func:`int16_rows`, "conv-int16": blocks of 3
channels, each SMLAD 2 MACs of one channel, 17 instructions per 24 MACs in
``nnrt_gemm_w16_asm()``; no mixed sums, so no exactness condition), their records in
the same blocks (:func:`block_records`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..cdefs import DType
from ..ir import ConvOptions, Graph, Op
from .conv_geometry import _is_depthwise
from .conv_variant import cols_bytes, im2col_bytes
from .specialize import RQ_LAST

#: Name of the layout (:attr:`nnopt.firmware.cores.Core.weight_layouts`, and the comment
#: on the array in the model source).
GEMM_PAIRS_LAYOUT = "conv-row-pair"
#: Name of the widened layout (:func:`int16_rows`: twice the bytes, taken only where the
#: board's flash holds them: ``nnopt.lowering.fc.fit_flash``).
INT16_LAYOUT = "conv-int16"
#: Channels per block of the int16 layout (the assembly's 2 pixels x 3 channels).
BLOCK = 3
#: The deepest column the layout takes (``NNRT_GEMM_RP_MAX_K``: the C path of other
#: builds unpacks a pair's two rows on its stack; 640: pretrainedResnet_quant's 3x3
#: convolutions of 64 channels, depth 576).
MAX_DEPTH = 640
#: ``NNRT_CONV_TAIL_STACK_BYTES``: a scratch-free op whose columns fit there never takes
#: the per-pixel loops (which read row-major weights).
TAIL_STACK_BYTES = 1024
#: b's sum, bias included, stays below this in magnitude: 256 times it is an int32.
MIXED_LIMIT = 1 << 23


def padded_depth(filter_h: int, filter_w: int, channels: int) -> int:
    """The depth of a conv's weight rows in the layout: a filter over more than one pixel
    has its columns converted in whole chunks of 4 (``nnrt_cols_put_padded_body()``,
    ``nnrt_conv_cols_c3k3()``), so its rows are padded with zero weights to a multiple
    of 4 (an RGB 3x3 filter's 27 to 28; the 28th column position is multiplied by 0); a
    1x1 filter's column is the input vector itself: its depth as it is."""
    depth = filter_h * filter_w * channels
    return depth if filter_h == filter_w == 1 else (depth + 3) // 4 * 4


def padded_rows(w: np.ndarray, depth: int) -> np.ndarray:
    """Weights ``[channels, d]`` with zero weights appended to ``depth`` positions."""
    return np.pad(w, ((0, 0), (0, depth - w.shape[1])))


def fits(filter_h: int, filter_w: int, channels: int, out_channels: int,
         scratch: bool) -> bool:
    """Whether a one-group conv's geometry takes the layout: its :func:`padded_depth` a
    multiple of 4 and at most :data:`MAX_DEPTH`, 2 channels or more, and either
    ``scratch`` (the plan passes the op's kernel its scratch in every call: then the
    matrix core runs every pixel, nnrt/kernels/spec.h) or its columns within
    :data:`TAIL_STACK_BYTES` (the scratch-free path's stack buffer). Otherwise the
    scratch-free kernel would leave pixels to the per-pixel loops, which read row-major
    weights."""
    depth = padded_depth(filter_h, filter_w, channels)
    return (out_channels >= 2 and depth % 4 == 0 and 4 <= depth <= MAX_DEPTH
            and (scratch or tail_fits(filter_h, filter_w, channels)))


def tail_fits(filter_h: int, filter_w: int, channels: int) -> bool:
    """Whether the scratch-free kernel's columns of a geometry fit its stack buffer
    (``nnrt_conv_gemm_tail_fits()``): then it runs every pixel through the matrix core
    without scratch."""
    depth = filter_h * filter_w * channels
    need = cols_bytes(depth) if filter_h == filter_w == 1 else im2col_bytes(
        filter_h, filter_w, channels)
    return need <= TAIL_STACK_BYTES


def pair_rows(w: np.ndarray) -> np.ndarray | None:
    """int8 weights ``[channels, depth]`` in the pair-row layout, flat, same size; None
    when it does not apply: a depth that is not a multiple of 4 or over
    :data:`MAX_DEPTH`, one channel, or a halfword that is no int16 (``w_b = -128`` with
    ``w_a < 0``). An odd last channel stays a row-major row."""
    channels, depth = w.shape
    if channels < 2 or depth % 4 or not 4 <= depth <= MAX_DEPTH or w.dtype != np.int8:
        return None
    pairs = channels // 2
    rows = w[:2 * pairs].astype(np.int16).reshape(pairs, 2, depth)
    low, high = rows[:, 0, :], rows[:, 1, :]
    hb = high - (low < 0)  # the high byte of each halfword 256 * w_b + w_a
    if (hb < -128).any():
        return None

    def by_word(v: np.ndarray) -> np.ndarray:
        # position i = 4 c + 2 m + q: chunk c, word q (E / O), halfword m -> [p][c][q][m]
        return v.reshape(pairs, depth // 4, 2, 2).transpose(0, 1, 3, 2)

    words = np.stack([by_word(low), by_word(hb)], axis=-1)  # bytes [w_a, h_b]
    out = np.concatenate([words.reshape(-1), w[2 * pairs:].reshape(-1)])
    return out.astype(np.int8)


def int16_rows(w: np.ndarray) -> np.ndarray | None:
    """int8 weights ``[channels, depth]`` widened to int16 in the layout of nnrt's
    ``nnrt_gemm_pair_body_w16()`` (``internal/gemm_body.h``, whose comment describes it;
    this is its one definition in Python): per block of G channels (:data:`BLOCK` from
    channel 0, the last block ``channels % BLOCK`` when that is not 0), per chunk of 4
    depth positions d, per channel of the block the words E = [w_d w_d+2] and O =
    [w_d+1 w_d+3]. The same number of values, int16; None where the geometry does not
    take it (as :func:`pair_rows`, but every int8 weight and bias fits: each SMLAD is 2
    MACs of one channel, no mixed sums). The records come in the same blocks
    (:func:`block_records`)."""
    channels, depth = w.shape
    if channels < 2 or depth % 4 or not 4 <= depth <= MAX_DEPTH or w.dtype != np.int8:
        return None
    v = w.astype(np.int16)

    def block(b: np.ndarray) -> np.ndarray:
        # position i = 4 c + 2 m + q: chunk c, half m, word q (E / O) -> [c][r][q][m]
        return b.reshape(b.shape[0], depth // 4, 2, 2).transpose(1, 0, 3, 2).reshape(-1)

    parts = [block(v[o:o + BLOCK]) for o in range(0, channels, BLOCK)]
    return np.concatenate(parts).astype(np.int16)


def block_records(records: Sequence[int], channels: int) -> list[int]:
    """Channel records (:func:`nnopt.lowering.specialize.gemm_records`, per channel pair)
    regrouped for the int16 layout's blocks (:func:`int16_rows`): per block of G channels
    its G biases, then each channel's multiplier, addend and rsh; ``RQ_LAST`` on the last
    whole block's third rsh (the assembly loop's end, ``nnrt_gemm_w16_asm()``)."""
    chans: list[tuple[int, list[int]]] = []
    for c in range(channels):
        base = 8 * (c // 2)
        rec = list(records[base + 2 + 3 * (c % 2):base + 5 + 3 * (c % 2)])
        rec[2] &= ~RQ_LAST
        chans.append((records[base + c % 2], rec))
    out: list[int] = []
    for b in range(0, channels, BLOCK):
        blk = chans[b:b + BLOCK]
        out += [bias for bias, _ in blk]
        for _, rec in blk:
            out += rec
    whole = channels // BLOCK
    if whole:
        out[4 * BLOCK * whole - 1] |= RQ_LAST
    return out


def wide_bytes(graph: Graph, op: Op) -> int:
    """The bytes widening ``op``'s weights adds to the flash when it is a convolution the
    int16 layout may be written for (int8 activations, constant int8 weights that it
    alone reads, a :func:`padded_depth` :func:`int16_rows` takes): the int16 rows, padded
    to whole chunks, less the int8 tensor; an upper bound (``nnopt.lowering.fc.fit_flash``);
    else 0."""
    if (not isinstance(op.options, ConvOptions) or _is_depthwise(op) or len(op.inputs) < 2):
        return 0
    x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
    if (x.dtype != DType.INT8 or w.dtype != DType.INT8 or not w.is_constant
            or len(w.shape) != 4 or graph.consumers.get(w.index) != (op.index,)):
        return 0
    depth = w.shape[1] * w.shape[2] * w.shape[3]
    core = padded_depth(w.shape[1], w.shape[2], w.shape[3])  # zero weights to whole chunks
    if w.shape[0] < 2 or core % 4 or not 4 <= core <= MAX_DEPTH:
        return 0
    return w.shape[0] * (2 * core - depth)


def exact(w: np.ndarray, records: Sequence[int], z_in: int) -> bool:
    """Whether every pair's channel b whose output depends on its accumulator (a
    non-zero multiplier in the channel records, ``w`` its weights [channels, depth])
    has ``|bias_b + sum_i w_b[i] (x_i - z_in)| < 2^23`` for every int8 input: then 256
    times it is an int32 and the kernel's modular difference (mixed - a) is exact. A
    channel stored by its constant output reads no accumulator (vww_96_int8 has hundreds,
    some with biases near 2^30)."""
    pairs = w.shape[0] // 2
    v_lo, v_hi = -128 - z_in, 127 - z_in
    rows = np.asarray(w[1:2 * pairs:2], dtype=np.int64)
    bias = np.asarray([records[8 * j + 1] for j in range(pairs)], dtype=np.int64)
    live = np.asarray([records[8 * j + 5] != 0 for j in range(pairs)], dtype=bool)
    lo = bias + np.minimum(rows * v_lo, rows * v_hi).sum(axis=1)
    hi = bias + np.maximum(rows * v_lo, rows * v_hi).sum(axis=1)
    ok = (lo > -MIXED_LIMIT) & (hi < MIXED_LIMIT)
    return bool((ok | ~live).all())


def mixed_records(records: Sequence[int], channels: int) -> list[int]:
    """Channel records (:func:`nnopt.lowering.specialize.gemm_records`) for the layout:
    each pair's second bias word becomes ``bias_a + 256 * bias_b`` wrapped to int32, the
    mixed sum's start value."""
    out = list(records)
    for j in range(channels // 2):
        v = (out[8 * j] + 256 * out[8 * j + 1]) & 0xFFFFFFFF
        out[8 * j + 1] = v - (1 << 32) if v >= 1 << 31 else v
    return out
