"""Models loaded at run time: ``nnopt optimize --emit blob`` and nnrt's loader.

- every model whose ops the blob format carries runs bit-exact with the tflite-micro
  interpreter on every intermediate tensor (host, and on QEMU Cortex-M7), with the
  allocator's high-water mark and bytes moved equal to the dynamic mode's prediction;
- corrupt, truncated and version-mismatched blobs give the defined status code;
- a mutation fuzzer (tests/alloc/blob_fuzz_main.c, ASan + UBSan, guard zones after
  the blob, the arena and the work memory) never crashes the loader;
- ops outside the format are refused at ``--emit blob`` time, naming them;
- the generated C tables equal what scripts/nnopt/blob/schema.py defines.
"""

from __future__ import annotations

import dataclasses
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import REPO, model_path
from nnopt.blob import schema as S
from nnopt.blob.writer import parse_blob, seal, write_blob
from nnopt.cdefs import Status
from nnopt.errors import BlobError, UnsupportedError
from nnopt.firmware.toolchain import BuildSpec, Target, build, run
from nnopt.frontend.tflite import load_model_bytes
from nnopt.ops import DEFINITIONS
from nnopt.ops.base import Kernel
from nnopt.paths import nnrt_dir
from nnopt.planner import PlannedModel, plan_model, with_dynamic
from nnopt.runner import build_runtime
from nnopt.testing.blob import EXIT, BlobRun, run_blob
from nnopt.testing.harness import random_inputs, run_tflm
from support.cases import assert_outputs_match, compare_trace, output_arrays
from support.markers import needs_qemu
from support.model_checks import SLOW
from support.tflite_builder import ModelBuilder

FUZZER = REPO / "tests" / "alloc" / "blob_fuzz_main.c"
# Models whose every op the blob format carries.
SUPPORTED = ["mlperf_tiny/vww_96_int8.tflite", "tflm/person_detect.tflite",
             "mlperf_tiny/kws_ref_model.tflite", "keras/lenet5_int8.tflite",
             "keras/lenet5_float.tflite", "tflm/hello_world_int8.tflite",
             "tflm/hello_world_float.tflite", "tflm/micro_speech_quantized.tflite",
             "mlperf_tiny/ad01_int8.tflite", "keras/mobilenet_v2_035_96.tflite",
             "mlperf_tiny/pretrainedResnet_quant.tflite",
             "keras/mobilenet_v3_small_075_96.tflite", "keras/swiftnet_like.tflite",
             "keras/inception_v3_w025_75.tflite", "keras/resnet50_w025_64.tflite",
             "keras/densenet121_64.tflite", "tflm/mobilenet_v2_quantized_1x3x224x224.tflite"]
def _planned(rel: str) -> tuple[bytes, PlannedModel]:
    data = model_path(rel).read_bytes()
    return data, with_dynamic(plan_model(load_model_bytes(data, name=Path(rel).stem),
                                         source_bytes=data))


def _bit_exact(rel: str, tmp: Path, target: Target, trace: bool) -> BlobRun:
    data, pm = _planned(rel)
    blob = write_blob(pm)
    dyn = pm.facts.dynamic_for("dynamic")
    inputs = random_inputs(data, 3)
    ref_out, ref_all = run_tflm(data, inputs)
    res = run_blob(blob, [x.tobytes() for x in inputs], len(ref_out), tmp, target=target,
                   trace=trace, sanitize=target == "host")
    assert res.exit_code == 0, res.text
    g = pm.graph
    assert_outputs_match(output_arrays(g, res.outputs), ref_out)
    if trace:
        compare_trace(pm, res.trace, ref_out, ref_all)
        assert res.stats is not None
        high_water, capacity, lo, hi, compactions = res.stats
        assert (high_water, capacity) == (dyn.arena_bytes, dyn.arena_bytes)
        assert lo | hi << 32 == dyn.bytes_moved and compactions == dyn.compactions
    return res


# ----- generated tables -----

def test_c_tables_match_the_schema() -> None:
    text = (nnrt_dir() / "src" / "loader" / "blob_schema.h").read_text()
    assert text == S.c_header(), "regenerate: python -m nnopt.blob.schema > " \
        "modules/nnrt/src/loader/blob_schema.h"
    dispatch = (nnrt_dir() / "src" / "loader" / "blob_dispatch.c").read_text()
    assert dispatch == S.c_dispatch(), "regenerate: python -m nnopt.blob.schema dispatch > " \
        "modules/nnrt/src/loader/blob_dispatch.c"
    # every kernel of the schema has its generated glue and a family checker
    for k in S.KERNELS:
        assert f"static nnrt_status_t k_{k.function.removeprefix('nnrt_')}(" in dispatch
        assert f"return {k.function}(" in dispatch
        assert f"nnrt_blob_check_{S.C_CHECKS[k.function]}(" in dispatch
    h = (nnrt_dir() / "include" / "nnrt" / "loader.h").read_text()
    m = re.search(r"/\* BEGIN GENERATED[^\n]*\n(.*?)\n/\* END GENERATED \*/", h, re.S)
    assert m is not None and m.group(1) == S.c_constants()


def test_checker_prototypes_in_the_header_their_definitions_include() -> None:
    """The family checkers' prototypes are generated into blob_checks.h, which the kernel
    table and every loader_<family>.c defining a checker include (issue 43): the
    compiler checks each definition against the prototype the table calls."""
    loader = nnrt_dir() / "src" / "loader"
    checks = (loader / "blob_checks.h").read_text()
    assert checks == S.c_checks(), "regenerate: python -m nnopt.blob.schema checks > " \
        "modules/nnrt/src/loader/blob_checks.h"
    assert '#include "blob_checks.h"' in (loader / "blob_dispatch.c").read_text()
    assert "nnrt_status_t nnrt_blob_check_" not in S.c_dispatch()  # declared once
    defined: dict[str, str] = {}
    for src in sorted(loader.glob("loader_*.c")):
        text = src.read_text()
        names = re.findall(r"^nnrt_status_t (nnrt_blob_check_\w+)\(", text, re.M)
        if names:
            assert '#include "blob_checks.h"' in text, src.name
        for name in names:
            assert name not in defined, (name, src.name, defined.get(name))
            defined[name] = src.name
    declared = set(re.findall(r"^nnrt_status_t (nnrt_blob_check_\w+)\(", checks, re.M))
    assert declared == set(defined), declared ^ set(defined)


def test_kernel_ids_come_from_the_operator_definitions() -> None:
    """The blob's kernels and their ids are the definitions' (``OpDef.kernels``, issue
    43): every op the blob carries names its kernels, and a kernel id or function given
    twice with different data is refused."""
    assert S.registry_kernels(DEFINITIONS.values()) == S.KERNELS
    assert [k.id for k in S.KERNELS] == sorted({k.id for k in S.KERNELS})
    for d in DEFINITIONS.values():
        assert bool(d.kernels) == d.blob, d.opcode
        assert all(S.KERNEL_BY_FUNCTION[k.function] is k for k in d.kernels)
    add, sub = DEFINITIONS["ADD"], DEFINITIONS["SUB"]
    same_id = dataclasses.replace(sub, kernels=(Kernel(add.kernels[0].id, "nnrt_x_s8",
                                                       ("tensor",), "x"),))
    with pytest.raises(ValueError, match="clashes"):
        S.registry_kernels([add, same_id])
    moved = dataclasses.replace(sub, kernels=(dataclasses.replace(add.kernels[0], id=99),))
    with pytest.raises(ValueError, match="clashes"):
        S.registry_kernels([add, moved])
    with pytest.raises(ValueError, match="blob=False"):
        S.registry_kernels([dataclasses.replace(add, blob=False)])


# ----- running -----

@pytest.mark.parametrize("rel", [pytest.param(r, marks=[pytest.mark.slow] if r in SLOW else [],
                                              id=Path(r).stem) for r in SUPPORTED])
def test_blob_bit_exact_on_host(rel: str, tmp_path: Path) -> None:
    _bit_exact(rel, tmp_path, "host", trace=True)


@needs_qemu
@pytest.mark.qemu
@pytest.mark.parametrize("rel", ["mlperf_tiny/vww_96_int8.tflite", "keras/lenet5_float.tflite"],
                         ids=lambda r: Path(r).stem)
def test_blob_bit_exact_on_cortex_m7(rel: str, tmp_path: Path) -> None:
    res = _bit_exact(rel, tmp_path, "qemu-m7", trace=False)
    assert res.instructions is not None and res.instructions > 0


def leaky_model() -> bytes:
    """FC then LEAKY_RELU: an op with a kernel but outside the blob format."""
    b = ModelBuilder("leaky")
    x = b.tensor((1, 4), "float32")
    w = b.const(np.ones((3, 4), dtype=np.float32))
    h = b.tensor((1, 3), "float32")
    y = b.tensor((1, 3), "float32")
    b.op("FULLY_CONNECTED", [x, w, -1], [h], {"fused_activation_function": "NONE"})
    b.op("LEAKY_RELU", [h], [y], {"alpha": 0.1})
    return b.build([x], [y])


def test_unsupported_ops_are_refused_at_emit_time() -> None:
    pm = with_dynamic(plan_model(load_model_bytes(leaky_model(), name="leaky")))
    with pytest.raises(UnsupportedError, match=r"op 1 \(LEAKY_RELU\)") as err:
        write_blob(pm)
    assert "FULLY_CONNECTED" not in err.value.message and err.value.hint
    assert "CONV_2D" in err.value.hint and "--emit c" in err.value.hint


def test_emit_blob_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from nnopt.cli import main

    model = str(model_path("mlperf_tiny/kws_ref_model.tflite"))
    # The static default plans in-place ops; the blob is written from a whole-tensor plan.
    assert main(["optimize", model, "--table", "none", "-o", str(tmp_path),
                 "--emit", "blob", "--inplace-ops", "auto"]) == 0
    out = capsys.readouterr().out
    blob = (tmp_path / "kws_ref_model.nnmb").read_bytes()
    assert "kws_ref_model.nnmb" in out and "arena of" in out
    assert not (tmp_path / "kws_ref_model_model.c").exists()
    assert parse_blob(blob).header["n_steps"] == 13
    (tmp_path / "leaky.tflite").write_bytes(leaky_model())
    assert main(["optimize", str(tmp_path / "leaky.tflite"), "--table", "none", "-o",
                 str(tmp_path), "--emit", "blob"]) == 1
    assert "cannot be written as a blob" in capsys.readouterr().err


# ----- corrupt blobs -----

@pytest.fixture(scope="module")
def small_blob() -> bytes:
    return write_blob(_planned("keras/lenet5_int8.tflite")[1])


def _status(blob: bytes, tmp: Path) -> int | None:
    res = run_blob(blob, [], 0, tmp, check_only=True)
    assert res.exit_code in EXIT.values(), res.text  # a status, not a crash
    return res.status


def test_intact_blob_checks(small_blob: bytes, tmp_path: Path) -> None:
    assert _status(small_blob, tmp_path) == Status.OK


def test_flipped_bytes_fail_the_checksum(small_blob: bytes, tmp_path: Path) -> None:
    for pos in (0x10, 0x40, len(small_blob) // 2, len(small_blob) - 1):
        bad = bytearray(small_blob)
        bad[pos] ^= 0x20
        assert _status(bytes(bad), tmp_path) == Status.ERR_FORMAT, pos


def test_truncated_blobs(small_blob: bytes, tmp_path: Path) -> None:
    for n in (0, 10, 63, 64, 200, len(small_blob) - 1):
        assert _status(small_blob[:n], tmp_path) == Status.ERR_FORMAT, n


def test_version_mismatch(small_blob: bytes, tmp_path: Path) -> None:
    bad = bytearray(small_blob)
    bad[4:6] = struct.pack("<H", S.FORMAT_VERSION + 1)
    assert _status(seal(bad), tmp_path) == Status.ERR_UNSUPPORTED
    with pytest.raises(BlobError, match="version"):
        parse_blob(seal(bad))


def test_bad_magic_flags_and_kernel(small_blob: bytes, tmp_path: Path) -> None:
    bad = bytearray(small_blob)
    bad[0:4] = b"NNSW"
    assert _status(seal(bad), tmp_path) == Status.ERR_FORMAT
    bad = bytearray(small_blob)
    bad[16:20] = struct.pack("<I", 1)
    assert _status(seal(bad), tmp_path) == Status.ERR_UNSUPPORTED
    p = parse_blob(small_blob)
    bad = bytearray(small_blob)
    bad[p.header["steps_off"]:p.header["steps_off"] + 2] = struct.pack("<H", 99)
    assert _status(seal(bad), tmp_path) == Status.ERR_UNSUPPORTED


def test_parameters_that_do_not_fit_their_tensors(small_blob: bytes, tmp_path: Path) -> None:
    """A consistent checksum does not make wrong geometry acceptable."""
    p = parse_blob(small_blob)
    conv = next(i for i, s in enumerate(p.steps) if s.kernel == 1)
    rec = p.header["data_off"] + sum(len(s.params) for s in p.steps[:conv])
    for word, value in ((1, 1000), (0, 2), (4, 0x10000), (16, 1000)):
        bad = bytearray(small_blob)
        bad[rec + 4 * word:rec + 4 * word + 4] = struct.pack("<I", value)
        assert _status(seal(bad), tmp_path) == Status.ERR_FORMAT, (word, value)


def test_lifetime_violations_are_refused(small_blob: bytes, tmp_path: Path) -> None:
    """A step reading a buffer freed earlier, or a free list naming a dead handle."""
    p = parse_blob(small_blob)
    lists = p.header["lists_off"]
    # Free the first step's output right after it (in place of its real free list).
    first = p.steps[0]
    assert first.free
    out_handle = p.tensors[first.args[-1]][3]
    na = len(first.args) + len(first.alloc)
    bad = bytearray(small_blob)
    bad[lists + 2 * na:lists + 2 * na + 2] = struct.pack("<H", out_handle)
    assert _status(seal(bad), tmp_path) == Status.ERR_FORMAT


def elementwise_model() -> bytes:
    """ADD, SUB, MUL, MAXIMUM, MINIMUM with broadcasting, MEAN, activations,
    CONCATENATION, PAD and TRANSPOSE, int8 and float32: small enough to fuzz, and the
    families no shared small model has."""
    b = ModelBuilder("blob elementwise")
    ins, outs = [], []
    for dt in ("int8", "float32"):
        def q(scale: float, zp: int, dt: str = dt) -> dict[str, Any]:
            return {"scale": scale, "zero_point": zp} if dt == "int8" else {}
        x = b.tensor((1, 4, 3, 8), dt, name=f"{dt}/x", **q(0.05, -3))
        v = b.tensor((8,), dt, name=f"{dt}/v", **q(0.04, 2))
        t = [b.tensor((1, 4, 3, 8), dt, name=f"{dt}/t{i}", **q(0.1 + 0.05 * i, i - 2))
             for i in range(5)]
        b.op("ADD", [x, v], [t[0]], {"fused_activation_function": "RELU"})
        b.op("MUL", [t[0], x], [t[1]], {"fused_activation_function": "NONE"})
        b.op("SUB", [t[1], v], [t[2]], {"fused_activation_function": "NONE"})
        b.op("MAXIMUM", [t[2], x], [t[3]])
        b.op("MINIMUM", [t[3], t[0]], [t[4]])
        axes = b.const(np.array([1, 2], dtype=np.int32), name=f"{dt}/axes")
        m = b.tensor((1, 8), dt, name=f"{dt}/m", **q(0.2, 1))
        b.op("MEAN", [t[4], axes], [m], {"keep_dims": False})
        acts = ["HARD_SWISH", "RELU6"] if dt == "int8" else [
            "HARD_SWISH", "RELU", "RELU6", "LOGISTIC", "TANH"]
        for k, opcode in enumerate(acts):
            y = b.tensor((1, 8), dt, name=f"{dt}/a{k}", **q(0.2 if k else 0.05, 1))
            b.op(opcode, [m], [y])
            m = y
        cc = b.tensor((1, 4, 3, 24), dt, name=f"{dt}/cc", **q(0.05, -3))
        b.op("CONCATENATION", [x, x, x], [cc], {"axis": 3, "fused_activation_function": "NONE"})
        pads = b.const(np.array([[0, 0], [1, 1], [0, 2], [0, 0]], dtype=np.int32))
        pd = b.tensor((1, 6, 5, 8), dt, name=f"{dt}/pad", **q(0.05, -3))
        b.op("PAD", [x, pads], [pd])
        perm = b.const(np.array([0, 2, 1, 3], dtype=np.int32))
        tr = b.tensor((1, 3, 4, 8), dt, name=f"{dt}/tr", **q(0.05, -3))
        b.op("TRANSPOSE", [x, perm], [tr])
        ins += [x, v]
        outs += [m, cc, pd, tr]
    return b.build(ins, outs)


def test_elementwise_and_mean_blob_bit_exact(tmp_path: Path) -> None:
    model = elementwise_model()
    pm = with_dynamic(plan_model(load_model_bytes(model, name="elementwise")))
    blob = write_blob(pm)
    kernels = {s.kernel for s in parse_blob(blob).steps}
    assert kernels >= set(range(15, 34)) | {36, 37, 38}  # + concat, pad, strided copy
    inputs = random_inputs(model, 4)
    ref_out, ref_all = run_tflm(model, inputs)
    res = run_blob(blob, [x.tobytes() for x in inputs], len(ref_out), tmp_path, trace=True)
    assert res.exit_code == 0, res.text
    compare_trace(pm, res.trace, ref_out, ref_all)


# ----- fuzzing -----

def fuzzer() -> Path:
    lib = build_runtime("host", sanitize=True)
    return build(BuildSpec(target="host", sources=(FUZZER,), sanitize=True, libraries=(lib,)))


FUZZ = [("keras/lenet5_int8.tflite", 800), ("keras/lenet5_float.tflite", 200),
        ("tflm/micro_speech_quantized.tflite", 300), ("tflm/hello_world_float.tflite", 2000),
        ("mlperf_tiny/ad01_int8.tflite", 300), ("elementwise", 1500)]


@pytest.mark.parametrize("rel,iterations", [
    *FUZZ, *(pytest.param(rel, n * 20, marks=pytest.mark.slow, id=f"{Path(rel).stem}-long")
             for rel, n in FUZZ)], ids=lambda v: Path(str(v)).stem)
def test_fuzzed_blobs_never_crash(rel: str, iterations: int, tmp_path: Path) -> None:
    if rel == "elementwise":
        blob = write_blob(with_dynamic(plan_model(load_model_bytes(elementwise_model(),
                                                                   name="ew"))))
    else:
        blob = write_blob(_planned(rel)[1])
    path = tmp_path / "model.nnmb"
    path.write_bytes(blob)
    res = run(fuzzer(), "host", [str(path), str(len(blob)), "7", str(iterations)],
              timeout_s=600)
    assert res.exit_code == 0, res.stdout + res.stderr
    m = re.search(r"fuzz: iterations=(\d+) ok=(\d+) format=(\d+) unsupported=(\d+) "
                  r"other=(\d+) ran=(\d+)", res.stdout)
    assert m is not None, res.stdout
    total, ok, fmt, unsup, other, ran = map(int, m.groups())
    assert total == iterations == ok + fmt + unsup + other
    assert fmt > iterations // 4  # most mutations are caught
    assert ran > 0  # and some mutated blobs still pass every check and run


def test_views_of_a_slice_run_from_the_blob(tmp_path: Path) -> None:
    # Contiguous STRIDED_SLICE outputs planned as views of their input: the tensor
    # table gives each its byte offset within the input's block.
    b = ModelBuilder("blob views")
    q: dict[str, Any] = {"scale": 0.1, "zero_point": 3}
    x = b.tensor((1, 2, 16), "int8", name="x", **q)
    rows = [b.tensor((1, 1, 16), "int8", **q) for _ in range(2)]
    for k, r in enumerate(rows):
        b.op("STRIDED_SLICE", [x, b.const(np.array([0, k, 0], dtype=np.int32)),
                               b.const(np.array([1, k + 1, 16], dtype=np.int32)),
                               b.const(np.array([1, 1, 1], dtype=np.int32))], [r])
    y = b.tensor((1, 1, 16), "int8", name="y", scale=0.2, zero_point=-1)
    b.op("ADD", [rows[1], rows[0]], [y], {"fused_activation_function": "NONE"})
    model = b.build([x], [y])
    pm = with_dynamic(plan_model(load_model_bytes(model, name="views")))
    assert pm.plan.views
    blob = write_blob(pm)
    assert sorted(t[4] for t in parse_blob(blob).tensors if t[2] == S.KIND_ACTIVATION)[-1] == 16
    inputs = random_inputs(model, 5)
    ref_out, _ = run_tflm(model, inputs)
    res = run_blob(blob, [v.tobytes() for v in inputs], 1, tmp_path)
    assert res.exit_code == 0, res.text
    np.testing.assert_array_equal(np.frombuffer(res.outputs[0], np.int8), ref_out[0].reshape(-1))


# ----- the int16 / int32 / int64 kernels (issue 44) in the blob -----

def _wide_model() -> bytes:
    """int16 ADD/SUB/MUL, int32 ADD/MUL, int16/int32/int64 MAXIMUM/MINIMUM, int16 pools,
    int16 RELU6 and int16 SOFTMAX: every kernel beyond int8/float32 the blob carries."""
    b = ModelBuilder("wide")
    q16 = {"scale": 2e-3, "zero_point": 0}
    x = b.tensor((1, 6, 5, 4), "int16", name="x", **q16)
    v = b.tensor((4,), "int16", name="v", **q16)
    outs = []
    for opcode in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        y = b.tensor((1, 6, 5, 4), "int16", name=f"{opcode.lower()}_s16", **q16)
        b.op(opcode, [x, v], [y], None if opcode in ("MAXIMUM", "MINIMUM") else
             {"fused_activation_function": "RELU"})
        outs.append(y)
    for opcode in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
        y = b.tensor((1, 3, 3, 4), "int16", name=opcode.lower(), **q16)
        b.op(opcode, [x], [y], {"padding": "SAME", "stride_w": 2, "stride_h": 2,
                                "filter_width": 2, "filter_height": 2})
        outs.append(y)
    r6 = b.tensor((1, 6, 5, 4), "int16", name="relu6", **q16)
    b.op("RELU6", [x], [r6])
    outs.append(r6)
    sm = b.tensor((1, 6, 5, 4), "int16", name="softmax", scale=1 / 32768, zero_point=0)
    b.op("SOFTMAX", [x], [sm], {"beta": 1.0})
    outs.append(sm)
    ins = [x, v]
    for dt, codes in (("int32", ("ADD", "MUL", "MAXIMUM", "MINIMUM")),
                      ("int64", ("MAXIMUM", "MINIMUM"))):
        a = b.tensor((3, 8), dt, name=f"a_{dt}")
        c = b.tensor((8,), dt, name=f"c_{dt}")
        ins += [a, c]
        for opcode in codes:
            y = b.tensor((3, 8), dt, name=f"{opcode.lower()}_{dt}")
            b.op(opcode, [a, c], [y])
            outs.append(y)
    return b.build(ins, outs)


def test_wide_kernels_run_from_the_blob_bit_exact(tmp_path: Path) -> None:
    model = _wide_model()
    pm = with_dynamic(plan_model(load_model_bytes(model, name="wide")))
    blob = write_blob(pm)
    kernels = {s.kernel for s in parse_blob(blob).steps}
    assert kernels == set(range(39, 54))  # every new kernel id
    inputs = random_inputs(model, 5)
    ref_out, ref_all = run_tflm(model, inputs)
    res = run_blob(blob, [x.tobytes() for x in inputs], len(ref_out), tmp_path, trace=True)
    assert res.exit_code == 0, res.text
    compare_trace(pm, res.trace, ref_out, ref_all)


def test_a_kernel_the_blob_lacks_is_refused_by_name() -> None:
    """int16 LOGISTIC: the op is in the blob (int8, float32), its int16 kernel is not."""
    b = ModelBuilder("logistic16")
    x = b.tensor((1, 8), "int16", name="x", scale=2**-12, zero_point=0)
    y = b.tensor((1, 8), "int16", name="y", scale=2**-15, zero_point=0)
    b.op("LOGISTIC", [x], [y])
    pm = with_dynamic(plan_model(load_model_bytes(b.build([x], [y]))))
    with pytest.raises(UnsupportedError) as err:
        write_blob(pm)
    text = str(err.value)
    assert "op 0 (LOGISTIC): its int16 kernel nnrt_logistic_s16 is not in the model blob" \
        in text
    assert "Hint: the blob carries LOGISTIC through nnrt_table_lookup_s8" in text
    assert "--emit c" in text
