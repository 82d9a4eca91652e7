"""bench_firmware.py per core: one flat row per (core, model) (``core_rows`` of the JSON),
the geometric mean of ours / TFLM per core (``core_geomeans``), and a Markdown table per
core of ``--cores`` beyond the M7 and M3 (whose tables are bench_firmware's own).

A core row has the contract fields ``core``, ``model``, ``instructions`` (nnopt),
``tflm_cmsis_nn_instructions`` (Arm; None on RISC-V, where TFLM has reference kernels
only), ``tflm_ref_instructions`` and ``bit_exact`` (nnopt's outputs against the
tflite-micro interpreter's), plus the ratios, each side's ROM / RAM, TFLM's verdicts and
why a side has no figures.
"""

from __future__ import annotations

from typing import Any

from common import geomean
from fw_format import _exact, _f, _n
from fw_rows import BENCH_CORES, M3_BOARD, M7_BOARD, ROW_CORES, CoreFigures, Row

#: TFLM's figures per kernel variant copied into a core row (``tflm_<kernels>_<field>``).
TFLM_FIELDS = ("instructions", "rom_bytes", "ram_bytes", "arena_bytes", "code_bytes",
               "stack_bytes", "bit_exact", "error", "measured_at", "cached")
KERNELS = ("cmsis_nn", "ref")


def _tflm(src: Row | CoreFigures, suffix: str) -> dict[str, Any]:
    """TFLM's figures of ``src`` under the core row's names (``tflm_<kernels>_<field>``)."""
    return {f"tflm_{k}_{f}": getattr(src, _name(suffix, k, f))
            for k in KERNELS for f in TFLM_FIELDS}


def _name(suffix: str, kernels: str, field: str) -> str:
    """The attribute of TFLM's ``field`` for ``kernels``: ``tflm_cmsis_nn_m3_instructions``
    on a Row for the M3 (``suffix`` "_m3"), ``tflm_cmsis_nn_instructions`` otherwise."""
    return f"tflm_{kernels}{suffix}_{field}"


def _m3_measured(r: Row) -> bool:
    return r.m3_instructions is not None or any(
        getattr(r, _name("_m3", k, f)) is not None for k in KERNELS
        for f in ("instructions", "error"))


def core_rows(rows: list[Row]) -> list[dict[str, Any]]:
    """One dict per model and core measured (the M7 first, then the M3, then the other
    cores in :data:`BENCH_CORES` order)."""
    out: list[dict[str, Any]] = []
    for r in rows:
        base = {"group": r.group, "model": r.model, "macs": r.macs}
        m7 = {"core": "m7", "board": M7_BOARD, **base, "instructions": r.instructions,
              "rom_bytes": r.rom_bytes, "ram_bytes": r.ram_bytes, "bit_exact": r.bit_exact,
              "error": r.error, "ratio_cmsis_nn": r.ratio_cmsis_nn, "ratio_ref": r.ratio_ref}
        m7.update(_tflm(r, ""))
        out.append(m7)
        if _m3_measured(r):
            exact = r.m3_bit_exact
            if exact is False and r.m3_same_as_tflm_m3:  # the M3's libm, as TFLM's
                exact = True
            m3 = {"core": "m3", "board": M3_BOARD, **base, "instructions": r.m3_instructions,
                  "rom_bytes": None, "ram_bytes": None, "bit_exact": exact, "error": None,
                  "ratio_cmsis_nn": r.ratio_m3_cmsis_nn, "ratio_ref": r.ratio_m3_ref}
            m3.update(_tflm(r, "_m3"))
            out.append(m3)
        for core in sorted(r.cores, key=list(BENCH_CORES).index):
            f = r.cores[core]
            row = {"core": core, "board": f.board, **base, "instructions": f.instructions,
                   "rom_bytes": f.rom_bytes, "ram_bytes": f.ram_bytes,
                   "bit_exact": f.bit_exact, "error": f.error,
                   "ratio_cmsis_nn": f.ratio_cmsis_nn, "ratio_ref": f.ratio_ref}
            row.update(_tflm(f, ""))
            out.append(row)
    return out


def core_geomeans(rows: list[Row]) -> list[dict[str, Any]]:
    """Per core measured: the geometric means of ours / TFLM CMSIS-NN and ours / TFLM
    reference over the models that have both (bit-exact or not: the verdicts are in
    the rows)."""
    flat = core_rows(rows)
    out = []
    for core in BENCH_CORES:
        sel = [c for c in flat if c["core"] == core]
        if not sel:
            continue
        doc: dict[str, Any] = {"core": core, "board": sel[0]["board"], "models": len(sel)}
        for k in KERNELS:
            vals = [c[f"ratio_{k}"] for c in sel if c[f"ratio_{k}"] is not None]
            doc[f"{k}_n"] = len(vals)
            doc[f"geomean_ratio_{k}"] = geomean(vals)
        out.append(doc)
    return out


def _why(c: dict[str, Any]) -> str:
    parts = [f"nnopt: {c['error']}"] if c["error"] else []
    errs = [(label, c[f"tflm_{k}_error"]) for k, label in
            (("cmsis_nn", "TFLM CMSIS-NN"), ("ref", "TFLM ref")) if c[f"tflm_{k}_error"]]
    if len(errs) == 2 and errs[0][1] == errs[1][1]:
        errs = [("TFLM", errs[0][1])]
    parts += [f"{label}: {e}" for label, e in errs]
    if any(c[f"tflm_{k}_cached"] for k in KERNELS):
        parts.append("TFLM from the cache ⁸")
    return "; ".join(p.replace("|", "/") for p in parts)


def core_markdown(rows: list[Row]) -> list[str]:
    """A table per core of ``--cores`` beyond the M7 and the M3 (nnopt beside TFLM built
    for that core), then the geometric means of every core measured; nothing when no
    such core ran."""
    flat = core_rows(rows)
    extra = [c for c in BENCH_CORES if c not in ROW_CORES and any(r["core"] == c
                                                                   for r in flat)]
    if not extra:
        return []
    out: list[str] = []
    for core in extra:
        sel = [c for c in flat if c["core"] == core]
        out += ["", f"{core} ({sel[0]['board']}):", "",
                f"| group | model | nnopt {core} instr | TFLM CMSIS-NN {core} | "
                f"TFLM ref {core} | ours/CMSIS-NN | ours/ref | bit-exact: nnopt / "
                "TFLM CMSIS-NN / TFLM ref | notes |",
                "|---|---|---:|---:|---:|---:|---:|---|---|"]
        for c in sel:
            exact = " / ".join(_exact(x) for x in (c["bit_exact"], c["tflm_cmsis_nn_bit_exact"],
                                                   c["tflm_ref_bit_exact"]))
            out.append(f"| {c['group']} | {c['model']} | {_n(c['instructions'])} | "
                       f"{_n(c['tflm_cmsis_nn_instructions'])} | "
                       f"{_n(c['tflm_ref_instructions'])} | {_f(c['ratio_cmsis_nn'], True)} | "
                       f"{_f(c['ratio_ref'], True)} | {exact} | {_why(c)} |")
    out += ["", "| core | board | models | ours/CMSIS-NN geomean (n) | ours/ref geomean (n) |",
            "|---|---|---:|---:|---:|"]
    for g in core_geomeans(rows):
        out.append(f"| {g['core']} | {g['board']} | {g['models']} | "
                   f"{_f(g['geomean_ratio_cmsis_nn'], True)} ({g['cmsis_nn_n']}) | "
                   f"{_f(g['geomean_ratio_ref'], True)} ({g['ref_n']}) |")
    return out
