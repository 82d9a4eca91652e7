"""The report's first lines: the answer (arena, TFLM's, the budget), then why."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from conftest import REPO, model_path
from nnopt.cli import main
from nnopt.frontend.tflite import load_model
from nnopt.passes.baseline import tflm_arena_bytes
from nnopt.report.text import share

sys.path.insert(0, str(REPO / "benchmarks"))
from common import tflm_head


def test_share_reads_well() -> None:
    assert share(37_280, 393_216) == "9.5 %"
    assert share(300_000, 393_216) == "76 %"
    assert share(10, 393_216) == "<0.1 %"
    assert share(0, 100) == "0.0 %"
    # over budget: by how much and how many times, never "8576.0 % used"
    assert share(87_808, 1_024) == "over by 86,784 B (85.8 x the budget)"
    assert share(1_100, 1_000) == "over by 100 B (1.1 x the budget)"


@pytest.mark.parametrize("name", ["mlperf_tiny/vww_96_int8.tflite",
                                  "tflm/hello_world_int8.tflite",
                                  "mlperf_tiny/ad01_int8.tflite"])
def test_tflm_baseline_is_what_tflms_interpreter_plans(name: str) -> None:
    """The TFLM figure of the first line is TFLM's planner (greedy by size over the
    file order): equal to the head TFLM's own interpreter reports (tflite-micro)."""
    pytest.importorskip("tflite_micro")
    path = model_path(name)
    head, why = tflm_head(path, 300)
    if head is None:
        pytest.skip(f"TFLM interpreter: {why}")
    assert tflm_arena_bytes(load_model(path)) == head


def _optimize(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    status = main(["optimize", *args, "--table", "none", "-q"])
    return status, capsys.readouterr().out.splitlines()


def test_first_line_is_the_answer_and_says_why_tiling_was_not_used(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = model_path("mlperf_tiny/vww_96_int8.tflite")
    report = tmp_path / "r.json"
    status, lines = _optimize(capsys, str(path), "--board", "nucleo_f767zi",
                              "--json", str(report))
    assert status == 0
    arena = json.loads(report.read_text())["arena_bytes"]
    tflm = tflm_arena_bytes(load_model(path))
    pct = round(100 * (arena - tflm) / tflm)
    assert lines[0] == (f"arena {arena:,} B (TFLM {tflm:,} B, {pct:+d} %), fits "
                        f"nucleo_f767zi ({share(arena, 393_216)})"), lines[0]
    why = "\n".join(lines[1:4])
    assert "reordering:" in why and "in place:" in why
    m = re.search(r"tiling: not needed: fits the budget without it \(tiled would be "
                  r"([0-9,]+) B\)", why)
    assert m, why
    # ... and that is the arena the same command plans without the budget, tiled
    status, free = _optimize(capsys, str(path))
    assert status == 0 and free[0].startswith(f"arena {m[1]} B (TFLM {tflm:,} B")
    assert "tiling: the first" in "\n".join(free[1:4])


def test_over_budget_first_line(capsys: pytest.CaptureFixture[str]) -> None:
    path = model_path("tflm/hello_world_int8.tflite")
    status, lines = _optimize(capsys, str(path), "--sram", "16")
    assert status == 2
    assert re.fullmatch(r"arena ([0-9,]+) B \(TFLM [0-9,]+ B, [^)]+\), does NOT fit --sram "
                        r"16 B: over by [0-9,]+ B \([0-9.]+ x the budget\)", lines[0]), lines[0]
    assert not any("% used" in ln and "OVER" in ln for ln in lines)


def test_no_budget_and_techniques_off(capsys: pytest.CaptureFixture[str]) -> None:
    path = model_path("tflm/hello_world_int8.tflite")
    status, lines = _optimize(capsys, str(path), "--order", "file", "--no-inplace",
                              "--inplace-ops", "off", "--tiling", "off")
    assert status == 0
    assert lines[0].endswith("; no budget given (--board NAME or --sram BYTES)")
    assert lines[1:4] == ["  reordering: off (--order file)",
                          "  in place: off (--no-inplace --inplace-ops off)",
                          "  tiling: off (--tiling off)"]
