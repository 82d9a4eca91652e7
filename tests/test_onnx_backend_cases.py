"""The ONNX project's PyTorch-converted backend test cases (shipped inside the ``onnx``
package: ``backend/test/data/pytorch-converted`` and ``pytorch-operator``, each a model
with inputs and expected outputs as .pb), run by nnopt's generated code on the host.

Every case matches the expected outputs within 1e-4 x max(1, max|expected|) (NaN where
the reference has NaN), or is refused with an UnsupportedError whose reason is listed in
REFUSED (none now); none may give another answer. Four cases ship inputs float32 cannot
hold (OUT_OF_RANGE): their run fails the model-boundary check by name, and they match
the onnx package's reference evaluator on inputs it can (onnxruntime has no float64
Add at opset 6).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from nnopt.errors import ToolchainError, UnsupportedError  # noqa: E402
from nnopt.frontend.tflite import load_model_bytes  # noqa: E402
from nnopt.ops import check_graph  # noqa: E402
from nnopt.testing.harness import run_nnopt  # noqa: E402

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
CASES = sorted([*DATA.glob("pytorch-converted/test_*"), *DATA.glob("pytorch-operator/test_*")])

# case name (regex) -> what the refusal says: none since issue 44 (3-D Conv/MaxPool/
# AveragePool as 2-D ops over depth slices, PixelShuffle's 6-D Transpose collapsed to 4-D,
# int64/float64 inputs and outputs converted at the model boundary, Gather at run-time
# indices, dilated MaxPool over one phase of its input)
REFUSED: dict[str, str] = {}

# cases whose shipped inputs are not data (PyTorch's uninitialised memory: float64 values
# up to 2.4e198, which float32 cannot hold): the model-boundary check fails the run with
# NNRT_ERR_ARG on them, and the model matches ONNX's reference on inputs float32 can hold
OUT_OF_RANGE = r"test_operator_add_broadcast|test_operator_add_size1_(right|singleton)_" \
    r"broadcast|test_operator_addconstant"


def _expected_refusal(name: str) -> str | None:
    return next((why for pat, why in REFUSED.items() if re.fullmatch(pat, name)), None)


def _load(case: Path, pattern: str) -> list[np.ndarray]:
    return [numpy_helper.to_array(onnx.load_tensor(str(p)))
            for p in sorted((case / "test_data_set_0").glob(pattern))]


def test_the_cases_are_there() -> None:
    assert len(CASES) >= 110
    passing = [c for c in CASES if _expected_refusal(c.name) is None]
    assert len(passing) == len(CASES) == 117


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_backend_case(case: Path) -> None:
    model = (case / "model.onnx").read_bytes()
    why = _expected_refusal(case.name)
    if why is not None:
        with pytest.raises(UnsupportedError) as err:
            check_graph(load_model_bytes(model, case.name, case.name))
        assert re.search(why, str(err.value)), str(err.value)
        assert err.value.hint
        return
    graph = load_model_bytes(model, case.name, case.name)
    inputs = _load(case, "input_*.pb")[:len(graph.inputs)]
    expected = _load(case, "output_*.pb")
    if re.fullmatch(OUT_OF_RANGE, case.name):
        assert max(float(np.abs(x).max()) for x in inputs) > float(np.finfo(np.float32).max)
        with pytest.raises(ToolchainError, match="NNRT_ERR_ARG"):
            run_nnopt(model, [np.ascontiguousarray(x) for x in inputs])
        rng = np.random.default_rng(44)
        inputs = [rng.standard_normal(x.shape) * 1e3 for x in inputs]
        ref = ReferenceEvaluator(onnx.load_model_from_string(model))
        expected = ref.run(None, {i.name: x for i, x in zip(
            ref.proto_.graph.input, inputs, strict=False)})
    got, _ = run_nnopt(model, [np.ascontiguousarray(x) for x in inputs])
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape and g.dtype == e.dtype
        nan = np.isnan(e)
        assert np.array_equal(nan, np.isnan(g))
        err = np.abs(g[~nan].astype(np.float64) - e[~nan])
        unit = max(1.0, float(np.abs(e[~nan]).max()) if (~nan).any() else 1.0)
        assert (err.max() if err.size else 0.0) <= 1e-4 * unit
