"""Corrupt models are refused at import: the quantisation checks of nnopt.frontend.validate,
and a mutation fuzz over the shipped models (bit flips, truncation, overwritten words).

Each fuzz case is deterministic (its seed picks the mutation) and ends one of two ways: a
clean NnoptError (the CLI: exit 1, a message, no traceback) or a model that plans, and
whose generated C, for the few cases compiled, builds and runs on the host. Never an
uncaught exception, a crash or a hang (library cases run under an alarm, the CLI and
the compiled program under subprocess timeouts).
"""

from __future__ import annotations

import dataclasses
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, model_path
from nnopt.errors import ModelError, NnoptError
from nnopt.frontend.tflite import load_model_bytes
from nnopt.frontend.validate import check_quantization
from nnopt.inputs import random_inputs
from nnopt.ir import ConvOptions, Quant
from nnopt.paths import find_model
from nnopt.planner import plan_model
from nnopt.runner import run_planned
from support.mutation import mutate
from support.tflite_builder import ModelBuilder

# Shipped in models/ (a plain clone has them), small enough to plan in milliseconds.
FUZZ_MODELS = ("tflm/hello_world_int8.tflite", "tflm/hello_world_float.tflite",
               "tflm/micro_speech_quantized.tflite", "mlperf_tiny/kws_ref_model.tflite",
               "keras/lenet5_int8.tflite", "keras/swiftnet_like.tflite")


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging) if the block takes longer than ``seconds``."""
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"hung for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def fuzz_library(rel: str, seeds: range) -> Counter[str]:
    """load_model + plan every mutation; any exception but NnoptError fails the test."""
    data = model_path(rel).read_bytes()
    outcomes: Counter[str] = Counter()
    for seed in seeds:
        kind, bad = mutate(data, seed)
        try:
            with deadline(30):
                plan_model(load_model_bytes(bad, source=f"{Path(rel).name}#{seed}"))
            outcomes["planned"] += 1
        except NnoptError as err:
            assert err.message, f"{rel} seed {seed} ({kind}): NnoptError without a message"
            outcomes[type(err).__name__] += 1
        except Exception as err:  # the point of the test: report which case escaped
            raise AssertionError(f"{rel} seed {seed} ({kind}): uncaught "
                                 f"{type(err).__name__}: {err}") from err
    return outcomes


# ----- the reported case, and each quantisation check -----

def _relu_model(**x_quant: object) -> bytes:
    b = ModelBuilder()
    x = b.tensor((1, 4), "int8", **x_quant)  # type: ignore[arg-type]
    y = b.tensor((1, 4), "int8", scale=0.5, zero_point=-3)
    b.op("RELU", [x], [y])
    return b.build([x], [y])


def _conv_model() -> bytes:
    b = ModelBuilder()
    x = b.tensor((1, 4, 4, 2), "int8", scale=0.5, zero_point=0)
    w = b.const(np.ones((3, 1, 1, 2), np.int8), scale=[0.1, 0.1, 0.1], axis=0)
    bias = b.const(np.zeros(3, np.int32), scale=[0.05, 0.05, 0.05], axis=0)
    y = b.tensor((1, 4, 4, 3), "int8", scale=0.25, zero_point=0)
    b.op("CONV_2D", [x, w, bias], [y], ConvOptions("VALID", 1, 1))
    return b.build([x], [y])


@pytest.mark.parametrize("quant,needle", [
    (Quant((0.1, 0.1), (0, 0), 0), "2 per-channel scales along axis 0, whose dimension is 3"),
    (Quant((0.1,) * 3, (0,) * 3, -1), "3 per-channel scales along axis -1"),
    (Quant((0.1,) * 3, (0, 0), 0), "3 scales but 2 zero points"),
], ids=["count", "axis", "zero-points"])
def test_per_channel_counts_must_match_the_axis(quant: Quant, needle: str) -> None:
    # the test builder refuses to write these; corrupt the imported weight tensor instead
    g = load_model_bytes(_conv_model(), source="conv.tflite")
    w = g.ops[0].inputs[1]
    bad = dataclasses.replace(g, tensors=tuple(
        dataclasses.replace(t, quant=quant) if t.index == w else t for t in g.tensors))
    with pytest.raises(ModelError, match=re.escape(needle)):
        check_quantization(bad, "conv.tflite")


@pytest.mark.parametrize("model,needle", [
    (_relu_model(scale=0.5, zero_point=4_611_686_018_427_388_032),
     "zero point 4611686018427388032, outside [-128, 127]"),
    (_relu_model(scale=0.5, zero_point=128), "zero point 128, outside [-128, 127]"),
    (_relu_model(scale=float("nan"), zero_point=0), "scale nan"),
    (_relu_model(scale=float("inf"), zero_point=0), "scale inf"),
    (_relu_model(scale=-0.5, zero_point=0), "scale -0.5"),
    (_relu_model(scale=0.0, zero_point=0), "scale 0.0"),
    (_relu_model(scale=1e12, zero_point=0), "a fixed-point multiplier must be below 2**31"),
], ids=["zp-2**62", "zp-128", "scale-nan", "scale-inf", "scale-negative", "scale-zero",
        "multiplier"])
def test_corrupt_quantisation_is_refused_at_import(model: bytes, needle: str) -> None:
    with pytest.raises(ModelError) as info:
        load_model_bytes(model, source="bad.tflite")
    msg = str(info.value)
    assert needle in msg and msg.startswith("bad.tflite: ")
    assert "Hint:" in msg


def _reshape_model(zero_point: int) -> bytes:
    b = ModelBuilder()
    x = b.tensor((1, 8), "int8", scale=0.5, zero_point=zero_point)
    shape = b.const(np.array([2, 4], np.int32))
    y = b.tensor((2, 4), "int8", scale=0.5, zero_point=zero_point)
    b.op("RESHAPE", [x, shape], [y])
    return b.build([x], [y])


def test_the_reported_model_exits_1_from_optimize_and_run(tmp_path: Path) -> None:
    # Before validate.py: `optimize` wrote it out and `run` failed compiling the generated
    # C (RESHAPE's lowering has no zero-point check: "overflow in conversion from 'long
    # int' to 'int'"). Now both refuse it at import.
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(_reshape_model(4_611_686_018_427_388_032))
    for cmd in (["optimize", str(bad), "-o", str(tmp_path / "out")],
                ["run", str(bad), "--seed", "1"]):
        res = subprocess.run([sys.executable, "-m", "nnopt.cli", *cmd], capture_output=True,
                             text=True, cwd=REPO, timeout=120)
        assert res.returncode == 1, res.stderr
        assert ("tensor 0 (t0, INT8, shape [1, 8]) has zero point 4611686018427388032, "
                "outside [-128, 127]") in res.stderr
        assert "Traceback" not in res.stderr and "hint:" in res.stderr.lower()
        assert "gcc" not in res.stderr  # refused before any C was generated
    assert not (tmp_path / "out").exists()


def test_the_same_model_with_a_valid_zero_point_runs(tmp_path: Path) -> None:
    pm = plan_model(load_model_bytes(_reshape_model(-3), source="ok.tflite"))
    x = np.arange(-4, 4, dtype=np.int8)
    assert run_planned(pm, [x.tobytes()]).outputs == [x.tobytes()]


def test_corrupt_offsets_are_refused_not_followed() -> None:
    data = bytearray(model_path("tflm/hello_world_int8.tflite").read_bytes())
    data[0:4] = (len(data) + 64).to_bytes(4, "little")  # root table past the end
    with pytest.raises(ModelError, match="corrupt model: root table"):
        load_model_bytes(bytes(data), source="m.tflite")
    # a vtable offset pointing before the file: Python would read it from the end
    data = bytearray(model_path("tflm/hello_world_int8.tflite").read_bytes())
    root = int.from_bytes(data[0:4], "little")
    data[root:root + 4] = (root + 1000).to_bytes(4, "little", signed=True)
    with pytest.raises(ModelError, match="vtable at -1000 outside the file"):
        load_model_bytes(bytes(data), source="m.tflite")


def _field_pos(table: object, slot: int) -> int:
    tab = table._tab  # type: ignore[attr-defined]
    return int(tab.Pos + tab.Offset(4 + 2 * slot))


@pytest.mark.parametrize("what", ["buffer", "opcode"])
def test_corrupt_indices_are_refused_not_ignored(what: str) -> None:
    """An out-of-range buffer index used to import as "no data" (an activation), an
    out-of-range operator-code index read whatever lay past the table."""
    import tflite

    data = bytearray(model_path("mlperf_tiny/kws_ref_model.tflite").read_bytes())
    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    if what == "buffer":
        k = next(i for i in range(sg.TensorsLength()) if sg.Tensors(i).Buffer())
        pos = _field_pos(sg.Tensors(k), 2)  # Tensor.buffer
        needle = f"tensor {k} names buffer 4096"
    else:  # a field at its default (0) is absent from the vtable: take a non-zero one
        k = next(i for i in range(sg.OperatorsLength()) if sg.Operators(i).OpcodeIndex())
        pos = _field_pos(sg.Operators(k), 0)  # Operator.opcode_index
        needle = f"op {k} names operator code 4096"
    data[pos:pos + 4] = (4096).to_bytes(4, "little")
    with pytest.raises(ModelError, match=needle):
        load_model_bytes(bytes(data), source="m.tflite")


def test_the_shipped_models_pass_validation() -> None:
    """The shared models are imported by test_frontend's test_real_models_import_and_verify;
    these are the ones every clone has, plus person_detect (rank-1 biases with axis 3)."""
    from conftest import SHIPPED

    rels = [*(p.name for p in SHIPPED.glob("*.tflite")), "tflm/person_detect.tflite"]
    for rel in rels:
        if rel.startswith("tflm/") and find_model(rel) is None:
            continue  # not shipped: only where the shared set is
        try:
            load_model_bytes(model_path(rel).read_bytes(), source=rel)
        except ModelError as err:
            raise AssertionError(f"{rel} refused: {err}") from err


# ----- the fuzz -----

@pytest.mark.parametrize("rel", FUZZ_MODELS[:3])
def test_fuzzed_models_fail_cleanly_or_plan(rel: str) -> None:
    """Default suite: ~50 library-level cases, a second or two."""
    outcomes = fuzz_library(rel, range(17))
    assert sum(outcomes.values()) == 17


@pytest.mark.slow
@pytest.mark.parametrize("rel", FUZZ_MODELS)
def test_fuzzed_models_fail_cleanly_or_plan_long(rel: str) -> None:
    """Slow suite: 600 cases per model, 3,600 in all."""
    outcomes = fuzz_library(rel, range(1000, 1600))
    assert sum(outcomes.values()) == 600
    assert outcomes["planned"] and sum(v for k, v in outcomes.items() if k != "planned")


def _planned_cases(rel: str, n: int, start: int) -> Iterator[tuple[int, bytes]]:
    data = model_path(rel).read_bytes()
    for seed in range(start, start + 400):
        if n == 0:
            return
        bad = mutate(data, seed)[1]
        try:
            pm = plan_model(load_model_bytes(bad, source=f"{rel}#{seed}"))
        except NnoptError:
            continue
        n -= 1
        yield seed, bad
        del pm


@pytest.mark.parametrize("rel,n,slow", [
    ("tflm/hello_world_int8.tflite", 2, False),
    ("tflm/micro_speech_quantized.tflite", 1, False),
    pytest.param("keras/lenet5_int8.tflite", 6, True, marks=pytest.mark.slow),
    pytest.param("mlperf_tiny/kws_ref_model.tflite", 6, True, marks=pytest.mark.slow),
    pytest.param("tflm/hello_world_float.tflite", 6, True, marks=pytest.mark.slow),
], ids=lambda v: Path(v).stem if isinstance(v, str) else str(v))
def test_fuzzed_models_that_plan_compile_and_run(rel: str, n: int, slow: bool) -> None:
    """A mutated model that imports and plans generates C that compiles (warnings are
    errors) and runs under ASan/UBSan on the host."""
    ran = 0
    for seed, bad in _planned_cases(rel, n, 5000 if slow else 0):
        pm = plan_model(load_model_bytes(bad, source=f"{rel}#{seed}"))
        inputs = [x.tobytes() for x in random_inputs(pm.graph, 1)]
        try:
            out = run_planned(pm, inputs, sanitize=True)
        except NnoptError as err:
            raise AssertionError(f"{rel} seed {seed}: planned but failed to build/run: "
                                 f"{err}") from err
        assert len(out.outputs) == len(pm.graph.outputs)
        ran += 1
    assert ran == n


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_fuzzed_models_on_the_cli_exit_cleanly(seed: int, tmp_path: Path) -> None:
    bad = tmp_path / "m.tflite"
    bad.write_bytes(mutate(model_path("tflm/hello_world_int8.tflite").read_bytes(), seed)[1])
    res = subprocess.run([sys.executable, "-m", "nnopt.cli", "optimize", str(bad),
                          "-o", str(tmp_path / "out")], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert res.returncode in (0, 1), res.stderr
    assert "Traceback" not in res.stderr
    if res.returncode == 1:
        assert "error:" in res.stderr


# ----- the int16 / int64 paths of issue 44: mutated and malformed models -----

def _wide_paths_model() -> bytes:
    """One op of each new path: int16 ADD/SUB/MUL, int16 RELU6/LEAKY_RELU, int16 pools,
    int16 SOFTMAX, int64 MAXIMUM/MINIMUM and CONCATENATION, bool SLICE, CAST to and from
    uint32, float64 -> float32 (the model boundary)."""
    b = ModelBuilder("wide_paths")
    q = {"scale": 2e-3, "zero_point": 0}
    x = b.tensor((1, 4, 4, 2), "int16", name="x", **q)
    outs = []
    for opcode in ("ADD", "SUB", "MUL", "RELU6", "LEAKY_RELU", "MAX_POOL_2D",
                   "AVERAGE_POOL_2D"):
        pool = opcode.endswith("POOL_2D")
        y = b.tensor((1, 2, 2, 2) if pool else (1, 4, 4, 2), "int16", name=opcode, **q)
        if pool:
            b.op(opcode, [x], [y], {"padding": "VALID", "stride_w": 2, "stride_h": 2,
                                    "filter_width": 2, "filter_height": 2})
        elif opcode in ("RELU6", "LEAKY_RELU"):
            b.op(opcode, [x], [y])
        else:
            b.op(opcode, [x, x], [y])
        outs.append(y)
    sm = b.tensor((1, 4, 4, 2), "int16", name="softmax", scale=1 / 32768, zero_point=0)
    b.op("SOFTMAX", [x], [sm], {"beta": 1.0})
    outs.append(sm)
    u = b.tensor((2, 3), "uint32", name="u")
    for dt in ("int32", "float32", "uint32"):
        y = b.tensor((2, 3), dt, name=f"cast_u32_{dt}")
        b.op("CAST", [u], [y])
        outs.append(y)
    d = b.tensor((5,), "float64", name="d")
    f = b.tensor((5,), "float32", name="d32")
    b.op("CAST", [d], [f])
    outs.append(f)
    a = b.tensor((2, 3), "int64", name="a")
    for opcode in ("MAXIMUM", "MINIMUM"):
        y = b.tensor((2, 3), "int64", name=opcode)
        b.op(opcode, [a, a], [y])
        outs.append(y)
    cat = b.tensor((4, 3), "int64", name="cat")
    b.op("CONCATENATION", [a, a], [cat], {"axis": 0})
    m = b.tensor((3, 4), "bool", name="m")
    sl = b.tensor((2, 2), "bool", name="sl")
    b.op("SLICE", [m, b.const(np.array([1, 1], np.int32)), b.const(np.array([2, 2], np.int32))],
         [sl])
    return b.build([x, u, d, a, m], [*outs, cat, sl])


def test_the_wide_paths_model_compiles(tmp_path: Path) -> None:
    from nnopt.codegen.c_model import generate

    generate(plan_model(load_model_bytes(_wide_paths_model())), tmp_path)
    assert any(tmp_path.glob("*_model.c"))


def test_mutated_wide_paths_models_fail_cleanly_or_compile(tmp_path: Path) -> None:
    """Bit flips, truncations and overwritten words of the model: each either plans
    and generates C, or is an NnoptError with a message; never a traceback."""
    from nnopt.codegen.c_model import generate

    data = _wide_paths_model()
    outcomes: Counter[str] = Counter()
    for seed in range(150):
        kind, bad = mutate(data, seed)
        try:
            with deadline(30):
                generate(plan_model(load_model_bytes(bad, source=f"wide#{seed}")), tmp_path)
            outcomes["compiled"] += 1
        except NnoptError as err:
            assert err.message, f"seed {seed} ({kind}): NnoptError without a message"
            outcomes[type(err).__name__] += 1
        except Exception as err:
            raise AssertionError(f"seed {seed} ({kind}): uncaught {type(err).__name__}: "
                                 f"{err}") from err
    assert outcomes["compiled"] and sum(outcomes.values()) == 150


def _one(opcode: str, ins: list[tuple[tuple[int, ...], str, dict[str, object]]],
         out: tuple[tuple[int, ...], str, dict[str, object]], options: object = None) -> bytes:
    b = ModelBuilder("malformed")
    xs = [b.tensor(s, d, **q) for s, d, q in ins]  # type: ignore[arg-type]
    y = b.tensor(out[0], out[1], **out[2])  # type: ignore[arg-type]
    b.op(opcode, xs, [y], options)
    return b.build(xs, [y])


_Q16 = {"scale": 1e-3, "zero_point": 0}


@pytest.mark.parametrize("model,needle", [
    # int16 ADD whose output scale is too small for TFLM's rescale factors
    (_one("ADD", [((4,), "int16", _Q16)] * 2, ((4,), "int16", {"scale": 1e-12,
                                                             "zero_point": 0})), "rescale"),
    # int16 ADD of an int16 and an int8 input
    (_one("ADD", [((4,), "int16", _Q16), ((4,), "int8", _Q16)], ((4,), "int16", _Q16)),
     "int16 inputs for an int16 output"),
    # int16 SUB without quantisation
    (_one("SUB", [((4,), "int16", {})] * 2, ((4,), "int16", _Q16)),
     "no quantisation parameters"),
    # int16 max pool whose output quantisation differs from the input's
    (_one("MAX_POOL_2D", [((1, 4, 4, 1), "int16", _Q16)],
          ((1, 2, 2, 1), "int16", {"scale": 2e-3, "zero_point": 0}),
          {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2,
           "filter_height": 2}), "differs from output"),
    # int64 MAXIMUM whose shapes do not broadcast
    (_one("MAXIMUM", [((3,), "int64", {}), ((4,), "int64", {})], ((4,), "int64", {})),
     "do not broadcast"),
    # int64 CONCATENATION with an int32 input
    (_one("CONCATENATION", [((2,), "int64", {}), ((2,), "int32", {})], ((4,), "int64", {}),
          {"axis": 0}), "INT32"),
    # int16 RELU6 without quantisation
    (_one("RELU6", [((4,), "int16", {})], ((4,), "int16", {})), "quantisation"),
    # int16 SOFTMAX: an output scale other than TFLM's 1/32768, an input zero point
    (_one("SOFTMAX", [((1, 8), "int16", _Q16)], ((1, 8), "int16", {"scale": 1 / 256,
                                                                  "zero_point": 0}),
          {"beta": 1.0}), "1/32768"),
    (_one("SOFTMAX", [((1, 8), "int16", {"scale": 1e-3, "zero_point": 4})],
          ((1, 8), "int16", {"scale": 1 / 32768, "zero_point": 0}), {"beta": 1.0}),
     "zero points 0"),
    # CAST from uint32 to bool (TFLM's cast.cc gives no bool), of another element count;
    # float64 to int32 (only float64 -> float32 crosses the boundary)
    (_one("CAST", [((4,), "uint32", {})], ((4,), "bool", {})), "UINT32, shape [4]) -> "
     "tensor 1 (t1, BOOL"),
    (_one("CAST", [((4,), "uint32", {})], ((5,), "int32", {})), "INT32, shape [5])"),
    (_one("CAST", [((4,), "float64", {})], ((4,), "int32", {})), "FLOAT64, shape [4]) -> "
     "tensor 1 (t1, INT32"),
], ids=["add16-tiny-scale", "add16-mixed", "sub16-unquantised", "maxpool16-requant",
        "max64-broadcast", "concat64-mixed", "relu6-16-unquantised", "softmax16-scale",
        "softmax16-zero-point", "cast-u32-bool", "cast-u32-count", "cast-f64-int"])
def test_malformed_wide_paths_are_refused_with_a_reason(model: bytes, needle: str) -> None:
    from nnopt.errors import UnsupportedError
    from nnopt.ops import check_graph

    with pytest.raises(NnoptError) as err:
        check_graph(load_model_bytes(model))
    assert isinstance(err.value, (UnsupportedError, ModelError))
    assert needle in str(err.value) and err.value.hint, str(err.value)
