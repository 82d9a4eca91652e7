"""The `nnopt` command line: contracts, exit codes, and clear errors for bad input."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, model_path
from nnopt.cli import main
from nnopt.firmware import qemu_available
from nnopt.testing.harness import run_tflm
from support.tflite_builder import ModelBuilder


def nnopt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nnopt.cli", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=900)


def test_optimize_writes_sources_plan_report_and_picture(tmp_path: Path) -> None:
    out = tmp_path / "nn"
    # the classic plan (below-the-bound techniques are covered by test_tiling.py)
    res = nnopt("optimize", str(model_path("mlperf_tiny/vww_96_int8.tflite")), "-b",
                "nucleo_f767zi", "-o", str(out), "--json", str(tmp_path / "r.json"),
                "--inplace-ops", "off", "--tiling", "off")
    assert res.returncode == 0, res.stderr
    for name in ("vww_96_int8_model.c", "vww_96_int8_model.h", "vww_96_int8_plan.json",
                 "vww_96_int8_report.json", "vww_96_int8_memory.png"):
        assert (out / name).is_file(), name
    report = json.loads((tmp_path / "r.json").read_text())
    # the live peak (55,296) plus whatever scratch the conv kernels declare
    scratch = max((x["size"] for x in report["scratch"]), default=0)
    assert 55_296 <= report["arena_bytes"] <= 55_296 + scratch and report["optimal"] is True
    assert "<- peak" in res.stdout and "fits" in res.stdout
    c = (out / "vww_96_int8_model.c").read_text()
    assert f"NNRT_ARENA static uint8_t vww_96_int8_arena[{report['arena_bytes']}];" in c


def test_over_budget_exits_2_with_numbers(tmp_path: Path) -> None:
    res = nnopt("optimize", str(model_path("mlperf_tiny/vww_96_int8.tflite")),
                "--sram", "40k", "--table", "none", "--inplace-ops", "off", "--tiling", "off")
    assert res.returncode == 2
    m = re.search(r"needs ([0-9,]+) bytes", res.stderr)
    assert m, res.stderr
    needed = int(m.group(1).replace(",", ""))
    assert needed >= 55_296 and "40,960" in res.stderr
    assert f"over by {needed - 40_960:,} bytes" in res.stderr
    assert "Traceback" not in res.stderr


def _int16_conv_model() -> bytes:
    """A 16x8 CONV_2D with an int32 bias: nnopt takes 16x8 convolutions with TFLM's int64
    bias only (the interpreter's 32-bit accumulator path rounds differently), so it
    refuses this variant by name."""
    b = ModelBuilder()
    x = b.tensor((1, 8, 8, 2), "int16", scale=0.01, zero_point=0)
    w = b.const(np.ones((4, 3, 3, 2), np.int8), scale=[0.1] * 4, zero_point=0, axis=0)
    bias = b.const(np.zeros(4, np.int32), scale=[0.001] * 4, zero_point=0)
    y = b.tensor((1, 6, 6, 4), "int16", scale=0.05, zero_point=0)
    from nnopt.ir import ConvOptions

    b.op("CONV_2D", [x, w, bias], [y], ConvOptions("VALID", 1, 1))
    return b.build([x], [y])


def test_unsupported_variant_refused_before_any_code(tmp_path: Path) -> None:
    model = tmp_path / "int16conv.tflite"
    model.write_bytes(_int16_conv_model())
    out = tmp_path / "out"
    res = nnopt("optimize", str(model), "-o", str(out))
    assert res.returncode == 1
    assert "op 0" in res.stderr and "CONV_2D" in res.stderr and "hint:" in res.stderr
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("option", ["--max-extra-macs", "--max-extra-instructions"])
def test_negative_compute_caps_refused(tmp_path: Path, option: str) -> None:
    out = tmp_path / "out"
    res = nnopt("optimize", str(model_path("tflm/hello_world_int8.tflite")), "-o", str(out),
                option, "-3")
    assert res.returncode == 64  # a usage error
    assert f"{option} must not be negative" in res.stderr and "hint:" in res.stderr
    assert "Traceback" not in res.stderr and not out.exists()


def test_run_host_matches_oracle(tmp_path: Path) -> None:
    path = model_path("mlperf_tiny/kws_ref_model.tflite")
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, size=(1, 49, 10, 1), dtype=np.int8)
    (tmp_path / "in.bin").write_bytes(x.tobytes())
    res = nnopt("run", str(path), "--target", "host", "--input", str(tmp_path / "in.bin"),
                "--output", str(tmp_path / "out.bin"), "--order", "file")
    assert res.returncode == 0, res.stderr
    ref, _ = run_tflm(path.read_bytes(), [x])
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), dtype=np.int8)
    np.testing.assert_array_equal(got, ref[0].reshape(-1))


def test_run_wrong_input_size(tmp_path: Path) -> None:
    # (7 bytes of this 1-byte input are 7 invocations: tests/ops/test_sequence.py)
    (tmp_path / "in.bin").write_bytes(b"")
    res = nnopt("run", str(model_path("tflm/hello_world_int8.tflite")), "--input",
                str(tmp_path / "in.bin"))
    assert res.returncode == 1
    assert "needs 1 bytes, got 0" in res.stderr and "Traceback" not in res.stderr


def test_run_defaults_to_a_seeded_random_input_and_prints_real_values(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No --input: a random input from --seed (default 0); each output printed with its
    name, shape, quantisation, raw values and dequantised values; -o DIR writes the
    raw outputs there, --keep-elf copies the executable."""
    from nnopt.frontend.tflite import load_model
    from nnopt.inputs import random_inputs

    path = model_path("mlperf_tiny/vww_96_int8.tflite")
    out, elf = tmp_path / "outs", tmp_path / "fw" / "vww.elf"
    assert main(["run", str(path), "-q", "-o", str(out), "--keep-elf", str(elf)]) == 0
    text = capsys.readouterr().out
    g = load_model(path)
    t = g.tensors[g.outputs[0]]
    assert t.quant is not None
    raw = np.frombuffer((out / "vww_96_int8_output0.bin").read_bytes(), dtype=np.int8)
    # the oracle on the same seeded input
    want = run_tflm(path.read_bytes(), random_inputs(g, 0))[0][0]
    assert raw.tobytes() == np.asarray(want).tobytes()
    lines = text.splitlines()
    assert lines[0] == (f'output 0 "{t.name}": int8 [1, 2], scale {t.quant.scale[0]:.6g} '
                        f"zero point {t.quant.zero_point[0]}")
    assert lines[1] == f"  raw:         [{raw[0]}, {raw[1]}]"
    real = (raw.astype(np.float64) - t.quant.zero_point[0]) * t.quant.scale[0]
    assert lines[2] == f"  dequantised: [{real[0]:.4g}, {real[1]:.4g}]"
    assert elf.is_file() and f"executable: {elf}" in text
    # the same seed, the same input; another seed, another input (here another output)
    assert main(["run", str(path), "-q", "--seed", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[:3] == lines[:3]


def test_run_dash_o_file_is_a_deprecated_alias(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = str(model_path("tflm/hello_world_int8.tflite"))
    assert main(["run", path, "-q", "-o", str(tmp_path / "a.bin")]) == 0
    assert "-o FILE is deprecated" in capsys.readouterr().err
    assert main(["run", path, "-q", "--output", str(tmp_path / "b.bin")]) == 0
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
    assert main(["run", path, "-q", "--output", "x.bin", "--output", "y.bin"]) == 64
    assert main(["run", path, "-q", "-o", str(tmp_path / "d"), "--output", "y.bin"]) == 64


def test_check_elf_without_a_board_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """check-elf needs a board (--board or a build's --edt): without one, exit 64 and a
    hint naming both."""
    assert main(["check-elf", "x.elf"]) == 64
    err = capsys.readouterr().err
    assert "no board given" in err and "--board" in err and "--edt" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["optimize", "MODEL", "--bogus-flag"],
    ["optimize", "MODEL", "--sram", "abc"],
    ["run", "MODEL", "--target", "qemu-m4"],
    ["optimize"],
    ["check-elf", "x.elf", "--top", "many"],
    ["no-such-command"],
    [],
])
def test_usage_errors_exit_64(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Command-line mistakes exit 64 (EX_USAGE), never 2 (over budget) or 1: a CI script
    tells a typo from "does not fit"."""
    argv = [str(model_path("tflm/hello_world_int8.tflite")) if a == "MODEL" else a
            for a in argv]
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code  # argparse's errors leave through Parser.error
    assert status == 64, argv
    err = capsys.readouterr().err
    assert "usage: nnopt" in err and "Traceback" not in err
    if argv:
        assert "error:" in err and "hint: see `nnopt" in err


def test_option_value_errors_found_after_parsing_exit_64() -> None:
    """Checks the commands make past argparse (conflicting or out-of-range values) are
    usage errors too: nnopt.errors.UsageError."""
    hello = str(model_path("tflm/hello_world_int8.tflite"))
    assert main(["optimize", hello, "--max-extra-macs", "-1", "--table", "none"]) == 64
    assert main(["optimize", hello, "--allocator", "dynamic", "--tiling", "force"]) == 64
    assert main(["check-elf", hello, "-b", "nucleo_f767zi", "--top", "-1"]) == 64


@pytest.mark.parametrize("sub", ["optimize", "run", "check-elf", "convert", "ops"])
def test_help_documents_the_exit_status(sub: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([sub, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for line in ("exit status:", "0   success", "2   over the memory budget",
                 "64  usage error", "1   any other error"):
        assert line in out, (sub, line)


def test_exit_statuses_live_in_one_place() -> None:
    from nnopt import errors

    assert (errors.EXIT_OK, errors.EXIT_ERROR, errors.EXIT_OVER_BUDGET,
            errors.INTERNAL_ERROR_EXIT, errors.EXIT_USAGE) == (0, 1, 2, 3, 64)
    assert errors.BudgetError("x").exit_code == errors.EXIT_OVER_BUDGET
    assert errors.UsageError("x").exit_code == errors.EXIT_USAGE
    assert errors.UnknownBoardError("x").exit_code == errors.EXIT_USAGE
    assert errors.ModelError("x").exit_code == errors.EXIT_ERROR
    assert errors.describe_error(errors.UsageError("bad", hint="h")) == ("error: bad\nhint: h",
                                                                          64)


@pytest.mark.parametrize("sub", ["optimize", "run", "check-elf"])
def test_help(sub: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([sub, "--help"])
    assert info.value.code == 0
    assert "usage: nnopt " + sub in capsys.readouterr().out


def test_unknown_board() -> None:
    res = nnopt("optimize", str(model_path("tflm/hello_world_int8.tflite")), "-b", "nope")
    assert res.returncode == 64 and "unknown board 'nope'" in res.stderr
    assert "nucleo_f767zi" in res.stderr


def test_one_error_report_for_every_front_end(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """nnopt.errors.describe_error: what the CLI prints (and, with west's labels, what
    west nn-optimize / nn-check pass to die()) and the exit status."""
    from nnopt import cli
    from nnopt.errors import BudgetError, ModelError, describe_error

    assert describe_error(ModelError("bad model", hint="use a .tflite")) == (
        "error: bad model\nhint: use a .tflite", 1)
    assert describe_error(BudgetError("over by 1 byte")) == ("error: over by 1 byte", 2)
    assert describe_error(ModelError("bad", hint="h"), error_label="",
                          hint_label="Hint: ") == ("bad\nHint: h", 1)
    text, status = describe_error(ZeroDivisionError("boom"))
    assert status == 3 and text.startswith("internal error: ZeroDivisionError: boom\n")
    assert "NNOPT_DEBUG=1" in text

    def broken(args: object) -> int:
        raise ZeroDivisionError("boom")

    monkeypatch.delenv("NNOPT_DEBUG", raising=False)
    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser.set_defaults(func=broken)
    assert cli.main([]) == 3
    err = capsys.readouterr().err
    assert err.strip() == text and "Traceback" not in err


@pytest.mark.qemu
@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None or not qemu_available(),
                    reason="needs arm-none-eabi-gcc and qemu-system-arm")
def test_run_keep_elf_gives_check_elf_the_firmware(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The firmware `nnopt run --target qemu-m7` built and ran is the one --keep-elf
    copies, and `nnopt check-elf` reads it against the board's budget."""
    elf = tmp_path / "fw.elf"
    path = str(model_path("tflm/hello_world_int8.tflite"))
    assert main(["run", path, "-q", "--target", "qemu-m7", "--keep-elf", str(elf)]) == 0
    out = capsys.readouterr().out
    assert f"firmware: {elf}" in out and "instructions per inference:" in out
    assert main(["check-elf", str(elf), "-b", "nucleo_f767zi"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"arena [0-9,]+", text) and "fits board nucleo_f767zi" in text
