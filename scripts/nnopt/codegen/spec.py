"""The specialised functions of generated code (``--specialize``), written as C: a
lowering gives ``EmitContext.decl`` a :data:`~nnopt.lowering.call.SpecDecl` (the
data of one op's specialised function, :mod:`nnopt.lowering.specialize`), and
:func:`render_spec` writes it at file scope of the model source, around the inline
kernel bodies of ``nnrt/kernels/spec.h``; its parameter struct through the renderer of
kernel calls (:func:`nnopt.lowering.call.render_params`)."""

from __future__ import annotations

from ..lowering.call import ConvGemmSpec, FcSpec, SpecDecl, render_params
from ..lowering.specialize import core_symbol, pair_symbol, spec_symbol


def render_spec(d: SpecDecl) -> list[str]:
    """The file-scope C of one specialised function."""
    if isinstance(d, ConvGemmSpec):
        return conv_gemm_lines(d)
    return fc_lines(d)


def conv_gemm_lines(s: ConvGemmSpec) -> list[str]:
    """File-scope C of a specialised matrix-core convolution (nnrt/kernels/spec.h)."""
    name = spec_symbol(s.model, s.op_index)
    core = core_symbol(s.op_index)
    px2 = pair_symbol(s.model, s.op_index)
    stage = 2 if (s.act_min, s.act_max) == (-128, 127) else 1
    all_fast = int(all(-31 <= sh <= -2 for sh in s.shifts))
    body = "w16" if s.int16_rows else "rp" if s.pair_rows else "rq"
    # the int16 layout's array is int16_t: the core's filter pointer (int8_t) names it
    filt = (f"(const int8_t *)(const void *){s.filter_ident}" if s.int16_rows
            else s.filter_ident)
    if s.records_ident is not None:
        arrays = f"NULL, NULL, NULL, {int(s.per_channel)}"
    else:
        arrays = (f"{s.bias_ident or 'NULL'}, {s.mult_ident}, {s.shift_ident}, "
                  f"{int(s.per_channel)}")
    bias_off: list[str] = []
    if s.bias_off is not None:  # an array of Helium builds only (internal/gemm.h)
        vals = [str(v) for v in s.bias_off]
        bias_off = ["#if NNRT_MVE",
                    f"static const int32_t op{s.op_index}_bias_off[{len(vals)}] = {{",
                    *("    " + ", ".join(vals[i:i + 12]) + "," for i in range(0, len(vals), 12)),
                    "};", "#endif"]
    return [
        f"/* op {s.op_index}: matrix-core convolution specialised to depth {s.depth}, "
        f"{s.channels} channels{_layout_note(s)} "
        "(nnrt/kernels/spec.h) */",
        *render_params(s.params, s.params_name),
        *bias_off,
        f"static const nnrt_gemm_s8_t {core} = {{",
        f"    {s.depth}, {s.channels}, {filt}, {arrays}, {s.output_offset}, "
        f"{s.act_min}, {s.act_max}, {stage}, {s.records_ident or 'NULL'} "
        f"NNRT_GEMM_BIAS_OFF({f'op{s.op_index}_bias_off' if s.bias_off else 'NULL'}),",
        "};",
        f"static NNRT_SPEC_NOINLINE void {name}_pair(const nnrt_gemm_pass_t *x, int32_t oc, "
        "int32_t n)",
        "{",
        f"    nnrt_gemm_pair_body_{body}(&{core}, x, oc, n);"
        if s.records_ident is not None
        else f"    nnrt_gemm_pair_body(&{core}, x, oc, n, {all_fast});",
        "}",
        f"static void {px2}(const nnrt_gemm_s8_t *g, const void *cols, int8_t *out0, "
        "int8_t *out1)",
        "{",
        "    (void)g;",
        f"    nnrt_gemm_2px_body(&{core}, cols, out0, out1, {name}_pair);",
        "}",
        f"static NNRT_SPEC_NOINLINE nnrt_status_t {name}(const int8_t *input, int8_t *output, "
        "void *scratch)",
        "{",
        f"    return nnrt_spec_conv_gemm_s8(&{s.params_name}, &{core}, input, output, scratch, "
        f"{px2});",
        "}",
        "",
    ]


def _layout_note(s: ConvGemmSpec) -> str:
    if s.int16_rows:
        return ", weights widened to int16"
    return ", weights in the pair-row layout" if s.pair_rows else ""


def fc_lines(s: FcSpec) -> list[str]:
    """File-scope C of a specialised int8 fully connected op (nnrt/kernels/spec.h)."""
    name = spec_symbol(s.model, s.op_index)
    all_fast = int(all(-31 <= sh <= -2 for sh in s.shifts))
    args = f"input, {s.weights_ident}, {s.bias_ident or 'NULL'}, output, {all_fast}"
    if s.pack23_depth is not None:
        what = ", weights packed two units to a word"
        body = [f"    NNRT_FC_PACK23_XBUF(xs, {s.pack23_depth});",
                f"    nnrt_fc_pack23_body(&{s.params_name}, {args}, xs);"]
    elif s.int16_depth is not None:
        what = ", weights widened to int16"
        body = [f"    NNRT_FC_INT16_XBUF(xs, {s.int16_depth});",
                f"    nnrt_fc_int16_body(&{s.params_name}, {args}, xs);"]
    elif s.pairs_depth is None:
        what, body = "", [f"    nnrt_fc_body(&{s.params_name}, {args});"]
    else:
        what = ", weights in the row-pair layout"
        body = [f"    NNRT_FC_PAIRS_XBUF(xs, {s.pairs_depth});",
                f"    nnrt_fc_pairs_body(&{s.params_name}, {args}, xs);"]
    return [
        f"/* op {s.op_index}: fully connected specialised to its shapes{what} "
        "(nnrt/kernels/spec.h) */",
        *render_params(s.params, s.params_name),
        f"static NNRT_SPEC_NOINLINE nnrt_status_t {name}(const int8_t *input, int8_t *output)",
        "{",
        *body,
        "    return NNRT_OK;",
        "}",
        "",
    ]
