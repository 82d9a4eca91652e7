"""Sparse TFLite constants -> dense ones at build time, their DENSIFY folded away.

TF's converter with sparsity (``tf.lite.Optimize.EXPERIMENTAL_SPARSITY``; MediaPipe's
full-range face detector) stores a weight as its non-zero values plus a
``SparsityParameters`` table, read by a DENSIFY whose output the conv reads. TFLM has no
DENSIFY; the full runtime densifies once at allocation
(tensorflow/lite/kernels/densify.cc, the FormatConverter of
tensorflow/lite/kernels/internal/utils/sparsity_format_converter.cc). Here the
constant is densified while the file is read (:func:`densify`) and the DENSIFY op goes
(:func:`fold`): its output is that dense constant.

The format: the tensor's dense shape has n dimensions; ``block_map`` names the k
dimensions split into blocks, whose block sizes are the ``dense_size`` of the last k
``dim_metadata``; ``traversal_order`` (n + k levels: the n block-count dimensions in
some order, then the k in-block dimensions) orders the values. Level i is DENSE (all
``dense_size`` indices) or SPARSE_CSR: ``array_segments[p] .. array_segments[p + 1]``
index ``array_indices`` under parent position p. Values come in traversal order; the
rest of the dense tensor is zero.

Refused by name: metadata that does not describe the shape (lengths, block sizes that do
not divide, indices or segments out of range, a value count that disagrees), and a
DENSIFY whose input is not a sparse constant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import ModelError, UnsupportedError
from ..ir import Expansion, Op, Tensor

KIND = "densify"  # Expansion.kind
OPCODE = "DENSIFY"  # TFLite's builtin (nnopt has no definition: it never runs)
_DENSE, _SPARSE_CSR = 0, 1  # tflite.DimensionType
_VECTORS = {1: "Int32Vector", 2: "Uint16Vector", 3: "Uint8Vector"}  # SparseIndexVector


@dataclass(frozen=True)
class Level:
    """One dim_metadata entry: DENSE (``size``) or SPARSE_CSR (segments, indices)."""

    sparse: bool
    size: int
    segments: np.ndarray | None = None
    indices: np.ndarray | None = None


@dataclass(frozen=True)
class Sparsity:
    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    levels: tuple[Level, ...]

    @property
    def index_bytes(self) -> int:
        """Bytes of the index arrays in the file (the values are the tensor's buffer)."""
        return sum(a.nbytes for lv in self.levels for a in (lv.segments, lv.indices)
                   if a is not None)


def _index_vector(kind: int, table: Any) -> np.ndarray | None:
    if table is None or kind not in _VECTORS:
        return None
    import importlib

    cls = getattr(importlib.import_module(f"tflite.{_VECTORS[kind]}"), _VECTORS[kind])
    v = cls()
    v.Init(table.Bytes, table.Pos)
    return np.asarray(v.ValuesAsNumpy() if v.ValuesLength() else [], dtype=np.int64)


def read(sp: Any) -> Sparsity:
    """A tflite.SparsityParameters as :class:`Sparsity`."""
    levels = []
    for i in range(sp.DimMetadataLength()):
        m = sp.DimMetadata(i)
        if m.Format() == _SPARSE_CSR:
            levels.append(Level(True, 0, _index_vector(m.ArraySegmentsType(), m.ArraySegments()),
                                _index_vector(m.ArrayIndicesType(), m.ArrayIndices())))
        else:
            levels.append(Level(False, int(m.DenseSize())))
    order = tuple(int(d) for d in sp.TraversalOrderAsNumpy()) if sp.TraversalOrderLength() \
        else ()
    blocks = tuple(int(d) for d in sp.BlockMapAsNumpy()) if sp.BlockMapLength() else ()
    return Sparsity(order, blocks, tuple(levels))


def densify(values: np.ndarray, shape: tuple[int, ...], sp: Sparsity, what: str
            ) -> np.ndarray:
    """The dense tensor of ``shape`` that the non-zero ``values`` and ``sp`` describe."""
    def bad(why: str) -> ModelError:
        return ModelError(f"{what}: sparsity parameters {why}",
                          hint="re-export the model; the sparse weight is corrupt")

    n, k = len(shape), len(sp.block_map)
    if len(sp.traversal_order) != n + k or len(sp.levels) != n + k \
            or sorted(sp.traversal_order) != list(range(n + k)) \
            or sorted(sp.traversal_order[:n]) != list(range(n)):
        raise bad(f"traversal order {list(sp.traversal_order)} and {len(sp.levels)} "
                  f"dimension metadata do not fit a rank-{n} tensor with {k} block "
                  "dimension(s)")
    block = [sp.levels[n + j].size for j in range(k)]
    blocked = list(shape)
    for j, d in enumerate(sp.block_map):
        if not 0 <= d < n or block[j] < 1 or shape[d] % block[j]:
            raise bad(f"block {block[j]} does not divide dimension {d} of {list(shape)}")
        blocked[d] = shape[d] // block[j]
    extent = [blocked[d] if d < n else block[d - n] for d in sp.traversal_order]
    dense = np.zeros(shape, dtype=values.dtype)
    flat = values.reshape(-1)
    # level by level: (parent position, index per level so far) of every entry
    positions = np.zeros(1, dtype=np.int64)
    coords: list[np.ndarray] = []
    for level, lv in enumerate(sp.levels):
        if not lv.sparse:
            if lv.size != extent[level]:
                raise bad(f"level {level} is DENSE of {lv.size}, the dimension is "
                          f"{extent[level]}")
            idx = np.tile(np.arange(lv.size), len(positions))
            positions = np.repeat(positions, lv.size) * lv.size + idx
            coords = [np.repeat(c, lv.size) for c in coords] + [idx]
            continue
        seg, ind = lv.segments, lv.indices
        if seg is None or ind is None or len(seg) < int(positions.max(initial=0)) + 2:
            raise bad(f"level {level} (SPARSE_CSR) has too few segments")
        starts, ends = seg[positions], seg[positions + 1]
        if np.any(ends < starts) or (len(ends) and (ends.max() > len(ind) or starts.min() < 0)):
            raise bad(f"level {level} (SPARSE_CSR) has segments out of range")
        counts = ends - starts
        new_pos = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends, strict=True)]) \
            if len(starts) else np.zeros(0, dtype=np.int64)
        idx = ind[new_pos]
        if np.any(idx < 0) or np.any(idx >= extent[level]):
            raise bad(f"level {level} (SPARSE_CSR) has an index outside 0..{extent[level]}")
        coords = [np.repeat(c, counts) for c in coords] + [idx]
        positions = new_pos
    taken = len(positions)
    if taken != flat.size:
        raise bad(f"describe {taken} values, the buffer holds {flat.size}")
    orig = [np.zeros(taken, dtype=np.int64) for _ in range(n)]
    for level, d in enumerate(sp.traversal_order[:n]):
        orig[d] = coords[level]
    for level in range(n, n + k):
        j = sp.traversal_order[level] - n
        d = sp.block_map[j]
        orig[d] = orig[d] * block[j] + coords[level]
    dense[tuple(orig)] = flat
    return dense


def fold(tensors: list[Tensor], ops: Sequence[Op], sparse: Sequence[int], where: str,
         source: str) -> tuple[list[Op], dict[int, int]]:
    """``ops`` without each DENSIFY of a densified constant (``sparse``: their tensor
    indices, already dense), whose output becomes that constant (``tensors`` updated
    in place), and {DENSIFY output: its input}."""
    done: set[int] = set()
    moved: dict[int, int] = {}
    for op in ops:
        if op.opcode != OPCODE:
            continue
        if len(op.inputs) != 1 or op.inputs[0] not in sparse or len(op.outputs) != 1:
            raise UnsupportedError(
                f"{source}: {where}op {op.index} (DENSIFY) does not read one sparse "
                "constant",
                hint="nnopt densifies sparse weights at build time; a DENSIFY of run-time "
                "data is not supported")
        x, y = tensors[op.inputs[0]], tensors[op.outputs[0]]
        if x.shape != y.shape:
            raise UnsupportedError(
                f"{source}: {where}op {op.index} (DENSIFY) writes {list(y.shape)} from a "
                f"{list(x.shape)} weight", hint="re-export the model")
        tensors[y.index] = replace(y, dtype=x.dtype, data=x.data, quant=x.quant or y.quant)
        done.add(op.index)
        moved[y.index] = x.index
    return [op for op in ops if op.index not in done], moved


def expansion(moved: dict[int, int], file_bytes: dict[int, int],
              dense_bytes: dict[int, int]) -> Expansion | None:
    """What densifying cost: the dense bytes (in the file's dtype: a float16 weight's
    widening is the float16 Expansion's) against the values and indices in the file,
    per sparse tensor."""
    if not moved:
        return None
    return Expansion(KIND, len(moved), sum(file_bytes[x] for x in moved.values()),
                     sum(dense_bytes[x] for x in moved.values()))
