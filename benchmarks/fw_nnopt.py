"""nnopt's side of bench_firmware.py: plan a model for a core's board, build and run its
firmware under QEMU, and read instructions, ROM, RAM, runtime code and the model's
constant data from the ELF and its link map."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from fw_rows import BENCH_CORES, M3_BOARD, M7_BOARD, CoreFigures, Row
from oracle import Oracle, compare_outputs

from nnopt.arith import out_size_and_padding
from nnopt.boards import Board, load_board
from nnopt.elfcheck import check_elf
from nnopt.errors import BudgetError, NnoptError
from nnopt.firmware.linker import check_firmware_budget, firmware_arena_budget
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ir import ConvOptions, Graph
from nnopt.lowering.specialize import specialized_symbols
from nnopt.memory_budget import check_budget
from nnopt.passes.regions import op_macs
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.runner import run_planned


def count_macs(g: Graph, ops: list[int] | None = None) -> int:
    """Multiply-accumulates of the conv, depthwise and FC ops (all, or those in ``ops``),
    and of any other op whose definition counts them (TRANSPOSE_CONV ...)."""
    macs = 0
    for op in g.ops:
        if ops is not None and op.index not in ops:
            continue
        if op.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            macs += op_macs(g, op)
            continue
        w = g.tensors[op.inputs[1]]
        y = g.tensors[op.outputs[0]]
        out = y.num_elements
        o = op.options
        if isinstance(o, ConvOptions) and o.fused_max_pool is not None:
            # The conv output before the fused pool.
            x = g.tensors[op.inputs[0]]
            oh, _ = out_size_and_padding(o.padding, x.shape[1], w.shape[1], o.stride_h,
                                         o.dilation_h)
            ow, _ = out_size_and_padding(o.padding, x.shape[2], w.shape[2], o.stride_w,
                                         o.dilation_w)
            out = y.shape[0] * oh * ow * y.shape[3]
        if op.opcode == "CONV_2D":
            macs += out * w.shape[1] * w.shape[2] * w.shape[3]
        elif op.opcode == "DEPTHWISE_CONV_2D":
            macs += out * w.shape[1] * w.shape[2]
        else:
            macs += out * w.shape[-1]
    return macs


# ----- link map: what the runtime library contributes -----

_MAP_LINE = re.compile(r"^\s*(\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$")


def library_rom(map_file: Path, library: str = "libnnrt.a") -> tuple[int, dict[str, int]]:
    """Bytes of .text*/.rodata* input sections taken from ``library`` in a GNU ld map,
    and the size per input section name (``.text.nnrt_conv2d_s8`` -> size)."""
    total = 0
    per: dict[str, int] = {}
    pending: str | None = None
    in_map = False
    for line in map_file.read_text(errors="replace").splitlines():
        if line.startswith("Linker script and memory map"):
            in_map = True
            continue
        if not in_map:
            continue
        stripped = line.strip()
        if stripped.startswith((".text", ".rodata")) and len(stripped.split()) == 1:
            pending = stripped  # long section name: address and size on the next line
            continue
        m = _MAP_LINE.match(line)
        if m is None:
            pending = None
            continue
        name = m.group(1) or pending
        pending = None
        if name is None or not name.startswith((".text", ".rodata")):
            continue
        if f"{library}(" not in m.group(4):
            continue
        size = int(m.group(3), 16)
        if size:
            total += size
            per[name] = per.get(name, 0) + size
    return total, per


def model_const_bytes(exe: Path, model: str) -> int:
    """ROM of the model's constant data: weights (w<k>) and per-op arrays and params."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    total = 0
    with exe.open("rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        if not isinstance(symtab, SymbolTableSection):
            return 0
        for sym in symtab.iter_symbols():
            name = sym.name
            if sym["st_info"]["type"] != "STT_OBJECT" or not sym["st_size"]:
                continue
            if (re.fullmatch(r"w\d+", name) or re.fullmatch(r"op\d+_\w+", name)
                    or re.fullmatch(r"params(\.\d+)?", name) or re.fullmatch(r"pool(\.\d+)?",
                                                                              name)
                    or name.startswith(f"{model}_")) and not name.endswith("_arena"):
                total += sym["st_size"]
    return total


# ----- nnopt -----

def _plan(data: bytes, name: str, board: Board, opts: PlanOptions | None = None,
          specialize: str = "auto") -> PlannedModel:
    """The plan of the firmware: the board's budget, or ``opts`` (their own budget, if
    any) built for ``board``; kernels specialised to the model per ``specialize``."""
    g = load_model_bytes(data, name=name)
    pm = plan_model(g, _options(board, opts, specialize), source_bytes=data)
    check_budget(pm.plan, board)
    return pm


def _options(board: Board, opts: PlanOptions | None, specialize: str) -> PlanOptions:
    """The plan options of :func:`_plan`."""
    return replace(opts, specialize=specialize) if opts else PlanOptions(
        board=board, specialize=specialize)


def _first_line(err: BaseException) -> str:
    msg = err.message if isinstance(err, NnoptError) else str(err)
    return (msg.strip().splitlines() or [type(err).__name__])[0][:200]


def _measure_nnopt(row: Row, pm: PlannedModel, inputs: list[bytes], data: bytes, tmp: Path,
                   *, m3: bool, specialize: str) -> tuple[list[bytes], list[bytes] | None]:
    """Fill ``row`` with nnopt's firmware figures; return its outputs on the M7 and
    (``m3``) on the M3 firmware."""
    m7 = load_board(M7_BOARD)
    res = run_planned(pm, inputs, target="qemu-m7", board=m7, workdir=tmp / "m7")
    row.instructions = res.instructions
    assert res.executable is not None
    report = check_elf(res.executable, m7)
    row.rom_bytes = report.rom_used
    stack = sum(s.size for s in report.sections if s.category == "stack")
    row.stack_reserved = stack
    row.ram_bytes = report.ram_used - stack
    map_file = res.executable.parent / "firmware.map"
    if map_file.is_file():
        row.runtime_code_bytes, per = library_rom(map_file)
        row.kernel_symbols = dict(sorted(per.items(), key=lambda kv: -kv[1]))
    row.model_const_bytes = model_const_bytes(res.executable, pm.plan.model)
    row.specialized_symbols = specialized_symbols(res.executable, pm.plan.model)
    row.specialized_rom_bytes = sum(row.specialized_symbols.values())
    row.code_bytes = row.rom_bytes - row.model_const_bytes
    if m3:
        board3 = load_board(M3_BOARD)
        pm3 = _plan(data, pm.plan.model, board3, specialize=specialize)
        res3 = run_planned(pm3, inputs, target="qemu-m3", board=board3, workdir=tmp / "m3")
        row.m3_instructions = res3.instructions
        return list(res.outputs), list(res3.outputs)
    return list(res.outputs), None


def measure_core(core: str, data: bytes, name: str, inputs: list[bytes],
                 expected: Oracle | None, tmp: Path, specialize: str,
                 base: PlanOptions | None = None) -> CoreFigures:
    """nnopt's firmware on ``core`` (BENCH_CORES): planned with the bench's options (as
    the M7 and M3 rows: no tiling or in-place ops unless asked) for the board's SRAM
    less the firmware's stack, run on the board's QEMU machine; a model that does not
    fit the board gets the budget error."""
    spec = BENCH_CORES[core]
    board = load_board(spec.board)
    out = CoreFigures(board=spec.board)
    try:
        pm = _plan(data, name, board, replace(base or PlanOptions(), board=board,
                                              sram=firmware_arena_budget(board)),
                   specialize)
        check_firmware_budget(pm.plan, board)
    except BudgetError as err:
        out.error = f"does not fit {spec.board}: {_first_line(err)}"
        return out
    except NnoptError as err:
        out.error = _first_line(err)
        return out
    out.arena_bytes = pm.plan.arena_bytes
    try:
        res = run_planned(pm, inputs, target=spec.target, board=board, workdir=tmp)
    except NnoptError as err:
        out.error = _first_line(err)
        return out
    out.instructions = res.instructions
    assert res.executable is not None
    report = check_elf(res.executable, board)
    stack = sum(s.size for s in report.sections if s.category == "stack")
    out.rom_bytes, out.ram_bytes = report.rom_used, report.ram_used - stack
    if expected is not None:
        diff = compare_outputs(list(res.outputs), expected)
        out.bit_exact = diff is None
        if diff is not None:
            out.error = f"output differs from the interpreter's: {diff}"
    return out
