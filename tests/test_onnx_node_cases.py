"""The ONNX operator test cases of issue 24's operators, as the ``onnx`` package defines
them (``onnx.backend.test.case.node``: model, inputs, expected outputs from the ONNX
reference implementation), run by nnopt's generated code on the host: LSTM, GRU, RNN,
Loop and MatMul of activations. The weights (W, R, B, sequence_lens) and Loop's trip
count and condition are model inputs there: they are pinned as --input-value pins them.
Every case matches within 1e-4 x max(1, max|expected|) or is refused by name."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from nnopt.errors import UnsupportedError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.testing.harness import run_nnopt
from nnopt.testing.onnx_oracle import float_error

onnx = pytest.importorskip("onnx")

PATTERN = r"test_(lstm|gru|simple_rnn|rnn)_.*|test_loop11|test_matmul_.*"
REFUSED = {"test_lstm_with_peepholes": "peephole weights"}


def _cases() -> list[Any]:
    from onnx.backend.test.case.node import collect_testcases

    with np.errstate(all="ignore"):
        return [c for c in collect_testcases(None) if re.fullmatch(PATTERN, c.name)]


CASES = _cases()


def test_the_cases_are_there() -> None:
    names = {c.name for c in CASES}
    assert len(names) >= 20 and {"test_lstm_bidirectional", "test_gru_reverse",
                                 "test_simple_rnn_batchwise", "test_loop11"} <= names


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case: Any) -> None:
    m = case.model
    for imp in m.opset_import:  # opset 22 only added bfloat16 to these operators
        if imp.domain in ("", "ai.onnx") and imp.version == 22:
            imp.version = 21
    inits = {t.name for t in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    ins, expected = case.data_sets[0]
    recurrent = re.match(r"test_(lstm|gru|simple_rnn|rnn)", case.name) is not None
    pinned = {n: tuple(float(v) for v in np.asarray(x).reshape(-1))
              for k, (n, x) in enumerate(zip(names, ins, strict=False))
              if np.asarray(x).dtype != np.float32 or (recurrent and 1 <= k <= 4)}
    feeds = [np.asarray(x) for n, x in zip(names, ins, strict=False) if n not in pinned]
    data = m.SerializeToString()
    why = REFUSED.get(case.name)
    if why is not None:
        with pytest.raises(UnsupportedError, match=why) as err:
            load_model_bytes(data, input_values=pinned)
        assert err.value.hint
        return
    got, _ = run_nnopt(data, feeds, input_values=pinned)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and float_error(g, e) <= 1e-4
