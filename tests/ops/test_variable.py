"""Multi-subgraph models (issue 17): resource variables (VAR_HANDLE, READ_VARIABLE,
ASSIGN_VARIABLE) in the persistent state region, CALL_ONCE init subgraphs applied at
reset, IF inlined with its outputs selected at run time (WHILE: test_while_loops.py).

The models are built as TF's converter writes a stateful model (CALL_ONCE first, its
init subgraph VAR_HANDLE + ASSIGN_VARIABLE of a constant, then read, compute, assign,
read again) and compared with the tflite-micro interpreter over 4 invocations in one
process, every output of every invocation. Two models, one build each: the variable
cases, and the IF cases (one of them conditioned on a counter variable).
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nnopt.blob.writer import write_blob
from nnopt.codegen.c_model import generate
from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.passes.lifetimes import schedule_problem
from nnopt.plan import Plan
from nnopt.planner import PlanOptions, plan_model
from nnopt.testing.harness import run_nnopt_invocations, run_tflm_invocations
from support.cbuild import c_source, kernel_sources
from support.tflite_builder import ModelBuilder

INVOCATIONS = 4
Q8 = {"scale": 0.05, "zero_point": 3}
QC = {"scale": 0.5, "zero_point": -5}  # the counter: default fill = its zero point


def _handle(b: ModelBuilder, name: str) -> int:
    h = b.tensor((), "resource")
    b.op("VAR_HANDLE", [], [h], {"container": "", "shared_name": name})
    return h


def _init_subgraph(consts: dict[str, tuple[np.ndarray, dict[str, Any]]]) -> ModelBuilder:
    init = ModelBuilder()
    for name, (value, q) in consts.items():
        h = _handle(init, name)
        init.op("ASSIGN_VARIABLE", [h, init.const(value, **q)], [])
    return init


ACC8_INIT = np.array([[5, -4, 3, -2, 1, 0, 7, -9]], np.int8)
ACCF_INIT = np.array([[0.5, -1.25, 2.0, 3.5]], np.float32)


def variables_model() -> bytes:
    """Outputs: 0 int8 accumulator read after its assign, 1 float32 accumulator (the
    assigned value), 2 int8 counter before its increment (no init subgraph: starts at
    the zero point, TFLM's fill), 3 the int8 accumulator read before the assign."""
    b = ModelBuilder("variables")
    k = b.add_subgraph(_init_subgraph({"acc8": (ACC8_INIT, Q8), "accf": (ACCF_INIT, {})}),
                       [], [], "init")
    x8 = b.tensor((1, 8), "int8", name="x8", **Q8)
    xf = b.tensor((1, 4), "float32", name="xf")
    b.op("CALL_ONCE", [], [], {"init_subgraph_index": k})
    h = _handle(b, "acc8")
    r = b.tensor((1, 8), "int8", name="acc8_before", **Q8)
    s = b.tensor((1, 8), "int8", name="acc8_sum", **Q8)
    b.op("READ_VARIABLE", [h], [r])
    b.op("ADD", [r, x8], [s])
    b.op("ASSIGN_VARIABLE", [h, s], [])
    r2 = b.tensor((1, 8), "int8", name="acc8_after", **Q8)
    b.op("READ_VARIABLE", [_handle(b, "acc8")], [r2])
    hf = _handle(b, "accf")
    rf = b.tensor((1, 4), "float32", name="accf_before")
    sf = b.tensor((1, 4), "float32", name="accf_sum")
    b.op("READ_VARIABLE", [hf], [rf])
    b.op("ADD", [rf, xf], [sf])
    b.op("ASSIGN_VARIABLE", [hf, sf], [])
    hc = _handle(b, "count")
    rc = b.tensor((1, 1), "int8", name="count", **QC)
    sc = b.tensor((1, 1), "int8", name="count_next", **QC)
    b.op("READ_VARIABLE", [hc], [rc])
    b.op("ADD", [rc, b.const(np.array([[-3]], np.int8), **QC)], [sc])
    b.op("ASSIGN_VARIABLE", [hc, sc], [])
    return b.build([x8, xf], [r2, sf, rc, r])


def _branch(dtype: str, kind: str, q: dict[str, Any], shape: tuple[int, ...],
            two: bool = False) -> tuple[ModelBuilder, list[int], list[int]]:
    s = ModelBuilder()
    x = s.tensor(shape, dtype, **q)
    y = s.tensor(shape, dtype, **q)
    if kind == "then":
        s.op("ADD", [x, x], [y])
    else:
        s.op("SUB", [x, s.const(np.full(shape, 3).astype(dtype), **q)], [y])
    outs = [y]
    if two:  # a second output: the input itself (then) or its square (else)
        if kind == "then":
            outs.append(x)
        else:
            z = s.tensor(shape, dtype, **q)
            s.op("MUL", [x, x], [z])
            outs.append(z)
    return s, [x], outs


def _accumulate_branch(kind: str, dtype: str, q: dict[str, Any], handle_input: bool
                       ) -> tuple[ModelBuilder, list[int], list[int]]:
    """TFLM's resource_variables recipe (examples/recipes/resource_variables_lib.py): the
    accumulator's assign_add (then) or assign_sub (else) in an IF branch; the handle
    passed in as a branch input, or the branch's own VAR_HANDLE."""
    s = ModelBuilder()
    x = s.tensor((1, 4), dtype, **q)
    h = s.tensor((), "resource") if handle_input else _handle(s, f"acc_{dtype}")
    r, y = s.tensor((1, 4), dtype, **q), s.tensor((1, 4), dtype, **q)
    s.op("READ_VARIABLE", [h], [r])
    s.op("ADD" if kind == "then" else "SUB", [r, x], [y])
    s.op("ASSIGN_VARIABLE", [h, y], [])
    return s, [x, h] if handle_input else [x], [y]


def if_model() -> bytes:
    """Outputs: 0 int8 IF on the input condition, 1 and 2 a float32 IF with two outputs
    on it, 3 a float32 IF on a counter variable (< 2: then for two invocations, else
    after), 4-7 TFLM's resource-variable recipe, float32 and int8 (the IF's output and
    the variable read after it)."""
    b = ModelBuilder("if")
    x8 = b.tensor((1, 8), "int8", name="x8", **Q8)
    xf = b.tensor((1, 4), "float32", name="xf")
    c = b.tensor((), "bool", name="c")
    y8 = b.tensor((1, 8), "int8", name="y8", **Q8)
    b.op("IF", [c, x8], [y8], {
        "then_subgraph_index": b.add_subgraph(*_branch("int8", "then", Q8, (1, 8))),
        "else_subgraph_index": b.add_subgraph(*_branch("int8", "else", Q8, (1, 8)))})
    yf, zf = b.tensor((1, 4), "float32", name="yf"), b.tensor((1, 4), "float32", name="zf")
    b.op("IF", [c, xf], [yf, zf], {
        "then_subgraph_index": b.add_subgraph(*_branch("float32", "then", {}, (1, 4), True)),
        "else_subgraph_index": b.add_subgraph(*_branch("float32", "else", {}, (1, 4), True))})
    h = _handle(b, "n")
    n = b.tensor((1,), "float32", name="n")
    n1 = b.tensor((1,), "float32", name="n_next")
    b.op("READ_VARIABLE", [h], [n])
    b.op("ADD", [n, b.const(np.ones(1, np.float32))], [n1])
    b.op("ASSIGN_VARIABLE", [h, n1], [])
    cn = b.tensor((1,), "bool", name="n_lt_2")
    b.op("LESS", [n, b.const(np.full(1, 2.0, np.float32))], [cn])
    wf = b.tensor((1, 4), "float32", name="wf")
    b.op("IF", [cn, xf], [wf], {
        "then_subgraph_index": b.add_subgraph(*_branch("float32", "then", {}, (1, 4))),
        "else_subgraph_index": b.add_subgraph(*_branch("float32", "else", {}, (1, 4)))})
    # the recipe's accumulator, float32 (the handle passed to the branches) and int8
    # (each branch its own VAR_HANDLE): IF(c) assign_add else assign_sub, then
    # read_value; CALL_ONCE sets both first
    k = b.add_subgraph(_init_subgraph({"acc_float32": (ACCF_INIT, {}),
                                       "acc_int8": (ACC8_INIT[:, :4], Q8)}), [], [])
    b.op("CALL_ONCE", [], [], {"init_subgraph_index": k})
    x8s = b.tensor((1, 4), "int8", name="x8s", **Q8)
    accs = []
    for dtype, q, x, passed in (("float32", {}, xf, True), ("int8", Q8, x8s, False)):
        args = [c, x]
        if passed:
            args.append(_handle(b, f"acc_{dtype}"))
        ya = b.tensor((1, 4), dtype, name=f"acc_{dtype}_if", **q)
        b.op("IF", args, [ya], {
            "then_subgraph_index": b.add_subgraph(*_accumulate_branch("then", dtype, q,
                                                                      passed)),
            "else_subgraph_index": b.add_subgraph(*_accumulate_branch("else", dtype, q,
                                                                      passed))})
        ra = b.tensor((1, 4), dtype, name=f"acc_{dtype}_read", **q)
        b.op("READ_VARIABLE", [_handle(b, f"acc_{dtype}")], [ra])
        accs += [ya, ra]
    return b.build([x8, xf, c, x8s], [y8, yf, zf, wf, *accs])


VARIABLES = variables_model()
IF_MODEL = if_model()


def _steps(model: bytes) -> list[list[np.ndarray]]:
    """Inputs per invocation: small random values (the accumulators stay in range), a
    condition alternating true and false."""
    g = load_model_bytes(model)
    rng = np.random.default_rng(17)
    steps = []
    for k in range(INVOCATIONS):
        step = []
        for t in g.inputs:
            tensor = g.tensors[t]
            if tensor.dtype.name == "BOOL":
                step.append(np.array(k % 2 == 0).reshape(tensor.shape))
            elif tensor.dtype.name == "INT8":
                step.append(rng.integers(-20, 20, tensor.shape).astype(np.int8))
            else:
                step.append(rng.standard_normal(tensor.shape).astype(np.float32))
        steps.append(step)
    return steps


def _assert_invocations_equal(model: bytes, target: str = "host", **kw: Any
                              ) -> list[list[np.ndarray]]:
    steps = _steps(model)
    ref = run_tflm_invocations(model, steps)
    got = run_nnopt_invocations(model, steps, target=target, **kw)
    assert len(got) == INVOCATIONS
    for k, (r, g) in enumerate(zip(ref, got, strict=True)):
        assert len(r) == len(g)
        for i, (a, b) in enumerate(zip(r, g, strict=True)):
            np.testing.assert_array_equal(b, a, err_msg=f"invocation {k}, output {i}")
    return ref


# ----- bit-exact over several invocations -----

def test_variables_bit_exact_over_invocations() -> None:
    ref = _assert_invocations_equal(VARIABLES)
    # the init subgraph's constants are the state before the first invocation ...
    np.testing.assert_array_equal(ref[0][3], ACC8_INIT)
    # ... the counter starts at its zero point (TFLM's fill: real 0) and counts up by
    # the constant's real 1.0 (2 steps of its 0.5 scale)
    assert [int(r[2][0, 0]) for r in ref] == [-5, -3, -1, 1]
    # ... and every invocation sees the previous one's assignment
    for k in range(1, INVOCATIONS):
        np.testing.assert_array_equal(ref[k][3], ref[k - 1][0])


def test_if_bit_exact_over_invocations() -> None:
    ref = _assert_invocations_equal(IF_MODEL)
    steps = _steps(IF_MODEL)
    # both branches were taken: the condition alternates, the counter IF switches
    assert np.array_equal(ref[0][1], steps[0][1] * 2)
    assert not np.array_equal(ref[1][1], steps[1][1] * 2)
    assert np.array_equal(ref[1][3], steps[1][1] * 2)
    assert not np.array_equal(ref[2][3], steps[2][1] * 2)
    # the recipe's accumulator: added to when c, subtracted from otherwise, carried over
    np.testing.assert_allclose(ref[0][5], ACCF_INIT + steps[0][1], rtol=1e-6)
    np.testing.assert_allclose(ref[1][5], ref[0][5] - steps[1][1], rtol=1e-6)
    np.testing.assert_array_equal(ref[1][4], ref[1][5])


def test_dynamic_allocator_keeps_the_variables() -> None:
    _assert_invocations_equal(VARIABLES, allocator="dynamic")


qemu = pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                          or shutil.which("arm-none-eabi-gcc") is None,
                          reason="qemu-system-arm or arm-none-eabi-gcc not installed")


@pytest.mark.qemu
@qemu
def test_variables_and_if_on_cortex_m7() -> None:
    _assert_invocations_equal(VARIABLES, target="qemu-m7")
    _assert_invocations_equal(IF_MODEL, target="qemu-m7")


# ----- how they are planned -----

def test_variables_become_state_tensors() -> None:
    g = load_model_bytes(VARIABLES)
    names = {g.tensors[t].name: g.tensors[t] for t in g.state}
    assert set(names) == {"acc8", "accf", "count"}  # one per shared_name, not per handle
    assert names["acc8"].init == ACC8_INIT.tobytes()
    assert names["count"].init == bytes([QC["zero_point"] & 0xFF])
    assert not any(op.opcode in ("VAR_HANDLE", "CALL_ONCE") for op in g.ops)
    plan = plan_model(g, PlanOptions()).plan
    assert plan.state_bytes >= 8 + 16 + 1
    assert plan.sram_bytes == plan.arena_bytes + plan.state_bytes
    d = plan.to_json()
    by_tensor = {e["tensor"]: e for e in d["state"]}
    acc8 = next(t for t in g.state if g.tensors[t].name == "acc8")
    count = next(t for t in g.state if g.tensors[t].name == "count")
    assert by_tensor[acc8]["init_data"] == ACC8_INIT.tobytes().hex()
    assert "init_data" not in by_tensor[count] and by_tensor[count]["init"] == 0xFB
    assert Plan.from_json(json.loads(json.dumps(d))).state == plan.state


def test_ops_of_one_variable_keep_their_file_order() -> None:
    """The read after the assign depends on it (a zero-byte token), so no order the
    scheduler may pick reads the variable before it is assigned."""
    g = load_model_bytes(VARIABLES)
    p = schedule_problem(g)
    pos = {op.index: k for k, op in enumerate(g.ops)}
    acc8 = next(t for t in g.state if g.tensors[t].name == "acc8")
    touching = [k for k, op in enumerate(g.ops) if acc8 in op.inputs]
    assert len(touching) == 3  # read, assign, read
    for a, b in itertools.pairwise(touching):
        assert set(p.op_outputs[a]) & set(p.op_inputs[b])
    order = plan_model(g, PlanOptions()).plan.schedule
    assert [pos[i] for i in order if pos[i] in touching] == touching


def test_generated_reset_sets_the_init_constants(cbuild: Any, tmp_path: Path) -> None:
    """tests/c/svdf_reset.c (generic over the model it is built with): invoke three
    times, reset, invoke: the first output again, after the reset copied the init
    subgraph's constants back."""
    g = load_model_bytes(VARIABLES, name="svdf8")
    gen = generate(plan_model(g, PlanOptions()), tmp_path / "gen")
    c = gen.c_file.read_text()
    assert "memcpy(svdf8_state" in c and "svdf8_state_init" in c
    main = tmp_path / "gen" / "svdf_reset.c"
    shutil.copyfile(c_source("svdf_reset.c"), main)
    exe = cbuild.program("vars_reset", [main, gen.c_file,
                                        *kernel_sources("elementwise", "shape")])
    out = cbuild.run(exe)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split() == ["reset-equal", "carried-differs"]


def test_if_branches_are_inlined_and_selected() -> None:
    g = load_model_bytes(IF_MODEL)
    assert not any(op.opcode == "IF" for op in g.ops)
    # one per IF output (4 + 2 of the recipe) and one per assignment in a branch (4)
    assert sum(op.opcode == "SELECT_V2" for op in g.ops) == 10
    assert any(t.name.startswith("if") and "/then/" in t.name for t in g.tensors)


# ----- what cannot run, refused by name -----

def test_blob_refuses_variables_by_name() -> None:
    g = load_model_bytes(VARIABLES, name="vars")
    with pytest.raises(UnsupportedError, match=r"model vars is stateful .*acc8.*blob"):
        write_blob(plan_model(g, PlanOptions()))


def _stateful(init_op: str | None = None, read_first: bool = False,
              assign: str = "sum") -> bytes:
    """A float32 variable read, added to the input, assigned; ``assign``: "sum", "none"
    (never assigned) or "short" (a constant of half the variable's size)."""
    b = ModelBuilder()
    x = b.tensor((1, 4), "float32")
    if init_op is not None:  # "const": ASSIGN_VARIABLE of a constant, else through an op
        init = ModelBuilder()
        h0 = _handle(init, "v")
        v = init.const(np.ones((1, 4), np.float32))
        if init_op != "const":
            v0, v = v, init.tensor((1, 4), "float32")
            init.op(init_op, [v0], [v])
        init.op("ASSIGN_VARIABLE", [h0, v], [])
        k = b.add_subgraph(init, [], [], "init")
    r = b.tensor((1, 4), "float32")
    h = _handle(b, "v")
    if read_first:
        b.op("READ_VARIABLE", [h], [r])
    if init_op is not None:
        b.op("CALL_ONCE", [], [], {"init_subgraph_index": k})
    if not read_first:
        b.op("READ_VARIABLE", [h], [r])
    s = b.tensor((1, 4), "float32")
    b.op("ADD", [r, x], [s])
    if assign == "sum":
        b.op("ASSIGN_VARIABLE", [h, s], [])
    elif assign == "short":
        b.op("ASSIGN_VARIABLE", [h, b.const(np.ones((1, 2), np.float32))], [])
    return b.build([x], [s, r])


@pytest.mark.parametrize(("kw", "match"), [
    ({"init_op": "RELU"}, r"subgraph 1 op 1 \(RELU\): in the init subgraph of CALL_ONCE "
     r"op \d+: nnopt runs an init subgraph at compile time"),
    ({"init_op": "const", "read_first": True},
     r"op \d+ \(READ_VARIABLE\): accesses variable 'v' before CALL_ONCE"),
    ({"assign": "none"}, r"READ_VARIABLE\): reads variable 'v', which no ASSIGN_VARIABLE"),
    ({"assign": "short"}, r"READ_VARIABLE\): tensor \d+ .*16 B\) does not match variable "
     r"'v' \(FLOAT32, 8 B\)"),
], ids=["init-not-constant", "read-before-call-once", "never-assigned", "size-mismatch"])
def test_refuses_what_it_cannot_resolve_by_name(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(UnsupportedError, match=match):
        load_model_bytes(_stateful(**kw))


def test_refuses_a_resource_as_a_graph_output() -> None:
    b = ModelBuilder()
    h = _handle(b, "v")
    with pytest.raises(UnsupportedError, match=r"resource tensor 0 .* input or output"):
        load_model_bytes(b.build([], [h]))
