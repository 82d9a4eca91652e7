"""Incremental evaluation of in-place depthwise candidates (issue 18): the layout
derived locally from the previous configuration's equals the layout rebuilt whole, on
real models, along random chains of accepted candidates (with and without concatenation
views), so the greedy search takes the same decisions as when it re-planned each one."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from conftest import model_path
from nnopt.frontend.tflite import load_model
from nnopt.ir import Graph
from nnopt.passes.arena import arena_lower_bound
from nnopt.passes.below_bound import LayoutIndex, _Config, _layout, alias_layout
from nnopt.passes.fuse import fuse_max_pool
from nnopt.passes.inplace_elementwise import plan_inplace
from nnopt.passes.inplace_ops import (
    concat_views,
    depthwise_candidates,
    depthwise_scratch,
    fold_pads,
)
from nnopt.passes.lifetimes import alias_roots
from nnopt.passes.tiling import StageShape

MODELS = ["keras/mobilenet_v2_035_96.tflite", "mlperf_tiny/vww_96_int8.tflite",
          "keras/nasnet_mobile_64.tflite"]


@pytest.mark.parametrize("rel", MODELS)
@pytest.mark.parametrize("seed", [0, 1])
def test_alias_layout_equals_full_layout(rel: str, seed: int) -> None:
    graph = load_model(model_path(rel))
    g = fold_pads(fuse_max_pool(graph)[0])[0]
    order = tuple(range(len(g.ops)))
    rng = random.Random(seed)
    aliases = plan_inplace(g, order, alias_roots(g))
    cfg = _Config(dict(aliases), {}, None)
    views = concat_views(g, alias_roots(g, aliases), frozenset())
    if seed and views:
        cfg = replace(cfg, views=tuple(v for v in views if rng.random() < 0.5))
    memo: dict[tuple[str, int, int], object] = {}
    index = LayoutIndex(g, order)
    lay = _layout(g, order, cfg, True, memo)
    dws = depthwise_candidates(g, order, lay[0])
    assert dws, "the model has in-place depthwise candidates"
    derived = 0
    for op_index in dws:
        op = g.op_by_index[op_index]
        trial = replace(cfg, aliases={**cfg.aliases, op.outputs[0]: op.inputs[0]},
                        scratch={**cfg.scratch, op_index: depthwise_scratch(g, op)})
        fast = alias_layout(g, index, lay, trial, op.outputs[0], op.inputs[0], memo)
        full = _layout(g, order, trial, True, memo)
        if fast is not None:
            derived += 1
            assert fast == full, f"op {op_index}"
            # the lower bound's terms derived along the chain: the bound of the whole
            assert index.bound_terms(fast, 16).value() == \
                arena_lower_bound(full[1], 16, full[3]), f"op {op_index}"
        if rng.random() < 0.5:  # accepted: the next trial derives from this one
            cfg, lay = trial, full
    assert derived >= len(dws) // 2


@pytest.mark.parametrize("rel", ["keras/densenet121_64.tflite", "keras/nasnet_mobile_64.tflite"])
def test_views_layout_equals_full_layout(rel: str) -> None:
    """A concatenation's views added one alias at a time (alias_layout per view, as
    plan_below's concatenation search does) give the layout rebuilt whole, and its
    lower bound."""
    g = fold_pads(fuse_max_pool(load_model(model_path(rel)))[0])[0]
    order = tuple(range(len(g.ops)))
    aliases = plan_inplace(g, order, alias_roots(g))
    cfg = _Config(dict(aliases), {}, None)
    memo: dict[tuple[str, int, int], object] = {}
    index = LayoutIndex(g, order)
    lay = _layout(g, order, cfg, True, memo)
    views = concat_views(g, lay[0], frozenset())
    by_concat: dict[int, list[Any]] = {}
    for v in views:
        by_concat.setdefault(v.concat, []).append(v)
    assert by_concat
    for k, group in enumerate(sorted(by_concat)):
        trial = replace(cfg, views=cfg.views + tuple(by_concat[group]))
        fast: Any = lay
        for v in by_concat[group]:
            fast = alias_layout(g, index, fast, trial, v.tensor, v.output, memo)
            assert fast is not None
        full = _layout(g, order, trial, True, memo)
        assert fast == full, f"concatenation {group}"
        assert index.bound_terms(fast, 16).value() == arena_lower_bound(full[1], 16, full[3])
        if k % 2:  # accepted: the next trial derives from this one
            cfg, lay = trial, fast


@pytest.mark.parametrize("seed", range(6))
def test_first_fit_from_a_similar_run_equals_first_fit(seed: int) -> None:
    """A first fit that keeps the prefix another run placed the same way ends with the
    offsets of the first fit from scratch (random buffers, permissions and changes)."""
    from nnopt.passes.arena import Overlap, first_fit_within, verify_offsets
    from nnopt.passes.lifetimes import Buffer

    rng = random.Random(seed)

    def buffers_and_overlaps() -> tuple[list[Buffer], list[Overlap]]:
        bufs = []
        for i in range(60):
            first = rng.randrange(40)
            bufs.append(Buffer(f"t{i}", i, rng.choice([16, 48, 100, 256, 1000]), first,
                               first + rng.randrange(6)))
        ovs = []
        for a in bufs:
            for b in bufs:
                if a.last == b.first and a is not b and rng.random() < 0.3:
                    ovs.append(Overlap(a.key, b.key, b.first, b.first,
                                       rng.choice([0, 16, None]), rng.choice([None, 32]),
                                       "test"))
        return bufs, ovs

    bufs, ovs = buffers_and_overlaps()
    for name in ("greedy_by_size", "greedy_by_lifetime"):
        ref = first_fit_within(bufs, None, strategy=name, overlaps=ovs)
        assert ref is not None
        for _ in range(10):  # local changes: a buffer resized, one dropped, permissions
            b2 = list(bufs)
            k = rng.randrange(len(b2))
            b2[k] = replace(b2[k], size=b2[k].size + rng.choice([16, 500]))
            del b2[rng.randrange(len(b2))]
            o2 = [o for o in ovs if rng.random() < 0.9]
            keys = {b.key for b in b2}
            o2 = [o for o in o2 if o.src in keys and o.dst in keys]
            full = first_fit_within(b2, None, strategy=name, overlaps=o2)
            fast = first_fit_within(b2, None, strategy=name, overlaps=o2, ref=ref)
            assert full is not None and fast is not None
            assert fast.offsets == full.offsets
            size = max(full.offsets[b.key] + (b.size + 15) // 16 * 16 for b in b2)
            verify_offsets(b2, fast.offsets, 16, size, o2)
            limited = first_fit_within(b2, size - 16, strategy=name, overlaps=o2, ref=ref)
            assert limited is None  # one byte row below what it needs: refused


def _patch_regions(g: Graph, shape: StageShape, grid: tuple[int, int]
                   ) -> dict[int, list[Any]]:
    """Reference: every patch's region of every stage tensor, propagated patch by patch
    (the consumers' windows, unions as bounding boxes), None where a patch is empty."""
    from nnopt.passes.regions import WINDOW, spatial_of
    from nnopt.passes.tiling import _split

    y = shape.output
    _, oh, ow, _ = g.tensors[y].shape
    tiles = [(a, b, c, d) for a, b in _split(oh, grid[0]) for c, d in _split(ow, grid[1])]
    regions: dict[int, list[Any]] = {y: list(tiles)}
    for op in reversed([g.op_by_index[i] for i in shape.ops]):
        reg = regions[op.outputs[0]]
        if op.opcode == "TRANSPOSE":
            needs = [(op.inputs[0], list(reg))]
        else:
            sp = spatial_of(g, op)
            assert sp is not None
            need = [(*sp.h.span(r[0], r[1]), *sp.w.span(r[2], r[3])) if sp.kind == WINDOW
                    else r for r in reg]
            needs = [(x, need) for x in dict.fromkeys(sp.inputs)]
        for x, need in needs:
            acc = regions.setdefault(x, [None] * len(tiles))
            for p, r in enumerate(need):
                a = acc[p]
                acc[p] = r if a is None else (min(a[0], r[0]), max(a[1], r[1]),
                                              min(a[2], r[2]), max(a[3], r[3]))
    return regions


@pytest.mark.parametrize("rel", ["mlperf_tiny/vww_96_int8.tflite",
                                 "keras/mobilenet_v2_035_96.tflite"])
def test_tile_stage_regions_equal_patch_by_patch_propagation(rel: str) -> None:
    """Rows and columns propagated apart give each patch the region the patch-by-patch
    propagation gives (every stage and grid the tiling search considers)."""
    from nnopt.passes.tiling import grids_for, stage_shapes, tile_stage

    g = fold_pads(fuse_max_pool(load_model(model_path(rel)))[0])[0]
    order = tuple(range(len(g.ops)))
    checked = 0
    for shape in stage_shapes(g, order):
        for grid in grids_for(g, shape):
            ref = _patch_regions(g, shape, grid)
            t = tile_stage(g, shape, grid)
            if any(r[1] <= r[0] or r[3] <= r[2] for rs in ref.values() for r in rs):
                assert t is None  # an empty patch: not tileable
                continue
            if t is None:
                continue  # refused for a reason of its own (e.g. a window's column start)
            assert t.regions == ref
            checked += 1
    assert checked > 0
