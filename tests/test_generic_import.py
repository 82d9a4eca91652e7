"""Planning studies on models with operators nnopt has no definition for (issue 18):
``load_model(..., unsupported="plan")`` imports them as generic ops the planner plans
with kernel checks off; the default import and the commands keep refusing them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conftest import model_path
from nnopt.cli import main
from nnopt.errors import ModelError, UnsupportedError
from nnopt.frontend.tflite import load_model, load_model_bytes
from nnopt.ir import NoOptions
from nnopt.plan import Plan
from nnopt.planner import PlanOptions, plan_model
from support.tflite_builder import ModelBuilder


def _model() -> bytes:
    """x -> ADD(x, x) -> RANK -> ADD(., x) -> y: RANK has no nnopt definition (nor a TFLM
    kernel)."""
    b = ModelBuilder("generic")
    shape = (1, 8, 8, 4)
    x, a, e, y = (b.tensor(shape, "float32") for _ in range(4))
    b.op("ADD", [x, x], [a])
    b.op("RANK", [a], [e])
    b.op("ADD", [e, x], [y])
    return b.build([x], [y])


def _no_overlap(plan: Plan) -> None:
    """No two buffers live at the same step share a byte (aliases share their root's)."""
    roots = [e for e in plan.buffers if e.alias_of is None]
    for i, p in enumerate(roots):
        for q in roots[i + 1:]:
            if p.first <= q.last and q.first <= p.last and p.size and q.size:
                assert p.offset + p.size <= q.offset or q.offset + q.size <= p.offset, (p, q)


def test_generic_op_imported_with_file_shapes_and_no_traits() -> None:
    g = load_model_bytes(_model(), unsupported="plan")
    sin = g.ops[1]
    assert sin.opcode == "RANK" and isinstance(sin.options, NoOptions)
    assert g.tensors[sin.outputs[0]].shape == (1, 8, 8, 4)
    for mode in ("off", "auto"):
        pm = plan_model(g, PlanOptions(check_kernels=False, inplace_ops=mode, tiling=mode))
        _no_overlap(pm.plan)
        # not element-wise: RANK's output never overwrites its input (the ADDs' may)
        assert sin.outputs[0] not in dict(pm.plan.inplace)
        by_tensor = {e.tensor: e for e in pm.plan.buffers}
        src, dst = by_tensor[sin.inputs[0]], by_tensor[sin.outputs[0]]
        assert src.offset + src.size <= dst.offset or dst.offset + dst.size <= src.offset
        assert pm.plan.arena_bytes >= 2 * 8 * 8 * 4 * 4  # RANK's input and output


def test_default_import_and_commands_refuse_generic_ops(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError, match="RANK"):
        load_model_bytes(_model())
    with pytest.raises(ModelError, match="unsupported-operator mode"):
        load_model_bytes(_model(), unsupported="yes")
    f = tmp_path / "generic.tflite"
    f.write_bytes(_model())
    assert main(["optimize", str(f)]) != 0


def test_kernel_checks_still_refuse_a_generic_graph() -> None:
    g = load_model_bytes(_model(), unsupported="plan")
    with pytest.raises(UnsupportedError):
        plan_model(g, PlanOptions())


def test_unrolled_gru_plans_with_its_views() -> None:
    # The unrolled GRU was planned as generic ops before SPLIT/UNPACK had definitions;
    # now it imports whole, and its split outputs are views of their inputs: each view
    # lies inside its root's bytes, and no two live roots share a byte.
    g = load_model(model_path("families/gru_imu_b.tflite"))
    assert {"UNPACK", "SPLIT"} <= {op.opcode for op in g.ops}
    opts = PlanOptions(check_kernels=False, schedule_time_budget_s=0.5)
    classic = plan_model(g, opts)
    default = plan_model(g, replace(opts, inplace_ops="auto", tiling="auto"))
    for pm in (classic, default):
        _no_overlap(pm.plan)
        assert pm.plan.arena_bytes >= max(e.size for e in pm.plan.buffers)
        by = {e.tensor: e for e in pm.plan.buffers}
        for e in pm.plan.buffers:
            if e.alias_of is not None:
                root = by[e.alias_of]
                assert root.offset <= e.offset and e.offset + e.size <= root.offset + root.size
    assert default.plan.arena_bytes <= classic.plan.arena_bytes
