"""bench_firmware.py's output: the Markdown tables (per model, per group, the M3, every
core), their notes and footnotes, the geometric means, and the JSON document."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import tflm_firmware
from common import geomean
from fw_cores import core_geomeans, core_markdown, core_rows
from fw_format import _exact, _f, _n, _r
from fw_models import ANCHORS
from fw_rows import BENCH_CORES, M3_BOARD, M7_BOARD, Row
from oracle import SEED


def group_geomeans(rows: list[Row]) -> list[dict[str, Any]]:
    """Per model group (in first-seen order, then all): geometric means of
    ours / TFLM CMSIS-NN and ours / TFLM reference (Cortex-M7, and Cortex-M3:
    ``*_m3_*``) over the rows that have both."""
    groups: list[str] = []
    for r in rows:
        if r.group not in groups:
            groups.append(r.group)
    out = []
    for g in [*groups, "all"]:
        sel = [r for r in rows if g == "all" or r.group == g]
        doc: dict[str, Any] = {"group": g, "models": len(sel)}
        for key, label in (("ratio_cmsis_nn", "cmsis_nn"), ("ratio_ref", "ref"),
                           ("ratio_m3_cmsis_nn", "m3_cmsis_nn"), ("ratio_m3_ref", "m3_ref")):
            vals = [getattr(r, key) for r in sel if getattr(r, key) is not None]
            doc[f"{label}_n"] = len(vals)
            doc[f"geomean_{key}"] = geomean(vals)
        out.append(doc)
    return out


def _tflm_mem(r: Row, variant: str) -> str:
    rom = getattr(r, f"tflm_{variant}_rom_bytes")
    if rom is None:
        return "-"
    return (f"{rom:,} / {_n(getattr(r, f'tflm_{variant}_ram_bytes'))} / "
            f"{_n(getattr(r, f'tflm_{variant}_arena_bytes'))} / "
            f"{_n(getattr(r, f'tflm_{variant}_code_bytes'))}")


def notes(r: Row) -> str:
    """Why a row lacks figures (nnopt's, then each TFLM variant's)."""
    parts = []
    if r.error:
        parts.append(f"nnopt: {r.error}")
    if r.m3_bit_exact is False and r.m3_same_as_tflm_m3:
        parts.append("nnopt M3: differs from the interpreter, identical to TFLM's M3 "
                     "firmware (the M3's libm) ¹⁰")
    for core, variants in (("", ("cmsis_nn", "ref")), (" M3", ("cmsis_nn_m3", "ref_m3"))):
        errs = [(label, getattr(r, f"tflm_{v}_error"))
                for v, label in zip(variants, ("TFLM CMSIS-NN", "TFLM ref"), strict=True)]
        errs = [(label, e) for label, e in errs if e]
        if len(errs) == 2 and errs[0][1] == errs[1][1]:  # the same reason once
            errs = [("TFLM", errs[0][1])]
        parts += [f"{label}{core}: {e}" for label, e in errs]
    if r.converted_path is not None:
        same = {True: "nnopt's C from the .onnx is the same",
                False: "nnopt's C from the .onnx differs",
                None: "nnopt's C from the .onnx not compared"}[r.onnx_same_code]
        parts.append(f"ONNX: both run `{r.convert_command}` ⁹ ({same})")
    cached = sorted({str(getattr(r, f"tflm_{v}_measured_at"))
                     for v in (*tflm_firmware.VARIANTS, *tflm_firmware.M3_VARIANTS)
                     if getattr(r, f"tflm_{v}_cached")})
    if cached:
        parts.append("TFLM from the cache ⁸, measured " + ", ".join(cached))
    return "; ".join(p.replace("|", "/") for p in parts)


def markdown(rows: list[Row]) -> list[str]:
    out = [
        "| group | model | MACs | nnopt M7 instr | TFLM CMSIS-NN M7 | TFLM ref M7 | "
        "ours/CMSIS-NN | ours/ref | instr/MAC | M3 instr | bit-exact ¹ | notes |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        ipm = f"{r.instructions / r.macs:.2f}" if r.instructions and r.macs else "-"
        exact = " / ".join(_exact(x) for x in (r.bit_exact, r.tflm_cmsis_nn_bit_exact,
                                               r.tflm_ref_bit_exact))
        out.append(f"| {r.group} | {r.model} | {_n(r.macs)} | {_n(r.instructions)} | "
                   f"{_n(r.tflm_cmsis_nn_instructions)} | {_n(r.tflm_ref_instructions)} | "
                   f"{_f(r.ratio_cmsis_nn, True)} | {_f(r.ratio_ref, True)} | {ipm} | "
                   f"{_n(r.m3_instructions)} | {exact} | {notes(r)} |")
    out += [
        "",
        "| group | models | ours/CMSIS-NN geomean (n) | ours/ref geomean (n) | "
        "M3: ours/CMSIS-NN geomean (n) | M3: ours/ref geomean (n) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for g in group_geomeans(rows):
        out.append(f"| {g['group']} | {g['models']} | "
                   f"{_f(g['geomean_ratio_cmsis_nn'])} ({g['cmsis_nn_n']}) | "
                   f"{_f(g['geomean_ratio_ref'])} ({g['ref_n']}) | "
                   f"{_f(g['geomean_ratio_m3_cmsis_nn'])} ({g['m3_cmsis_nn_n']}) | "
                   f"{_f(g['geomean_ratio_m3_ref'])} ({g['m3_ref_n']}) |")
    out += m3_markdown(rows)
    out += cores_markdown(rows)
    out += core_markdown(rows)
    out += [
        "",
        "| model | ROM | runtime code ² | spec ROM ⁶ | code ³ | RAM ⁴ | arena (scratch) | "
        "TFLM CMSIS-NN ROM / RAM / arena / code ⁷ | TFLM ref ROM / RAM / arena / code ⁷ | "
        "TFLM min arena (64-bit host) ⁵ |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        tmin = _n(r.tflm_min_arena) if r.tflm_error is None else f"({r.tflm_error})"
        out.append(f"| {r.model} | {_n(r.rom_bytes)} | {_n(r.runtime_code_bytes)} | "
                   f"{_n(r.specialized_rom_bytes)} | {_n(r.code_bytes)} | "
                   f"{_n(r.ram_bytes)} | {r.arena_bytes:,} ({r.scratch_bytes:,}) | "
                   f"{_tflm_mem(r, 'cmsis_nn')} | {_tflm_mem(r, 'ref')} | {tmin} |")
    stateful = [r for r in rows if r.invocations > 1]
    if stateful:
        out += [
            "",
            "| stateful model | invocations | M7 instr / inference | state | arena (scratch) | "
            "arena + state | TFLM CMSIS-NN arena (32-bit) ⁷ | TFLM min arena (64-bit host) ⁵ "
            "| ours / TFLM CMSIS-NN |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in stateful:
            total = r.arena_bytes + r.state_bytes
            tmin = _n(r.tflm_min_arena) if r.tflm_error is None else f"({r.tflm_error})"
            out.append(f"| {r.model} | {r.invocations} | {_n(r.instructions)} | "
                       f"{r.state_bytes:,} | {r.arena_bytes:,} ({r.scratch_bytes:,}) | "
                       f"{total:,} | {_n(r.tflm_cmsis_nn_arena_bytes)} | {tmin} | "
                       f"{_r(total, r.tflm_cmsis_nn_arena_bytes)} |")
    out += [
        "",
        "¹ outputs byte-identical with the tflite-micro Python interpreter's (every "
        "invocation): nnopt (its M7 firmware and, unless --no-m3, its M3 firmware: "
        "the M3 column's run is checked too) / TFLM CMSIS-NN / TFLM ref. Instructions: "
        "the first "
        "invocation, counted around invoke()/Invoke() with the same SysTick counter "
        "(QEMU -icount shift=0, 40-instruction resolution) in firmware with the same "
        "startup, port and linker script (nucleo_f767zi regions, QEMU mps2-an500); "
        "TFLM built by its own Makefile (cortex_m_generic, cortex-m7+fp, release). "
        "² code + rodata linked from libnnrt.a "
        "(kernels, core). ³ ROM minus the "
        "model's constant data (weights, per-op parameters): harness, port, libc included, "
        "like TFLM's ROM minus the .tflite. ⁴ data + bss (arena included), stack "
        "reservation excluded (TFLM's RAM column excludes its stack too). ⁵ measured now "
        "with the tflite-micro Python interpreter by bisection. ⁶ kernels specialised to "
        "the model in its generated code (`<model>_spec_*` functions, ELF symbol sizes, "
        f"--specialize {rows[0].specialize if rows else 'auto'}), included in code ³. "
        "⁷ TFLM's ELF: ROM (the whole .tflite included), RAM (data + bss, stack "
        "excluded), its static arena (arena_used_bytes() on the 32-bit target, the "
        "firmware linked with exactly that), code = ROM minus the .tflite array. "
        "⁸ TFLM's figures of an earlier run with the same model, inputs, interpreter "
        "outputs, TFLM / CMSIS-NN / CMSIS source, harness, compilers, QEMU and flags "
        "(benchmarks/tflm_cache.py; --tflm-cache refresh measures them again). "
        "⁹ TFLM reads no ONNX: nnopt, TFLM and the interpreter run the .tflite this "
        "command writes (the graph nnopt imports from the ONNX file; "
        "benchmarks/converted_models.py). "
        "¹⁰ Cortex-M3 (mps2_an385, QEMU mps2-an385; TFLM's cortex_m_generic cortex-m3 "
        "build, soft float, CMSIS-NN's portable C path): outputs against the "
        "interpreter's, and nnopt's against TFLM's own M3 firmwares' (byte-identical: "
        "'= TFLM'). The M3's newlib has soft-float expf/logf that differ from the "
        "host's glibc in the last bit for some inputs: a float model using them differs "
        "from the host interpreter on the M3 in TFLM too, and nnopt is then bit-exact "
        "with TFLM on that core.",
    ]
    return out


def m3_markdown(rows: list[Row]) -> list[str]:
    """The Cortex-M3 table: nnopt's M3 firmware beside TFLM's (when any ran)."""
    if not any(r.m3_instructions is not None or r.tflm_ref_m3_instructions is not None
               or r.tflm_cmsis_nn_m3_instructions is not None for r in rows):
        return []
    out = [
        "",
        "| group | model | nnopt M3 instr | TFLM CMSIS-NN M3 | TFLM ref M3 | "
        "ours/CMSIS-NN M3 | ours/ref M3 | bit-exact M3 ¹⁰: nnopt / = TFLM / "
        "TFLM CMSIS-NN / TFLM ref |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        same = {None: "-", True: "yes", False: "**no**"}[r.m3_same_as_tflm_m3]
        exact = " / ".join([_exact(r.m3_bit_exact), same, _exact(r.tflm_cmsis_nn_m3_bit_exact),
                            _exact(r.tflm_ref_m3_bit_exact)])
        out.append(f"| {r.group} | {r.model} | {_n(r.m3_instructions)} | "
                   f"{_n(r.tflm_cmsis_nn_m3_instructions)} | {_n(r.tflm_ref_m3_instructions)} | "
                   f"{_f(r.ratio_m3_cmsis_nn, True)} | {_f(r.ratio_m3_ref, True)} | {exact} |")
    return out


def cores_markdown(rows: list[Row]) -> list[str]:
    """nnopt's firmware on the other cores of ``--cores``: instructions, ROM / RAM and
    bit-exact per core, the M7 beside them (TFLM on these cores: not measured yet)."""
    cores = sorted({c for r in rows for c in r.cores},
                   key=lambda c: list(BENCH_CORES).index(c))
    if not cores:
        return []
    head = " | ".join(f"{c} ({BENCH_CORES[c].board}) instr | ROM / RAM | bit-exact"
                      for c in cores)
    out = ["", f"| group | model | M7 instr | {head} |",
           "|---|---|---:|" + "---:|---|---|" * len(cores)]
    for r in rows:
        cells = []
        for c in cores:
            f = r.cores.get(c)
            if f is None:
                cells.append("- | - | -")
            elif f.instructions is None:
                cells.append(f"- | - | {f.error or '-'}")
            else:
                cells.append(f"{_n(f.instructions)} | {_n(f.rom_bytes)} / {_n(f.ram_bytes)} | "
                             f"{_exact(f.bit_exact)}")
        out.append(f"| {r.group} | {r.model} | {_n(r.instructions)} | {' | '.join(cells)} |")
    return out


def write_doc(rows: list[Row], dest: str) -> None:
    """The JSON document: the rows (one per model, the M7 as their base, the other
    cores nested), the geometric means per group, the flat rows and geometric means per
    core (fw_cores.py), the run's setup (the TFLM Makefile arguments of every core)."""
    doc: dict[str, Any] = {"seed": SEED, "m7_board": M7_BOARD, "m3_board": M3_BOARD,
                           "core_boards": {c: b.board for c, b in BENCH_CORES.items()},
                           "tflm_make": list(tflm_firmware.TFLM_MAKE_ARGS),
                           "tflm_make_per_variant": {
                               v: tflm_firmware.make_args(v)
                               for v in tflm_firmware.ALL_VARIANTS},
                           "anchors_from_anchors_md": ANCHORS,
                           "geomeans": group_geomeans(rows),
                           "core_geomeans": core_geomeans(rows),
                           "rows": [asdict(r) for r in rows],
                           "core_rows": core_rows(rows)}
    Path(dest).write_text(json.dumps(doc, indent=1) + "\n")
