"""The memory-over-time picture: files are written and valid, layout stays readable."""

from __future__ import annotations

import dataclasses
import itertools
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from conftest import model_path
from nnopt.errors import NnoptError
from nnopt.frontend.tflite import load_model, load_model_bytes
from nnopt.plan import ScratchEntry
from nnopt.planner import PlannedModel, PlanOptions, plan_model
from nnopt.report.plot import build_figure, render
from support.tflite_builder import ModelBuilder

NOK = PlanOptions(check_kernels=False)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def vww() -> PlannedModel:
    return plan_model(load_model(model_path("mlperf_tiny/vww_96_int8.tflite")), NOK)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_png_and_svg_written_and_byte_stable(vww: PlannedModel, tmp_path: Path) -> None:
    png = tmp_path / "sub" / "vww.png"  # parent directories are created
    svg = tmp_path / "vww.SVG"  # suffix case does not matter
    render(vww.plan, vww.graph, png)
    render(vww.plan, vww.graph, svg)
    width, height = _png_size(png.read_bytes())
    assert width > 800 and height > 500
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = svg.read_text()
    assert "vww_96_int8" in text  # the title is there as text
    assert "54.0 KiB" in text  # arena and peak values in the legend
    # Same plan, same bytes (no dates, fixed SVG ids).
    for first in (png, svg):
        again = tmp_path / f"again{first.suffix}"
        render(vww.plan, vww.graph, again)
        assert again.read_bytes() == first.read_bytes(), first.suffix


@pytest.mark.parametrize("name", ["memory.jpg", "memory", "memory.png.txt", "memory.pdf"])
def test_bad_suffix_is_an_nnopt_error(vww: PlannedModel, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with pytest.raises(NnoptError) as err:
        render(vww.plan, vww.graph, path)
    assert err.value.hint and ".png" in err.value.hint and ".svg" in err.value.hint
    assert not path.exists()


def test_unwritable_path_is_an_nnopt_error(vww: PlannedModel, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(NnoptError, match="cannot write the memory picture"):
        render(vww.plan, vww.graph, blocker / "memory.png")


def _layout_checks(fig: Figure) -> None:
    """Tick labels do not collide; the legend sits right of the axes, inside the figure."""
    canvas = FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    ax = fig.axes[0]
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    boxes = [t.get_window_extent(renderer) for t in labels]
    for left, right in itertools.pairwise(boxes):
        assert left.x1 <= right.x0 + 0.5, "x tick labels overlap"
    axes_box = ax.get_window_extent(renderer)
    legend = ax.get_legend()
    assert legend is not None
    legend_box = legend.get_window_extent(renderer)
    assert legend_box.x0 >= axes_box.x1
    assert legend_box.x1 <= fig.bbox.x1 and legend_box.y0 >= 0
    for box in boxes:  # labels are below the axes, inside the figure
        assert box.y1 <= axes_box.y0 and box.y0 >= 0


def test_small_model_labels_every_op(vww: PlannedModel) -> None:
    fig = build_figure(vww.plan, vww.graph)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert len(labels) == 31
    # position, opcode and the layer name from the model's tensor names
    assert labels[0] == "0 CONV conv2d" and labels[1] == "1 DWCONV depthwise_conv2d"
    assert labels[-1] == "30 SOFTMAX Identity_int8"
    _layout_checks(fig)


def _long_chain(n_ops: int) -> bytes:
    """A chain of n_ops ops alternating size, like a long real model's x axis."""
    b = ModelBuilder()
    cur = b.tensor((1, 8, 8, 4), "float32")
    first = cur
    for k in range(n_ops):
        shape = (1, 8, 8, 4) if k % 2 else (1, 4, 8, 8)
        nxt = b.tensor(shape, "float32")
        b.op("RESHAPE" if k % 3 == 2 else "RELU", [cur], [nxt])
        cur = nxt
    return b.build(inputs=[first], outputs=[cur])


def test_large_model_thins_labels_and_keeps_layout() -> None:
    graph = load_model_bytes(_long_chain(320), name="chain320")
    pm = plan_model(graph, NOK)
    fig = build_figure(pm.plan, pm.graph)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert 20 < len(labels) < 320  # thinned, yet many positions named
    width, height = fig.get_size_inches()
    assert width <= 21 and height >= 7  # capped width, taller plot for long models
    _layout_checks(fig)


def test_scratch_and_empty_plans_render(vww: PlannedModel, tmp_path: Path) -> None:
    plan = vww.plan
    with_scratch = dataclasses.replace(
        plan, scratch=(ScratchEntry(op=plan.schedule[3], offset=plan.arena_bytes - 1024,
                                    size=1024, position=3),))
    legend = build_figure(with_scratch, vww.graph).axes[0].get_legend()
    assert legend is not None
    assert "kernel scratch" in [t.get_text() for t in legend.get_texts()]
    empty = dataclasses.replace(plan, schedule=(), steps=(), buffers=(), scratch=())
    render(empty, vww.graph, tmp_path / "empty.svg")
    assert (tmp_path / "empty.svg").stat().st_size > 0


def _by_gid(fig: Figure) -> dict[str, list[object]]:
    found: dict[str, list[object]] = {}
    for artist in fig.findobj():
        gid = artist.get_gid()
        if gid:
            found.setdefault(gid, []).append(artist)
    return found


def test_live_sum_arena_budget_stage_and_in_place_are_distinct_elements(
        ) -> None:
    """What the picture must show at a glance (issue 41): live sum and arena in
    different styles, the budget line, the tiled stage and the in-place ops marked."""
    from matplotlib.colors import to_hex

    from nnopt.boards import load_board
    from nnopt.planner import plan_model as plan

    graph = load_model(model_path("mlperf_tiny/vww_96_int8.tflite"))
    full = dataclasses.replace(NOK, tiling="auto", inplace_ops="auto")
    tiled = plan(graph, full)
    assert tiled.plan.stages, "vww without a budget plans a tiled first stage"
    fig = build_figure(tiled.plan, tiled.graph)
    found = _by_gid(fig)
    for gid in ("live-sum", "arena", "tiled-stage-0", "tiled-stage-label-0", "in-place",
                "label-arena"):
        assert gid in found, gid
    live, arena = found["live-sum"][0], found["arena"][0]
    assert live.get_linestyle() == "solid" and arena.get_linestyle() != "solid"
    assert to_hex(live.get_edgecolor()) != to_hex(arena.get_color())
    rows, cols = tiled.plan.stages[0].grid
    assert f"{rows}x{cols} patches" in found["tiled-stage-label-0"][0].get_text()
    # the stage spans the stage's steps
    st = tiled.plan.stages[0]
    band = found["tiled-stage-0"][0]
    assert band.get_x() == st.first and band.get_x() + band.get_width() == st.last + 1
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(t.startswith("tiled stage") for t in legend)
    assert any(t.startswith("op runs in place") for t in legend)
    assert "budget" not in found and not any(t.startswith("budget") for t in legend)

    # a budget near the data: a line; far above it: an arrow saying how much is used
    near = plan(graph, dataclasses.replace(full, sram=40_000))
    found = _by_gid(build_figure(near.plan, near.graph))
    assert "budget" in found and "budget-above" not in found
    assert found["budget"][0].get_ydata()[0] == pytest.approx(40_000 / 1024)
    board = plan(graph, dataclasses.replace(full, board=load_board("nucleo_f767zi")))
    fig = build_figure(board.plan, board.graph)
    found = _by_gid(fig)
    assert "budget" not in found and "uses 9.5 % of it" in found["budget-above"][0].get_text()
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(t.startswith("budget nucleo_f767zi 384.0 KiB") for t in legend)


@pytest.mark.parametrize(("name", "layer"), [
    ("model/activation/Relu;model/batch_normalization/FusedBatchNormV3;"
     "model/conv2d/BiasAdd;model/conv2d/Conv2D1", "conv2d"),
    ("functional_1/max_pooling2d_1/MaxPool2d", "max_pooling2d_1"),
    ("Identity", "Identity"),
    ("t12", ""),
    ("", ""),
    ("a/" + "x" * 40 + "/Relu", "x" * 21 + "~"),
])
def test_layer_names(name: str, layer: str) -> None:
    from nnopt.report.names import layer_name

    assert layer_name(name) == layer
