"""``nnopt check-elf``: ROM/RAM use of a linked firmware against a board's budget."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..elfcheck import check_elf, format_report
from ..errors import EXIT_OVER_BUDGET, NnoptError, UsageError
from .common import add_edt_argument, board_arg

DESCRIPTION = """\
Read a linked firmware ELF (pyelftools) and report, for every memory region of the
board, what uses it: code, read-only data, weights and the .data load image in flash;
data, bss, arena, noinit, stack and heap in RAM; and the largest symbols. Works on
ELFs linked for the real part (e.g. build/zephyr/zephyr.elf) and on nnopt's QEMU
firmware (the board's emulated addresses); the address map is detected."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("check-elf", help="ROM/RAM of a firmware ELF against the board budget",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("firmware", type=Path, metavar="FIRMWARE.elf", help="the linked ELF")
    p.add_argument("-b", "--board", metavar="NAME",
                   help="board whose memory budget applies (e.g. nucleo_f767zi, or any "
                   "Zephyr board target when ZEPHYR_BASE names a Zephyr tree)")
    add_edt_argument(p)
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the report as JSON")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="how many of the largest symbols to list (default 10)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.top < 0:
        raise UsageError(f"--top must be 0 or more, not {args.top}")
    board = board_arg(args)
    if board is None:
        raise UsageError("no board given", hint="pass --board NAME or --edt "
                         "<build>/zephyr/edt.pickle")
    report = check_elf(args.firmware, board)
    print(format_report(report, top=args.top))
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n")
        except OSError as err:
            raise NnoptError(f"cannot write {args.json}: {err.strerror or err}") from err
    return EXIT_OVER_BUDGET if report.over_budget else 0
