"""``bench_firmware.py --plot PATH``: ours / TFLM instructions per model as a PNG."""

from __future__ import annotations

from pathlib import Path

from fw_rows import Row


def plot(rows: list[Row], dest: Path) -> bool:
    """A PNG of ours / TFLM instructions per model (CMSIS-NN and reference kernels, log
    scale, 1 = parity); False when there is nothing to plot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sel = [r for r in rows if r.ratio_cmsis_nn is not None or r.ratio_ref is not None]
    if not sel:
        return False
    from matplotlib.ticker import FuncFormatter, LogLocator

    fig, ax = plt.subplots(figsize=(max(7.0, 0.5 * len(sel) + 2), 5.0))
    xs = list(range(len(sel)))
    w = 0.4
    series = (("cmsis_nn", "nnopt / TFLM CMSIS-NN", -w / 2),
              ("ref", "nnopt / TFLM reference", w / 2))
    for variant, label, dx in series:
        vals = [getattr(r, f"ratio_{variant}") for r in sel]
        bars = ax.bar([x + dx for x in xs], [v or 0 for v in vals], w, label=label)
        for b, v in zip(bars, vals, strict=True):
            if v:
                ax.annotate(f"{v:.2f}", (b.get_x() + b.get_width() / 2, v), ha="center",
                            va="bottom", fontsize=6)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    top = max([r.ratio_cmsis_nn or 0 for r in sel] + [r.ratio_ref or 0 for r in sel] + [1])
    bottom = min(v for r in sel for v in (r.ratio_cmsis_nn, r.ratio_ref) if v)
    ax.set_ylim(bottom / 1.5, top * 1.5)
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{r.model} ({r.group})" for r in sel], rotation=60, ha="right",
                       fontsize=7)
    ax.set_ylabel("nnopt / TFLM instructions (Cortex-M7, QEMU)")
    ax.set_title("Instructions per inference, nnopt / TFLM (< 1: nnopt runs fewer)",
                 fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dest, dpi=120)
    plt.close(fig)
    return True
