"""``bench_firmware.py --profile MODEL``: instructions per operator of nnopt's firmware
(the generated code built with NNRT_TRACE and a harness that reads the instruction
counter after every operator), with MACs and instructions per MAC."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from fw_nnopt import _plan, count_macs
from fw_rows import M3_BOARD, M7_BOARD

from nnopt.boards import load_board
from nnopt.driver import generate
from nnopt.firmware.toolchain import BuildSpec, Target, build, run
from nnopt.planner import PlanOptions
from nnopt.runner import build_runtime

PROFILE_MAIN_C = r"""
/* bench_firmware.py --profile: instructions per operator (NNRT_TRACE hook). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnrt/model.h"
#include "nnrt/port.h"

extern const nnrt_model_t NNRT_HARNESS_MODEL;

static uint64_t last;

static void put_u64(char *buf, size_t *n, uint64_t v)
{
    char d[21];
    size_t k = 0;
    do {
        d[k++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    while (k > 0) {
        buf[(*n)++] = d[--k];
    }
}

void nnrt_trace_tensor(uint32_t tensor, const void *data, size_t bytes)
{
    char line[64];
    size_t n = 0;
    uint64_t now = nnrt_port_counter();
    (void)data;
    (void)bytes;
    memcpy(line, "op-tensor ", 10);
    n = 10;
    put_u64(line, &n, tensor);
    line[n++] = ' ';
    put_u64(line, &n, now - last);
    line[n] = '\0';
    nnrt_port_log(line);
    last = nnrt_port_counter();
}

int main(void)
{
    uint32_t seed = 12345u;
    for (uint32_t i = 0; i < NNRT_HARNESS_MODEL.n_inputs; ++i) {
        uint8_t *p = (uint8_t *)NNRT_HARNESS_MODEL.input(i);
        for (size_t k = 0; k < NNRT_HARNESS_MODEL.inputs[i].bytes; ++k) {
            seed = seed * 1664525u + 1013904223u;
            p[k] = (uint8_t)(seed >> 24);
        }
    }
    last = nnrt_port_counter();
    return NNRT_HARNESS_MODEL.invoke() == NNRT_OK ? 0 : 5;
}
"""


def profile(path: Path, target: Target, opts: PlanOptions | None = None,
            specialize: str = "auto", board_name: str | None = None) -> int:
    """Instructions per op on ``board_name`` (default: the M7's or the M3's board, by
    ``target``); ``opts``: plan with these options (default: the board's)."""
    board = load_board(board_name or (M7_BOARD if target == "qemu-m7" else M3_BOARD))
    pm = _plan(path.read_bytes(), path.stem, board, opts, specialize)
    g = pm.graph
    with tempfile.TemporaryDirectory(prefix="bench-prof-") as tmp:
        gen = generate(pm, Path(tmp)).sources
        main_c = Path(tmp) / "profile_main.c"
        main_c.write_text(PROFILE_MAIN_C)
        lib = build_runtime(target, board=board)
        exe = build(BuildSpec(target=target, sources=(gen.c_file, main_c),
                              include_dirs=(Path(tmp),), board=board, libraries=(lib,),
                              defines={"NNRT_HARNESS_MODEL": gen.symbol,
                                       "NNRT_TRACE": "1"}))
        res = run(exe, target, [], board=board)
    if res.exit_code != 0:
        print(res.stdout + res.stderr, file=sys.stderr)
        return 1
    per_tensor: dict[int, int] = {}
    for m in re.finditer(r"op-tensor (\d+) (\d+)", res.stdout):
        per_tensor.setdefault(int(m.group(1)), int(m.group(2)))
    total = 0
    kind = {e.op: e.kind for e in pm.plan.inplace_ops}
    staged: dict[int, list[int]] = {}  # last op of a stage -> its ops (traced together)
    for n_st, st in enumerate(pm.plan.stages):
        staged[st.ops[-1]] = list(st.ops)
        for i in st.ops:
            kind[i] = f"stage {n_st} {st.grid[0]}x{st.grid[1]}"
    print(f"plan: arena {pm.plan.arena_bytes:,} B, options {pm.plan.options}")
    print("| op | opcode | below the bound | input | weights | output | MACs | instructions "
          "| instr/MAC |")
    print("|---:|---|---|---|---|---|---:|---:|---:|")
    for idx in pm.plan.schedule:
        op = g.op_by_index[idx]
        n = per_tensor.get(op.outputs[0], 0)
        total += n
        macs = count_macs(g, staged.get(idx, [idx]))  # a stage: all its ops' MACs
        x = g.tensors[op.inputs[0]].shape if op.inputs and op.inputs[0] >= 0 else ()
        w = (g.tensors[op.inputs[1]].shape if len(op.inputs) > 1 and op.inputs[1] >= 0
             and g.tensors[op.inputs[1]].is_constant else ())
        y = g.tensors[op.outputs[0]].shape
        ipm = f"{n / macs:.2f}" if macs else ""
        print(f"| {idx} | {op.opcode} | {kind.get(idx, '')} | {list(x)} | "
              f"{list(w) if w else ''} | {list(y)} | "
              f"{macs:,} | {n:,} | {ipm} |")
    where = target if board_name is None else f"{target}, {board.name}"
    print(f"\ntotal {total:,} instructions ({where}), {count_macs(g):,} MACs")
    return 0
