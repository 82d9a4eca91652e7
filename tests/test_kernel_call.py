"""Kernel calls as data (nnopt.lowering.call): what the lowerings return, the one
renderer that writes it as C, and the model-blob writer reading the same objects."""

from __future__ import annotations

import numpy as np
import pytest

from nnopt.blob.writer import StructRef, TensorList, capture
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ActivationOptions, ConcatOptions, Graph
from nnopt.lowering import EmitContext
from nnopt.lowering.call import (
    NULL,
    AddressOf,
    Call,
    Code,
    Dec,
    Done,
    Grouped,
    Literal,
    Params,
    Pointers,
    PtrList,
    Raw,
    ScratchArg,
    TensorArg,
    call_of,
    params_of,
    render,
)
from nnopt.lowering.common import c_call, c_params, cast
from nnopt.ops import lowering_for
from support.tflite_builder import ModelBuilder

Q = {"scale": 0.05, "zero_point": 3}
AT = Pointers(lambda t: f"T{t}", "SCR")


def _graph() -> Graph:
    """An int8 ADD with a constant operand, then a concatenation of three tensors."""
    b = ModelBuilder("call cases")
    x = b.tensor((1, 2, 2, 3), "int8", name="x", **Q)
    c = b.tensor((1, 2, 2, 3), "int8", data=np.arange(12, dtype=np.int8).reshape(1, 2, 2, 3),
                 **Q)
    s = b.tensor((1, 2, 2, 3), "int8", **Q)
    b.op("ADD", [x, c], [s], ActivationOptions("RELU"))
    y = b.tensor((1, 2, 2, 9), "int8", name="y", **Q)
    b.op("CONCATENATION", [s, x, s], [y], ConcatOptions(3))
    return load_model_bytes(b.build([x], [y]))


def _ctx(graph: Graph, k: int, asked: list[int] | None = None) -> EmitContext:
    def c_ptr(t: int) -> str:
        if asked is not None:
            asked.append(t)
        return f"T{t}"

    return EmitContext(graph, graph.ops[k], c_ptr, lambda suffix, arr: f"op{k}_{suffix}",
                       "NULL")


def test_helpers_build_data_and_the_renderer_writes_c() -> None:
    body = [*c_params("nnrt_x_params_t", {"n": 3, "scale": 0.5, "neg": -(2**31),
                                          "inner": {"a": [1, 2], "b": Raw("tab")},
                                          "next": AddressOf("pool"), "none": None}),
            *c_call("nnrt_x", ["&params", TensorArg(4, "int8_t", True), "inputs", "NULL",
                               "12u", 7, ScratchArg()])]
    p, call = body
    assert isinstance(p, Params) and p.fields["n"] == 3
    assert isinstance(call, Call)
    assert call.args == (AddressOf("params"), TensorArg(4, "int8_t", True), Raw("inputs"),
                         NULL, Literal(12, "12u"), Literal(7, "7"), ScratchArg())
    assert render(body, AT) == [
        "static const nnrt_x_params_t params = {",
        "    .n = 3,",
        "    .scale = 0x1.0000000000000p-1f,",
        "    .neg = (-2147483647 - 1),",
        "    .inner = {",
        "        .a = {1, 2},",
        "        .b = tab,",
        "    },",
        "    .next = &pool,",
        "    .none = NULL,",
        "};",
        "return nnrt_x(&params, (const int8_t *)T4, inputs, NULL, 12u, 7, SCR);",
    ]


def test_long_calls_wrap_and_assignment_form_keeps_the_alignment() -> None:
    args = [TensorArg(t, "const_type_with_a_long_name_t", True) for t in range(4)]
    body = [Call("nnrt_kernel", tuple(args))]
    ret = render(body, AT)
    assert ret[0] == "return nnrt_kernel((const const_type_with_a_long_name_t *)T0,"
    assert all(line.startswith(" " * len("return nnrt_kernel(")) for line in ret[1:])
    assert ret[-1].endswith("T3);")
    assigned = render(body, AT, assign="s")
    assert assigned[0] == ret[0].replace("return ", "s = ", 1) and assigned[1:] == ret[1:]
    # only the body's final status is assigned; code around calls keeps its own returns
    code = [Code(("if (x) {", "    return s;", "}"), "NNRT_OK")]
    assert render(code, AT, assign="s")[-2:] == ["}", "s = NNRT_OK;"]
    assert render([Done("empty output")], AT, assign="s") == ["s = NNRT_OK; /* empty output */"]
    assert render([Call("f", (), wrap=False, note="why")], AT) == ["/* why */", "return f();"]


def test_inline_params_decimal_floats_grouped_rows_and_scalars() -> None:
    assert render([Params("t", {"a": 1, "b": Dec(0.1)}, inline=True)], AT) == [
        "static const t params = {.a = 1, .b = 0.10000000149011612f};"]
    geom = Grouped({"h": 1, "w": 2, "c": 3}, (("h", "w"), ("c",)))
    assert render([Params("g", {"geom": geom})], AT) == [
        "static const g params = {", "    .geom = {", "        .h = 1, .w = 2,",
        "        .c = 3,", "    },", "};"]
    assert render([Params("int8_t", -3, "pad_value")], AT) == [
        "static const int8_t pad_value = -3;"]


def test_call_data_is_not_c_text() -> None:
    with pytest.raises(TypeError, match="call data"):
        f"{TensorArg(1)}"
    with pytest.raises(TypeError, match="call data"):
        str(ScratchArg())
    with pytest.raises(TypeError, match="not a statement"):
        render(["return NNRT_OK;"], AT)  # type: ignore[list-item]


def test_lowering_returns_its_call_and_asks_pointers_in_its_order() -> None:
    g = _graph()
    asked: list[int] = []
    ctx = _ctx(g, 0, asked)
    body = lowering_for(g.ops[0]).emit(ctx)
    a, c, s = g.ops[0].inputs[0], g.ops[0].inputs[1], g.ops[0].outputs[0]
    assert asked == [a, c, s]  # a constant's array is declared when the lowering names it
    call = call_of(body)
    assert call is not None and call.fn == "nnrt_add_s8"
    assert call.args == (AddressOf("params"), cast(ctx, a, "int8_t", True),
                         cast(ctx, c, "int8_t", True), cast(ctx, s, "int8_t", False))
    fields = params_of(body)["params"].fields
    assert isinstance(fields, dict) and fields["left_shift"] == 20
    assert fields["act_min"] == 3  # RELU: the output zero point (real 0)


def test_the_blob_writer_reads_the_same_objects() -> None:
    g = _graph()
    body = lowering_for(g.ops[0]).emit(_ctx(g, 0))
    cap = capture(g, g.ops[0])
    ctype, values = cap.structs["params"]
    p = params_of(body)["params"]
    assert ctype == p.ctype and values == p.fields
    assert cap.function == "nnrt_add_s8"
    assert [getattr(x, "index", x) for x in cap.args[1:]] == [
        *g.ops[0].inputs, *g.ops[0].outputs]
    assert cap.args[0] == StructRef("params")
    # a variable-arity kernel: the pointer list becomes the call's tensor list
    concat = g.ops[1]
    body = lowering_for(concat).emit(_ctx(g, 1))
    lists = [st for st in body if isinstance(st, PtrList)]
    assert [t.index for t in lists[0].items] == list(concat.inputs)
    cap = capture(g, concat)
    assert cap.args[1] == TensorList(tuple(concat.inputs))
    assert "blob_blocks_0" in cap.arrays
    assert list(cap.arrays["blob_blocks_0"]) == [3, 3, 3]
