"""Incremental evaluation of in-place depthwise candidates (issue 18): the layout
derived locally from the previous configuration's equals the layout rebuilt whole, on
real models, along random chains of accepted candidates (with and without concatenation
views), so the greedy search takes the same decisions as when it re-planned each one."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from conftest import model_path
from nnopt.frontend.tflite import load_model
from nnopt.passes.below_bound import LayoutIndex, _Config, _layout, alias_layout
from nnopt.passes.fuse import fuse_max_pool
from nnopt.passes.inplace import plan_inplace
from nnopt.passes.inplace_ops import (
    concat_views,
    depthwise_candidates,
    depthwise_scratch,
    fold_pads,
)
from nnopt.passes.lifetimes import alias_roots

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
        if rng.random() < 0.5:  # accepted: the next trial derives from this one
            cfg, lay = trial, full
    assert derived >= len(dws) // 2
