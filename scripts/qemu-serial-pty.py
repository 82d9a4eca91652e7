#!/usr/bin/env python3
"""Twister's device-testing path on QEMU: a ``--device-serial-pty`` script that boots the
board's QEMU (no flashing) on the build being tested, so the serial harnesses a real
board's run relies on (console regexes, ztest results) are exercised here.

    $ZEPHYR_BASE/scripts/twister --device-testing -p mps2/an385 -T samples -j 1 \\
        --outdir OUT --device-serial-pty "scripts/qemu-serial-pty.py,--outdir,OUT"

How Twister runs a device (Zephyr's scripts/pylib/twister/twisterlib/handlers.py,
DeviceHandler.handle): it starts the ``--device-serial-pty`` command with a pseudo
terminal as its stdin/stdout/stderr and no word of which build it is for, opens the
terminal's other side, starts the thread that reads it (``monitor_serial``, which
creates ``<build dir>/handler.log``), then runs the flash command. So this script waits
for the ``handler.log`` written after it started -- the build being tested, as Twister
tests one device at a time -- and runs that build's ``run`` target (Zephyr's QEMU
command, cmake/emu/qemu.cmake, serial on stdio, i.e. the terminal). Twister stops it
(and QEMU, its child) when the harness is done (handlers.py terminate_process).

The flash command: without ``--west-flash`` and a hardware map ``runner``, Twister runs
``<generator> -C <build dir> flash`` (DeviceHandler._create_command). In a Zephyr tree
outside a west workspace (../shared/zephyr/make-workspace.sh), cmake/modules/west.cmake
finds no west topdir and sets WEST to WEST-NOTFOUND, and the ``flash`` target is then an
``echo`` (cmake/flash/CMakeLists.txt) that succeeds: nothing is flashed. In a west
workspace the target runs ``west flash``, which a QEMU board has no runner for; run
Twister from a tree without ``.west`` there, or give the board a flash runner.

Exit status 1 (a message on the terminal, so in Twister's handler.log) when no test
starts within --timeout seconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

#: Folders of a build directory that never hold a test's build directory.
_SKIP = {"zephyr", "CMakeFiles", "modules", "Kconfig", "app", "nnopt"}


def fresh_handler_logs(outdir: Path, since: float) -> list[tuple[float, Path]]:
    """(mtime, path) of every ``handler.log`` under ``outdir`` written at or after
    ``since``; build directories (a ``build.ninja`` or ``Makefile``) are not descended."""
    found: list[tuple[float, Path]] = []
    for root, dirs, files in os.walk(outdir):
        if "handler.log" in files:
            log = Path(root) / "handler.log"
            try:
                mtime = log.stat().st_mtime
            except OSError:
                mtime = 0.0
            if mtime >= since:
                found.append((mtime, log))
        if "build.ninja" in files or "Makefile" in files:
            dirs[:] = []
        else:
            dirs[:] = [d for d in dirs if d not in _SKIP]
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--outdir", type=Path, required=True,
                   help="Twister's --outdir (where the test's build directory is)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds to wait for Twister to start reading the terminal")
    args = p.parse_args(argv)
    since = time.time() - 2.0  # file-system time stamps may lag the clock a little
    deadline = time.monotonic() + args.timeout
    build: Path | None = None
    while time.monotonic() < deadline:
        fresh = fresh_handler_logs(args.outdir, since) if args.outdir.is_dir() else []
        if fresh:
            build = max(fresh)[1].parent
            break
        time.sleep(0.2)
    if build is None:
        print(f"qemu-serial-pty: no test started under {args.outdir} in {args.timeout:g} s "
              "(no fresh handler.log)", file=sys.stderr, flush=True)
        return 1
    ninja = shutil.which("ninja")
    if (build / "build.ninja").is_file() and ninja:
        cmd = [ninja, "-C", os.fspath(build), "run"]
    else:
        cmd = ["make", "-C", os.fspath(build), "run"]
    print(f"qemu-serial-pty: {' '.join(cmd)}", file=sys.stderr, flush=True)
    os.execvp(cmd[0], cmd)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
