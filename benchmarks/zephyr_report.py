"""The results of ``benchmarks/bench_zephyr.py`` and how they are written: one
:class:`Row` per model holding a :class:`Side` per side, the one-line summary of a side,
the Markdown table with its notes and the JSON document."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from oracle import SEED
from zephyr_setup import NNOPT_BOARD, QEMU_MACHINE, ZEPHYR_BOARD, Setup

from nnopt.firmware.qemu import INSTRUCTIONS_PER_TICK
from nnopt.paths import repo_root

#: The sides of a row: nnopt, then TFLM's two kernel variants (tflm_firmware.VARIANTS).
SIDES = ("nnopt", "cmsis_nn", "ref")
LABELS = {"nnopt": "nnopt", "cmsis_nn": "TFLM CMSIS-NN", "ref": "TFLM ref"}

@dataclass
class Side:
    """One side's figures for one model (``error``: why some are missing)."""

    instructions: int | None = None  # the first invocation
    instructions_total: int | None = None
    cycles: int | None = None
    rom_bytes: int | None = None
    ram_bytes: int | None = None
    arena_bytes: int | None = None  # nnopt's planned arena / TFLM's linked arena
    arena_used_bytes: int | None = None  # TFLM: arena_used_bytes() after AllocateTensors
    stack_bytes: int | None = None  # main thread, measured
    bit_exact: bool | None = None
    error: str | None = None
    build_dir: str | None = None
    build_seconds: float = 0.0
    run_seconds: float = 0.0


@dataclass
class Row:
    model: str
    path: str
    invocations: int = 1
    sides: dict[str, Side] = field(default_factory=dict)
    ratio_cmsis_nn: float | None = None  # nnopt / TFLM CMSIS-NN instructions
    ratio_ref: float | None = None


def summary(side: Side) -> str:
    if side.instructions is None:
        return f"FAILED: {side.error}"
    exact = {True: "bit-exact", False: "NOT bit-exact", None: "not compared"}[side.bit_exact]
    return (f"{side.instructions:,} instructions, {exact}, ROM {side.rom_bytes:,} B, RAM "
            f"{side.ram_bytes:,} B (build {side.build_seconds:.0f} s, run "
            f"{side.run_seconds:.0f} s)")


def _n(x: int | None) -> str:
    return "-" if x is None else f"{x:,}"


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _exact(x: bool | None) -> str:
    return "-" if x is None else ("yes" if x else "**no**")


TFLM_BUILD_NOTES = {
    "release": "TFLM built by Zephyr's tflite-micro module with TFLM's release defines "
               "(NDEBUG, TF_LITE_STRIP_ERROR_STRINGS; not TF_LITE_STATIC_MEMORY, which "
               "the module's sources do not build with).",
    "zephyr": "TFLM built by Zephyr's tflite-micro module as it is (no NDEBUG: TFLM's "
              "DCHECKs on; no TF_LITE_STATIC_MEMORY).",
}


def setup_notes(setup: Setup | None) -> str:
    """How the run built TFLM, nnopt's plan and the libc (the defaults without a setup)."""
    build = setup.tflm_build if setup else "release"
    opts = setup.nnopt_options if setup else ()
    libc = setup.picolibc_buildtype if setup else ""
    return (TFLM_BUILD_NOTES[build] + " nnopt: "
            + (f"nnopt_add_model(... OPTIONS {shlex.join(opts)})." if opts
               else "the plan nnopt_add_model() makes (`nnopt optimize --board mps2_an500`).")
            + " libc: the toolchain's picolibc, "
            + (f"its {libc} build linked (--picolibc-buildtype={libc})." if libc
               else "the build Zephyr links (--specs=picolibc.specs)."))


def markdown(rows: list[Row], sides: Sequence[str] = SIDES,
             setup: Setup | None = None) -> list[str]:
    """The table (one row per model) and its notes."""
    def get(r: Row, s: str) -> Side:
        return r.sides.get(s) or Side()

    def trio(r: Row, fmt: Callable[[Side], str]) -> str:
        return " / ".join(fmt(get(r, s)) for s in sides)

    names = " / ".join(LABELS[s] for s in sides)
    out = [
        f"| model | {' | '.join(LABELS[s] + ' instr' for s in sides)} | nnopt / CMSIS-NN | "
        f"nnopt / ref | bit-exact ¹ {names} | ROM {names} | RAM ² {names} | "
        f"arena ³ {names} | notes |",
        "|---|" + "---:|" * len(sides) + "---:|---:|---|---:|---:|---:|---|",
    ]
    for r in rows:
        notes = "; ".join(f"{LABELS[s]}: {get(r, s).error}".replace("|", "/")
                          for s in sides if get(r, s).error)
        if r.invocations > 1:
            notes = "; ".join(x for x in (f"{r.invocations} invocations, the first timed",
                                          notes) if x)
        out.append(
            f"| {r.model} | {' | '.join(_n(get(r, s).instructions) for s in sides)} | "
            f"{_f(r.ratio_cmsis_nn)} | {_f(r.ratio_ref)} | "
            f"{trio(r, lambda x: _exact(x.bit_exact))} | "
            f"{trio(r, lambda x: _n(x.rom_bytes))} | {trio(r, lambda x: _n(x.ram_bytes))} | "
            f"{trio(r, lambda x: _n(x.arena_bytes))} | {notes} |")
    out += [
        "",
        "Instructions per inference (the first): `k_cycle_get_32()` around invoke() / "
        "Invoke() in Zephyr applications on mps2/an500/qemu, under QEMU -icount shift=0 "
        "(SysTick at 25 MHz: 40 instructions per cycle, the counts' resolution). "
        "¹ outputs byte-identical with the tflite-micro Python interpreter's, every "
        "invocation. ² `nnopt.elfcheck` on zephyr.elf (board mps2_an500): data + bss + "
        "noinit, the kernel's stacks included (16 KB main, 2 KB interrupt on every side). "
        "³ nnopt's planned arena; TFLM's static arena, the smallest (in 16-byte steps) "
        "that allocates on the target. " + setup_notes(setup),
    ]
    return out


def document(rows: list[Row], setup: Setup | None) -> dict[str, Any]:
    """The JSON document: the rows and the run's setup."""
    commit = subprocess.run(["git", "-C", os.fspath(repo_root()), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    per = INSTRUCTIONS_PER_TICK[QEMU_MACHINE]
    return {"zephyr_board": ZEPHYR_BOARD, "nnopt_board": NNOPT_BOARD,
            "zephyr": setup.version if setup else None, "commit": commit or None,
            "tflm_build": setup.tflm_build if setup else None,
            "nnopt_options": list(setup.nnopt_options) if setup else None,
            "picolibc_buildtype": (setup.picolibc_buildtype or "default") if setup else None,
            "modules": [os.fspath(m) for m in setup.modules] if setup else None,
            "seed": SEED, "counter": "k_cycle_get_32 (Cortex-M SysTick), QEMU -icount shift=0",
            "instructions_per_cycle": per, "resolution_instructions": per,
            "rows": [asdict(r) for r in rows]}


def write_json(rows: list[Row], setup: Setup | None, dest: Path) -> None:
    dest.write_text(json.dumps(document(rows, setup), indent=1) + "\n")


def rows_error(rows: list[Row], model: str, side: str) -> str:
    return next((r.sides[side].error or "" for r in rows if r.model == model), "")
