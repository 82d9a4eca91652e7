"""Emit ``<name>_model.c`` and ``<name>_model.h`` from a PlannedModel.

The generated file holds: constant weights (``NNRT_WEIGHTS``: flash), one statically
sized arena (``NNRT_ARENA``, exactly ``plan.arena_bytes``), one ``op_<k>`` function per
operator (its body from the op's lowering), ``invoke()`` calling them in planned
order, and the ``nnrt_model_t`` descriptor. Everything is emitted from here; lowerings
only supply op bodies.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import __version__
from ..cdefs import DType
from ..ir import Graph, Tensor
from ..lowering import EmitContext, lowering_for
from ..passes.lifetimes import is_alias_op
from ..planner import PlannedModel

_C_TYPES = {
    np.dtype(np.int8): "int8_t", np.dtype(np.uint8): "uint8_t", np.dtype(np.int16): "int16_t",
    np.dtype(np.int32): "int32_t", np.dtype(np.uint32): "uint32_t",
    np.dtype(np.int64): "int64_t", np.dtype(np.float32): "float", np.dtype(np.bool_): "uint8_t",
}


@dataclass(frozen=True)
class GeneratedSources:
    c_file: Path
    h_file: Path
    symbol: str  # the nnrt_model_t symbol, e.g. vww_96_int8_model


def _c_literal_list(arr: np.ndarray) -> str:
    flat = arr.reshape(-1)
    if flat.dtype == np.float32:
        items = [repr(float(x)) + "f" if np.isfinite(x) else "0.0f" for x in flat]
        items = [s if ("." in s or "e" in s or "inf" in s) else s.replace("f", ".0f")
                 for s in items]
    elif flat.dtype == np.bool_:
        items = [str(int(x)) for x in flat]
    else:
        items = [str(int(x)) for x in flat.tolist()]
        if flat.dtype == np.int32:
            items = [f"({x})" if x == str(-(2**31)) else x for x in items]
            items = ["(-2147483647 - 1)" if x == "(-2147483648)" else x for x in items]
        if flat.dtype == np.int64:
            items = [f"INT64_C({x})" for x in items]
    lines = []
    for i in range(0, len(items), 24):
        lines.append("    " + ", ".join(items[i:i + 24]) + ",")
    return "\n".join(lines) if lines else "    0"


def _dtype_enum(t: Tensor) -> str:
    return f"NNRT_{DType(t.dtype).name}"


class _Emitter:
    def __init__(self, planned: PlannedModel, name: str) -> None:
        self.pm = planned
        self.g: Graph = planned.graph
        self.plan = planned.plan
        self.name = name
        self.offsets = {b.tensor: b.offset for b in self.plan.buffers}
        self.scratch = {s.op: s.offset for s in self.plan.scratch}
        self.const_decls: list[str] = []
        self.extra_decls: list[str] = []
        self.headers: set[str] = set()
        self.weight_names: dict[int, str] = {}
        # RESHAPE-like ops whose output the plan stores in their input's buffer.
        aliases = {b.tensor: b.alias_of for b in self.plan.buffers if b.alias_of is not None}
        self.aliased_ops = {op.index for op in self.g.ops
                            if is_alias_op(self.g, op) and op.outputs[0] in aliases}

    # ----- context callbacks -----
    def ptr(self, t: int) -> str:
        tensor = self.g.tensors[t]
        if tensor.is_constant:
            return f"((const void *){self._weight(tensor)})"
        return f"((void *)({self.name}_arena + {self.offsets[t]}u))"

    def _weight(self, tensor: Tensor) -> str:
        if tensor.index not in self.weight_names:
            arr = tensor.array()
            ident = f"w{tensor.index}"
            ctype = _C_TYPES[arr.dtype]
            self.const_decls.append(
                f"/* tensor {tensor.index}: {tensor.name[:60]} {list(tensor.shape)} */\n"
                f"NNRT_WEIGHTS static const {ctype} {ident}[{max(arr.size, 1)}] = {{\n"
                f"{_c_literal_list(arr)}\n}};")
            self.weight_names[tensor.index] = ident
        return self.weight_names[tensor.index]

    def const_array_for(self, op_index: int):  # type: ignore[no-untyped-def]
        def const_array(suffix: str, arr: np.ndarray) -> str:
            a = np.asarray(arr)
            ident = f"op{op_index}_{suffix}"
            ctype = _C_TYPES[a.dtype]
            self.extra_decls.append(
                f"NNRT_WEIGHTS static const {ctype} {ident}[{max(a.size, 1)}] = {{\n"
                f"{_c_literal_list(a)}\n}};")
            return ident
        return const_array

    # ----- files -----
    def op_functions(self) -> list[str]:
        out = []
        for op in self.g.ops:
            if op.index in self.aliased_ops:
                continue  # its output shares its input's bytes: nothing to run
            low = lowering_for(op)
            self.headers.update(low.headers)
            ctx = EmitContext(
                graph=self.g, op=op, ptr=self.ptr,
                const_array=self.const_array_for(op.index),
                scratch=(f"((void *)({self.name}_arena + {self.scratch[op.index]}u))"
                         if op.index in self.scratch else "NULL"),
            )
            body = low.emit(ctx)
            out.append(f"/* op {op.index}: {op.opcode} */\n"
                       f"static nnrt_status_t op_{op.index}(void)\n{{\n"
                       + "\n".join("    " + line if line else "" for line in body)
                       + "\n}\n")
        return out

    def invoke(self) -> str:
        lines = [f"static nnrt_status_t {self.name}_invoke(void)", "{",
                 "    nnrt_status_t s;"]
        for idx in self.plan.schedule:
            op = self.g.op_by_index[idx]
            if idx in self.aliased_ops:
                lines.append(f"    /* op {idx} ({op.opcode}): aliased, no code */")
            else:
                lines.append(f"    s = op_{idx}();")
                lines.append("    if (s != NNRT_OK) {")
                lines.append("        return s;")
                lines.append("    }")
            lines.append("#ifdef NNRT_TRACE")
            for t in op.outputs:
                lines.append(f"    nnrt_trace_tensor({t}u, {self.ptr(t)}, "
                             f"{self.g.tensors[t].nbytes}u);")
            lines.append("#endif")
        lines += ["    return NNRT_OK;", "}"]
        return "\n".join(lines)

    def descriptors(self, kind: str, tensors: tuple[int, ...]) -> str:
        rows = []
        for t in tensors:
            tt = self.g.tensors[t]
            dims = list(tt.shape) + [0] * (6 - len(tt.shape))
            scale = tt.quant.scale[0] if tt.quant else 0.0
            zp = tt.quant.zero_point[0] if tt.quant else 0
            name = tt.name.replace("\\", "/").replace('"', "'")
            rows.append(f'    {{"{name}", {_dtype_enum(tt)}, {len(tt.shape)}u, '
                        f"{{{', '.join(map(str, dims))}}}, {float(scale)!r}f, {zp}, "
                        f"{tt.nbytes}u}},")
        body = "\n".join(rows) if rows else "    {0}"
        return (f"static const nnrt_tensor_desc_t {self.name}_{kind}[{max(len(tensors), 1)}] "
                f"= {{\n{body}\n}};")

    def accessor(self, kind: str, tensors: tuple[int, ...]) -> str:
        lines = [f"static void *{self.name}_{kind}_ptr(uint32_t i)", "{"]
        for i, t in enumerate(tensors):
            lines.append(f"    if (i == {i}u) {{")
            lines.append(f"        return {self.ptr(t)};")
            lines.append("    }")
        lines += ["    return NULL;", "}"]
        return "\n".join(lines)

    def c_source(self) -> str:
        ops = self.op_functions()
        g, plan, name = self.g, self.plan, self.name
        head = [
            f"/* Generated by nnopt {__version__} from model '{plan.model}'"
            + (f" (sha256 {plan.source_sha256[:16]})" if plan.source_sha256 else "")
            + ". Do not edit. */",
            f'#include "{name}_model.h"',
            "",
            "#include <stddef.h>",
            "#include <stdint.h>",
            "",
            '#include "nnrt/sections.h"',
        ] + [f'#include "{h}"' for h in sorted(self.headers)] + [
            "",
            f"/* Activation arena: {plan.arena_bytes} bytes, {plan.arena_strategy} plan, "
            f"live-sum peak {plan.peak_live_bytes} bytes. */",
            f"NNRT_ARENA static uint8_t {name}_arena[{max(plan.arena_bytes, 16)}];",
            "",
        ]
        tail = [
            self.invoke(), "",
            self.descriptors("inputs", g.inputs),
            self.descriptors("outputs", g.outputs), "",
            self.accessor("input", g.inputs), "",
            self.accessor("output", g.outputs), "",
            f"const nnrt_model_t {name}_model = {{",
            f'    "{name}", {len(g.inputs)}u, {len(g.outputs)}u, {name}_inputs, '
            f"{name}_outputs,",
            f"    {plan.arena_bytes}u, {name}_input_ptr, {name}_output_ptr, {name}_invoke,",
            "};", "",
        ]
        return "\n".join(head + self.const_decls + self.extra_decls + [""] + ops + tail)

    def h_source(self) -> str:
        guard = f"{self.name.upper()}_MODEL_H_"
        p = self.plan
        return "\n".join([
            f"/* Generated by nnopt {__version__}. Do not edit. */",
            f"#ifndef {guard}", f"#define {guard}", "",
            '#include "nnrt/model.h"', "",
            f"#define {self.name.upper()}_ARENA_BYTES {p.arena_bytes}u",
            f"#define {self.name.upper()}_WEIGHT_BYTES {p.weight_bytes}u", "",
            "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
            f"/** {p.model}: {len(p.schedule)} ops, arena {p.arena_bytes} B, "
            f"weights {p.weight_bytes} B. */",
            f"extern const nnrt_model_t {self.name}_model;", "",
            "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", "",
        ])


def generate(planned: PlannedModel, out_dir: Path, name: str | None = None) -> GeneratedSources:
    """Write ``<name>_model.c/.h`` into out_dir."""
    ident = name or planned.plan.model
    out_dir.mkdir(parents=True, exist_ok=True)
    em = _Emitter(planned, ident)
    c_text = em.c_source()
    c_file = out_dir / f"{ident}_model.c"
    h_file = out_dir / f"{ident}_model.h"
    c_file.write_text(c_text)
    h_file.write_text(em.h_source())
    return GeneratedSources(c_file, h_file, f"{ident}_model")
