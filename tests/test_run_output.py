"""What `nnopt run` shows: outputs with their real values, and progress while it builds
and emulates."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest

from nnopt.commands.progress_line import Messages, Stages
from nnopt.ir import DType, Graph, Quant, Tensor
from nnopt.report.outputs import SHOWN, dequantised, output_lines


def _graph(*tensors: Tensor) -> Graph:
    return Graph("m", tuple(tensors), (), (), tuple(t.index for t in tensors))


def test_quantised_outputs_show_raw_and_real_values() -> None:
    t = Tensor(0, "probs", (1, 3), DType.INT8, Quant((0.5,), (-2,)))
    lines = output_lines(_graph(t), [np.array([-2, 0, 4], np.int8).tobytes()])
    assert lines == ['output 0 "probs": int8 [1, 3], scale 0.5 zero point -2',
                     "  raw:         [-2, 0, 4]",
                     "  dequantised: [0, 1, 3]"]


def test_float_outputs_long_outputs_and_invocations() -> None:
    t = Tensor(0, "y", (40,), DType.FLOAT32)
    data = np.arange(80, dtype=np.float32).tobytes()  # two invocations back to back
    lines = output_lines(_graph(t), [data], invocations=2)
    assert lines[0] == 'output 0 "y": float32 2 x [40]'
    assert lines[1].startswith("  values:      [0, 1, 2,") and "... (80 values)]" in lines[1]
    assert lines[1].count(",") == SHOWN  # SHOWN values, then the count


def test_per_channel_dequantisation_along_the_axis() -> None:
    t = Tensor(0, "w", (2, 2), DType.INT8, Quant((1.0, 0.5), (0, 2), axis=1))
    real = dequantised(t, np.array([1, 4, 1, 4], np.int8))
    assert real is not None and real.tolist() == [1.0, 1.0, 1.0, 1.0]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_stages_print_one_line_each_in_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Messages, "quiet", False)  # an earlier command's -q stays set
    log = io.StringIO()
    with Stages(log) as stages:
        stages("building the qemu-m7 firmware")
        stages("running on qemu-m7")
    assert log.getvalue() == ("nnopt: building the qemu-m7 firmware\n"
                              "nnopt: running on qemu-m7\n")


def test_stages_show_the_elapsed_seconds_on_a_terminal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Messages, "quiet", False)
    tty = _Tty()
    with Stages(tty, interval_s=0.02) as stages:
        stages("building")
        time.sleep(0.2)
    text = tty.getvalue()
    assert text.startswith("nnopt: building") and "\rnnopt: building ... 0 s" in text
    assert text.endswith("\n")


def test_stages_are_silent_with_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Messages, "quiet", True)
    tty = _Tty()
    with Stages(tty, interval_s=0.01) as stages:
        stages("building")
        time.sleep(0.05)
    assert tty.getvalue() == ""
