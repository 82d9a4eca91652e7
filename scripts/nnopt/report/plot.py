"""The memory-over-time picture of a plan: the arena as a map of (schedule step, offset).

- x: schedule positions (step ``i`` spans ``[i, i + 1)``), ticks labelled with the op's
  position, a short opcode and, where the model names its tensors, the layer name of
  the op's output (:func:`layer_name`); thinned to every k-th step when they would not
  fit, the peak step always labelled.
- y: arena offset in KiB. Every buffer is a rectangle at its planned offset across the
  steps where its tensor lives; tensors that share another's bytes (RESHAPE aliases,
  in-place element-wise outputs) are drawn hatched over the root's bytes for their own
  part of the lifetime. Colour by kind: activation, alias, scratch, graph input, graph
  output; a stateful model's persistent state (variable tensors) as bands above the
  arena across every step.
- Lines, each in its own style: the live-sum curve (bytes live at each step: a black
  step line), the arena size (thick dashed, labelled on the line), the budget (red,
  labelled; when it is far above the data, an arrow at the top says how far), the lower
  bound (largest op inputs+outputs on the imported graph: no order beats it, fusion and
  in-place execution can) and the file-order live peak. The peak step is shaded and
  marked; a tiled stage (run patch by patch) is a green band with its patch count, and
  ops that run in place (output over a dying input) have a mark under their step.
  Values are in the legend, which sits right of the axes, outside the data.

The figure is sized to the op count (wider for more ops, capped) with fixed margins, so
labels never collide. Rendering uses matplotlib's Agg (PNG) or SVG canvas directly, no
pyplot and no display; output is byte-stable for the same plan (no dates, fixed SVG ids).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NnoptError
from ..ir import ConvOptions, Graph
from ..ops import DEFINITIONS
from ..plan import Plan
from .names import layer_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SUFFIXES = (".png", ".svg")

KIB = 1024.0

# Okabe-Ito palette: distinguishable with the common colour-vision deficiencies.
KIND_STYLE: dict[str, tuple[str, str]] = {  # kind -> (face colour, legend label)
    "activation": ("#56B4E9", "activation"),
    "alias": ("#CC79A7", "alias (shares bytes: reshape / in place)"),
    "scratch": ("#BBBBBB", "kernel scratch"),
    "input": ("#009E73", "graph input"),
    "output": ("#E69F00", "graph output"),
    "state": ("#999933", "persistent state (above the arena, kept across invocations)"),
}
KIND_ORDER = ("input", "activation", "alias", "scratch", "output", "state")
LIVE_COLOUR = "#000000"  # the live sum: a solid black step line
ARENA_COLOUR = "#4B0082"  # the arena: thick dashes, its value written on the line
ARENA_DASH = (0, (7, 3))
BUDGET_COLOUR = "#C00000"
STAGE_COLOUR, STAGE_EDGE, STAGE_ALPHA = "#009E73", "#006B4F", 0.13
INPLACE_COLOUR = "#CC79A7"
#: The budget line is drawn when it is at most this many times the data's height;
#: higher, an arrow at the top says where it is (the data would be squashed).
BUDGET_IN_VIEW = 1.6


# Layout, in inches. Fixed margins keep tick labels and legend outside the data.
_LEFT, _RIGHT, _BOTTOM, _TOP = 0.85, 3.6, 1.25, 0.85
_CHAR_W = 0.058  # inches per character of a 7 pt monospace tick label
_TEXT_CHAR_W = 0.052  # inches per character of a 6.5 pt buffer label
_PLOT_H_SMALL, _PLOT_H_LARGE, _LARGE = 5.0, 6.5, 80  # plot height; taller above _LARGE ops
_PER_STEP = 0.11  # plot width per op before capping
_MIN_W, _MAX_W = 7.0, 16.0
_TEXT_MIN_W, _TEXT_MIN_H = 0.30, 0.14  # inches a buffer needs to carry its tensor label
_LABEL_PITCH = 0.135  # inches a rotated 7 pt tick label needs
_DPI = 110
# Fixed SVG ids (byte-stable output) and small fonts for dense pictures.
_RC: dict[Any, Any] = {"svg.hashsalt": "nnopt", "font.size": 8, "axes.titlesize": 10,
                       "legend.fontsize": 7.5}
# Byte-stable metadata: no date (SVG's dc:date; PNG has none unless asked) and no
# matplotlib version (SVG's Creator, PNG's Software), which differ between machines.
_METADATA: dict[str, dict[str, Any]] = {".svg": {"Date": None, "Creator": "nnopt"},
                                        ".png": {"Software": "nnopt"}}


@dataclass(frozen=True)
class _Rect:
    x: float
    width: float
    y: float  # KiB
    height: float  # KiB
    kind: str
    hatched: bool
    label: str


def render(plan: Plan, graph: Graph, path: Path) -> None:
    """Write the memory-over-time picture of ``plan`` to ``path`` (.png or .svg).

    ``graph`` is the graph the plan was made for (the planned, fused graph); it gives
    graph inputs/outputs and each tensor's own lifetime inside a shared buffer.
    Raises :class:`~nnopt.errors.NnoptError` for another suffix or an unwritable path.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise NnoptError(
            f"cannot write the memory picture to {path}: unknown image type "
            f"{path.suffix or '(no suffix)'!r}",
            hint="name the file with a .png or .svg suffix",
        )
    import matplotlib

    fig = build_figure(plan, graph)
    with matplotlib.rc_context(_RC):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(path, format=suffix[1:], dpi=_DPI, metadata=_METADATA[suffix])
        except OSError as err:
            raise NnoptError(f"cannot write the memory picture to {path}: {err.strerror}",
                             hint="check that the directory is writable") from err


def build_figure(plan: Plan, graph: Graph) -> Figure:
    """The picture as a matplotlib Figure (no canvas, no pyplot): for tests and embedding."""
    import matplotlib
    from matplotlib.figure import Figure

    steps_n = max(len(plan.steps), 1)
    plot_w = min(max(_PER_STEP * steps_n + 1.0, _MIN_W), _MAX_W)
    plot_h = _PLOT_H_LARGE if steps_n > _LARGE else _PLOT_H_SMALL
    longest = max((len(_tick_label(plan, graph, p)) for p in range(len(plan.steps))),
                  default=0)
    bottom = max(_BOTTOM, 0.55 + _CHAR_W * longest)  # rotated tick labels + axis label
    fig_w, fig_h = _LEFT + plot_w + _RIGHT, bottom + plot_h + _TOP
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(fig_w, fig_h), dpi=_DPI)
        ax = fig.add_axes((_LEFT / fig_w, bottom / fig_h, plot_w / fig_w, plot_h / fig_h))
        _draw(fig, ax, plan, graph, steps_n, (plot_w, plot_h))
    return fig


def _draw(fig: Figure, ax: Axes, plan: Plan, graph: Graph, n: int,
          plot_size: tuple[float, float]) -> None:
    from matplotlib.collections import PatchCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    rects = _rectangles(plan, graph)

    # Buffers, one collection per (kind, hatched) for speed on 300-op models.
    groups: dict[tuple[str, bool], list[Rectangle]] = {}
    for r in rects:
        groups.setdefault((r.kind, r.hatched), []).append(
            Rectangle((r.x, r.y), r.width, r.height))
    for (kind, hatched), patches in sorted(groups.items(), key=lambda kv: (
            KIND_ORDER.index(kv[0][0]), kv[0][1])):
        colour = KIND_STYLE[kind][0]
        coll = PatchCollection(patches, facecolor=colour, edgecolor="white",
                               linewidth=0.4 if n <= 120 else 0.2, zorder=2,
                               hatch="////" if hatched else None)
        ax.add_collection(coll)

    live = [s.live_bytes / KIB for s in plan.steps] or [0.0]
    with_scratch = [(s.live_bytes + s.scratch_bytes) / KIB for s in plan.steps] or [0.0]
    edges = list(range(len(live) + 1))
    ax.stairs(live, edges, color=LIVE_COLOUR, linewidth=1.6, zorder=4, baseline=None,
              gid="live-sum")
    has_scratch = any(s.scratch_bytes for s in plan.steps)
    if has_scratch:
        ax.stairs(with_scratch, edges, color="#222222", linewidth=0.9, linestyle=(0, (1, 1)),
                  zorder=4, baseline=None)

    arena = plan.arena_bytes / KIB
    lower = plan.lower_bound_bytes / KIB
    file_peak = plan.peak_live_bytes_file_order / KIB
    ax.axhline(arena, color=ARENA_COLOUR, linewidth=2.2, linestyle=ARENA_DASH, zorder=5,
               gid="arena")
    ax.axhline(lower, color="#D55E00", linewidth=1.2, linestyle=(0, (5, 3)), zorder=5,
               gid="lower-bound")
    ax.axhline(file_peak, color="#0072B2", linewidth=1.2, linestyle=(0, (1.5, 1.5)), zorder=5,
               gid="file-order-peak")

    peak_pos = max(range(len(plan.steps)), key=lambda i: (plan.steps[i].live_bytes, -i),
                   default=0)
    peak = live[peak_pos] if plan.steps else 0.0
    ax.axvspan(peak_pos, peak_pos + 1, color="#F0E442", alpha=0.35, zorder=1, linewidth=0)
    ax.plot([peak_pos + 0.5], [peak], marker="v", color="#222222", markersize=7, zorder=6,
            linestyle="none")

    # Axes.
    top = max([arena, lower, file_peak, *with_scratch] + [r.y + r.height for r in rects])
    budget = (plan.sram_budget_bytes / KIB if plan.sram_budget_bytes is not None else None)
    budget_drawn = budget is not None and budget <= BUDGET_IN_VIEW * max(top, 1e-9)
    if budget_drawn and budget is not None:
        top = max(top, budget)
    ymax = top * 1.08 if top > 0 else 1.0
    plot_w, plot_h = plot_size
    ax.set_xlim(0, n)
    ax.set_ylim(0, ymax)
    _mark_stages(ax, plan, ymax)
    _mark_inplace(ax, plan, graph)
    _line_label(ax, n, arena, f"arena {_kib(plan.arena_bytes)}", ARENA_COLOUR, ymax)
    if budget is not None:
        _draw_budget(ax, plan, n, budget, budget_drawn, ymax)
    # Tensor names in the lower-left corner of buffers big enough to carry one (small
    # models only: on large ones they would be noise). The corner keeps them off the
    # live-sum curve, which runs along buffer tops.
    if n <= _LARGE:
        for r in rects:
            if (r.kind != "scratch"
                    and r.width * plot_w / n >= max(_TEXT_MIN_W, _TEXT_CHAR_W * len(r.label))
                    and r.height * plot_h / ymax >= _TEXT_MIN_H):
                ax.annotate(r.label, (r.x, r.y), xytext=(2.5, 2), textcoords="offset points",
                            ha="left", va="bottom", fontsize=6.5, color="#1A1A1A", zorder=3,
                            annotation_clip=True)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=10, steps=[1, 2, 2.5, 5, 10]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}" if top >= 20
                                               else f"{v:,.1f}"))
    ax.set_ylabel("arena offset / live bytes (KiB)")
    ax.set_xlabel("schedule position and operator")
    ax.grid(axis="y", color="#DDDDDD", linewidth=0.6, zorder=0)
    ax.set_axisbelow(True)
    _x_ticks(ax, plan, graph, n, plot_w, peak_pos)

    # Titles.
    order = (f"order {plan.schedule_strategy}"
             + (", proven optimal" if plan.optimal else ", not proven optimal"))
    fig.suptitle(f"{plan.model}: activation arena over time ({len(plan.steps)} ops)",
                 x=_LEFT / fig.get_figwidth(), ha="left", y=1 - 0.18 / fig.get_figheight(),
                 fontsize=11, fontweight="bold")
    fig.text(_LEFT / fig.get_figwidth(), 1 - 0.45 / fig.get_figheight(),
             f"{order}; arena layout {plan.arena_strategy}, {plan.alignment}-byte aligned, "
             f"fragmentation {100 * plan.fragmentation:.1f} %; "
             f"{len(plan.buffers)} tensors, {len(plan.scratch)} scratch buffers"
             + (f"; persistent state {_kib(plan.state_bytes)} above the arena"
                if plan.state else ""),
             ha="left", va="center", fontsize=8, color="#444444")

    # Legend, right of the axes.
    handles: list[object] = [
        Line2D([], [], color=LIVE_COLOUR, linewidth=1.6,
               label=f"live sum (peak {_kib(plan.peak_live_bytes)})"),
    ]
    if has_scratch:
        handles.append(Line2D([], [], color="#222222", linewidth=0.9, linestyle=(0, (1, 1)),
                              label="live sum + scratch"))
    handles += [
        Line2D([], [], color=ARENA_COLOUR, linewidth=2.2, linestyle=ARENA_DASH,
               label=f"arena {_kib(plan.arena_bytes)}"),
        Line2D([], [], color="#D55E00", linewidth=1.2, linestyle=(0, (5, 3)),
               label=f"lower bound (op in+out) {_kib(plan.lower_bound_bytes)}"
               + _same_as(plan.lower_bound_bytes, plan)),
        Line2D([], [], color="#0072B2", linewidth=1.2, linestyle=(0, (1.5, 1.5)),
               label=f"file-order peak {_kib(plan.peak_live_bytes_file_order)}"
               + (_same_as(plan.peak_live_bytes_file_order, plan)
                  or (" = lower bound" if plan.peak_live_bytes_file_order
                      == plan.lower_bound_bytes else ""))),
        Line2D([], [], color="#222222", marker="v", linestyle="none", markersize=7,
               label=f"peak at step {peak_pos}"
               + (f" ({_op_label(plan, graph, peak_pos)})" if plan.steps else "")),
    ]
    if plan.sram_budget_bytes is not None:
        handles.append(Line2D([], [], color=BUDGET_COLOUR, linewidth=2.0,
                              label=f"budget {_budget_name(plan)} "
                              f"{_kib(plan.sram_budget_bytes)}"))
    if plan.stages:
        handles.append(Patch(facecolor=STAGE_COLOUR, alpha=STAGE_ALPHA, edgecolor=STAGE_EDGE,
                             label="tiled stage, run patch by patch\n(the live sum "
                             "counts its whole tensors)"))
    if _inplace_positions(plan, graph):
        handles.append(Line2D([], [], color=INPLACE_COLOUR, marker="^", linestyle="none",
                              markersize=5, label="op runs in place (output over a dying "
                              "input)"))
    present = {r.kind for r in rects}
    for kind in KIND_ORDER:
        if kind in present:
            colour, label = KIND_STYLE[kind]
            handles.append(Patch(facecolor=colour, edgecolor="white", label=label,
                                 hatch="////" if kind == "alias" else None))
    if any(r.hatched and r.kind != "alias" for r in rects):
        handles.append(Patch(facecolor="white", edgecolor="#666666", hatch="////",
                             label="hatched: output sharing an input's bytes"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0 + 0.12 / plot_w, 1.0),
              borderaxespad=0.0, frameon=False, handlelength=2.6)
    if not plan.steps:
        ax.text(0.5, 0.5, "the model has no operators", transform=ax.transAxes,
                ha="center", va="center")


def _budget_name(plan: Plan) -> str:
    return plan.board if plan.board else "(--sram)"


def _line_label(ax: Axes, n: int, y: float, text: str, colour: str, ymax: float) -> None:
    """``text`` on the right end of the horizontal line at ``y``, just above it."""
    ax.annotate(text, (n, y), xytext=(-3, 2), textcoords="offset points", ha="right",
                va="bottom", fontsize=7.5, color=colour, fontweight="bold", zorder=7,
                annotation_clip=False, gid="label-" + text.split()[0])


def _draw_budget(ax: Axes, plan: Plan, n: int, budget: float, drawn: bool,
                 ymax: float) -> None:
    """The budget as a red line, or, far above the data, an arrow at the top saying how
    much of it the model uses."""
    assert plan.sram_budget_bytes is not None
    label = f"budget {_budget_name(plan)} {_kib(plan.sram_budget_bytes)}"
    if drawn:
        ax.axhline(budget, color=BUDGET_COLOUR, linewidth=2.0, zorder=5, gid="budget")
        _line_label(ax, n, budget, label, BUDGET_COLOUR, ymax)
        return
    used = 100 * plan.sram_bytes / max(plan.sram_budget_bytes, 1)
    ax.annotate(f"{label} is above: the model uses {used:.1f} % of it", (n, ymax),
                xytext=(-3, -3), textcoords="offset points", ha="right", va="top",
                fontsize=7.5, color=BUDGET_COLOUR, fontweight="bold", zorder=7,
                arrowprops={"arrowstyle": "-|>", "color": BUDGET_COLOUR, "linewidth": 1.2},
                gid="budget-above")


def _mark_stages(ax: Axes, plan: Plan, ymax: float) -> None:
    """Each tiled stage: a green band over its steps, its patch grid written at the top."""
    for k, st in enumerate(plan.stages):
        ax.axvspan(st.first, st.last + 1, facecolor=STAGE_COLOUR, alpha=STAGE_ALPHA,
                   edgecolor=STAGE_EDGE, linewidth=1.0, zorder=0.5, gid=f"tiled-stage-{k}")
        ax.text((st.first + st.last + 1) / 2, ymax * 0.985,
                f"tiled\n{st.grid[0]}x{st.grid[1]} patches", ha="center", va="top",
                fontsize=7, color=STAGE_EDGE, fontweight="bold", zorder=7,
                gid=f"tiled-stage-label-{k}")


def _inplace_positions(plan: Plan, graph: Graph) -> list[int]:
    """Schedule positions of the ops whose output shares a dying input's bytes:
    element-wise ops in place, depthwise in place, row-by-row outputs, used overlaps."""
    pos = {op: i for i, op in enumerate(plan.schedule)}
    ops = {e.op for e in plan.inplace_ops}
    producer = graph.producer
    ops |= {producer[o] for o, _ in plan.inplace if o in producer}
    ops |= {producer[o.dst] for o in plan.overlaps if o.mode != "disjoint" and o.dst in producer}
    return sorted(pos[o] for o in ops if o in pos)


def _mark_inplace(ax: Axes, plan: Plan, graph: Graph) -> None:
    xs = [p + 0.5 for p in _inplace_positions(plan, graph)]
    if xs:
        ax.plot(xs, [0.0] * len(xs), transform=ax.get_xaxis_transform(), marker="^",
                markersize=5, color=INPLACE_COLOUR, linestyle="none", zorder=7,
                clip_on=False, gid="in-place")


def _tensor_label(graph: Graph, t: int) -> str:
    if 0 <= t < len(graph.tensors):
        name = layer_name(graph.tensors[t].name)
        if name:
            return name
    return f"t{t}"


def _tick_label(plan: Plan, graph: Graph, position: int) -> str:
    step = plan.steps[position]
    label = f"{position} {_op_label(plan, graph, position)}"
    op = graph.op_by_index.get(step.op)
    name = layer_name(graph.tensors[op.outputs[0]].name) if op and op.outputs else ""
    return f"{label} {name}" if name else label


def _same_as(nbytes: int, plan: Plan) -> str:
    """A note for a line drawn exactly over the arena line (it would be hidden)."""
    return " = arena" if nbytes == plan.arena_bytes else ""


def _kib(nbytes: int) -> str:
    if nbytes < 10 * 1024:
        return f"{nbytes / KIB:,.2f} KiB ({nbytes:,} B)"
    return f"{nbytes / KIB:,.1f} KiB ({nbytes:,} B)"


def _short(opcode: str) -> str:
    d = DEFINITIONS.get(opcode)
    return d.label if d is not None else opcode


def _op_label(plan: Plan, graph: Graph, position: int) -> str:
    step = plan.steps[position]
    label = _short(step.opcode)
    op = graph.op_by_index.get(step.op)
    if op is not None and isinstance(op.options, ConvOptions) and op.options.fused_max_pool:
        label += "+MAXPOOL"
    return label


def _x_ticks(ax: Axes, plan: Plan, graph: Graph, n: int, plot_w: float,
             peak_pos: int) -> None:
    if not plan.steps:
        ax.set_xticks([])
        return
    stride = max(1, math.ceil(_LABEL_PITCH / (plot_w / n)))
    # Nice strides (1, 2, 5, 10, 20, 25, 50 ...) so that the labels are easy to count.
    nice = next(s for s in _nice_strides() if s >= stride)
    shown = set(range(0, n, nice))
    # The peak is always labelled; its neighbours give way so nothing collides.
    shown = {p for p in shown if abs(p - peak_pos) >= nice or p == peak_pos} | {peak_pos}
    ticks = sorted(shown)
    ax.set_xticks([p + 0.5 for p in ticks])
    ax.set_xticklabels([_tick_label(plan, graph, p) for p in ticks], rotation=90,
                       fontsize=7, fontfamily="monospace")
    for p, label in zip(ticks, ax.get_xticklabels(), strict=True):
        if p == peak_pos:
            label.set_fontweight("bold")
            label.set_color("#B8860B")
    if nice > 1:
        # One small mark per op, as a single artist (hundreds of minor Tick objects are slow).
        ax.vlines([p + 0.5 for p in range(n)], -0.008, 0.0, transform=ax.get_xaxis_transform(),
                  colors="#999999", linewidth=0.6, clip_on=False)


def _nice_strides() -> Sequence[int]:
    out: list[int] = []
    base = 1
    while base < 10**7:
        out += [base, 2 * base, 5 * base]
        base *= 10
    return out


def _rectangles(plan: Plan, graph: Graph) -> list[_Rect]:
    """One rectangle per buffer entry (own lifetime inside shared buffers) and scratch."""
    pos = {op_index: i for i, op_index in enumerate(plan.schedule)}
    n = len(plan.schedule)
    inputs, outputs = set(graph.inputs), set(graph.outputs)

    def own_span(t: int, first: int, last: int) -> tuple[int, int]:
        """The steps where tensor t itself is live, clipped to its buffer's lifetime."""
        prod = graph.producer.get(t)
        start = pos.get(prod, first) if prod is not None else first
        uses = [pos[c] for c in graph.consumers.get(t, ()) if c in pos]
        end = max(uses, default=start)
        if t in outputs:
            end = n - 1
        start, end = max(start, first), min(max(end, start), last)
        return (start, end) if start <= end else (first, last)

    rects: list[_Rect] = []
    valid = all(0 <= b.tensor < len(graph.tensors) for b in plan.buffers)
    for b in plan.buffers:
        if valid:
            first, last = own_span(b.tensor, b.first, b.last)
        else:  # a graph that does not match the plan: fall back to the buffer lifetime
            first, last = b.first, b.last
        if b.tensor in inputs:
            kind = "input"
        elif b.tensor in outputs:
            kind = "output"
        elif b.alias_of is not None:
            kind = "alias"
        else:
            kind = "activation"
        rects.append(_Rect(first, last - first + 1, b.offset / KIB, b.size / KIB, kind,
                           b.alias_of is not None,
                           _tensor_label(graph, b.tensor) if valid else f"t{b.tensor}"))
    for s in plan.scratch:
        rects.append(_Rect(s.position, 1, s.offset / KIB, s.size / KIB, "scratch", False,
                           f"scratch of op {s.op}"))
    # the state region lies beside the arena: drawn above it, live at every step
    for e in plan.state:
        rects.append(_Rect(0, max(n, 1), (plan.arena_bytes + e.offset) / KIB, e.size / KIB,
                           "state", False, f"t{e.tensor} (state)"))
    return rects
