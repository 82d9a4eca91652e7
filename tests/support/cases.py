"""The multi-op kernel test models: one build holds many cases (``out_of``: case id ->
output tensor), one TFLM run and one nnopt run answer them all, and each case's
output is compared with TFLM's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from nnopt.ir import NUMPY_DTYPE, Graph
from nnopt.planner import PlannedModel, PlanOptions
from nnopt.testing.harness import run_nnopt, run_tflm

#: Each case's (TFLM's output, nnopt's output).
Results = dict[str, tuple[np.ndarray, np.ndarray]]


def random_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random case data: float32 standard normal, integers over the whole type."""
    if dtype == "float32":
        return rng.standard_normal(shape).astype(np.float32)
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def random_quant(rng: np.random.Generator, dtype: str) -> dict[str, Any]:
    """A random per-tensor quantisation (none for float32; int16 symmetric)."""
    if dtype == "float32":
        return {}
    scale = float(rng.uniform(0.001, 0.1)) if dtype == "int8" else float(rng.uniform(1e-4, 1e-3))
    return {"scale": scale, "zero_point": int(rng.integers(-20, 20)) if dtype == "int8" else 0}


def oracle_results(model: bytes, inputs: Sequence[np.ndarray], out_of: Mapping[str, int],
                   *, sanitize: bool = False) -> Results:
    """Run ``model`` under TFLM and as nnopt's generated code (host, file order; under
    ASan + UBSan with ``sanitize``): each case's pair of outputs."""
    _, ref = run_tflm(model, inputs)
    _, got = run_nnopt(model, inputs, options=PlanOptions(order="file"), sanitize=sanitize)
    return {cid: (ref[t], got[t]) for cid, t in out_of.items()}


def case_model_tests(model: bytes, inputs: Sequence[np.ndarray], out_of: Mapping[str, int],
                     **match: bool) -> tuple[Any, Any]:
    """A case model's ``results`` fixture (module scope: one TFLM run, one nnopt run)
    and its ``test_bit_exact`` parametrised over the case ids (each compared with
    :func:`assert_case_matches` and ``match``). Assign both at module level:
    ``results, test_bit_exact = case_model_tests(MODEL, INPUTS, OUT_OF)``."""

    @pytest.fixture(scope="module", name="results")
    def results() -> Results:
        return oracle_results(model, inputs, out_of)

    @pytest.mark.parametrize("cid", sorted(out_of))
    def test_bit_exact(results: Results, cid: str) -> None:
        ref, got = results[cid]
        assert_case_matches(ref, got, **match)

    return results, test_bit_exact


def assert_case_matches(ref: np.ndarray, got: np.ndarray, *, same_dtype: bool = False,
                        same_bits: bool = False, float_close: bool = False) -> None:
    """``got`` has ``ref``'s shape (and dtype, with ``same_dtype``) and its values:
    equal, or float32 within 1e-5 relative with ``float_close``; with ``same_bits``
    byte for byte too (-0.0 and 0.0 compare equal as values)."""
    assert got.shape == ref.shape
    if same_dtype:
        assert got.dtype == ref.dtype
    if float_close and got.dtype == np.float32:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, ref)
    if same_bits:
        np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))


def mismatched_cases(results: Results, *, float_close: bool = False) -> list[str]:
    """The case ids whose nnopt output differs from TFLM's in shape or values (float32
    within 1e-5 relative with ``float_close``, otherwise exactly)."""
    bad = []
    for cid, (ref, got) in results.items():
        if got.shape != ref.shape:
            bad.append(cid)
        elif float_close and got.dtype == np.float32:
            if not np.allclose(got, ref, rtol=1e-5, atol=1e-6):
                bad.append(cid)
        elif not np.array_equal(got, ref):
            bad.append(cid)
    return bad


def assert_cortex_m7_matches(model: bytes, inputs: Sequence[np.ndarray],
                             out_of: Mapping[str, int]) -> None:
    """Each case of a multi-op model as nucleo_f767zi (Cortex-M7) firmware under QEMU
    against TFLM on the host: integer and bool tensors bit-exact, float32 within 1e-5
    relative (the target's libm computes sinf/expf/expm1f ..., TFLM's host build
    glibc's)."""
    from nnopt.boards import load_board
    ref, got = tflm_and_cortex_m7(model, inputs, board=load_board("nucleo_f767zi"))
    for cid, t in out_of.items():
        r, g = ref[t], got[t]
        assert g.shape == r.shape and g.dtype == r.dtype, cid
        if r.dtype == np.float32:
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-30, err_msg=cid)
        else:
            np.testing.assert_array_equal(g, r, err_msg=cid)


def tflm_and_cortex_m7(model: bytes, inputs: Sequence[np.ndarray], *, board: Any = None
                       ) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Every tensor of ``model`` from TFLM (host) and from nnopt's code as Cortex-M7
    firmware under QEMU (file order; on ``board``, e.g. nucleo_f767zi, when given)."""
    _, ref = run_tflm(model, inputs)
    _, got = run_nnopt(model, inputs, target="qemu-m7", board=board,
                       options=PlanOptions(order="file"))
    return ref, got


def differing_tensors(ref: Mapping[int, np.ndarray], got: Mapping[int, np.ndarray],
                      out_of: Mapping[str, int], cases: Iterable[str] | None = None, *,
                      float_close: bool = False, bytewise: bool = False) -> list[str]:
    """The cases (of ``out_of``, or only ``cases``), sorted, whose tensor in ``got``
    differs from TFLM's in ``ref``: in shape, or in values (exactly; float32 within
    1e-5 relative with ``float_close``; byte for byte with ``bytewise``)."""
    bad = []
    for cid in sorted(out_of if cases is None else cases):
        mine, theirs = got[out_of[cid]], ref[out_of[cid]]
        if mine.shape != theirs.shape:
            ok = False
        elif bytewise:
            ok = np.array_equal(mine.view(np.uint8), theirs.view(np.uint8))
        elif float_close and mine.dtype == np.float32:
            ok = np.allclose(mine, theirs, rtol=1e-5, atol=1e-6)
        else:
            ok = np.array_equal(mine, theirs)
        if not ok:
            bad.append(cid)
    return bad


def assert_outputs_match(outs: Sequence[np.ndarray], refs: Sequence[np.ndarray], *,
                         float_close: bool = True) -> None:
    """A model's outputs equal TFLM's (``refs``, in ``outs``' shapes): float32 within
    1e-5 relative (exactly without ``float_close``), others exactly."""
    for o, r in zip(outs, refs, strict=True):
        if float_close and o.dtype == np.float32:
            np.testing.assert_allclose(o, r.reshape(o.shape), rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(o, r.reshape(o.shape))


def compare(graph: Graph, ours: dict[int, np.ndarray], ref: dict[int, np.ndarray],
            order: list[int]) -> None:
    """Assert equality tensor by tensor in execution order; name the first mismatch."""
    compared = 0
    for op_index in order:
        op = graph.op_by_index[op_index]
        for t in op.outputs:
            if t not in ours or t not in ref:
                continue
            a, b = ours[t], ref[t].reshape(ours[t].shape)
            compared += 1
            if a.dtype == np.float32:
                ok = np.allclose(a, b, rtol=1e-5, atol=1e-6)
            else:
                ok = np.array_equal(a, b)
            if not ok:
                diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
                pytest.fail(f"op {op.index} ({op.opcode}) output tensor {t} "
                            f"({graph.tensors[t].name}) differs: max |diff| {diff.max()}, "
                            f"{int((diff > 0).sum())} of {a.size} elements")
    assert compared >= 1


def output_arrays(graph: Graph, raw: Sequence[bytes]) -> list[np.ndarray]:
    """A run's outputs (bytes, in ``graph.outputs``' order) as flat arrays."""
    return [np.frombuffer(d, dtype=NUMPY_DTYPE[graph.tensors[t].dtype])
            for t, d in zip(graph.outputs, raw, strict=True)]


def compare_trace(pm: PlannedModel, raw: Mapping[int, bytes], ref_out: Sequence[np.ndarray],
                  ref_all: Mapping[int, np.ndarray]) -> None:
    """A run's traced tensors (bytes by tensor) equal TFLM's (``ref_all`` and the outputs
    ``ref_out``), compared in the plan's order (:func:`compare`)."""
    g = pm.graph
    ours = {t: np.frombuffer(d, dtype=NUMPY_DTYPE[g.tensors[t].dtype]).reshape(
        g.tensors[t].shape) for t, d in raw.items()}
    ref = {**ref_all, **dict(zip(g.outputs, ref_out, strict=True))}
    compare(g, ours, ref, list(pm.plan.schedule))


def run_fm_exact(pm: PlannedModel, data: bytes, tmp: Any, target: Any,
                 board_name: str | None) -> tuple[Any, Any, Any, list[np.ndarray],
                                                  list[np.ndarray]]:
    """Build a plan with feature maps out of core for ``target`` (the fm harness), run
    it on random inputs (seed 7) and assert its output and every traced tensor equal to
    the tflite-micro interpreter's: (the run's result with its tile counters, the
    executable, the board, the inputs, the reference outputs), for further runs."""
    from nnopt.boards import load_board
    from nnopt.testing.fm_model import build_fm_model, run_fm_model
    from nnopt.testing.harness import random_inputs

    board = load_board(board_name) if board_name else None
    exe = build_fm_model(pm, tmp / "gen", target, board)
    ins = random_inputs(data, 7)
    ref, ref_all = run_tflm(data, ins)
    r = run_fm_model(exe, target, board, tmp, ins)
    assert r.exit_code == 0, r.text
    assert r.output == ref[0].tobytes()
    compare_trace(pm, r.trace, ref, ref_all)
    return r, exe, board, list(ins), list(ref)
