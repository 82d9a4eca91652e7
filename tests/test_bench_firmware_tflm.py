"""The pure parts of bench_firmware.py's TFLM comparison (benchmarks/tflm_firmware.py and
the table, JSON, ratio and geometric-mean code of benchmarks/bench_firmware.py): no TFLM
build, no QEMU. The parts that read TFLM's own source skip without it."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from nnopt.paths import find_model
from support import onnx_models

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import bench_firmware as bf  # noqa: E402
import converted_models as cm  # noqa: E402
import oracle  # noqa: E402
import tflm_cache as tc  # noqa: E402
import tflm_firmware as tf  # noqa: E402

HEADER = """
  TfLiteStatus AddAdd(const TFLMRegistration& registration = Register_ADD()) {
    return AddBuiltin(BuiltinOperator_ADD, registration, ParseAdd);
  }

  TfLiteStatus AddAddN() {
    return AddBuiltin(BuiltinOperator_ADD_N, tflite::Register_ADD_N(),
                      ParseAddN);
  }

  TfLiteStatus AddCustom(const char* name, TFLMRegistration* registration) {
    return kTfLiteOk;
  }
"""


def _tflm_source() -> tf.Sources | None:
    try:
        return tf.find_sources()
    except tf.TflmUnavailable:
        return None


needs_tflm_source = pytest.mark.skipif(
    _tflm_source() is None,
    reason="tflite-micro / CMSIS-NN / CMSIS_6 source not found (no Zephyr workspace: "
    "set NNOPT_ZEPHYR_WORKSPACE or ZEPHYR_BASE)")


def test_resolver_methods_maps_builtins_to_methods() -> None:
    assert tf.resolver_methods(HEADER) == {"ADD": "AddAdd", "ADD_N": "AddAddN"}
    assert tf._registrations(HEADER, ["AddAdd", "AddAddN"]) == {"ADD", "ADD_N"}


def test_resolver_calls_names_what_tflm_lacks() -> None:
    methods = tf.resolver_methods(HEADER)
    assert tf.resolver_calls(["ADD", "ADD_N"], methods) == ["AddAdd", "AddAddN"]
    with pytest.raises(tf.TflmUnavailable, match=r"CUSTOM\(Foo\), SIN"):
        tf.resolver_calls(["ADD", "CUSTOM(Foo)", "SIN"], methods)


@needs_tflm_source
def test_resolver_methods_of_tflm_header() -> None:
    src = _tflm_source()
    assert src is not None
    methods = tf.resolver_methods((src.tflm / tf.RESOLVER_H).read_text())
    assert methods["CONV_2D"] == "AddConv2D"
    assert methods["UNIDIRECTIONAL_SEQUENCE_LSTM"] == "AddUnidirectionalSequenceLSTM"
    assert len(methods) > 90


def test_harness_source_fills_every_placeholder(tmp_path: Path) -> None:
    model = tmp_path / "my model.tflite"
    text = tf.harness_source(["AddConv2D", "AddSoftmax"], model, 3)
    assert "@" not in text
    assert "MicroMutableOpResolver<2>;" in text
    assert "resolver.AddConv2D()" in text and "resolver.AddSoftmax()" in text
    assert "kResourceVariables = 3;" in text
    assert f'.incbin \\"{model}\\"' in text
    with pytest.raises(tf.TflmUnavailable, match="quote"):
        tf.harness_source([], tmp_path / 'a"b.tflite')
    # no operator: a resolver of one slot still compiles
    assert "MicroMutableOpResolver<1>" in tf.harness_source([], model)


def test_model_operators_of_a_shipped_model() -> None:
    path = find_model("kws_ref_model.tflite")
    assert path is not None
    data = path.read_bytes()
    assert tf.model_operators(data) == ["AVERAGE_POOL_2D", "CONV_2D", "DEPTHWISE_CONV_2D",
                                        "FULLY_CONNECTED", "RESHAPE", "SOFTMAX"]
    assert tf.resource_variables(data) == 0
    assert not oracle.stateful_tflite(data)
    lstm = find_model("trained_lstm.tflite")
    assert lstm is not None and oracle.stateful_tflite(lstm.read_bytes())


def test_select_kernels_keeps_used_and_support_files(tmp_path: Path) -> None:
    files = {
        "k/conv.cc": "TFLMRegistration Register_CONV_2D() { return x; }",
        "k/conv_common.cc": "int helper() { return 0; }",
        "k/kernel_util.cc": "int util() { return 0; }",
        "k/kernel_runner.cc": "int test_helper() { return 0; }",
        "k/sin.cc": "TFLMRegistration Register_SIN() {\n return y; }",
        "k/sin_common.cc": "int sin_helper() { return 0; }",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert tf.select_kernels(list(files), {"CONV_2D"}, tmp_path) == [
        "k/conv.cc", "k/conv_common.cc", "k/kernel_util.cc"]


def test_find_sources_says_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(tf.TflmUnavailable, match="--tflm-dir"):
        tf.find_sources(workspace=tmp_path)
    with pytest.raises(tf.TflmUnavailable, match="--cmsis-nn-dir"):
        (tmp_path / "t" / tf.MAKEFILE).parent.mkdir(parents=True)
        (tmp_path / "t" / tf.MAKEFILE).write_text("")
        tf.find_sources(tflm=tmp_path / "t", workspace=tmp_path)


def test_make_args_variants() -> None:
    assert "OPTIMIZED_KERNEL_DIR=cmsis_nn" in tf.make_args("cmsis_nn")
    ref = tf.make_args("ref")
    assert not any(a.startswith("OPTIMIZED_KERNEL_DIR") for a in ref)
    assert {"TARGET=cortex_m_generic", "TARGET_ARCH=cortex-m7+fp",
            "BUILD_TYPE=release"} <= set(ref)
    with pytest.raises(ValueError):
        tf.make_args("fast")
    # the M7 builds' arguments, in their order (part of the cached measurements' key)
    assert ref[:4] == ["TARGET=cortex_m_generic", "TARGET_ARCH=cortex-m7+fp",
                       "BUILD_TYPE=release", "TOOLCHAIN=gcc"]
    ref3, cm3 = tf.make_args("ref_m3"), tf.make_args("cmsis_nn_m3")
    assert "TARGET_ARCH=cortex-m3" in ref3 and "TARGET_ARCH=cortex-m7+fp" not in ref3
    assert not any(a.startswith("OPTIMIZED_KERNEL_DIR") for a in ref3)
    assert {"TARGET_ARCH=cortex-m3", "OPTIMIZED_KERNEL_DIR=cmsis_nn"} <= set(cm3)
    assert tf.variant_spec("ref_m3").target == "qemu-m3"
    assert tf.variant_spec("ref_m3").board == bf.M3_BOARD
    assert tf.variant_spec("cmsis_nn").board == bf.M7_BOARD
    assert set(tf.ALL_VARIANTS) == set(tf.VARIANT_SPECS)


def test_unknown_tflm_variant_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    path = find_model("hello_world_int8.tflite")
    assert path is not None
    assert bf.main([str(path), "--tflm-variants", "ref,fast"]) == 2
    err = capsys.readouterr().err
    assert "unknown TFLM variant(s) fast" in err and "ref_m3" in err


def test_ratio_and_geomean() -> None:
    assert bf.ratio(50, 100) == 0.5
    assert bf.ratio(None, 100) is None and bf.ratio(5, None) is None and bf.ratio(5, 0) is None
    assert bf.geomean([]) is None
    g = bf.geomean([0.5, 2.0])
    assert g is not None and math.isclose(g, 1.0)
    g = bf.geomean([0.25, 1.0])
    assert g is not None and math.isclose(g, 0.5)


def _rows() -> list[bf.Row]:
    a = bf.Row(model="m_a", path="a.tflite", ops=3, macs=1000, group="anchors",
               instructions=2000, tflm_cmsis_nn_instructions=4000,
               tflm_ref_instructions=16000, bit_exact=True, tflm_cmsis_nn_bit_exact=True,
               tflm_ref_bit_exact=True, tflm_cmsis_nn_rom_bytes=9000,
               tflm_cmsis_nn_ram_bytes=800, tflm_cmsis_nn_arena_bytes=640,
               tflm_cmsis_nn_code_bytes=7000)
    b = bf.Row(model="m_b", path="b.tflite", ops=2, macs=10, group="anchors",
               instructions=300, tflm_cmsis_nn_instructions=100, tflm_ref_instructions=300,
               bit_exact=True, tflm_cmsis_nn_bit_exact=False, tflm_ref_bit_exact=True,
               tflm_cmsis_nn_error="output differs from the interpreter's: output 0: 1 of 4 "
               "bytes differ")
    c = bf.Row(model="m_c", path="c.tflite", ops=1, macs=0, group="realworld",
               error="uses operators nnopt does not support: FOO",
               tflm_cmsis_nn_error="TFLM's MicroMutableOpResolver has no builtin for FOO",
               tflm_ref_error="TFLM's MicroMutableOpResolver has no builtin for FOO")
    for r in (a, b, c):
        r.ratio_cmsis_nn = bf.ratio(r.instructions, r.tflm_cmsis_nn_instructions)
        r.ratio_ref = bf.ratio(r.instructions, r.tflm_ref_instructions)
    return [a, b, c]


def test_group_geomeans() -> None:
    g = {x["group"]: x for x in bf.group_geomeans(_rows())}
    assert list(g) == ["anchors", "realworld", "all"]
    assert g["anchors"]["cmsis_nn_n"] == 2
    assert math.isclose(g["anchors"]["geomean_ratio_cmsis_nn"], math.sqrt(0.5 * 3.0))
    assert math.isclose(g["anchors"]["geomean_ratio_ref"], math.sqrt(0.125 * 1.0))
    assert g["realworld"]["geomean_ratio_cmsis_nn"] is None
    assert g["all"]["models"] == 3


def test_markdown_table() -> None:
    text = "\n".join(bf.markdown(_rows()))
    assert ("| anchors | m_a | 1,000 | 2,000 | 4,000 | 16,000 | 0.50 | 0.12 | 2.00 | - | "
            "yes / yes / yes |  |") in text
    assert "| anchors | m_b | 10 | 300 | 100 | 300 | **3.00** | 1.00 |" in text
    assert "yes / **no** / yes" in text
    # one reason for both TFLM variants is said once
    assert ("nnopt: uses operators nnopt does not support: FOO; TFLM: TFLM's "
            "MicroMutableOpResolver has no builtin for FOO |") in text
    assert "| anchors | 2 | 1.22 (2) | 0.35 (2) |" in text
    assert "9,000 / 800 / 640 / 7,000" in text


def test_json_rows_carry_the_contract_fields(tmp_path: Path) -> None:
    dest = tmp_path / "fw.json"
    bf.write_doc(_rows(), str(dest))
    doc = json.loads(dest.read_text())
    row = doc["rows"][0]
    for key in ("model", "instructions", "tflm_cmsis_nn_instructions",
                "tflm_ref_instructions", "rom_bytes", "ram_bytes", "tflm_cmsis_nn_rom_bytes",
                "tflm_cmsis_nn_ram_bytes", "tflm_ref_rom_bytes", "tflm_ref_ram_bytes",
                "ratio_cmsis_nn", "ratio_ref", "group"):
        assert key in row
    assert row["ratio_cmsis_nn"] == 0.5
    assert {g["group"] for g in doc["geomeans"]} == {"anchors", "realworld", "all"}
    assert {f.name for f in dataclasses.fields(bf.Row)} == set(row)


def test_compare_outputs() -> None:
    ab = bf.Oracle([b"ab", b"c"], ["|i1", "|i1"])
    assert bf.compare_outputs([b"ab", b"c"], ab) is None
    assert bf.compare_outputs([b"ax", b"c"], ab) == (
        "output 0: 1 of 2 bytes differ, max |diff| 22 (int8)")
    assert bf.compare_outputs([b"ab"], ab) == "1 outputs, the interpreter has 2"
    assert bf.compare_outputs([b"a", b"c"], ab) == "output 0: 1 bytes, the interpreter's 2"
    f32 = bf.Oracle([np.array([1.0, 2.0], np.float32).tobytes()], ["<f4"])
    got = [np.array([1.0, 2.5], np.float32).tobytes()]
    assert bf.compare_outputs(got, f32) == (
        "output 0: 1 of 8 bytes differ, max |diff| 0.5 (float32)")


def _fake_firmware(m3_flip: bool) -> Callable[..., tuple[list[bytes], list[bytes] | None]]:
    """A stand-in for _measure_nnopt: the interpreter's own outputs on the "M7" and,
    with one byte flipped when ``m3_flip``, on the "M3"."""
    def fake(row: bf.Row, pm: object, inputs: list[bytes], data: bytes, tmp: Path, *,
             m3: bool, specialize: str) -> tuple[list[bytes], list[bytes] | None]:
        expected, why = oracle.oracle_outputs(data, oracle.model_steps(data, None, 1), None)
        assert expected is not None, why
        outs = list(expected.outputs)
        row.instructions = row.m3_instructions = 1000
        m3_outs = [bytes([outs[0][0] ^ 1]) + outs[0][1:], *outs[1:]] if m3_flip else outs
        return outs, (m3_outs if m3 else None)
    return fake


@pytest.mark.parametrize("m3_flip", [False, True])
def test_m3_outputs_count_toward_bit_exact(m3_flip: bool, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """nnopt's bit-exact verdict covers its Cortex-M3 firmware too: an M3 output that
    differs from the interpreter's makes the row not bit-exact and says why."""
    monkeypatch.setattr(bf, "_measure_nnopt", _fake_firmware(m3_flip))
    path = find_model("hello_world_int8.tflite")
    assert path is not None
    row = bf.measure(path, path.parent, m3=True, tflm=False, timeout_s=60)
    assert row.bit_exact is (not m3_flip)
    assert row.m3_bit_exact is (not m3_flip)
    if m3_flip:
        assert row.error is not None and row.error.startswith("Cortex-M3 output differs")
    else:
        assert row.error is None
    row = bf.measure(path, path.parent, m3=False, tflm=False, timeout_s=60)
    assert row.bit_exact is True and row.m3_bit_exact is None


class _M3Context(bf.TflmContext):
    def library(self, variant: str) -> tf.Library:
        raise AssertionError("measure_tflm is replaced")


@pytest.mark.parametrize("tflm_like_nnopt", [True, False])
def test_m3_output_identical_with_tflm_m3_is_bit_exact_with_tflm(
        tflm_like_nnopt: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An M3 output that differs from the host interpreter's (the M3's libm) but is
    byte-identical with TFLM's own M3 firmware's counts as bit-exact with TFLM, and the
    row says so; one that differs from TFLM's M3 output too stays the row's error."""
    monkeypatch.setattr(bf, "_measure_nnopt", _fake_firmware(True))
    seen: dict[str, list[bytes]] = {}

    def fake_tflm(row: bf.Row, fw: bf.TflmContext, variant: str, model: Path,
                  inputs: list[bytes], expected: bf.Oracle, k: int, work: Path) -> None:
        outs = list(expected.outputs)
        if tflm_like_nnopt:  # TFLM's M3 firmware: the same last-bit difference
            outs[0] = bytes([outs[0][0] ^ 1]) + outs[0][1:]
        seen[variant] = outs
        setattr(row, f"tflm_{variant}_instructions", 4000)
        setattr(row, f"tflm_{variant}_bit_exact", not tflm_like_nnopt)
        setattr(row, f"tflm_{variant}_outputs_sha256", [tc.sha256_hex(b) for b in outs])

    monkeypatch.setattr(bf, "measure_tflm", fake_tflm)
    path = find_model("hello_world_int8.tflite")
    assert path is not None
    fw = _M3Context(None, None, tmp_path, variants=("ref_m3", "cmsis_nn_m3"))
    row = bf.measure(path, path.parent, m3=True, tflm=False, timeout_s=60, fw=fw)
    assert set(seen) == {"ref_m3", "cmsis_nn_m3"}
    assert row.m3_bit_exact is False
    assert row.m3_same_as_tflm_m3 is tflm_like_nnopt
    assert row.bit_exact is tflm_like_nnopt
    assert row.ratio_m3_ref == row.ratio_m3_cmsis_nn == 0.25
    table = "\n".join(bf.m3_markdown([row]))
    if tflm_like_nnopt:
        assert row.error is None
        assert "identical to TFLM's M3 firmware" in bf.notes(row)
        assert "| **no** / yes / **no** / **no** |" in table
    else:
        assert row.error is not None and row.error.startswith("Cortex-M3 output differs")
        assert "| **no** / **no** / yes / yes |" in table
    assert bf.m3_markdown([bf.Row(model="m", path="m", ops=1, macs=1)]) == []
    geo = bf.group_geomeans([row])[-1]
    assert geo["m3_ref_n"] == 1 and geo["geomean_ratio_m3_ref"] == pytest.approx(0.25)


def test_plot_writes_a_png(tmp_path: Path) -> None:
    dest = tmp_path / "ratio.png"
    assert bf.plot(_rows(), dest)
    assert dest.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not bf.plot(_rows()[2:], tmp_path / "none.png")


@pytest.mark.parametrize("need", [2_580, 2_592, 2_704, 2_720, 3_012, 4_000, 65_536])
def test_search_arena_finds_the_smallest(need: int) -> None:
    tried: list[int] = []

    def allocates(n: int) -> bool:
        tried.append(n)
        return n >= need

    got = tf.search_arena(allocates, 2_580, 65_536)
    assert got == -(-need // 16) * 16
    assert all(n % 16 == 0 for n in tried)
    assert len(tried) < 2 * 13  # doubling up, bisecting down: logarithmic


def test_flatbuffer_inputs_match_nnopt_random_inputs() -> None:
    from nnopt.frontend.tflite import load_model_bytes
    from nnopt.inputs import random_inputs

    path = find_model("kws_ref_model.tflite")
    assert path is not None
    data = path.read_bytes()
    ours = oracle.flatbuffer_inputs(data, 3)
    ref = random_inputs(load_model_bytes(data), 3)
    assert len(ours) == len(ref) == 1
    assert ours[0].dtype == ref[0].dtype and np.array_equal(ours[0], ref[0])


def test_profile_of_bad_input_is_a_clear_error(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """--profile of a missing or corrupt model: exit 2 with the problem named, no traceback."""
    assert bf.main(["--profile", str(tmp_path / "nope.tflite")]) == 2
    assert "model file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    assert bf.main(["--profile", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.tflite" in err and "TFL3" in err and "Traceback" not in err


# ----- ONNX models: converted by nnopt convert (benchmarks/converted_models.py) -----

def _onnx_file(tmp_path: Path, data: bytes, rel: str = "onnx/m.onnx") -> Path:
    path = tmp_path / "models" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_onnx_models_convert_once_to_the_same_bytes(tmp_path: Path) -> None:
    """Converted twice: the same bytes at the same content-addressed path (TFLM's cache
    key is the model's bytes), written by the same code as `nnopt convert`."""
    from nnopt.cli import main

    src = _onnx_file(tmp_path, onnx_models.cnn_model())
    a = cm.convert(src, "onnx/m.onnx", tmp_path / "cache")
    b = cm.convert(src, "onnx/m.onnx", tmp_path / "cache")
    assert a.error is None and a.tflite is not None and a.tflite == b.tflite
    data = a.tflite.read_bytes()
    assert data[4:8] == b"TFL3" and a.sha256 is not None and a.sha256[:16] in str(a.tflite)
    assert a.command() == "nnopt convert onnx/m.onnx -o m.tflite"
    assert main(["convert", str(src), "-o", str(tmp_path / "cli.tflite")]) == 0
    assert (tmp_path / "cli.tflite").read_bytes() == data


def test_convert_inputs_table_is_the_command_line(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A model the table pins converts with its shapes; the row's command, run, writes
    the same bytes; without its entry the conversion fails with the CLI's hint."""
    import shlex

    from nnopt.cli import main

    src = _onnx_file(tmp_path, onnx_models.dynamic_model(), "realworld/dyn.onnx")
    bare = cm.convert(src, "realworld/dyn.onnx", tmp_path / "cache")
    assert bare.tflite is None and bare.error is not None
    assert bare.error.startswith("nnopt convert: ") and "--input-shape" in bare.error
    monkeypatch.setitem(cm.CONVERT_INPUTS, "realworld/dyn.onnx",
                        cm.ConvertInputs({"input": (1, 3, 9, 8)}))
    conv = cm.convert(src, "realworld/dyn.onnx", tmp_path / "cache")
    assert conv.error is None and conv.tflite is not None
    assert conv.command() == ("nnopt convert realworld/dyn.onnx -o dyn.tflite "
                              "--input-shape input=1,3,9,8")
    argv = shlex.split(conv.command())[1:]
    argv[1] = str(src)
    argv[argv.index("-o") + 1] = str(tmp_path / "cli.tflite")
    assert main(argv) == 0
    assert (tmp_path / "cli.tflite").read_bytes() == conv.tflite.read_bytes()
    assert cm.ConvertInputs({}, {"sr": (16000.0,)}).cli_args() == ["--input-value",
                                                                   "sr=16000"]


def test_convert_inputs_table_names_shared_models() -> None:
    """Every entry is a shared ONNX model (skipped without them), and its converted
    graph keeps no dynamic dimension."""
    from nnopt.frontend.tflite import load_model_bytes
    from nnopt.paths import shared_models_dir

    root = shared_models_dir()
    if not (root / "realworld").is_dir():
        pytest.skip(f"shared models not found under {root}")
    for rel, inputs in cm.CONVERT_INPUTS.items():
        path = root / rel
        assert path.is_file(), rel
        g = load_model_bytes(path.read_bytes(), input_shapes=inputs.shapes,
                             input_values=inputs.values or None)
        assert all(min(g.tensors[t].shape, default=1) >= 1 for t in g.inputs), rel


def test_model_groups_list_onnx_models(tmp_path: Path) -> None:
    root = tmp_path / "models"
    for rel in ("realworld/a.tflite", "realworld/b.onnx", "onnx/c.onnx", "onnx/notes.md",
                "keras/d.tflite"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"")
    assert [(g, p.name) for g, p in bf.model_groups(root, ["realworld", "onnx", "keras"])] \
        == [("realworld", "a.tflite"), ("realworld", "b.onnx"), ("onnx", "c.onnx"),
            ("keras", "d.tflite")]
    assert bf.GROUPS[:5] == ("anchors", "families", "keras", "realworld", "stateful")
    assert "onnx" in bf.GROUPS


def test_model_groups_list_an_anchor_once(tmp_path: Path) -> None:
    """TFLM's example models are the tflm group, but person_detect (an anchor, in the
    same folder) stays in the anchors only."""
    root = tmp_path / "models"
    for rel in ("tflm/person_detect.tflite", "tflm/micro_speech_quantized.tflite",
                "tflm/hello_world_int8.tflite"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"")
    listed = [(g, p.name) for g, p in bf.model_groups(root, ["anchors", "tflm"])]
    assert ("anchors", "person_detect.tflite") in listed
    assert [x for x in listed if x[0] == "tflm"] == [
        ("tflm", "hello_world_int8.tflite"), ("tflm", "micro_speech_quantized.tflite")]
    assert "tflm" in bf.GROUPS


def test_a_model_that_does_not_convert_keeps_its_row(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    """An ONNX model nnopt convert refuses: a row with the reason for both sides, in
    the table and the JSON, exit 0, no traceback (no QEMU, no TFLM build needed)."""
    src = _onnx_file(tmp_path, onnx_models.unsupported_model(), "onnx/erf.onnx")
    dest = tmp_path / "fw.json"
    assert bf.main([str(src), "--models-dir", str(tmp_path / "models"), "--no-tflm",
                    "--no-m3", "--json", str(dest)]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    (row,) = json.loads(dest.read_text())["rows"]
    assert row["path"] == "onnx/erf.onnx" and row["model"] == "erf"
    assert row["error"].startswith("nnopt convert: ") and "Erf" in row["error"]
    assert row["convert_command"] == "nnopt convert onnx/erf.onnx -o erf.tflite"
    assert row["converted_path"] is None and row["instructions"] is None
    assert "| onnx | erf |" in out.out and "nnopt: nnopt convert: " in out.out
    fw = bf.TflmContext(None, "TFLM source missing", tmp_path)
    conv = cm.convert(src, "onnx/erf.onnx", tmp_path / "cache")
    r = bf.unconverted_row("onnx", conv, fw)
    assert r.tflm_cmsis_nn_error == r.tflm_ref_error == ("no .tflite to run: the "
                                                         "conversion failed")
    assert bf.notes(r).count("conversion failed") == 1  # said once for both variants


def test_profile_of_an_onnx_model_that_does_not_convert(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    src = _onnx_file(tmp_path, onnx_models.dynamic_model(), "onnx/dyn.onnx")
    assert bf.main(["--profile", str(src), "--models-dir", str(tmp_path / "models")]) == 2
    err = capsys.readouterr().err
    assert "dyn.onnx: nnopt convert: " in err and "--input-shape" in err
    assert "Traceback" not in err


def test_converted_row_notes_and_markdown() -> None:
    r = bf.Row(model="m", path="onnx/m.onnx", ops=1, macs=10, group="onnx",
               instructions=50, convert_command="nnopt convert onnx/m.onnx -o m.tflite",
               converted_path="/c/m.tflite", onnx_same_code=True)
    assert bf.notes(r) == ("ONNX: both run `nnopt convert onnx/m.onnx -o m.tflite` ⁹ "
                           "(nnopt's C from the .onnx is the same)")
    r.onnx_same_code = False
    assert "differs" in bf.notes(r)
    text = "\n".join(bf.markdown([r]))
    assert "| onnx | m |" in text and "⁹ TFLM reads no ONNX" in text


def test_same_code_of_an_onnx_model_and_its_conversion(tmp_path: Path) -> None:
    """nnopt plans the .onnx and the converted .tflite into the same C (planning and
    code generation only)."""
    from nnopt.boards import load_board
    from nnopt.planner import PlanOptions

    src = _onnx_file(tmp_path, onnx_models.cnn_model())
    conv = cm.convert(src, "onnx/m.onnx", tmp_path / "cache")
    assert conv.tflite is not None
    opts = PlanOptions(board=load_board(bf.M7_BOARD))
    pm = bf._plan(conv.tflite.read_bytes(), "m", load_board(bf.M7_BOARD))
    assert cm.same_code(conv, pm, opts)
    other = _onnx_file(tmp_path, onnx_models.cnn_model(seed=5), "onnx/other.onnx")
    assert not cm.same_code(cm.Converted(other, "onnx/other.onnx", cm.ConvertInputs()),
                            pm, opts)


# ---- nnopt on more cores (--cores) ------------------------------------------------------

def test_every_bench_core_has_a_board_of_its_core() -> None:
    """BENCH_CORES is data: each entry's board exists and carries a core nnopt builds
    for, and the core-specific targets keep their own core."""
    from nnopt.boards import load_board
    from nnopt.firmware.cores import core_of

    for short, spec in bf.BENCH_CORES.items():
        assert core_of(load_board(spec.board)).short == short
        assert spec.target in ("qemu", "qemu-m7", "qemu-m3")


def test_unknown_core_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert bf.main(["--cores", "m7,m99", "--no-tflm"]) == 2
    err = capsys.readouterr().err
    assert "unknown core(s) m99" in err and "m0" in err


def test_cores_table_shows_figures_and_refusals() -> None:
    row = bf.Row(model="kws", path="kws.tflite", ops=13, macs=1, group="anchors",
                 instructions=100)
    row.cores["m4"] = bf.CoreFigures(board="mps2_an386", instructions=90, rom_bytes=5,
                                     ram_bytes=6, bit_exact=True)
    row.cores["m0"] = bf.CoreFigures(board="qemu_cortex_m0",
                                     error="does not fit qemu_cortex_m0: over by 1 bytes")
    text = "\n".join(bf.cores_markdown([row]))
    assert "m4 (mps2_an386) instr" in text and "m0 (qemu_cortex_m0) instr" in text
    assert text.index("m4 (") < text.index("m0 (")  # BENCH_CORES order
    assert "| 90 | 5 / 6 | yes |" in text and "does not fit qemu_cortex_m0" in text
    assert bf.cores_markdown([bf.Row(model="x", path="x", ops=0, macs=0)]) == []
