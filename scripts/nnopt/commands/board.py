"""``nnopt board``: a board's memory budget (its regions), from nnopt's board files or a
Zephyr devicetree."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..devicetree import board_data, budget_table
from ..errors import NnoptError
from .common import add_edt_argument, board_arg

DESCRIPTION = """\
Print the memory regions of a board: the arena's region (its size is the SRAM budget
of `nnopt optimize --board`), flash and the other RAMs (DTCM, ITCM, CCM, the
devicetree's zephyr,memory-region nodes). NAME is one of nnopt's boards
(boards/nnopt/*.yaml) or, when ZEPHYR_BASE or NNOPT_ZEPHYR_WORKSPACE names a Zephyr
tree, any Zephyr board target, read from its devicetree (cached under
~/.cache/nnopt/boards). With --edt, the devicetree of a Zephyr build (what
nnopt_add_model() plans against)."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("board", help="a board's memory budget (regions) and CPU",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", metavar="NAME", help="nnopt board or Zephyr board target")
    p.add_argument("-b", "--board", metavar="NAME", help="the same as NAME")
    add_edt_argument(p)
    p.add_argument("--json", action="store_true", help="print the board data as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.name:
        if args.board and args.board != args.name:
            raise NnoptError(f"two boards given: {args.name} and --board {args.board}",
                             hint="name the board once")
        args.board = args.name
    board = board_arg(args)
    if board is None:
        raise NnoptError("no board given", hint="nnopt board NAME (e.g. nucleo_f767zi, or "
                         "nrf52840dk/nrf52840 with ZEPHYR_BASE set), or --edt EDT_PICKLE")
    print(json.dumps(board_data(board), indent=2) if args.json else budget_table(board))
    return 0
