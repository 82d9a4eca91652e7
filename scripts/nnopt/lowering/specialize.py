"""Kernels specialised to one operator: the rule (where it pays) and the specialised
function as data (:data:`SpecDecl`; :mod:`nnopt.codegen.spec` writes its C).

``--specialize auto|off|force`` (:class:`~nnopt.planner.PlanOptions`, recorded in the
plan's options): for the ops the rule selects, code generation emits in the model
source a small function that calls the *same* inline kernel body as the generic entry
of libnnrt (``nnrt/kernels/spec.h``), with the op's parameters as ``static const``
objects, so GCC folds geometry, padding, offsets, per-channel flag and activation range
into constants. The results are the generic kernel's byte for byte (one source of
truth); the cost is ROM, reported from the linked ELF as the sizes of the
``<model>_spec_*`` symbols (:func:`specialized_rom_bytes`).

Where it pays (measured per op with ``bench_firmware.py --profile``, Cortex-M7 under
QEMU, benchmarks/README-kernels.md): the matrix-core convolution
(``nnrt_conv2d_im2col_s8``, and ``nnrt_conv2d_opt_s8`` without scratch) saves 10-15
instructions per output value (30 and more with a shallow im2col input such as an RGB
first layer) for 550-850 bytes of code per op; since its channel records and assembly
pair loop (:func:`gemm_records`, benchmarks/README.md "The int8 matrix core's
per-output cost") 23 per output of kws_ref_model's pointwise convs and 34 of its first
conv, for 630-1,450 bytes per op (pretrainedResnet_quant; a scratch-free op inlines the
core twice, for the pixels whose columns go on the stack). The int8 fully connected op
20-30 per output value for about 350 bytes (four units per pass over the input,
measured on kws_ref_model and ad01_int8), and with its weights in the row-pair layout
(``internal/fc_pairs.h``: the op alone reads them) 0.7-1.3 instructions per MAC for
510-620 bytes (:func:`nnopt.lowering.fc.fc_gain_per_output`). ``auto`` (:func:`choose`)
specialises the ops whose estimated saving (:class:`SpecCost`, declared by the lowering
that specialises: ``CONV_SPEC`` in :mod:`nnopt.lowering.conv_variant`, ``FC_SPEC`` in
:mod:`nnopt.lowering.fc`; instructions per output value, a lower bound of the
measurements) reaches :data:`MIN_SAVED` instructions per inference, and the
smaller ones of a kernel too when their copies together take less ROM than the
generic kernel they alone would link. ``force`` specialises every op that has a
specialised form, ``off`` none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import numpy as np

from ..errors import NnoptError
from .call import Params

#: The ``--specialize`` modes (the spelling of ``--tiling`` / ``--inplace-ops``).
SPECIALIZE_MODES: tuple[str, ...] = ("auto", "off", "force")
#: Kernels that have a specialised form (the matrix-core convolution).
SPECIALIZABLE: tuple[str, ...] = ("nnrt_conv2d_im2col_s8", "nnrt_conv2d_opt_s8")
#: ``auto``: the smallest estimated saving (instructions per inference) worth an op's
#: own code.
MIN_SAVED = 2_000


@dataclass(frozen=True)
class SpecCost:
    """What specialising the ops of one generic kernel costs and gains (Cortex-M7,
    measured), declared by the lowering whose ops it specialises."""

    kernel: str  # the generic kernel the specialised ops stand in for
    gain_per_output: int  # instructions saved per output value, lower bound
    spec_bytes: int  # ROM of one specialised op (the rule's figure: see the docstring)
    generic_bytes: int  # ROM of the generic kernel a model links when one op uses it


def check_mode(mode: str) -> str:
    if mode not in SPECIALIZE_MODES:
        raise NnoptError(f"unknown --specialize mode {mode!r}",
                         hint="use one of: " + ", ".join(SPECIALIZE_MODES))
    return mode


@dataclass(frozen=True)
class Candidate:
    """An op that has a specialised form: its index, output values and its kernel's
    :class:`SpecCost`; ``gain_per_output`` when the op's own estimate replaces the
    kernel's (a fully connected op whose weights take the row-pair layout:
    :func:`nnopt.lowering.fc.fc_gain_per_output`)."""

    op_index: int
    outputs: int
    cost: SpecCost
    gain_per_output: int | None = None


def choose(mode: str, candidates: Sequence[Candidate]) -> frozenset[int]:
    """The ops of one model that get a specialised function under ``mode``."""
    if check_mode(mode) == "off":
        return frozenset()
    if mode == "force":
        return frozenset(c.op_index for c in candidates)
    by_kernel: dict[SpecCost, list[Candidate]] = {}
    for c in candidates:
        by_kernel.setdefault(c.cost, []).append(c)
    chosen: set[int] = set()
    for fam, mine in by_kernel.items():
        big = {c.op_index for c in mine
               if c.outputs * (c.gain_per_output or fam.gain_per_output) >= MIN_SAVED}
        small = [c.op_index for c in mine if c.op_index not in big]
        if small and len(small) * fam.spec_bytes < fam.generic_bytes:
            big.update(small)  # cheaper than linking the generic kernel for them
        chosen |= big
    return frozenset(chosen)


def spec_symbol(model: str, op_index: int) -> str:
    """Name of op ``op_index``'s specialised entry (its helpers add a suffix)."""
    return f"{model}_spec_op{op_index}"


#: NNRT_GEMM_RQ_LAST (internal/gemm.h): in the rsh word of the last channel pair's
#: second channel, the end of the assembly pair loop.
RQ_LAST = 0x100


def fold_channel(mult: int, shift: int, offset: int) -> tuple[int, int, int] | None:
    """One channel's (multiplier, addend, rsh) in the folded fast form of
    ``nnrt_rq_fold()`` (internal/requant.h): shifts -31..-3, addend = 2^(rsh-1) +
    (offset << rsh) within [-2^30, 2^30] (the high word of the 64-bit sum, at most 2^30
    in magnitude, plus the addend must not overflow); None outside it."""
    if not -31 <= shift <= -3:
        return None
    rsh = -shift - 1
    addend = (1 << (rsh - 1)) + (offset << rsh)
    if not -(1 << 30) <= addend <= (1 << 30):
        return None
    return mult, addend, rsh


def gemm_records(biases: Sequence[int], mults: Sequence[int], shifts: Sequence[int],
                 offset: int, constant: Sequence[int | None]) -> list[int] | None:
    """The channel records of a specialised matrix core (internal/gemm.h: per channel
    pair both biases, then multiplier, addend and rsh of each channel), or None when a
    channel has no folded form. ``constant[c]``: channel c's output byte when it is the
    same for every accumulator the op can reach (then multiplier 0, the byte as the
    offset: exact for any accumulator), else None. ``mults`` / ``shifts``: one per
    channel."""
    folded: list[tuple[int, int, int]] = []
    for m, s, v in zip(mults, shifts, constant, strict=True):
        f = fold_channel(0, -3, v) if v is not None else fold_channel(m, s, offset)
        if f is None:
            return None
        folded.append(f)
    words: list[int] = []
    n = len(folded)
    for c in range(0, n, 2):
        if c + 1 < n:
            words += [biases[c], biases[c + 1], *folded[c], *folded[c + 1]]
        else:
            words += [biases[c], 0, *folded[c]]
    if n >= 2:
        words[8 * (n // 2) - 1] |= RQ_LAST
    return words


def constant_outputs(weights: np.ndarray, biases: Sequence[int], mults: Sequence[int],
                     shifts: Sequence[int], z_in: int, z_out: int, lo: int, hi: int
                     ) -> list[int | None]:
    """Per output channel of a one-group int8 conv (``weights``: [channels, depth]): its
    output byte when TFLM's requantisation gives the same byte for every accumulator
    the op can reach, else None. The reachable accumulators lie between the bias plus,
    per weight, the smaller (larger) of w * (x - z_in) over int8 x (a padding tap adds
    w * 0, inside that range); the requantisation is monotonic in the accumulator, so
    its two ends decide (vww_96_int8 has hundreds of channels with a tiny multiplier
    whose shift leaves no room for the output offset in the addend, all constant)."""
    from .activation import multiply_by_quantized_multiplier

    w = np.asarray(weights, dtype=np.int64)
    b = np.asarray(biases, dtype=np.int64)
    v_lo, v_hi = -128 - z_in, 127 - z_in
    acc_lo = b + np.minimum(w * v_lo, w * v_hi).sum(axis=1)
    acc_hi = b + np.maximum(w * v_lo, w * v_hi).sum(axis=1)
    out: list[int | None] = []
    for c in range(w.shape[0]):
        if acc_lo[c] < -(1 << 31) or acc_hi[c] >= (1 << 31):
            out.append(None)  # int32 wraps: not TFLM's arithmetic any more
            continue
        ends = multiply_by_quantized_multiplier(np.array([acc_lo[c], acc_hi[c]]), mults[c],
                                                shifts[c]) + z_out
        a, z = (int(v) for v in np.clip(ends, lo, hi))
        out.append(a if a == z else None)
    return out


def records_for(weights: np.ndarray, biases: Sequence[int], mults: Sequence[int],
                shifts: Sequence[int], z_in: int, z_out: int, lo: int, hi: int
                ) -> list[int] | None:
    """:func:`gemm_records` of a one-group int8 conv with constant weights ([channels,
    depth]) and biases, one multiplier and shift per channel: a channel outside the
    folded form is stored as its constant output where it has one
    (:func:`constant_outputs`)."""
    fast = [fold_channel(m, s, z_out) is not None for m, s in zip(mults, shifts, strict=True)]
    constant: list[int | None] = [None] * len(fast)
    if not all(fast):
        constant = [None if f else v for v, f in zip(
            constant_outputs(weights, biases, mults, shifts, z_in, z_out, lo, hi), fast,
            strict=True)]
    return gemm_records(biases, mults, shifts, z_out, constant)


@dataclass(frozen=True)
class ConvGemmSpec:
    """What the specialised matrix-core convolution of one op needs: its bias,
    multiplier and shift arrays, or (records_ident) its channel records instead."""

    op_index: int
    model: str
    params: Params  # the op's `nnrt_conv_s8_params_t`, declared as params_name
    params_name: str
    depth: int
    channels: int
    filter_ident: str
    bias_ident: str | None
    mult_ident: str
    shift_ident: str
    per_channel: bool
    output_offset: int
    act_min: int
    act_max: int
    shifts: Sequence[int]
    records_ident: str | None = None


@dataclass(frozen=True)
class SpecNames:
    """The symbols of a specialised convolution: its constant matrix core, its
    pixel-pair function (any sub-view, through ``nnrt_spec_conv_gemm_s8``) and its
    whole-op entry."""

    core: str
    px2: str
    entry: str


def core_symbol(op_index: int) -> str:
    """The constant ``nnrt_gemm_s8_t`` of a specialised convolution."""
    return f"op{op_index}_core"


def pair_symbol(model: str, op_index: int) -> str:
    """The pixel-pair function of a specialised convolution (callable on sub-views
    through ``nnrt_spec_conv_gemm_s8``)."""
    return f"{spec_symbol(model, op_index)}_2px"


@dataclass(frozen=True)
class FcSpec:
    """What the specialised int8 fully connected op of one op needs (nnrt/kernels/spec.h):
    its parameters, weights and bias arrays and shifts; ``pairs_depth``: the weights are
    in the row-pair layout (``nnrt_fc_pairs_body()``, with an input buffer of that many
    int16 on the function's stack)."""

    op_index: int
    model: str
    params: Params  # the op's `nnrt_fc_s8_params_t`, declared as params_name
    params_name: str
    weights_ident: str
    bias_ident: str | None
    shifts: Sequence[int]
    pairs_depth: int | None = None


SpecDecl: TypeAlias = ConvGemmSpec | FcSpec
"""A specialised function as data: what a lowering gives ``EmitContext.decl``; code
generation writes it (:func:`nnopt.codegen.spec.render_spec`)."""


def specialized_symbols(exe: Path, model: str) -> dict[str, int]:
    """Sizes of the ``<model>_spec_*`` functions (and their GCC clones) in an ELF."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    prefix = f"{model}_spec_"
    out: dict[str, int] = {}
    with exe.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        if not isinstance(symtab, SymbolTableSection):
            return out
        for sym in symtab.iter_symbols():
            if (sym.name.startswith(prefix) and sym["st_info"]["type"] == "STT_FUNC"
                    and sym["st_size"]):
                out[sym.name] = int(sym["st_size"])
    return out


def specialized_rom_bytes(exe: Path, model: str) -> int:
    """ROM of the specialised functions of ``model`` in a linked ELF (symbol sizes)."""
    return sum(specialized_symbols(exe, model).values())

