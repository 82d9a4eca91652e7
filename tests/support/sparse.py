"""A dense array in TFLite's sparse weight format (what TF's converter writes with
sparsity on): the values and the ``SparsityParameters`` the model builder writes
(:class:`nnopt.tflite_builder.Sparsity`), for the DENSIFY tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nnopt.tflite_builder import SparseLevel, Sparsity


def encode(dense: np.ndarray, traversal_order: Sequence[int], block_map: Sequence[int] = (),
           block_sizes: Sequence[int] = (), sparse_levels: Sequence[int] = (),
           index_type: str = "int32") -> tuple[np.ndarray, Sparsity]:
    """``dense`` as its stored values and sparsity parameters: the block dimensions
    ``block_map`` split by ``block_sizes`` (the in-block axes appended), the levels in
    ``traversal_order``, the levels in ``sparse_levels`` SPARSE_CSR (a sub-block with no
    non-zero value is left out), the others DENSE (zeros kept)."""
    n, k = dense.ndim, len(block_map)
    shape = list(dense.shape)
    blocked = list(shape)
    for d, b in zip(block_map, block_sizes, strict=True):
        blocked[d] = shape[d] // b
    # the expanded tensor: axis d < n the block index of dimension d, n + j the index
    # inside block j
    split: list[int] = []
    for d in range(n):
        split += [blocked[d], block_sizes[list(block_map).index(d)]] if d in block_map \
            else [shape[d]]
    e = dense.reshape(split)
    pos, axes_of = 0, {}
    for d in range(n):
        axes_of[d] = pos
        if d in block_map:
            axes_of[n + list(block_map).index(d)] = pos + 1
            pos += 2
        else:
            pos += 1
    t = e.transpose([axes_of[a] for a in traversal_order])
    nodes = [t]
    levels = []
    for level in range(n + k):
        size = t.shape[level]
        nxt = []
        if level in sparse_levels:
            segments, indices = [0], []
            for node in nodes:
                for i in range(size):
                    if np.any(node[i] != 0):
                        indices.append(i)
                        nxt.append(node[i])
                segments.append(len(indices))
            levels.append(SparseLevel(0, tuple(segments), tuple(indices), index_type))
        else:
            for node in nodes:
                nxt.extend(node[i] for i in range(size))
            levels.append(SparseLevel(size))
        nodes = nxt
    values = np.asarray([np.asarray(v).item() for v in nodes], dtype=dense.dtype)
    return values, Sparsity(tuple(traversal_order), tuple(block_map), tuple(levels))
