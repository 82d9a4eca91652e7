"""benchmarks/bench_zephyr.py: nnopt beside TFLM as Zephyr applications on mps2/an500/qemu.

Without Zephyr: the command line, the missing-workspace and missing-tool messages, the
console protocol of the applications (benchmarks/zephyr/common/bench_io.h), the counter
conversion, the TFLM arena search against a simulated application, the configure-time
generator of tflm_app, and the table and JSON from fake rows. With a Zephyr workspace
(ZEPHYR_BASE or NNOPT_ZEPHYR_WORKSPACE): one small model through both applications and
all three sides, compared with the tflite-micro interpreter."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from nnopt.paths import find_model

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH / "zephyr" / "tflm_app"))

import bench_zephyr as bz  # noqa: E402
import gen_tflm_model as gen  # noqa: E402
import zephyr_setup  # noqa: E402

RESOLVER = """
  TfLiteStatus AddConv2D(const TFLMRegistration& registration = Register_CONV_2D()) {
    return AddBuiltin(BuiltinOperator_CONV_2D, registration, ParseConv2D);
  }
  TfLiteStatus AddFullyConnected(
      const TFLMRegistration& registration = Register_FULLY_CONNECTED()) {
    return AddBuiltin(BuiltinOperator_FULLY_CONNECTED, registration,
                      ParseFullyConnected);
  }
"""


def _model(name: str) -> Path:
    path = find_model(name)
    assert path is not None, name
    return path


def _no_workspace(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ZEPHYR_BASE", "NNOPT_ZEPHYR_WORKSPACE", "ZEPHYR_MODULES"):
        monkeypatch.delenv(var, raising=False)


# ----- command line and setup -----

def test_missing_workspace_is_one_line_with_the_fix(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _no_workspace(monkeypatch)
    assert bz.main([str(_model("hello_world_int8.tflite"))]) == 2
    err = capsys.readouterr().err
    assert "no Zephyr workspace" in err and "ZEPHYR_BASE" in err and "tflite-micro" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_zephyr_base_that_is_not_zephyr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    _no_workspace(monkeypatch)
    monkeypatch.setenv("ZEPHYR_BASE", str(tmp_path))
    assert bz.main([str(_model("hello_world_int8.tflite"))]) == 2
    err = capsys.readouterr().err
    assert f"ZEPHYR_BASE gives {tmp_path}" in err and "not a Zephyr tree" in err


def _fake_zephyr(top: Path, modules: list[str]) -> Path:
    base = top / "zephyr"
    (base / "cmake" / "modules").mkdir(parents=True)
    (base / "VERSION").write_text("VERSION_MAJOR = 4\nVERSION_MINOR = 1\nPATCHLEVEL = 0\n")
    for m in modules:
        (top / m / "zephyr").mkdir(parents=True)
        (top / m / "zephyr" / "module.yml").write_text("name: x\n")
    return base


def test_workspace_without_the_tflite_micro_module(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _no_workspace(monkeypatch)
    base = _fake_zephyr(tmp_path, ["modules/lib/cmsis-nn"])
    assert bz.main([str(_model("hello_world_int8.tflite")), "--zephyr-base", str(base)]) == 2
    err = capsys.readouterr().err
    assert "no tflite-micro module in the workspace" in err and "Traceback" not in err


def test_missing_tool_is_named_with_its_package(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    _no_workspace(monkeypatch)
    base = _fake_zephyr(tmp_path, ["modules/lib/cmsis-nn", "optional/modules/lib/tflite-micro"])
    monkeypatch.setenv("ZEPHYR_TOOLCHAIN_VARIANT", "gnuarmemb")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert bz.main([str(_model("hello_world_int8.tflite")), "--zephyr-base", str(base)]) == 2
    err = capsys.readouterr().err
    assert "cmake not found on PATH: apt-get install cmake" in err


def test_modules_of_the_workspace_end_with_this_checkout(tmp_path: Path) -> None:
    base = _fake_zephyr(tmp_path, ["modules/lib/cmsis-nn", "optional/modules/lib/tflite-micro",
                                   "modules/hal/cmsis"])
    (tmp_path / "modules/lib/cmsis-dsp/zephyr").mkdir(parents=True)
    (tmp_path / "modules/lib/cmsis-dsp/zephyr/module.yml").write_text("name: cmsis-dsp\n")
    mods = zephyr_setup.find_modules(base, {})  # not cmsis-dsp (UNUSED_MODULES)
    assert [m.name for m in mods[:-1]] == ["cmsis", "cmsis-nn", "tflite-micro"]
    assert mods[-1] == zephyr_setup.repo_root()
    listed = zephyr_setup.find_modules(
        base, {"ZEPHYR_MODULES": f"{tmp_path}/modules/lib/cmsis-nn;"
                                 f"{tmp_path}/optional/modules/lib/tflite-micro"})
    repo = zephyr_setup.repo_root().name
    assert [m.name for m in listed] == ["cmsis-nn", "tflite-micro", repo]


def test_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = str(_model("hello_world_int8.tflite"))
    assert bz.main([model, "--tflm-variants", "cmsis_nn,fast"]) == 2
    assert "unknown TFLM variant(s) fast" in capsys.readouterr().err
    assert bz.main([model, "--no-tflm", "--no-nnopt"]) == 2
    assert "nothing to measure" in capsys.readouterr().err
    assert bz.main([str(tmp_path / "nope.tflite")]) == 2
    err = capsys.readouterr().err
    assert "model file(s) not found" in err and "nope.tflite" in err and "hint" in err


def test_not_a_tflite_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    assert bz.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "not a .tflite model" in err and "bad.tflite" in err and "Traceback" not in err


def test_default_models_are_the_five_anchors() -> None:
    names = [p.stem for p in bz.default_models()]
    assert names == ["person_detect", "vww_96_int8", "kws_ref_model", "pretrainedResnet_quant",
                     "ad01_int8"]


# ----- the applications' console -----

def test_console_lines_give_values_outputs_and_failures() -> None:
    data = bytes(range(70))
    lines = ["*** Booting Zephyr OS build 4.1.0 ***", "bench: arena_used=1234"]
    # output 0 of invocation 1 in 32-byte chunks, printed out of order on purpose
    chunks = [(off, data[off:off + 32]) for off in range(0, len(data), 32)]
    for off, part in reversed(chunks):
        lines.append(f"bench: out 0 1 {off} {part.hex()}")
    lines += ["bench: out 0 0 0 ff", "bench: hz=25000000", "bench: cycles=79",
              "bench: cycles_total=158", "bench: done"]
    out = bz.parse_console("\n".join(lines) + "\n", 0)
    assert out.values == {"arena_used": 1234, "hz": 25_000_000, "cycles": 79,
                          "cycles_total": 158}
    assert out.outputs[(0, 1)] == data and out.outputs[(0, 0)] == b"\xff"
    assert bz.gather_outputs(out.outputs, 1, 2) == [b"\xff" + data]
    assert out.failed is None
    bad = bz.parse_console("bench: failed AllocateTensors\n", 1)
    assert bad.failed == "AllocateTensors" and not bz.allocated(bad)
    assert not bz.allocated(bz.parse_console("bench: failed fatal error 19\n", 1))
    assert bz.allocated(bz.parse_console("bench: arena_used=9\nbench: failed Invoke\n", 1))


def test_cycles_become_instructions_at_40_per_cycle() -> None:
    assert bz.instructions(79, 25_000_000) == 3_160
    with pytest.raises(bz.BenchError, match="12,500,000 Hz"):
        bz.instructions(79, 12_500_000)


def test_failure_line_picks_what_went_wrong() -> None:
    log = ("-- Configuring\nCMake Error at CMakeLists.txt:40 (message):\n"
           "  bench: kws.tflite: TFLM's MicroMutableOpResolver has no builtin for SIN\n")
    assert bz.failure_line(log).startswith("bench: kws.tflite: TFLM's")
    assert "overflowed" in bz.failure_line("[1/2] ok\nregion `FLASH' overflowed by 12 bytes\n")
    assert bz.failure_line("") == "no output"


def _fill_stub(side: Any, elf: Path, out: bz.AppRun) -> None:
    side.instructions = bz.instructions(out.values["cycles"], out.values["hz"])


@pytest.mark.parametrize("need", [1_000, 1_016, 1_100, 4_000])
def test_tflm_arena_is_searched_once_then_kept(need: int, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A simulated tflm_app that allocates with an arena of at least ``need`` bytes and
    reports arena_used 1,000: the first measurement links the smallest multiple of 16
    that allocates and keeps it; the next one builds with the kept arena once."""
    builds: list[str] = []

    def build(self: bz.App, extra: dict[str, str] | None = None) -> Path:
        raw = (extra or {})["TFLM_ARENA_BYTES"]
        builds.append(raw)
        arena = raw or "8192"  # "": the generator's default
        header = self.dir / "tflm_model" / "tflm_model.h"
        header.parent.mkdir(parents=True, exist_ok=True)
        header.write_text(f"#define BENCH_TFLM_ARENA_BYTES {arena}\n")
        return self.dir / "zephyr.elf"

    def run(self: bz.App, elf: Path, timeout_s: float) -> bz.AppRun:
        arena = bz._generated_arena(self.dir)
        assert arena is not None
        if arena < need:
            return bz.parse_console("bench: failed AllocateTensors\n", 1)
        return bz.parse_console("bench: arena_used=1000\nbench: hz=25000000\n"
                                "bench: cycles=10\nbench: done\n", 0)

    monkeypatch.setattr(bz.App, "build", build)
    monkeypatch.setattr(bz.App, "run", run)
    monkeypatch.setattr(bz, "_fill", _fill_stub)
    setup = bz.Setup(tmp_path, "4.1.0", (), {}, tmp_path, 2)
    side = bz.measure_tflm(setup, "ref", tmp_path / "m", {}, None, 1, 10.0, lambda _: None)
    want = -(-need // 16) * 16
    assert side.arena_bytes == want and side.instructions == 400 and side.error is None
    assert builds[0] == "" and builds[-1] == str(want)
    state = json.loads((tmp_path / "m" / "tflm_ref" / "bench-arena.json").read_text())
    assert state["arena"] == want
    builds.clear()
    again = bz.measure_tflm(setup, "ref", tmp_path / "m", {}, None, 1, 10.0, lambda _: None)
    assert builds == [str(want)] and again.arena_bytes == want
    # another configuration (here: other inputs) searches again
    builds.clear()
    bz.measure_tflm(setup, "ref", tmp_path / "m", {"BENCH_INPUTS": "x.bin"}, None, 1, 10.0,
                    lambda _: None)
    assert builds[0] == "" and builds[-1] == str(want)


def test_tflm_that_cannot_allocate_is_a_clear_error(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def build(self: bz.App, extra: dict[str, str] | None = None) -> Path:
        header = self.dir / "tflm_model" / "tflm_model.h"
        header.parent.mkdir(parents=True, exist_ok=True)
        header.write_text("#define BENCH_TFLM_ARENA_BYTES 4096\n")
        return self.dir / "zephyr.elf"

    monkeypatch.setattr(bz.App, "build", build)
    monkeypatch.setattr(bz.App, "run", lambda self, elf, t: bz.parse_console(
        "bench: failed AllocateTensors\n", 1))
    setup = bz.Setup(tmp_path, "4.1.0", (), {}, tmp_path, 2)
    with pytest.raises(bz.BenchError, match=r"cannot allocate .* 4,096 B arena.*hint"):
        bz.measure_tflm(setup, "cmsis_nn", tmp_path / "m", {}, None, 1, 10.0, lambda _: None)


# ----- tflm_app's configure-time generator -----

def test_generator_writes_the_resolver_the_arena_and_the_model(tmp_path: Path) -> None:
    header = tmp_path / "micro_mutable_op_resolver.h"
    header.write_text(RESOLVER)
    model = _model("hello_world_int8.tflite")  # three FULLY_CONNECTED
    out = tmp_path / "gen"
    assert gen.main(["--model", str(model), "--resolver-header", str(header), "--out-dir",
                     str(out), "--arena", "2048"]) == 0
    h = (out / "tflm_model.h").read_text()
    assert "#define BENCH_TFLM_N_OPS 1" in h and "#define BENCH_TFLM_ARENA_BYTES 2048" in h
    assert "resolver.AddFullyConnected()" in h and "AddConv2D" not in h
    assert "#define BENCH_TFLM_RESOURCE_VARIABLES 0" in h
    assert f'.incbin \\"{model.resolve()}\\"' in (out / "tflm_model_data.c").read_text()
    # the same again: the files are kept (their time stamps too)
    stamp = (out / "tflm_model.h").stat().st_mtime_ns
    os.utime(out / "tflm_model.h", ns=(stamp - 10**9, stamp - 10**9))
    assert gen.main(["--model", str(model), "--resolver-header", str(header), "--out-dir",
                     str(out), "--arena", "2048"]) == 0
    assert (out / "tflm_model.h").stat().st_mtime_ns == stamp - 10**9


def test_generator_names_an_operator_tflm_lacks(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    header = tmp_path / "micro_mutable_op_resolver.h"
    header.write_text(RESOLVER)
    model = _model("kws_ref_model.tflite")
    assert gen.main(["--model", str(model), "--resolver-header", str(header), "--out-dir",
                     str(tmp_path / "gen"), "--arena", "2048"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("kws_ref_model.tflite: TFLM's MicroMutableOpResolver has no builtin")
    assert "SOFTMAX" in err and len(err.splitlines()) == 1
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 16)
    assert gen.main(["--model", str(bad), "--resolver-header", str(header), "--out-dir",
                     str(tmp_path / "gen")]) == 1
    assert "cannot read the model" in capsys.readouterr().err


def test_generator_default_arena_runs_the_interpreter(tmp_path: Path) -> None:
    """Without --arena: the interpreter's smallest arena, which then allocates in the
    interpreter while 16 bytes less does not (checked with the interpreter itself)."""
    from tflite_micro.python.tflite_micro import runtime

    header = tmp_path / "micro_mutable_op_resolver.h"
    header.write_text(RESOLVER)
    model = _model("hello_world_int8.tflite")
    assert gen.main(["--model", str(model), "--resolver-header", str(header), "--out-dir",
                     str(tmp_path / "gen")]) == 0
    text = (tmp_path / "gen" / "tflm_model.h").read_text()
    arena = int(text.split("#define BENCH_TFLM_ARENA_BYTES ")[1].split()[0])
    runtime.Interpreter.from_file(str(model), arena_size=arena)
    with pytest.raises(RuntimeError):
        runtime.Interpreter.from_file(str(model), arena_size=arena - 16)


# ----- table and JSON -----

def _rows() -> list[bz.Row]:
    a = bz.Row(model="m1", path="/x/m1.tflite")
    a.sides = {"nnopt": bz.Side(instructions=600_000, rom_bytes=20_000, ram_bytes=30_000,
                                arena_bytes=768, bit_exact=True),
               "cmsis_nn": bz.Side(instructions=1_000_000, rom_bytes=90_000,
                                   ram_bytes=33_000, arena_bytes=3_024, bit_exact=True),
               "ref": bz.Side(error="build failed: boom (log /b/x.log)")}
    a.ratio_cmsis_nn = bz.ratio(600_000, 1_000_000)
    b = bz.Row(model="m2", path="/x/m2.tflite", invocations=4)
    b.sides = {"nnopt": bz.Side(instructions=40, bit_exact=False,
                                error="output differs from the interpreter's: 1 of 2 bytes"),
               "cmsis_nn": bz.Side(), "ref": bz.Side(instructions=400, bit_exact=True)}
    b.ratio_ref = bz.ratio(40, 400)
    return [a, b]


def test_table_from_fake_rows() -> None:
    text = "\n".join(bz.markdown(_rows()))
    lines = text.splitlines()
    assert lines[0].startswith("| model | nnopt instr | TFLM CMSIS-NN instr | TFLM ref instr |")
    m1 = next(ln for ln in lines if ln.startswith("| m1 |"))
    assert "| 600,000 | 1,000,000 | - | 0.60 | - |" in m1
    assert "yes / yes / -" in m1 and "20,000 / 90,000 / -" in m1 and "768 / 3,024 / -" in m1
    assert "TFLM ref: build failed: boom" in m1
    m2 = next(ln for ln in lines if ln.startswith("| m2 |"))
    assert "| 40 | - | 400 | - | 0.10 |" in m2 and "**no** / - / yes" in m2
    assert "4 invocations, the first timed" in m2
    assert all(ln.count("|") == lines[0].count("|") for ln in (m1, m2))
    assert "40 instructions per cycle" in text and "TFLM's release defines" in text
    assert "the build Zephyr links" in text
    other = bz.Setup(Path("/z"), "4.1.0", (), {}, Path("/b"), 2, tflm_build="zephyr",
                     nnopt_options=("--tiling", "off"), picolibc_buildtype="release")
    notes = "\n".join(bz.markdown(_rows(), setup=other))
    assert "DCHECKs on" in notes and "OPTIONS --tiling off" in notes
    assert "--picolibc-buildtype=release" in notes


def test_build_directories_per_side_and_options(tmp_path: Path) -> None:
    plain = bz.Setup(tmp_path, "4.1.0", (), {}, tmp_path, 2)
    names = [plain.side_dir(tmp_path, s).name for s in bz.SIDES]
    assert names == ["nnopt", "tflm_cmsis_nn", "tflm_ref"]
    other = bz.Setup(tmp_path, "4.1.0", (), {}, tmp_path, 2, tflm_build="zephyr",
                     nnopt_options=("--tiling", "off"), picolibc_buildtype="release")
    names = [other.side_dir(tmp_path, s).name for s in bz.SIDES]
    assert names[0].startswith("nnopt-") and names[0].endswith("_picolibc-release")
    assert names[1:] == ["tflm_cmsis_nn_zephyr_picolibc-release",
                         "tflm_ref_zephyr_picolibc-release"]
    assert other.defines() == {"BENCH_PICOLIBC_BUILDTYPE": "release"}


def test_table_of_some_sides_only() -> None:
    lines = bz.markdown(_rows(), ["nnopt"])
    assert lines[0].startswith("| model | nnopt instr | nnopt / CMSIS-NN |")
    assert lines[2].startswith("| m1 | 600,000 | 0.60 |")


def test_json_from_fake_rows(tmp_path: Path) -> None:
    dest = tmp_path / "out.json"
    bz.write_json(_rows(), None, dest)
    doc = json.loads(dest.read_text())
    assert doc["zephyr_board"] == "mps2/an500/qemu" and doc["resolution_instructions"] == 40
    assert doc["rows"][0]["sides"]["cmsis_nn"]["instructions"] == 1_000_000
    assert doc["rows"][0]["ratio_cmsis_nn"] == pytest.approx(0.6)
    assert doc["rows"][1]["sides"]["nnopt"]["bit_exact"] is False
    assert doc["commit"] is None or len(doc["commit"]) == 40


# ----- on a Zephyr workspace -----

def _setup_or_reason() -> str | None:
    import argparse

    try:
        bz.find_setup(argparse.Namespace(zephyr_base=None, build_root=None, jobs=2,
                                         tflm_build="release", nnopt_options="",
                                         picolibc_buildtype=""))
    except bz.SetupError as err:
        return str(err)
    return None


@pytest.mark.slow
def test_small_model_through_both_applications(tmp_path: Path) -> None:
    """hello_world_int8 (shipped) as nnopt_app and as tflm_app with both kernel sets:
    every side runs, counts instructions and matches the tflite-micro interpreter byte
    for byte; the table and the JSON say so. Build directories under tmp_path (ccache
    keeps the compiles across runs)."""
    reason = _setup_or_reason()
    if reason is not None:
        pytest.skip(f"no Zephyr setup for the benchmark: {reason}")
    out = tmp_path / "bench.json"
    rc = bz.main([str(_model("hello_world_int8.tflite")), "--json", str(out),
                  "--build-root", str(tmp_path / "builds")])
    doc = json.loads(out.read_text())
    (row,) = doc["rows"]
    for side in bz.SIDES:
        s = row["sides"][side]
        assert s["error"] is None, (side, s["error"])
        assert s["instructions"] > 0 and s["instructions"] % 40 == 0
        assert s["bit_exact"] is True
        assert s["rom_bytes"] > 0 and s["ram_bytes"] > 0
    assert row["sides"]["ref"]["arena_bytes"] % 16 == 0
    assert row["sides"]["ref"]["arena_bytes"] >= row["sides"]["ref"]["arena_used_bytes"]
    assert row["ratio_ref"] == pytest.approx(row["sides"]["nnopt"]["instructions"]
                                             / row["sides"]["ref"]["instructions"])
    assert rc == 0


def test_build_dir_of_another_checkout_is_configured_afresh(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build directory that CMake configured from another checkout's app (a worktree,
    a moved clone) would make CMake refuse ("does not match the source ... used to
    generate cache"): its cache goes and CMake runs from this checkout's app."""
    bdir = tmp_path / "nnopt"
    (bdir / "CMakeFiles").mkdir(parents=True)
    (bdir / "CMakeCache.txt").write_text(
        "# cache\nCMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere/benchmarks/zephyr/nnopt_app\n")
    (bdir / "build.ninja").write_text("")
    assert bz.configured_source(bdir) == Path("/elsewhere/benchmarks/zephyr/nnopt_app")
    assert bz.configured_source(tmp_path) is None
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **_: Any) -> Any:
        calls.append(cmd)
        return type("Done", (), {"returncode": 1})()

    monkeypatch.setattr(bz.subprocess, "run", fake_run)
    setup = bz.Setup(tmp_path, "4.1.0", (), {}, tmp_path, 2)
    messages: list[str] = []
    app = bz.App(setup, "nnopt_app", bdir, {}, messages.append)
    with pytest.raises(bz.BenchError, match="configuration failed"):
        app.build()
    assert not (bdir / "CMakeCache.txt").exists() and not (bdir / "CMakeFiles").exists()
    assert calls and calls[0][:3] == ["nice", "cmake", "-GNinja"]
    assert any("configured from /elsewhere" in m for m in messages)
    # a directory configured from this checkout keeps its cache
    (bdir / "CMakeCache.txt").write_text(
        f"CMAKE_HOME_DIRECTORY:INTERNAL={bz.APPS / 'nnopt_app'}\n")
    with pytest.raises(bz.BenchError):
        app.build()
    assert (bdir / "CMakeCache.txt").exists()
