"""Kernels specialised to the model (``--specialize``, nnopt.lowering.specialize,
nnrt/kernels/spec.h): bit-exact with the generic kernels, emitted only where asked, and
their ROM reported from the linked ELF.

The property test generates one C program from Python: for seeded random convolutions
(kernel sizes, strides, dilations, padding, batches, depths, offsets, per-channel or
per-tensor requantisation with shifts across the whole range, activation ranges,
optional bias, with scratch or without) it emits exactly what code generation emits
for such an op (:func:`nnopt.codegen.spec.conv_gemm_lines`), runs the
specialised function and the generic entry of libnnrt (``nnrt_conv2d_im2col_s8`` /
``nnrt_conv2d_opt_s8``) on the same random data and compares every output byte. Built
for the host (ASan/UBSan), Cortex-M7 (DSP paths) and Cortex-M3 (portable paths) under
QEMU; all must report zero mismatches and the same hash of the outputs.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from conftest import model_path
from nnopt.arith import out_size_and_padding
from nnopt.boards import load_board
from nnopt.codegen import c_model
from nnopt.codegen.c_model import generate
from nnopt.codegen.spec import render_spec
from nnopt.elfcheck import check_elf, format_report
from nnopt.errors import NnoptError
from nnopt.firmware import BuildSpec, build, run
from nnopt.firmware import toolchain as tc
from nnopt.frontend.tflite import load_model_bytes
from nnopt.lowering import gemm_pairs
from nnopt.lowering.activation import multiply_by_quantized_multiplier
from nnopt.lowering.call import ConvGemmSpec, FcSpec, Params, Raw, render_params
from nnopt.lowering.conv_variant import CONV_SPEC, cols_bytes, im2col_bytes
from nnopt.lowering.fc import FC_SPEC, fit_flash
from nnopt.lowering.specialize import (
    RQ_LAST,
    Candidate,
    choose,
    fold_channel,
    records_for,
    specialized_rom_bytes,
)
from nnopt.planner import PlanOptions, plan_model
from support.cases import compare_trace
from support.cbuild import c_source, kernel_sources
from support.property import HAVE_QEMU, assert_passed, assert_same_hash, program, run_builds

CASES = 80  # convolutions
FC_CASES = 24  # fully connected ops
RP_CASES = 24  # convolutions with their weights in the pair-row layout (gemm_pairs)
W16_CASES = 40  # convolutions with their weights widened to int16 (gemm_pairs.int16_rows)
RGB_CASES = 4  # 3x3 convolutions over 3 channels (their columns joined from the rows)
RP_PADDED_CASES = 4  # pair-row convolutions whose rows are padded to whole chunks
W16_PADDED_CASES = 4  # int16 convolutions whose rows are padded to whole chunks

#: The harness the generated property program starts with (C in tests/c/; its text, so
#: that the build cache, which hashes sources, sees an edit of it).
PRELUDE = c_source("spec_property.h").read_text()


def _fc_case(r: random.Random, k: int) -> tuple[list[str], str]:
    """C of fully connected case k (op index k), as code generation emits it."""
    batches, depth, units = r.randint(1, 3), r.randint(1, 70), r.randint(1, 20)
    per_channel = r.random() < 0.5
    w_off = 0 if per_channel or r.random() < 0.6 else r.randint(-127, 128)
    q = _Requant.draw(r, units if per_channel else 1)
    params = Params("nnrt_fc_s8_params_t", {
        "batches": batches, "accum_depth": depth, "output_depth": units,
        "input_offset": -q.z_in, "weights_offset": w_off, "output_offset": q.z_out,
        "act_min": q.lo, "act_max": q.hi, "per_channel": int(per_channel),
        "multiplier": Raw(f"c{k}_mult"), "shift": Raw(f"c{k}_shift")})
    decls = [f"static int8_t c{k}_w[{depth * units}];",
             f"static int32_t c{k}_b[{units}];", *q.tables(k),
             *render_spec(FcSpec(k, "t", params, f"c{k}_params", f"c{k}_w",
                                 f"c{k}_b" if q.has_bias else None, q.shifts))]
    call = (f"    fill8(c{k}_w, sizeof(c{k}_w));\n    fill32(c{k}_b, {units});\n"
            f"    check_fc(&c{k}_params, c{k}_w, {f'c{k}_b' if q.has_bias else 'NULL'}, "
            f"{batches * depth}u, {batches * units}u, 256, t_spec_op{k});")
    return decls, call


def _shift(r: random.Random) -> int:
    u = r.random()
    if u < 0.1:
        return r.randint(-1, 2)  # outside the fast form: the reference path per pair
    if u < 0.2:
        return r.randint(-31, -22)
    return r.randint(-14, -2)



@dataclass(frozen=True)
class _Requant:
    """A case's random requantisation: multipliers and shifts (one, or one a channel),
    zero points, the activation range, and whether the op has a bias."""

    mults: list[int]
    shifts: list[int]
    z_in: int
    z_out: int
    lo: int
    hi: int
    has_bias: bool

    @staticmethod
    def draw(r: random.Random, nq: int) -> _Requant:
        mults = [r.randint(1 << 30, (1 << 31) - 1) for _ in range(nq)]
        shifts = [_shift(r) for _ in range(nq)]
        if r.random() < 0.5:  # every channel in the fast form: the check folds away
            shifts = [min(max(s, -31), -2) for s in shifts]
        z_in, z_out = r.randint(-128, 127), r.randint(-128, 127)
        lo, hi = sorted((r.randint(-128, 127), r.randint(-128, 127)))
        if r.random() < 0.4:
            lo, hi = -128, 127
        return _Requant(mults, shifts, z_in, z_out, lo, hi, r.random() < 0.8)

    def tables(self, k: int) -> list[str]:
        """The C arrays c<k>_mult and c<k>_shift."""
        nq = len(self.mults)
        return [f"static const int32_t c{k}_mult[{nq}] = {{{', '.join(map(str, self.mults))}}};",
                f"static const int32_t c{k}_shift[{nq}] = "
                f"{{{', '.join(map(str, self.shifts))}}};"]

def _case(r: random.Random, k: int, rgb3x3: bool = False) -> tuple[list[str], str]:
    """C of case k: its constants and specialised function, and the check() call;
    rgb3x3: a 3x3 filter over 3 channels, not dilated horizontally (an image's first
    convolution: DSP builds join its columns from the input rows,
    internal/conv_gemm_body.h nnrt_conv_cols_c3k3())."""
    while True:
        n = r.randint(1, 2)
        ih, iw, ic = r.randint(1, 9), r.randint(1, 9), r.randint(1, 12)
        if r.random() < 0.2 or rgb3x3:
            ic = 3  # an RGB input: depths with a K % 4 tail of 3 (the tail as a chunk)
        oc = r.randint(1, 11)
        pointwise = r.random() < 0.3 and not rgb3x3
        kh, kw = (1, 1) if pointwise else (r.randint(1, 4), r.randint(1, 4))
        sh, sw = r.randint(1, 3), r.randint(1, 3)
        dh, dw = (1, 1) if pointwise or r.random() < 0.7 else (r.randint(1, 2), r.randint(1, 2))
        if rgb3x3:  # every other one dilated vertically
            kh, kw, dh, dw = 3, 3, 1 + k % 2, 1
        padding = "VALID" if pointwise else r.choice(("SAME", "VALID"))
        oh, pt = out_size_and_padding(padding, ih, kh, sh, dh)
        ow, pl = out_size_and_padding(padding, iw, kw, sw, dw)
        if oh < 1 or ow < 1:
            continue
        in_n, out_n = n * ih * iw * ic, n * oh * ow * oc
        depth = kh * kw * ic
        scratch = r.random() < 0.5
        need = cols_bytes(ic) if pointwise else im2col_bytes(kh, kw, ic)
        if max(in_n, out_n, depth * oc) <= 4096 and need <= 4096:
            break
    per_channel = r.random() < 0.6
    q = _Requant.draw(r, oc if per_channel else 1)
    geom = {"batches": n, "input_h": ih, "input_w": iw, "input_c": ic, "output_h": oh,
            "output_w": ow, "output_c": oc, "filter_h": kh, "filter_w": kw, "filter_c": ic,
            "stride_h": sh, "stride_w": sw, "dilation_h": dh, "dilation_w": dw,
            "pad_top": pt, "pad_left": pl}
    weights = np.array([r.randint(-128, 127) for _ in range(depth * oc)], dtype=np.int64)
    biases = [r.randint(-40000, 40000) if q.has_bias else 0 for _ in range(oc)]
    # channel records, as code generation makes them (where every channel has one), in
    # half the cases that can have them: the others run the arrays
    rec = records_for(weights.reshape(oc, depth), biases, q.mults * (1 if per_channel else oc),
                      q.shifts * (1 if per_channel else oc), q.z_in, q.z_out, q.lo, q.hi)
    if r.random() < 0.3:
        rec = None
    fields = {"geom": geom, "input_offset": -q.z_in, "output_offset": q.z_out,
              "act_min": q.lo, "act_max": q.hi, "per_channel": int(per_channel),
              "multiplier": Raw(f"c{k}_mult"), "shift": Raw(f"c{k}_shift"), "pool": Raw("NULL")}
    generic = Params("nnrt_conv_s8_params_t", fields)
    params = generic if rec is None else Params(
        "nnrt_conv_s8_params_t", {**fields, "multiplier": Raw("NULL"), "shift": Raw("NULL")})
    decls = [f"static const int8_t c{k}_w[{depth * oc}] = {{{', '.join(map(str, weights))}}};",
             *q.tables(k), *render_params(generic, f"c{k}_gparams")]
    if q.has_bias:
        decls.append(f"static const int32_t c{k}_b[{oc}] = {{{', '.join(map(str, biases))}}};")
    if rec is not None:
        decls.append(f"static const int32_t c{k}_rq[{len(rec)}] = {{{', '.join(map(str, rec))}}};")
    decls += render_spec(ConvGemmSpec(
        op_index=k, model="t", params=params, params_name=f"c{k}_params", depth=depth,
        channels=oc, filter_ident=f"c{k}_w", bias_ident=f"c{k}_b" if q.has_bias else None,
        mult_ident=f"c{k}_mult", shift_ident=f"c{k}_shift", per_channel=per_channel,
        output_offset=q.z_out, act_min=q.lo, act_max=q.hi, shifts=q.shifts,
        records_ident=None if rec is None else f"c{k}_rq",
        # every other case with records: the biases with the input offset's term too
        # (read by the Helium builds only: internal/mve_gemm.h without weight sums)
        bias_off=None if rec is None or k % 2 else _offset_biases(weights, biases, q.z_in)))
    # the generated code names its core op<k>_core: one per case here
    decls = [d.replace(f"op{k}_core", f"c{k}_core") for d in decls]
    call = (f"    check(&c{k}_gparams, c{k}_w, {f'c{k}_b' if q.has_bias else 'NULL'}, {in_n}u, "
            f"{out_n}u, {int(scratch)}, t_spec_op{k});")
    return decls, call


def _rp_case(r: random.Random, k: int, wide: bool = False,
             padded: bool = False) -> tuple[list[str], str]:
    """C of pair-row case k: a one-group conv whose specialised core reads its weights in
    the pair-row layout with the records' mixed start values (gemm_pairs), as code
    generation emits it for the Cortex-M7; the generic entry reads the row-major copy.
    wide: the same drawing with the weights widened to int16 (gemm_pairs.int16_rows:
    the records' own biases; weights -128 to 127, biases without the 2^23 room: no
    exactness condition to respect).
    Odd channel counts, a lone last pixel in every third case, scratch in every other
    case, every fourth one deeper than the scratch-free path's stack buffer takes
    (depth 260 to MAX_DEPTH: the lone pixel's C path unpacks up to NNRT_GEMM_RP_MAX_K);
    every fourth case near the layout's bound (depth 256, weights +-127, the input
    zero point at an end: the mixed sums wrap int32, channel b's sum within 2^23 only by
    the build-time check). padded: a filter over more than one pixel whose depth is no
    multiple of 4 (an RGB 3x3's 27): its rows padded with zero weights to whole chunks
    (gemm_pairs.padded_depth), the core's depth the padded one."""
    while True:
        extreme = k % 4 == 0 and not padded
        # with scratch (every other case) the depth up to MAX_DEPTH: columns beyond the
        # scratch-free path's stack buffer (pretrainedResnet_quant's depth 288 and 576)
        scratch = k % 2 == 1
        deep = scratch and k % 4 == 1 and not padded
        n = r.randint(1, 2)
        # the int16 cases k % 4 == 2 or 3: depth 4 to 64 in turn (kc = depth / 4 < 9: the
        # block loop's two- and four-chunk forms; 9 to 16: each entry of the eight-chunk
        # loop)
        sweep = wide and k % 4 >= 2 and not padded
        pointwise = not padded and (extreme or sweep or r.random() < 0.6)
        if pointwise:
            kc = 1 + (2 * (k // 4) + k % 4 - 2) % 16
            ic = 256 if extreme else 4 * kc if sweep else 4 * r.randint(
                65 if deep else 1, gemm_pairs.MAX_DEPTH // 4 if deep else 64)
            kh = kw = 1
        else:
            kh, kw = (3, 3) if deep else (r.randint(1, 3), r.randint(1, 3))
            if padded:
                kh, kw = 3, (3 if k % 2 else r.randint(2, 3))
            top = gemm_pairs.MAX_DEPTH // 9 + 1 if deep else 23
            ic = r.choice([c for c in range(1, top) if ((kh * kw * c) % 4 != 0) == padded
                           and (not deep or kh * kw * c > 256)] or [4])
            if padded and k % 2:
                ic = 3
        ih, iw = r.randint(1, 5), r.randint(1, 5)
        oc = r.randint(2, 4) if extreme else r.randint(2, 11)
        sh, sw = (1, 1) if pointwise else (r.randint(1, 2), r.randint(1, 2))
        padding = "VALID" if pointwise else r.choice(("SAME", "VALID"))
        oh, pt = out_size_and_padding(padding, ih, kh, sh, 1)
        ow, pl = out_size_and_padding(padding, iw, kw, sw, 1)
        lone = k % 3 == 1  # an odd pixel count: the last pixel alone (the C path)
        if (oh >= 1 and ow >= 1 and gemm_pairs.fits(kh, kw, ic, oc, scratch)
                and max(n * ih * iw * ic, n * oh * ow * oc) <= 4096
                and (not lone or (n * oh * ow) % 2 == 1)):
            break
    in_n, out_n, depth = n * ih * iw * ic, n * oh * ow * oc, kh * kw * ic
    core_depth = gemm_pairs.padded_depth(kh, kw, ic)
    assert (core_depth != depth) == padded
    per_channel = r.random() < 0.7
    q = _Requant.draw(r, oc if per_channel else 1)
    # shifts that spread a typical accumulator over the int8 range (few saturate, so a
    # wrong sum shows in the output)
    spread = max(1.0, depth ** 0.5 * 73 * 150)
    q = replace(q, shifts=[min(max(6 - round(np.log2(spread)) + r.randint(-1, 1), -31), -3)
                           for _ in q.shifts], has_bias=True)
    w_lo = -128 if wide else -127
    if extreme:
        q = replace(q, z_in=r.choice((-128, 127)))
        weights = np.array([r.choice((w_lo, 127)) for _ in range(depth * oc)], dtype=np.int64)
    else:
        weights = np.array([r.randint(w_lo, 127) for _ in range(depth * oc)], dtype=np.int64)
    rows = weights.reshape(oc, depth)
    xmax = max(abs(-128 - q.z_in), abs(127 - q.z_in))
    room = (1 << 23) - 1 - int(np.abs(rows).sum(axis=1).max()) * xmax
    reach = int(2 * spread) if wide else min(room, int(2 * spread))
    biases = [r.randint(-reach, reach) for _ in range(oc)]
    rec = records_for(rows, biases, q.mults * (1 if per_channel else oc),
                      q.shifts * (1 if per_channel else oc), q.z_in, q.z_out, q.lo, q.hi)
    assert rec is not None
    core_rows = gemm_pairs.padded_rows(rows.astype(np.int8), core_depth)
    if wide:
        laid = gemm_pairs.int16_rows(core_rows)
        mixed = gemm_pairs.block_records(rec, oc)
        w_decl = (f"static const int16_t c{k}_wrp[{core_depth * oc}] "
                  "__attribute__((aligned(8)))")
    else:
        laid = gemm_pairs.pair_rows(core_rows)
        assert gemm_pairs.exact(rows, rec, q.z_in)
        mixed = gemm_pairs.mixed_records(rec, oc)
        w_decl = (f"static const int8_t c{k}_wrp[{core_depth * oc}] "
                  "__attribute__((aligned(4)))")
    assert laid is not None
    geom = {"batches": n, "input_h": ih, "input_w": iw, "input_c": ic, "output_h": oh,
            "output_w": ow, "output_c": oc, "filter_h": kh, "filter_w": kw, "filter_c": ic,
            "stride_h": sh, "stride_w": sw, "dilation_h": 1, "dilation_w": 1,
            "pad_top": pt, "pad_left": pl}
    fields = {"geom": geom, "input_offset": -q.z_in, "output_offset": q.z_out,
              "act_min": q.lo, "act_max": q.hi, "per_channel": int(per_channel),
              "multiplier": Raw(f"c{k}_mult"), "shift": Raw(f"c{k}_shift"), "pool": Raw("NULL")}
    generic = Params("nnrt_conv_s8_params_t", fields)
    params = Params("nnrt_conv_s8_params_t",
                    {**fields, "multiplier": Raw("NULL"), "shift": Raw("NULL")})
    decls = [f"static const int8_t c{k}_w[{depth * oc}] = {{{', '.join(map(str, weights))}}};",
             f"{w_decl} = {{{', '.join(map(str, laid))}}};",
             f"static const int32_t c{k}_b[{oc}] = {{{', '.join(map(str, biases))}}};",
             f"static const int32_t c{k}_rq[{len(mixed)}] = {{{', '.join(map(str, mixed))}}};",
             *q.tables(k), *render_params(generic, f"c{k}_gparams")]
    decls += render_spec(ConvGemmSpec(
        op_index=k, model="t", params=params, params_name=f"c{k}_params",
        depth=core_depth, channels=oc, filter_ident=f"c{k}_wrp", bias_ident=None,
        mult_ident=f"c{k}_mult", shift_ident=f"c{k}_shift", per_channel=per_channel,
        output_offset=q.z_out, act_min=q.lo, act_max=q.hi, shifts=q.shifts,
        records_ident=f"c{k}_rq", pair_rows=not wide, int16_rows=wide))
    decls = [d.replace(f"op{k}_core", f"c{k}_core") for d in decls]
    call = (f"    check(&c{k}_gparams, c{k}_w, c{k}_b, {in_n}u, {out_n}u, "
            f"{int(scratch)}, t_spec_op{k});")
    return decls, call


def _offset_biases(weights: np.ndarray, biases: list[int], z_in: int) -> tuple[int, ...]:
    """bias + input_offset * sum of each channel's weights, wrapped to int32 (what
    nnopt.lowering.conv_requant.offset_biases() writes; computed here on its own)."""
    sums = weights.reshape(len(biases), -1).sum(axis=1)
    return tuple(((b - z_in * int(s) + 2**31) % 2**32) - 2**31
                 for b, s in zip(biases, sums, strict=True))


def property_program(cases: int, seed: int) -> str:
    r = random.Random(seed)
    decls: list[str] = []
    calls: list[str] = []
    for k in range(cases):
        d, c = _case(r, k)
        decls += d
        calls.append(c)
    for k in range(cases, cases + FC_CASES):
        d, c = _fc_case(r, k)
        decls += d
        calls.append(c)
    for k in range(cases + FC_CASES, cases + FC_CASES + RP_CASES):
        d, c = _rp_case(r, k)
        decls += d
        calls.append(c)
    start = cases + FC_CASES + RP_CASES
    for k in range(start, start + W16_CASES):
        d, c = _rp_case(r, k, wide=True)
        decls += d
        calls.append(c)
    rgb = random.Random(seed + 1)  # its own stream: the cases above stay the same
    start += W16_CASES
    for k in range(start, start + RGB_CASES):
        d, c = _case(rgb, k, rgb3x3=True)
        decls += d
        calls.append(c)
    start += RGB_CASES
    for k in range(start, start + RP_PADDED_CASES + W16_PADDED_CASES):
        d, c = _rp_case(rgb, k, wide=k >= start + RP_PADDED_CASES, padded=True)
        decls += d
        calls.append(c)
    return program(PRELUDE, decls, calls)


#: -O0: the specialised pair loop's C form instead of its assembly (Zephyr's
#: CONFIG_NO_OPTIMIZATIONS), on the MPS2 AN500's Cortex-M7: unoptimised, every case's
#: function carries every layout's inline body (~15 KB each), more than
#: nucleo_f767zi's 2 MB of flash hold for the whole program
#: rv32: RV32IMAC on QEMU virt (the register-blocked matrix core and FC of
#: internal/rv32_*.h)
#: m55-mve: the Helium pair loop and its vector output stage from the channel records
#: (internal/mve_gemm.h) on the Cortex-M55 (QEMU mps3-an547)
BUILDS: dict[str, tuple[tc.Target, str] | tuple[tc.Target, str, str]] = {
    "host-sanitized": ("host", "-O2"), "m7-dsp": ("qemu-m7", "-O2"),
    "m7-dsp-O0": ("qemu-m7", "-O0", "mps2_an500"), "m3": ("qemu-m3", "-O2"),
    "rv32": ("qemu", "-O2", "qemu_riscv32"), "m55-mve": ("qemu", "-O2", "mps3_an547")}


@pytest.fixture(scope="module")
def property_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    src = tmp_path_factory.mktemp("spec") / "spec_property.c"
    src.write_text(property_program(CASES, seed=20261129))
    return run_builds(src, BUILDS, ("conv", "fc", "internal"))


@pytest.mark.parametrize("name", list(BUILDS))
def test_specialised_conv_matches_the_generic_kernel(property_results: dict[str, str],
                                                     name: str) -> None:
    if name not in property_results:
        pytest.skip(f"{name}: its QEMU / compiler is not installed")
    assert_passed(property_results[name], CASES + FC_CASES + RP_CASES + W16_CASES + RGB_CASES
                  + RP_PADDED_CASES + W16_PADDED_CASES)


def test_every_instruction_set_gives_the_same_bytes(property_results: dict[str, str]) -> None:
    assert_same_hash(property_results)


def test_property_program_covers_both_requantisations_and_scratch_modes() -> None:
    """The random cases reach what the specialised code folds differently: shifts known
    to be all fast (the per-pair test removed) or not, scratch or columns in the
    output, clamped or full activation range, with and without bias."""
    text = property_program(CASES, seed=20261129)
    assert len(re.findall(r"nnrt_gemm_pair_body\(&c\d+_core, x, oc, n, 1\)", text)) >= 5
    assert len(re.findall(r"nnrt_gemm_pair_body\(&c\d+_core, x, oc, n, 0\)", text)) >= 5
    calls = re.findall(r"check\(.*, (\d), t_spec_op\d+\);", text)
    assert {"0", "1"} <= set(calls)
    assert re.search(r"_shift, [01], -?\d+, -128, 127, 2, NULL NNRT_GEMM_BIAS_OFF\(NULL\),\n",
                     text)  # SSAT only
    assert re.search(r"_shift, [01], -?\d+, -?\d+, -?\d+, 1, NULL NNRT_GEMM_BIAS_OFF\(NULL\),\n",
                     text)  # clamped
    assert "NULL, c" in text and "_b, c" in text


def test_property_program_covers_the_channel_records() -> None:
    """Cores with channel records (the assembly pair loop at -O2): SSAT only and
    clamped, odd channel counts, depths with a K % 4 tail and below 4, and channels
    stored by their constant output."""
    text = property_program(CASES, seed=20261129)
    cores = re.findall(r"\{\n    (\d+), (\d+), c\d+_w, NULL, NULL, NULL, [01], -?\d+, -?\d+, "
                       r"-?\d+, ([12]), c\d+_rq NNRT_GEMM_BIAS_OFF\((\w+)\),\n", text)
    assert len(cores) >= 8, len(cores)
    assert len(re.findall(r"nnrt_gemm_pair_body_rq\(&c\d+_core, x, oc, n\)", text)) == len(cores)
    assert {"1", "2"} <= {st for _, _, st, _ in cores}
    assert any(int(oc) % 2 for _, oc, _, _ in cores)
    assert any(int(oc) % 2 == 0 for _, oc, _, _ in cores)
    assert any(int(k) % 4 for k, _, _, _ in cores) and any(int(k) < 4 for k, _, _, _ in cores)
    assert any(int(k) % 4 == 3 and int(k) > 4 for k, _, _, _ in cores)
    # the Helium builds' biases with the offset's term, and cores without them
    assert 3 <= sum(b != "NULL" for _, _, _, b in cores) < len(cores)


def _fold(acc: int, mult: int, addend: int, rsh: int) -> int:
    """nnrt_rq_fold() (internal/requant.h) in Python integers: the 64-bit start value
    from the high word's parity, as the C and the assembly build it."""
    hi = (addend + (acc >> 31)) & 0xFFFFFFFF
    lo = ((hi << 31) & 0xFFFFFFFF) ^ 0x40000000
    start = (hi << 32) | lo
    start -= (1 << 64) if start >= (1 << 63) else 0
    h = ((start + acc * mult) >> 32) & 0xFFFFFFFF
    h -= (1 << 32) if h >= (1 << 31) else 0
    return h >> (rsh & 0xFF)


@pytest.mark.parametrize("seed", range(40))
def test_channel_records_requantise_as_tflm(seed: int) -> None:
    """Every channel record (folded form, or a constant output) gives TFLM's output byte
    for the accumulators the conv can reach: their two ends, zero and random ones in
    between; and the layout holds what the assembly loop relies on."""
    r = random.Random(seed)
    oc, depth = r.randint(1, 9), r.randint(1, 40)
    z_in, z_out = r.randint(-128, 127), r.randint(-128, 127)
    lo, hi = sorted((r.randint(-128, 127), r.randint(-128, 127)))
    w = np.array([[r.randint(-128, 127) for _ in range(depth)] for _ in range(oc)])
    if r.random() < 0.3:
        w //= 64  # small weights: a narrow accumulator range, constant channels
    biases = [r.randint(-40000, 40000) for _ in range(oc)]
    mults = [r.choice((0, 1 << 30, r.randint(1 << 30, (1 << 31) - 1))) for _ in range(oc)]
    shifts = [-31 if m == 0 else _shift(r) for m in mults]
    rec = records_for(w, biases, mults, shifts, z_in, z_out, lo, hi)
    if rec is None:
        assert any(fold_channel(m, s, z_out) is None for m, s in zip(mults, shifts, strict=True))
        return
    assert len(rec) == 8 * (oc // 2) + 5 * (oc % 2)
    for c in range(oc):
        base = 8 * (c // 2)
        bias = rec[base + c % 2]
        m, addend, rsh = rec[base + 2 + 3 * (c % 2):base + 5 + 3 * (c % 2)]
        assert bias == biases[c]
        assert 2 <= rsh & 0xFF <= 30 and addend % 2 == 0 and abs(addend) <= 1 << 30
        assert (rsh & RQ_LAST != 0) == (oc >= 2 and c == 2 * (oc // 2) - 1)
        v_lo, v_hi = -128 - z_in, 127 - z_in
        a_lo = bias + int(np.minimum(w[c] * v_lo, w[c] * v_hi).sum())
        a_hi = bias + int(np.maximum(w[c] * v_lo, w[c] * v_hi).sum())
        accs = [a_lo, a_hi, 0, -1, 1] + [r.randint(a_lo, a_hi) for _ in range(200)]
        accs = [a for a in accs if a_lo <= a <= a_hi]
        want = np.clip(multiply_by_quantized_multiplier(np.array(accs), mults[c], shifts[c])
                       + z_out, lo, hi)
        got = [min(max(_fold(a, m, addend, rsh), -128, lo), hi) for a in accs]
        assert got == [int(v) for v in want], (c, mults[c], shifts[c])


# ----- code generation -----

def _planned(rel: str, **opts: str):  # type: ignore[no-untyped-def]
    data = model_path(rel).read_bytes()
    g = load_model_bytes(data, name=Path(rel).stem)
    return plan_model(g, PlanOptions(board=load_board("nucleo_f767zi"), **opts),  # type: ignore[arg-type]
                      source_bytes=data)


def test_specialize_off_emits_no_specialised_function(tmp_path: Path) -> None:
    off = generate(_planned("mlperf_tiny/vww_96_int8.tflite", specialize="off"), tmp_path / "off")
    text = off.c_file.read_text()
    assert off.specialized == ()
    assert "_spec_" not in text and "nnrt/kernels/spec.h" not in text
    on = generate(_planned("mlperf_tiny/vww_96_int8.tflite", specialize="auto"), tmp_path / "on")
    text = on.c_file.read_text()
    assert "#include \"nnrt/kernels/spec.h\"" in text
    defined = sorted({int(m) for m in re.findall(
        r"^static NNRT_SPEC_NOINLINE nnrt_status_t vww_96_int8_spec_op(\d+)\(", text, re.M)})
    # every 1x1/im2col conv (14) and the fully connected op
    assert defined == sorted(on.specialized) and len(defined) == 15
    for k in defined:  # the op function calls its specialised kernel, not the generic one
        body = text.split(f"static nnrt_status_t op_{k}(void)")[1].split("}")[0]
        assert f"vww_96_int8_spec_op{k}(" in body
        assert "nnrt_conv2d" not in body and "nnrt_fully_connected" not in body


def test_offset_biases_for_helium_cores_only(tmp_path: Path) -> None:
    """Planned for the M55's board (Core.weight_layouts: "offset-bias"), each core with
    channel records also names its biases with the input offset's term, an array of
    Helium builds only (#if NNRT_MVE), whose values are bias - z_in * sum(weights); for
    the M7's board or no board, none."""
    rel = "mlperf_tiny/kws_ref_model.tflite"
    data = model_path(rel).read_bytes()
    graph = load_model_bytes(data, name="kws_ref_model")
    for board, want in (("mps3_an547", True), ("nucleo_f767zi", False), (None, False)):
        opts = PlanOptions(board=load_board(board) if board else None)
        pm = plan_model(load_model_bytes(data, name="kws_ref_model"), opts, source_bytes=data)
        text = generate(pm, tmp_path / str(board)).c_file.read_text()
        named = re.findall(r"_rq NNRT_GEMM_BIAS_OFF\(op(\d+)_bias_off\),\n", text)
        assert bool(named) == want, board
        for k in named:
            arr = re.search(rf"#if NNRT_MVE\nstatic const int32_t op{k}_bias_off"
                            rf"\[\d+\] = \{{\n(.*?)\}};\n#endif", text, re.S)
            assert arr is not None, k
            got = [int(v) for v in arr.group(1).replace("\n", " ").split(",") if v.strip()]
            op = graph.ops[int(k)]
            x, w = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]]
            assert x.quant is not None
            b = graph.tensors[op.inputs[2]].array().astype(np.int64)
            sums = w.array().reshape(len(b), -1).astype(np.int64).sum(axis=1)
            assert got == [int(v) for v in b - x.quant.zero_point[0] * sums], k


def _laid_ops(text: str, what: str) -> list[str]:
    return re.findall(rf"op (\d+): matrix-core convolution specialised to depth \d+, \d+ "
                      rf"channels, weights {what}", text)


def _laid_array(text: str, index: int, layout: str, ctype: str) -> tuple[str, list[int]]:
    """The name and values of tensor ``index``'s array written in ``layout``."""
    arr = re.search(rf"/\* tensor {index}: .*? in the {layout} layout \*/\n"
                    rf"NNRT_WEIGHTS static const {ctype} (w\d+)\[\d+\] = \{{\n(.*?)\n\}};",
                    text, re.S)
    assert arr is not None, index
    return arr.group(1), [int(v) for v in arr.group(2).replace("\n", " ").split(",")
                          if v.strip()]


@pytest.mark.parametrize("opts", [{}, {"inplace_ops": "auto", "tiling": "auto"}],
                         ids=["classic", "default"])
def test_pair_rows_for_dsp_cores_only(tmp_path: Path, opts: dict[str, str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Planned for the M7's or M4's board (Core.weight_layouts: "conv-int16" and
    "conv-row-pair"; their flash holds the doubled bytes), the specialised 1x1 convs of
    kws_ref_model (depth 64) have their weights widened to int16 (the array
    gemm_pairs.int16_rows() makes of the tensor, the records' own biases) and run
    nnrt_gemm_pair_body_w16(); where the flash could not hold them (fit_flash without
    the int16 layout) the pair-row layout (gemm_pairs.pair_rows(), the records' mixed
    start values, nnrt_gemm_pair_body_rp()); for the M3, the M33 without DSP, the M55
    or no board, neither (their generated code is the one without the layouts)."""
    rel = "mlperf_tiny/kws_ref_model.tflite"
    data = model_path(rel).read_bytes()
    graph = load_model_bytes(data, name="kws_ref_model")
    for board in ("nucleo_f767zi", "mps2_an386", "mps2_an385", "mps2_an521", "mps3_an547",
                  None):
        pm = plan_model(load_model_bytes(data, name="kws_ref_model"),
                        PlanOptions(board=load_board(board) if board else None, **opts),
                        source_bytes=data)
        text = generate(pm, tmp_path / str(board)).c_file.read_text()
        dsp = board in ("nucleo_f767zi", "mps2_an386")
        ops = _laid_ops(text, "widened to int16")
        assert (len(ops) >= 4) == dsp, board
        assert not _laid_ops(text, "in the pair-row layout"), board
        assert text.count("nnrt_gemm_pair_body_w16(") == len(ops), board
        for k in ops:
            w = graph.tensors[graph.ops[int(k)].inputs[1]]
            want = gemm_pairs.int16_rows(w.array().reshape(w.shape[0], -1))
            name, got = _laid_array(text, w.index, gemm_pairs.INT16_LAYOUT, "int16_t")
            assert want is not None and got == [int(v) for v in want], k
            # the core's filter pointer names the int16 array
            assert f", (const int8_t *)(const void *){name}, NULL," in text, k
    # the same board with the int16 layout left out (its flash too small): the pair rows
    pm = plan_model(load_model_bytes(data, name="kws_ref_model"),
                    PlanOptions(board=load_board("nucleo_f767zi"), **opts), source_bytes=data)
    real = c_model.fit_flash

    def small(*a: object) -> frozenset[str] | None:
        got = real(*a)  # type: ignore[arg-type]
        return None if got is None else got - {gemm_pairs.INT16_LAYOUT}
    monkeypatch.setattr(c_model, "fit_flash", small)
    text = generate(pm, tmp_path / "small").c_file.read_text()
    ops = _laid_ops(text, "in the pair-row layout")
    assert len(ops) >= 4 and not _laid_ops(text, "widened to int16")
    assert text.count("nnrt_gemm_pair_body_rp(") == len(ops)
    for k in ops:
        w = graph.tensors[graph.ops[int(k)].inputs[1]]
        want = gemm_pairs.pair_rows(w.array().reshape(w.shape[0], -1))
        _, got = _laid_array(text, w.index, gemm_pairs.GEMM_PAIRS_LAYOUT, "int8_t")
        assert want is not None and got == [int(v) for v in want], k


def test_int16_rows_hold_every_weight_once() -> None:
    """gemm_pairs.int16_rows() decoded as nnrt_gemm_pair_body_w16()'s comment describes
    it (per block of 3 channels, the last of oc % 3, per chunk, per channel E = [w0 w2],
    O = [w1 w3]) gives the tensor back, every remainder and -128 included; geometries the
    pair rows refuse (not a multiple of 4, one channel) are refused too; the records in
    the same blocks (biases, then each channel's three words, the loop's end flag on the
    last whole block)."""
    r = np.random.default_rng(3)
    for oc, depth in ((2, 4), (3, 8), (7, 64), (8, 640), (9, 12)):
        w = r.integers(-128, 128, size=(oc, depth)).astype(np.int8)
        w[0, 0], w[-1, -1] = -128, -128
        laid = gemm_pairs.int16_rows(w)
        assert laid is not None and laid.dtype == np.int16 and laid.size == w.size
        back = np.zeros_like(w)
        for ch in range(oc):
            b, r_ = divmod(ch, 3)
            base, g = 3 * b * depth, min(3, oc - 3 * b)
            for i in range(depth):
                back[ch, i] = laid[base + 4 * g * (i // 4) + 4 * r_ + 2 * (i % 2) + (i // 2) % 2]
        assert (back == w).all(), (oc, depth)
        biases = [int(v) for v in r.integers(-1000, 1000, size=oc)]
        rec = records_for(w.astype(np.int64), biases, [1 << 30] * oc, [-5] * oc, 0, 0,
                          -128, 127)
        assert rec is not None
        blocks = gemm_pairs.block_records(rec, oc)
        assert len(blocks) == 4 * oc
        for ch in range(oc):
            b, r_ = divmod(ch, 3)
            g = min(3, oc - 3 * b)
            assert blocks[12 * b + r_] == biases[ch]
            words = blocks[12 * b + g + 3 * r_:12 * b + g + 3 * r_ + 3]
            pair = rec[8 * (ch // 2) + 2 + 3 * (ch % 2):8 * (ch // 2) + 5 + 3 * (ch % 2)]
            assert words[:2] == pair[:2] and words[2] & 0xFF == pair[2] & 0xFF
            assert bool(words[2] & RQ_LAST) == (oc >= 3 and ch == 3 * (oc // 3) - 1), ch
    assert gemm_pairs.int16_rows(np.zeros((4, 6), np.int8)) is None
    assert gemm_pairs.int16_rows(np.zeros((1, 8), np.int8)) is None
    assert gemm_pairs.int16_rows(np.zeros((2, gemm_pairs.MAX_DEPTH + 4), np.int8)) is None


#: Three 3x3 convolutions of depth 288, 288 and 576 (columns over the scratch-free
#: path's 1 KB stack buffer): classic plans give the last two no scratch (memory
#: first), --inplace-ops force runs two in bands, --tiling force the first in patches.
DEEP_PLANS = {"classic": {}, "default": {"inplace_ops": "auto", "tiling": "auto"},
              "bands": {"inplace_ops": "force"}, "patches": {"tiling": "force"},
              "both": {"inplace_ops": "force", "tiling": "force"}}


def _deep_chain() -> bytes:
    from nnopt.testing.big_models import Layer, conv_chain
    return conv_chain((1, 16, 16, 32), [Layer(32, kernel=3), Layer(64, kernel=3),
                                        Layer(32, kernel=3)], seed=1)


def _deep_planned(opts: dict[str, str]):  # type: ignore[no-untyped-def]
    data = _deep_chain()
    return data, plan_model(load_model_bytes(data, name="deep"),
                            PlanOptions(board=load_board("nucleo_f767zi"), **opts),  # type: ignore[arg-type]
                            source_bytes=data)


@pytest.mark.parametrize("opts", list(DEEP_PLANS.values()), ids=list(DEEP_PLANS))
def test_deep_pair_rows_only_where_the_plan_passes_scratch(tmp_path: Path,
                                                           opts: dict[str, str]) -> None:
    """A conv whose columns exceed the scratch-free path's stack buffer takes its layout
    (on the nucleo_f767zi, whose flash holds them, the weights widened to int16; the
    pair rows follow the same rule) exactly where the plan gives it scratch
    (ConvLowering.scratch_always:
    its per-pixel loops, which read row-major weights, then never run), and every call
    of its specialised core, whole, in bands or in patches, passes that scratch."""
    _, pm = _deep_planned(opts)
    text = generate(pm, tmp_path / "g").c_file.read_text()
    laid = {int(k) for k in re.findall(r"op (\d+): matrix-core convolution specialised to "
                                       r"depth \d+, \d+ channels, weights widened to int16",
                                       text)}
    planned = {s.op for s in pm.plan.scratch}
    free = {op.index for op in pm.graph.ops if op.options.scratch_free}
    assert laid == planned - free, (laid, planned, free)
    if not opts:
        assert free and laid, free  # both sides of the rule in the classic plan
    calls = 0
    for k in laid:
        # the whole op's call (its last argument the scratch) and the sub-view calls of
        # its core (the scratch before the pair function)
        whole = re.findall(rf"deep_spec_op{k}\((.*)\);", text)
        views = re.findall(rf"nnrt_spec_conv_gemm_s8\(&\w+, &op{k}_core, .*, "
                           rf"(NULL|\(\(void \*\)\([^()]*\)\)), deep_spec_op{k}_2px\)",
                           text)
        args = [a.rsplit(", ", 1)[-1] for a in whole if "const int8_t *input" not in a]
        assert args or views, k
        for a in args + views:
            assert a != "NULL" and "_arena + " in a, (k, a)
            calls += 1
    assert calls >= len(laid)
    if opts.get("tiling") == "force":
        assert "runs patch by patch" in text
    if opts.get("inplace_ops") == "force":
        assert "runs in bands" in text


@pytest.mark.parametrize("opts", [{}, {"inplace_ops": "auto", "tiling": "auto"}],
                         ids=["classic", "default"])
def test_channel_records_replace_the_requantisation_arrays(tmp_path: Path,
                                                           opts: dict[str, str]) -> None:
    """A specialised conv with channel records emits them instead of its multiplier and
    shift arrays and bias (no ROM twice), in the whole op and in its bands and tiles;
    vww_96_int8's layers whose tiny-multiplier channels keep constant outputs have
    them too."""
    rel = "mlperf_tiny/vww_96_int8.tflite"
    text = generate(_planned(rel, **opts), tmp_path / "g").c_file.read_text()
    cores = dict(re.findall(r"static const nnrt_gemm_s8_t op(\d+)_core = \{\n    (.*),\n", text))
    with_rq = sorted(int(k) for k, v in cores.items()
                     if v.endswith(f"op{k}_rq NNRT_GEMM_BIAS_OFF(NULL)"))
    assert {0, 2, 10, 12, 14, 24, 26} <= set(with_rq), with_rq
    graph = load_model_bytes(model_path(rel).read_bytes(), name="vww_96_int8")
    for k in with_rq:
        assert f"op{k}_mult[" not in text and f"op{k}_shift[" not in text
        bias = graph.ops[k].inputs[2]
        assert not re.search(rf"\bw{bias}\[", text), k  # the bias lives in the records
        assert ", NULL, NULL, NULL, 1, " in cores[str(k)]


def test_auto_rule() -> None:
    """auto: ops with enough estimated saving; small ones only where their copies take
    less ROM than the generic kernel they alone would link; per family."""
    def conv(i: int, n: int) -> Candidate:
        return Candidate(i, n, CONV_SPEC)

    def fc(i: int, n: int) -> Candidate:
        return Candidate(i, n, FC_SPEC)

    big, small = conv(1, 5000), conv(2, 10)
    assert choose("auto", [big, small]) == {1, 2}  # one small conv: 850 B < 2,100 B
    assert choose("auto", [big, small, conv(3, 20), conv(4, 30)]) == {1}
    assert choose("auto", [conv(5, 150), conv(6, 120), conv(7, 10)]) == set()
    fcs = [fc(10, 128), fc(11, 8), fc(12, 640)]
    assert choose("auto", fcs) == {10, 11, 12}  # 128 x 20 >= 2,000; one small: 620 < 770
    assert choose("auto", [fc(13, 8), fc(14, 8), fc(15, 8), fc(16, 99)]) == set()
    # per generic kernel: a small conv beside small fully connected ops is its own group
    assert choose("auto", [conv(17, 10), fc(18, 8), fc(19, 8)]) == {17}
    assert choose("force", [small]) == {2}
    assert choose("off", [big]) == frozenset()
    with pytest.raises(NnoptError):
        choose("all", [big])


def test_cli_refuses_an_unknown_mode(capsys: pytest.CaptureFixture[str]) -> None:
    from nnopt.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["optimize", str(model_path("mlperf_tiny/ad01_int8.tflite")),
              "--specialize", "sometimes"])
    assert exc.value.code == 64  # a usage error (EX_USAGE), not "over budget"
    assert "--specialize" in capsys.readouterr().err


def test_pointwise_scratch_through_the_im2col_entry(tmp_path: Path) -> None:
    """1x1 convs run nnrt_conv2d_im2col_s8 with the columns only as scratch: the rule
    the lowering plans equals the kernel's nnrt_conv2d_im2col_s8_get_buffer_size()."""
    src = tmp_path / "sizes.c"
    src.write_text(r"""
#include <stdio.h>
#include "nnrt/kernels/conv.h"
int main(void)
{
    nnrt_conv_s8_params_t p = {0};
    p.geom.batches = 1;
    p.geom.filter_h = p.geom.filter_w = 1;
    p.geom.stride_h = p.geom.stride_w = 2;
    p.geom.input_h = p.geom.input_w = 5;
    p.geom.output_h = p.geom.output_w = 3;
    for (int c = 1; c <= 70; ++c) {
        p.geom.input_c = p.geom.filter_c = c;
        printf("%d %zu\n", c, nnrt_conv2d_im2col_s8_get_buffer_size(&p));
    }
    return 0;
}
""")
    exe = build(BuildSpec(target="host", sources=(src, *kernel_sources("conv", "fc", "internal"))))
    res = run(exe, "host", [])
    assert res.exit_code == 0
    rows = [tuple(int(v) for v in ln.split()) for ln in res.stdout.splitlines()]
    assert len(rows) == 70 and all(b == cols_bytes(c) for c, b in rows)


# ----- on QEMU: ROM reported, models bit-exact -----

qemu = pytest.mark.skipif(not HAVE_QEMU, reason="qemu-system-arm / arm-none-eabi-gcc missing")


@pytest.mark.qemu
@qemu
def test_stats_report_the_specialised_rom_of_the_elf(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`nnopt run --stats` reports specialized_rom_bytes = the sizes of the ELF's
    <model>_spec_* functions; `--specialize off` reports 0 and more instructions."""
    from nnopt.cli import main
    from nnopt.runner import run_planned

    model = model_path("mlperf_tiny/kws_ref_model.tflite")
    docs = {}
    for mode in ("auto", "off"):
        stats = tmp_path / f"{mode}.json"
        assert main(["run", str(model), "--target", "qemu-m7", "--seed", "1",
                     "--inplace-ops", "off", "--tiling", "off", "--specialize", mode,
                     "--stats", str(stats)]) == 0
        docs[mode] = json.loads(stats.read_text())
    capsys.readouterr()
    # the same build (content-addressed cache): its symbols, read independently
    pm = _planned("mlperf_tiny/kws_ref_model.tflite")
    res = run_planned(pm, [np.zeros(490, np.int8).tobytes()], target="qemu-m7",
                      board=load_board("nucleo_f767zi"), workdir=tmp_path / "w")
    assert res.executable is not None
    report = check_elf(res.executable, load_board("nucleo_f767zi"))
    spec = [y for y in report.symbols if y.kind == "func" and "kws_ref_model_spec_op" in y.name]
    # 5 convs and the fully connected op
    assert len({re.search(r"_op(\d+)", y.name).group(1) for y in spec}) == 6  # type: ignore[union-attr]
    total = sum(y.size for y in spec)
    assert total > 1000
    assert docs["auto"]["specialized_rom_bytes"] == total
    assert specialized_rom_bytes(res.executable, "kws_ref_model") == total
    assert report.to_json()["specialized_rom_bytes"] == total
    assert (f"of it kernels specialised to the model: {total:,} B ({len(spec)} functions "
            "for 6 ops") in format_report(report)
    assert docs["off"]["specialized_rom_bytes"] == 0
    assert docs["auto"]["specialize"] == "auto" and docs["off"]["specialize"] == "off"
    assert docs["auto"]["instructions"] < docs["off"]["instructions"]
    for key in ("instructions", "arena_bytes", "rom_bytes", "ram_bytes"):
        assert key in docs["auto"]


def _bitexact_on_qemu(rel: str, mode: str, tmp: Path) -> tuple[int, ...]:
    from nnopt.runner import run_planned
    from nnopt.testing.harness import random_inputs, run_tflm

    data = model_path(rel).read_bytes()
    pm = _planned(rel, specialize=mode)
    inputs = random_inputs(data, 5)
    ref_out, ref_all = run_tflm(data, inputs)
    res = run_planned(pm, [x.tobytes() for x in inputs], target="qemu-m7",
                      board=load_board("nucleo_f767zi"), trace=True, workdir=tmp)
    compare_trace(pm, res.trace, ref_out, ref_all)
    return generate(pm, tmp / "src").specialized


@pytest.mark.qemu
@qemu
def test_model_bitexact_with_specialisation_on_cortex_m7(tmp_path: Path) -> None:
    """Every tensor bit-exact with the tflite-micro interpreter: kws_ref_model with all
    its convolutions and its fully connected op specialised, ad01_int8 (ten fully
    connected ops) under auto."""
    spec = _bitexact_on_qemu("mlperf_tiny/kws_ref_model.tflite", "force", tmp_path / "kws")
    assert len(spec) == 6  # 5 convs and the fully connected op
    spec = _bitexact_on_qemu("mlperf_tiny/ad01_int8.tflite", "auto", tmp_path / "ad01")
    assert len(spec) == 10  # every fully connected op


@pytest.mark.qemu
@qemu
def test_deep_pair_rows_bitexact_on_cortex_m7(tmp_path: Path) -> None:
    """The deep chain (depth 288 and 576, weights widened to int16) planned with bands
    and patches: every tensor bit-exact with the tflite-micro interpreter on the M7."""
    from nnopt.runner import run_planned
    from nnopt.testing.harness import random_inputs, run_tflm

    data, pm = _deep_planned(DEEP_PLANS["both"])
    assert generate(pm, tmp_path / "src").c_file.read_text().count(
        "weights widened to int16") == 3
    inputs = random_inputs(data, 2)
    ref_out, ref_all = run_tflm(data, inputs)
    res = run_planned(pm, [x.tobytes() for x in inputs], target="qemu-m7",
                      board=load_board("nucleo_f767zi"), trace=True, workdir=tmp_path)
    compare_trace(pm, res.trace, ref_out, ref_all)


@pytest.mark.qemu
@pytest.mark.slow
@qemu
@pytest.mark.parametrize("rel", ["mlperf_tiny/vww_96_int8.tflite",
                                 "mlperf_tiny/pretrainedResnet_quant.tflite"])
def test_more_models_bitexact_with_specialisation(rel: str, tmp_path: Path) -> None:
    assert _bitexact_on_qemu(rel, "force", tmp_path)


def test_conv_int16_only_where_the_flash_holds_it_beside_the_fc_layouts() -> None:
    """fit_flash() keeps the convolutions' int16 layout only where their int8 weights
    (gemm_pairs.wide_bytes: kws_ref_model's depth-40 first conv and four 1x1 ones) fit
    beside the FCs' doubled ones; with less, the FCs' int16 layout stays and the
    convolutions keep the pair rows; with less than the FCs', neither."""
    data = model_path("mlperf_tiny/kws_ref_model.tflite").read_bytes()
    graph = load_model_bytes(data, name="kws_ref_model")
    conv = sum(gemm_pairs.wide_bytes(graph, op) for op in graph.ops)
    assert conv == 64 * 40 + 4 * 64 * 64
    fc = fit_flash_fc_bytes(graph)
    layouts = frozenset({"row-pair", "conv-row-pair", "fc-int16", gemm_pairs.INT16_LAYOUT})
    assert fit_flash(graph, layouts, fc + conv) == layouts
    assert fit_flash(graph, layouts, fc + conv - 1) == layouts - {gemm_pairs.INT16_LAYOUT}
    assert fit_flash(graph, layouts, fc - 1) == frozenset({"row-pair", "conv-row-pair"})


def fit_flash_fc_bytes(graph) -> int:  # type: ignore[no-untyped-def]
    """What the FCs' doubled layouts add (fit_flash's own bound, without the convs')."""
    only_fc = frozenset({"fc-int16"})
    lo, hi = 0, 1 << 24
    while lo < hi:  # the least spare bytes that keep the FCs' layout
        mid = (lo + hi) // 2
        if fit_flash(graph, only_fc, mid) == only_fc:
            hi = mid
        else:
            lo = mid + 1
    return lo
