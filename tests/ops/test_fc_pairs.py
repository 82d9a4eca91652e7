"""The int8 fully connected op on weights in the row-pair layout (nnrt's
``internal/fc_pairs.h``, written by :func:`nnopt.lowering.fc.pair_layout` for the ops
code generation specialises): bit-exact with the generic kernel and with the tflite-micro
interpreter, and written once in the model source.

The property program (``tests/c/fc_pairs_property.h`` and the cases written here) runs
seeded random ops (batches, depths that are and are not multiples of 4, across the
256-input blocks of the kernel's mixed sums, unit counts that are not multiples of 4,
per-tensor with and without a weights offset, per-channel, shifts outside the fast
requantisation, activation ranges, with and without bias) and ops built to reach the
largest sums the blocks allow, through the specialised function code generation emits
(its weights in the row-pair layout) and through the generic kernel (row-major), and
compares every byte. Built for the host (ASan/UBSan), Cortex-M7 at -O2 (the assembly)
and -O0 (its C form) and Cortex-M3 (portable C) under QEMU; all must agree, with the
same hash of the outputs.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from nnopt.boards import load_board
from nnopt.codegen.c_model import generate
from nnopt.codegen.spec import render_spec
from nnopt.firmware import toolchain as tc
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import FullyConnectedOptions
from nnopt.lowering.call import FcSpec, Params, Raw
from nnopt.lowering.fc import (
    INT16_LAYOUT,
    PACK23_LAYOUT,
    PAIRS_LAYOUT,
    PAIRS_MAX_DEPTH,
    fit_flash,
    int16_layout,
    pack23_layout,
    pair_layout,
)
from nnopt.planner import PlanOptions, plan_model
from nnopt.testing.harness import random_inputs, run_nnopt, run_tflm
from nnopt.tflite_builder import ModelBuilder
from support.cbuild import c_source
from support.property import HAVE_QEMU, assert_passed, assert_same_hash, program, run_builds
from support.tflite_builder import combine_models, fully_connected_model

CASES = 28  # random ops of the property program (and 3 of the largest sums)
PRELUDE = c_source("fc_pairs_property.h").read_text()


def _decode(p: np.ndarray, units: int, depth: int) -> np.ndarray:
    """The row-major weights back from the row-pair layout, read as the kernel's comment
    describes it (not with pair_layout()'s index arithmetic)."""
    w = np.zeros((units, depth), dtype=np.int64)
    d4, tail = depth & ~3, depth % 4
    pos = 0
    for g in range(units // 4):
        for c in range(d4 // 4):
            d = 4 * c
            for k, (ua, inputs) in enumerate(((0, (d, d + 2)), (2, (d, d + 2)),
                                              (0, (d + 1, d + 3)), (2, (d + 1, d + 3)))):
                word = p[pos + 4 * k:pos + 4 * k + 4].astype(np.int64)
                for m, i in enumerate(inputs):
                    lo, hi = int(word[2 * m]), int(word[2 * m + 1])
                    h = hi * 256 + (lo & 0xFF)  # the int16 of the little-endian halfword
                    w[4 * g + ua, i] = lo
                    w[4 * g + ua + 1, i] = (h - lo) // 256
            pos += 16
        for r in range(4):
            w[4 * g + r, d4:] = p[pos:pos + tail]
            pos += tail
    w[4 * (units // 4):] = p[pos:].reshape(units % 4, depth)
    return w


@pytest.mark.parametrize("units,depth", [(4, 4), (5, 7), (8, 640), (13, 130), (7, 1025),
                                         (128, 8)])
def test_pair_layout_holds_every_weight_once(units: int, depth: int) -> None:
    rng = np.random.default_rng(units * depth)
    w = rng.integers(-127, 128, (units, depth)).astype(np.int8)
    whole = 4 * (units // 4)
    low, high = w[0:whole:2], w[1:whole:2]  # views: the pairs' two units
    high[(low >= 0) & (rng.random(low.shape) < 0.3)] = -128  # an int16 beside w_a >= 0
    w[whole:][rng.random(w[whole:].shape) < 0.3] = -128  # row-major: anything goes
    p = pair_layout(w)
    assert p is not None and p.dtype == np.int8 and p.size == w.size
    assert np.array_equal(_decode(p, units, depth), w)


def test_pair_layout_refuses_what_is_not_an_int16() -> None:
    w = np.zeros((4, 4), dtype=np.int8)
    assert pair_layout(w[:3]) is None and pair_layout(w[:, :3]) is None
    w[1, 2], w[0, 2] = -128, -1  # 256 * -128 - 1: below int16
    assert pair_layout(w) is None
    w[0, 2] = 0
    assert pair_layout(w) is not None
    w[0, 2], w[1, 2] = -128, -1  # the unit of the low byte may be -128
    assert pair_layout(w) is not None


def _decode_int16(p: np.ndarray, units: int, depth: int) -> np.ndarray:
    """The row-major weights back from the int16 layout, read as fc_int16.h's comment
    describes it."""
    w = np.zeros((units, depth), dtype=np.int64)
    d4, tail = depth & ~3, depth % 4
    pos = 0
    for o in range(0, units, 4):
        n = min(4, units - o)  # the last group: units % 4
        for c in range(d4 // 4):
            d = 4 * c
            for word in range(2 * n):  # unit word % n, inputs (d, d + 2), (d + 1, d + 3)
                u, q = o + word % n, word // n
                w[u, d + q], w[u, d + q + 2] = p[pos], p[pos + 1]
                pos += 2
        for r in range(n):
            w[o + r, d4:] = p[pos:pos + tail]
            pos += tail
    assert pos == p.size
    return w


@pytest.mark.parametrize("units,depth", [(4, 4), (5, 7), (8, 640), (13, 130), (128, 8)])
def test_int16_layout_holds_every_weight_once(units: int, depth: int) -> None:
    w = np.random.default_rng(units + depth).integers(-128, 128, (units, depth)).astype(np.int8)
    p = int16_layout(w)
    assert p is not None and p.dtype == np.int16 and p.size == w.size
    assert np.array_equal(_decode_int16(p, units, depth), w)
    assert int16_layout(w[:3]) is None and int16_layout(w[:, :3]) is None


def test_doubled_layouts_only_where_the_flash_holds_them() -> None:
    """The int16 and packed layouts add the FC weights' bytes once more: with less
    flash to spare than that, the int8 layouts alone remain."""
    graph = load_model_bytes(MODELS["ad01_like_640x128"][0], name="m")
    extra = 128 * 640 + 4 * 640  # the weights, and the packed layout's padding bound
    for layouts in (frozenset({PAIRS_LAYOUT, INT16_LAYOUT}),
                    frozenset({PAIRS_LAYOUT, PACK23_LAYOUT})):
        assert fit_flash(graph, layouts, extra) == layouts
        assert fit_flash(graph, layouts, extra - 1) == frozenset({PAIRS_LAYOUT})
        assert fit_flash(graph, layouts, None) == layouts  # no board: nothing to weigh
    assert fit_flash(graph, None, 0) is None  # unknown core: as before


def test_a_board_whose_flash_cannot_hold_the_int16_weights_keeps_the_row_pairs(
        tmp_path: Path) -> None:
    """1,024,000 int8 weights on the nucleo_f767zi's 2 MB: twice that and the 64 KB code
    reserve would not fit, so the op runs the int8 row pairs (fit_flash)."""
    model = fully_connected_model((1, 1024), 1000, seed=45)
    opts = PlanOptions(specialize="force", board=load_board("nucleo_f767zi"))
    text = _generated_text(model, opts, tmp_path)
    assert "nnrt_fc_pairs_body" in text and "nnrt_fc_int16_body" not in text


# ----- the property program -----

@dataclass(frozen=True)
class _Case:
    batches: int
    depth: int
    units: int
    weights: np.ndarray  # [units, depth] int8
    bias: np.ndarray | None
    z_in: int
    z_out: int
    w_off: int
    per_channel: bool
    mults: list[int]
    shifts: list[int]
    lo: int
    hi: int
    fill: int  # the input byte, or 256: random


def _random_case(r: random.Random) -> _Case:
    batches = r.randint(1, 3)
    depth = r.choice((r.randint(4, 70), r.randint(4, 70), r.randint(250, 600)))
    units = r.randint(4, 20)
    rng = np.random.default_rng(r.getrandbits(32))
    w = rng.integers(-128, 128, (units, depth)).astype(np.int8)
    if pair_layout(w) is None:  # a -128 above a negative low byte: not an int16
        w[w == -128] = -127
    per_channel = r.random() < 0.5
    w_off = 0 if per_channel or r.random() < 0.5 else r.randint(-127, 128)
    nq = units if per_channel else 1
    shifts = [r.randint(-1, 2) if r.random() < 0.1 else r.randint(-31, -2)
              for _ in range(nq)]
    if r.random() < 0.5:
        shifts = [r.randint(-20, -8) for _ in range(nq)]
    lo, hi = sorted((r.randint(-128, 127), r.randint(-128, 127)))
    if r.random() < 0.5:
        lo, hi = -128, 127
    bias = rng.integers(-40000, 40001, units).astype(np.int32) if r.random() < 0.8 else None
    return _Case(batches, depth, units, w, bias, r.randint(-128, 127), r.randint(-128, 127),
                 w_off, per_channel, [r.randint(1 << 30, (1 << 31) - 1) for _ in range(nq)],
                 shifts, lo, hi, 256)


def _extreme_case(depth: int, units: int, w_a: int, w_b: int, x: int, z_in: int) -> _Case:
    """Every unit pair at (w_a, w_b) and every input x - z_in: the mixed sums at the
    bound of the kernel's blocks (a larger block would leave int32); the requantisation
    scales the largest exact sum to about 127, so that a wrong sum shows."""
    w = np.empty((units, depth), dtype=np.int8)
    w[0::2], w[1::2] = w_a, w_b
    largest = depth * 128 * 255
    shift = -math.ceil(math.log2(largest / 127))
    return _Case(1, depth, units, w, None, z_in, 0, 0, False, [1 << 30], [shift + 1],
                 -128, 127, x)


def _cases(seed: int) -> list[_Case]:
    r = random.Random(seed)
    return [*(_random_case(r) for _ in range(CASES)),
            _extreme_case(513, 6, 0, -128, -128, 127),  # h = -32768, x - z_in = -255
            _extreme_case(256, 4, 127, 127, 127, -128),  # h = 32639, x - z_in = 255
            _extreme_case(PAIRS_MAX_DEPTH, 4, -128, 127, -128, 127)]


def _c_array(decl: str, v: np.ndarray) -> str:
    return f"{decl} = {{{', '.join(str(int(x)) for x in v.reshape(-1))}}};"


def _case_c(k: int, c: _Case) -> tuple[list[str], str]:
    nq = len(c.mults)
    params = Params("nnrt_fc_s8_params_t", {
        "batches": c.batches, "accum_depth": c.depth, "output_depth": c.units,
        "input_offset": -c.z_in, "weights_offset": c.w_off, "output_offset": c.z_out,
        "act_min": c.lo, "act_max": c.hi, "per_channel": int(c.per_channel),
        "multiplier": Raw(f"c{k}_mult"), "shift": Raw(f"c{k}_shift")})
    pairs = pair_layout(c.weights)
    assert pairs is not None
    n = c.units * c.depth
    decls = [_c_array(f"static const int8_t c{k}_w[{n}]", c.weights),
             _c_array(f"NNRT_WEIGHTS static const int8_t c{k}_wp[{n}]", pairs),
             _c_array(f"static const int32_t c{k}_mult[{nq}]", np.array(c.mults)),
             _c_array(f"static const int32_t c{k}_shift[{nq}]", np.array(c.shifts))]
    bias = "NULL"
    if c.bias is not None:
        decls.append(_c_array(f"static const int32_t c{k}_b[{c.units}]", c.bias))
        bias = f"c{k}_b"
    decls += render_spec(FcSpec(k, "t", params, f"c{k}_params", f"c{k}_wp",
                                bias if c.bias is not None else None, c.shifts,
                                pairs_depth=c.depth))
    # the same op with its weights packed two units to a word (fc_pack23.h)
    packed = pack23_layout(c.weights)
    kp = k + PACKED_BASE
    decls += [_c_array(f"static const int32_t c{k}_wk[{packed.size}]", packed),
              *render_spec(FcSpec(kp, "t", params, f"c{kp}_params", f"c{k}_wk",
                                  bias if c.bias is not None else None, c.shifts,
                                  pack23_depth=c.depth))]
    # and widened to int16 (fc_int16.h)
    wide = int16_layout(c.weights)
    assert wide is not None
    kw = k + WIDE_BASE
    decls += [_c_array(f"NNRT_WEIGHTS static const int16_t c{k}_w16[{wide.size}]", wide),
              *render_spec(FcSpec(kw, "t", params, f"c{kw}_params", f"c{k}_w16",
                                  bias if c.bias is not None else None, c.shifts,
                                  int16_depth=c.depth))]
    call = "\n".join(
        f"    check_fc(&c{k}_params, c{k}_w, {bias}, {c.batches * c.depth}u, "
        f"{c.batches * c.units}u, {c.fill}, t_spec_op{j});" for j in (k, kp, kw))
    return decls, call


#: the op index of case k's packed twin, of its int16 twin
PACKED_BASE = 1000
WIDE_BASE = 2000


def property_program(seed: int) -> str:
    decls: list[str] = []
    calls: list[str] = []
    for k, case in enumerate(_cases(seed)):
        d, c = _case_c(k, case)
        decls += d
        calls.append(c)
    return program(PRELUDE, ['#include "nnrt/sections.h"', *decls], calls)


#: name -> (target, optimisation): -O0 runs the C form of the assembly (Zephyr's
#: CONFIG_NO_OPTIMIZATIONS), Cortex-M3 the portable C
BUILDS: dict[str, tuple[tc.Target, str]] = {
    "host-sanitized": ("host", "-O2"), "m7-dsp": ("qemu-m7", "-O2"),
    "m7-dsp-O0": ("qemu-m7", "-O0"), "m3": ("qemu-m3", "-O2")}


@pytest.fixture(scope="module")
def property_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    src = tmp_path_factory.mktemp("pairs") / "fc_pairs_property.c"
    src.write_text(property_program(seed=20261203))
    return run_builds(src, BUILDS, ("fc", "internal"))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BUILDS))
def test_row_pairs_match_the_generic_kernel(property_results: dict[str, str],
                                            name: str) -> None:
    if name not in property_results:
        pytest.skip("qemu-system-arm / arm-none-eabi-gcc not installed")
    assert_passed(property_results[name], 3 * (CASES + 3))


@pytest.mark.slow
def test_every_build_gives_the_same_bytes(property_results: dict[str, str]) -> None:
    assert_same_hash(property_results)


def test_property_program_covers_the_kernel() -> None:
    cases = _cases(20261203)
    assert {c.depth % 4 for c in cases} == {0, 1, 2, 3}
    assert {c.units % 4 for c in cases} == {0, 1, 2, 3}
    assert any(c.depth > 2 * 256 for c in cases) and any(c.batches > 1 for c in cases)
    assert any(c.w_off != 0 for c in cases) and any(c.per_channel for c in cases)
    assert any(c.bias is None for c in cases) and any((c.lo, c.hi) != (-128, 127)
                                                      for c in cases)
    assert any(not -31 <= s <= -2 for c in cases for s in c.shifts)
    assert any((c.weights == -128).any() for c in cases)


# ----- through the compiler, against the tflite-micro interpreter -----

def _w(seed: int, units: int, depth: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-127, 128, (units, depth)).astype(np.int8)


#: name -> (model, whether its weights get the row-pair layout)
MODELS: dict[str, tuple[bytes, bool]] = {
    "ad01_like_640x128": (fully_connected_model((1, 640), 128, activation="RELU",
                                                input_quant=(0.05, 89), seed=31), True),
    "per_channel_tails_no_bias": (fully_connected_model(
        (2, 37), 9, per_channel=True, bias=False, seed=32), True),
    "weights_offset": (fully_connected_model((2, 20), 6, weight_zero_point=5, seed=33), True),
    "batch3_two_blocks_relu6": (fully_connected_model(
        (3, 300), 8, activation="RELU6", output_quant=(0.05, -128), seed=34), True),
    "shifts_outside_the_fast_form": (fully_connected_model(
        (2, 16), 6, weight_scales=[1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0],
        output_quant=(0.05, 0), seed=35), True),
    "keep_num_dims": (fully_connected_model((2, 3, 8), 5, keep_num_dims=True, seed=36), True),
    "input_zp_extremes": (fully_connected_model((2, 513), 4, input_quant=(0.05, -128),
                                                output_quant=(2.0, 127), seed=37), True),
    "depth4_units4": (fully_connected_model((1, 4), 4, seed=38), True),
    "deepest_row_pairs": (fully_connected_model((1, PAIRS_MAX_DEPTH), 4, seed=39), True),
    # not in the layout: too deep for the stack buffer; units or depth below 4; a -128
    # above a negative weight (not an int16)
    "too_deep": (fully_connected_model((1, PAIRS_MAX_DEPTH + 1), 4, seed=40), False),
    "three_units": (fully_connected_model((2, 40), 3, seed=41), False),
    "depth3": (fully_connected_model((2, 3), 8, seed=42), False),
    "not_an_int16": (fully_connected_model(
        (1, 16), 4, weights=np.where(np.arange(64).reshape(4, 16) == 20, -128,
                                     np.where(np.arange(64).reshape(4, 16) == 4, -3,
                                              _w(43, 4, 16))), seed=43), False),
}


def _generated_text(model: bytes, opts: PlanOptions, tmp: Path) -> str:
    pm = plan_model(load_model_bytes(model, name="m"), opts, source_bytes=model)
    return generate(pm, tmp).c_file.read_text()


def test_models_use_the_layout_where_it_applies(tmp_path: Path) -> None:
    """Each weights array is written once: in the row-pair layout where the op takes it,
    else row-major; never both."""
    for name, (model, pairs) in MODELS.items():
        text = _generated_text(model, PlanOptions(specialize="force"), tmp_path / name)
        arrays = re.findall(r"^/\* tensor 1: .*\*/$", text, re.MULTILINE)
        assert len(arrays) == 1, (name, arrays)
        assert ("row-pair layout" in arrays[0]) == pairs, (name, arrays)
        assert ("nnrt_fc_pairs_body" in text) == pairs, name
        off = _generated_text(model, PlanOptions(specialize="off"), tmp_path / f"{name}-off")
        assert "row-pair" not in off, name


def test_the_layout_follows_the_target_core(tmp_path: Path) -> None:
    """The int16 weights on the SMLAD cores (M7, M4: twice the bytes, asked for by name,
    their flash holds them), the row-pair layout on the Cortex-M3, the packed words on
    the M33 without DSP (SMLAL, twice the bytes: asked for by name), row-major on a
    Helium core (its vector rows read that order, nnopt.firmware.cores), and on an
    unknown core as before (every layout but the doubled ones)."""
    model = MODELS["ad01_like_640x128"][0]
    for board, pairs, packed, wide in (
            ("nucleo_f767zi", False, False, True), ("mps2_an386", False, False, True),
            ("mps2_an521", False, True, False), ("mps2_an385", True, False, False),
            ("mps3_an547", False, False, False), (None, True, False, False)):
        opts = PlanOptions(specialize="force",
                           board=load_board(board) if board is not None else None)
        text = _generated_text(model, opts, tmp_path / str(board))
        assert ("row-pair layout" in text) == pairs, board
        assert ("nnrt_fc_pairs_body" in text) == pairs, board
        assert ("nnrt_fc_int16_body" in text) == wide, board
        if wide:  # the int16 array is the weights' only one
            arrays = re.findall(r"^/\* tensor 1: .*\*/\nNNRT_WEIGHTS static const (\w+) "
                                r"w1\[(\d+)\]", text, re.MULTILINE)
            assert arrays == [("int16_t", str(640 * 128))], board
        assert ("nnrt_fc_pack23_body" in text) == packed, board
        assert ("weights packed two units to a word" in text) == packed, board
        if packed:  # the packed words are the weights' only array
            assert "/* tensor 1:" not in text, board
            words = re.search(r"static const int32_t op0_wpk\[(\d+)\]", text)
            assert words is not None and int(words.group(1)) == 640 * 128 // 2, board
        assert "_spec_op0(" in text, board  # specialised either way


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", "qemu-m7", "qemu-m3", "qemu-m55", "qemu-m33"])
def test_models_match_the_interpreter(target: str) -> None:
    """qemu-m55: the board of a Helium core, where the specialised ops keep row-major
    weights and run the Helium rows (internal/mve_dot.h)."""
    if target != "host" and not HAVE_QEMU:
        pytest.skip("qemu-system-arm / arm-none-eabi-gcc not installed")
    board = None
    if target == "qemu-m55":
        target, board = "qemu", load_board("mps3_an547")
    if target == "qemu-m33":  # no DSP: the weights packed two units to a word
        target, board = "qemu", load_board("mps2_an521")
    names = list(MODELS)
    for group in (names[:7], names[7:]):  # QEMU's command line: the inputs' paths
        combined = combine_models([MODELS[n][0] for n in group])
        for seed in (0, 1):
            inputs = random_inputs(combined.data, seed)
            if seed == 1:  # every input at its extremes
                inputs = [np.where(x >= 0, 127, -128).astype(x.dtype) for x in inputs]
            ref, _ = run_tflm(combined.data, inputs)
            ours, _ = run_nnopt(combined.data, inputs, target=target,
                                sanitize=target == "host", board=board,
                                options=PlanOptions(order="file", specialize="force"))
            for name, a, r in zip(group, ours, ref, strict=True):
                assert np.array_equal(a, r.reshape(a.shape)), (
                    f"{name} (seed {seed}): {int((a != r.reshape(a.shape)).sum())} of "
                    f"{a.size} differ")


def _shared_weights_model() -> bytes:
    """Two fully connected ops reading one weights tensor (16 x 16)."""
    b = ModelBuilder("shared_fc")
    x = b.tensor((1, 16), "int8", name="input", scale=0.05, zero_point=3)
    w = b.const(_w(44, 16, 16), name="weights", scale=np.array([0.01]), zero_point=0,
                axis=0)
    h = b.tensor((1, 16), "int8", name="hidden", scale=0.08, zero_point=-5)
    y = b.tensor((1, 16), "int8", name="output", scale=0.1, zero_point=2)
    b.op("FULLY_CONNECTED", [x, w, -1], [h], FullyConnectedOptions("RELU", False))
    b.op("FULLY_CONNECTED", [h, w, -1], [y], FullyConnectedOptions("NONE", False))
    return b.build([x], [y])


def test_shared_weights_stay_row_major_and_match_the_interpreter(tmp_path: Path) -> None:
    model = _shared_weights_model()
    opts = PlanOptions(order="file", specialize="force")
    text = _generated_text(model, opts, tmp_path)
    assert "row-pair" not in text and text.count("nnrt_fc_body(") == 2
    inputs = random_inputs(model, 3)
    ref, _ = run_tflm(model, inputs)
    ours, _ = run_nnopt(model, inputs, options=opts, sanitize=True)
    assert np.array_equal(ours[0], ref[0].reshape(ours[0].shape))


def test_auto_rule_counts_what_the_row_pairs_save() -> None:
    """``--specialize auto``: a fully connected op whose weights take the row-pair layout
    saves half an instruction per MAC more, so fewer outputs reach the threshold."""
    from nnopt.lowering.fc import FC_SPEC, fc_gain_per_output
    from nnopt.lowering.specialize import Candidate, choose

    plain = [Candidate(1, 40, FC_SPEC), Candidate(2, 40, FC_SPEC)]  # 40 x 20 < 2,000: small
    assert choose("auto", plain) == set()  # two copies: 2 x 620 > 770
    pairs = [Candidate(1, 40, FC_SPEC, fc_gain_per_output(128, True)),
             Candidate(2, 40, FC_SPEC, fc_gain_per_output(128, False))]
    assert choose("auto", pairs) == {1, 2}  # 40 x 84 >= 2,000; the other alone: small
    assert fc_gain_per_output(128, False) == 20 and fc_gain_per_output(9, True) == 24
