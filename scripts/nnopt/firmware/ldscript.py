"""``python -m nnopt.firmware.ldscript BOARD``: the board's GNU ld script (emulated
addresses, :func:`nnopt.firmware.linker.linker_script`) on stdout, for plain builds of
bare-metal firmware (modules/nnrt/nnrt.mk, the CMake package's ``nnrt_firmware``)."""

from __future__ import annotations

import sys

from ..boards import load_board
from ..errors import NnoptError
from .linker import linker_script


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m nnopt.firmware.ldscript BOARD", file=sys.stderr)
        return 1
    try:
        sys.stdout.write(linker_script(load_board(args[0])))
    except NnoptError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
