"""Instructions per function of nnopt's firmware, one run on QEMU (issue 42: where the
instructions go, per operator with ``bench_firmware.py --profile``, per function here).

The firmware of ``bench_firmware.py --profile`` (the generated code and the harness that
runs one inference) runs under QEMU with ``-d exec,nochain,in_asm``: QEMU logs each
translation block's instructions once (``IN: <function>``) and each of its executions
(``Trace``, the block's host address), so the executions times the block's length,
summed by the function QEMU names, count every retired instruction (the harness's
start-up and stack painting included, listed apart). Blocks QEMU rewinds for ``-icount``
count whole: a few instructions more than ``--profile`` reports.

    python benchmarks/fw_functions.py MODEL.tflite [--board nucleo_f767zi] [--top 40]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from fw_nnopt import _plan
from fw_profile import PROFILE_MAIN_C
from fw_rows import M7_BOARD

from nnopt.boards import load_board
from nnopt.driver import generate
from nnopt.firmware.qemu import qemu_command
from nnopt.firmware.toolchain import BuildSpec, build
from nnopt.runner import build_runtime

_INSN = re.compile(r"^0x[0-9a-f]+:\s")
_TRACE = re.compile(r"^Trace \d+: (0x[0-9a-f]+) ")


def per_function(log: Iterable[str]) -> Counter[str]:
    """Instructions per function of a QEMU ``-d exec,nochain,in_asm`` log."""
    blocks: dict[str, tuple[int, str]] = {}  # host address -> (instructions, function)
    counts: Counter[str] = Counter()
    name, n, fresh = "?", 0, False
    for line in log:
        if line.startswith("IN:"):
            name, n, fresh = line[3:].strip() or "?", 0, True
        elif fresh and _INSN.match(line):
            n += 1
        elif m := _TRACE.match(line):
            if fresh:  # a block runs right after QEMU translates it
                blocks[m.group(1)] = (n, name)
                fresh = False
            size, fn = blocks.get(m.group(1), (0, "?"))
            counts[fn] += size
    return counts


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", type=Path)
    p.add_argument("--board", default=M7_BOARD, help="an nnopt board QEMU emulates "
                   f"(default {M7_BOARD}: the Cortex-M7)")
    p.add_argument("--top", type=int, default=40, help="functions listed (default 40)")
    a = p.parse_args(argv)
    if not a.model.is_file():
        print(f"fw_functions: no model at {a.model}\nhint: give a .tflite file",
              file=sys.stderr)
        return 2
    board = load_board(a.board)
    pm = _plan(a.model.read_bytes(), a.model.stem, board, None, "auto")
    with tempfile.TemporaryDirectory(prefix="bench-fn-") as tmp:
        gen = generate(pm, Path(tmp)).sources
        main_c = Path(tmp) / "profile_main.c"
        main_c.write_text(PROFILE_MAIN_C)
        lib = build_runtime("qemu", board=board)
        exe = build(BuildSpec(target="qemu", sources=(gen.c_file, main_c),
                              include_dirs=(Path(tmp),), board=board, libraries=(lib,),
                              defines={"NNRT_HARNESS_MODEL": gen.symbol, "NNRT_TRACE": "1"}))
        log = Path(tmp) / "qemu.log"
        cmd = qemu_command(exe, board, [])
        at = cmd.index("-kernel")
        cmd[at:at] = ["-d", "exec,nochain,in_asm", "-D", str(log)]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
        if res.returncode != 0:
            print(res.stdout + res.stderr, file=sys.stderr)
            return 1
        with log.open(errors="replace") as f:
            counts = per_function(f)
    total = sum(counts.values())
    print(f"| function | instructions | share |  ({a.model.name}, {board.name}, one run)")
    print("|---|---:|---:|")
    for fn, n in counts.most_common(a.top):
        print(f"| {fn} | {n:,} | {100 * n / total:.1f} % |")
    print(f"\ntotal {total:,} instructions (start-up and harness included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
