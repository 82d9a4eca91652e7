"""nnopt.firmware: host and bare-metal builds, QEMU runs, the port, the harness.

C test programs live in tests/firmware/: port_test.c exercises the port API,
fake_model.c stands in for a generated model behind the generic harness.
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from nnopt.boards import Board, load_board
from nnopt.errors import ToolchainError
from nnopt.firmware import BuildSpec, build, linker_script, qemu_available, run
from nnopt.firmware import toolchain as tc
from nnopt.firmware.qemu import (
    INSTRUCTIONS_PER_TICK,
    SYSCLK_HZ,
    instructions_per_tick_ratio,
    qemu_command,
    semihosting_cmdline,
)
from nnopt.paths import nnrt_dir

HERE = Path(__file__).resolve().parent
PORT_TEST = HERE / "firmware" / "port_test.c"
FAKE_MODEL = HERE / "firmware" / "fake_model.c"
HARNESS = nnrt_dir() / "harness" / "runner_main.c"

HAVE_ARM = shutil.which("arm-none-eabi-gcc") is not None
HAVE_QEMU = qemu_available()
needs_arm = pytest.mark.skipif(not HAVE_ARM, reason="arm-none-eabi-gcc not installed "
                               "(apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)")
qemu = [pytest.mark.qemu, needs_arm,
        pytest.mark.skipif(not HAVE_QEMU, reason="qemu-system-arm not installed "
                           "(apt-get install qemu-system-arm)")]

# (target, board name): every target the port must work on, with the budgets to test.
TARGETS = [
    pytest.param("host", None, id="host"),
    pytest.param("qemu-m7", "nucleo_f767zi", id="m7-nucleo_f767zi", marks=qemu),
    pytest.param("qemu-m3", "mps2_an385", id="m3-mps2_an385", marks=qemu),
    pytest.param("qemu-m3", "qemu_cortex_m3", id="m3-qemu_cortex_m3", marks=qemu),
    # the generic target: the board's core (docs/cores.md)
    pytest.param("qemu", "qemu_cortex_m0", id="m0-qemu_cortex_m0", marks=qemu),
    pytest.param("qemu", "mps2_an386", id="m4-mps2_an386", marks=qemu),
    pytest.param("qemu", "mps2_an521", id="m33-mps2_an521", marks=qemu),
    pytest.param("qemu", "mps3_an547", id="m55-mps3_an547", marks=qemu),
]
QEMU_TARGETS = [p for p in TARGETS if p.id != "host"]
NEW_CORES = [p for p in TARGETS if p.values[0] == "qemu"]

# An address each machine does not map (read: BusFault; Armv6-M: HardFault, no CFSR):
# QEMU hw/arm/mps2.c, mps2-tz.c (0x70000000 on the AN521, 0xF0000000 on the AN547:
# both map memory at 0x30000000), nrf51_soc.c.
FAULT_ADDRESS = {"mps2_an521": 0x70000000, "mps3_an547": 0xF0000000}
# The port test's deepest command needs more than the Cortex-M0 board's 2 KB stack.
STACK_SIZE = {"qemu_cortex_m0": 4096}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nnopt-cache")


def _board(name: str | None) -> Board | None:
    return load_board(name) if name else None


def _build(cache: Path, target: tc.Target, board: str | None, *sources: Path,
           **defines: str) -> Path:
    return build(BuildSpec(target, tuple(sources), defines=defines, board=_board(board),
                           stack_size=STACK_SIZE.get(board or "")),
                 cache_dir=cache)


def _transform(data: bytes) -> bytes:
    """What port_test.c's `copy` computes."""
    return bytes((((b * 3 + i) & 0xFF) ^ (b // 2)) & 0xFF for i, b in enumerate(data))


# ---- linker script (no toolchain needed) ------------------------------------------------

def test_linker_script_uses_emulation_origins_and_real_sizes() -> None:
    b = load_board("nucleo_f767zi")
    script = linker_script(b)
    assert "flash (rx) : ORIGIN = 0x00000000, LENGTH = 2097152" in script
    assert "sram (rwx) : ORIGIN = 0x20000000, LENGTH = 393216" in script
    assert "dtcm (rwx) : ORIGIN = 0x20100000, LENGTH = 131072" in script
    assert "} > sram AT> flash" in script  # .data image in flash
    assert ".nnrt_arena (NOLOAD)" in script and ".dtcm (NOLOAD)" in script
    assert "__nnrt_stack_size = 8192;" in script
    assert ".heap" not in script  # no heap unless asked
    real = linker_script(b, addresses="board", heap_size=1024)
    assert "flash (rx) : ORIGIN = 0x08000000" in real
    assert "sram (rwx) : ORIGIN = 0x20020000" in real
    assert ".heap (NOLOAD)" in real


def test_linker_script_board_firmware_section() -> None:
    m3 = linker_script(load_board("qemu_cortex_m3"))
    assert "__nnrt_stack_size = 4096;" in m3  # firmware.stack_size in the yaml
    assert "LENGTH = 65536" in m3 and "dtcm" not in m3.split("SECTIONS")[0]
    assert "__nnrt_stack_size = 2048;" in linker_script(load_board("qemu_cortex_m3"),
                                                        stack_size=2048)
    with pytest.raises(ToolchainError):
        linker_script(load_board("qemu_cortex_m3"), stack_size=100)


# QEMU hw/arm/mps2.c, AN385 / AN386 / AN500: RAM the emulation origins may use.
_MPS2_RAM = [(0x00000000, 0x400000), (0x20000000, 0x400000)]
# Per machine: hw/arm/mps2-tz.c (AN521: SSRAM1 4 MB at 0x10000000, SSRAM2+3 4 MB at
# 0x38000000, the Secure aliases; AN547: ITCM 512 KB at 0x10000000, DTCM 512 KB at
# 0x30000000), hw/arm/nrf51_soc.c (flash 256 KB at 0x0, SRAM 16 KB at 0x20000000).
_QEMU_RAM = {
    "mps2-an385": _MPS2_RAM, "mps2-an386": _MPS2_RAM, "mps2-an500": _MPS2_RAM,
    "mps2-an521": [(0x10000000, 0x400000), (0x38000000, 0x400000)],
    "mps3-an547": [(0x10000000, 0x80000), (0x30000000, 0x80000)],
    "microbit": [(0x00000000, 0x40000), (0x20000000, 0x4000)],
}


@pytest.mark.parametrize("name", ["nucleo_f767zi", "mps2_an385", "qemu_cortex_m3",
                                  "qemu_cortex_m0", "mps2_an386", "mps2_an521",
                                  "mps3_an547"])
def test_emulated_regions_lie_in_qemu_ram(name: str) -> None:
    b = load_board(name)
    assert b.emulation is not None and b.emulation.machine in SYSCLK_HZ
    spans = sorted((b.emulation.origins[n], r.size) for n, r in b.regions.items())
    ram = _QEMU_RAM[b.emulation.machine]
    for origin, size in spans:
        assert any(lo <= origin and origin + size <= lo + n for lo, n in ram), name
    for (a, n), (b2, _) in itertools.pairwise(spans):
        assert a + n <= b2, f"{name}: emulated regions overlap"


def test_semihosting_command_line_quoting(tmp_path: Path) -> None:
    cmd = semihosting_cmdline(Path("/x/fw.elf"), ["a b", 'q"', "", "plain"])
    assert cmd == '/x/fw.elf "a b" "q\\"" "" plain'
    if HAVE_QEMU:
        argv = qemu_command(tmp_path / "fw.elf", load_board("mps2_an385"), ["x,y"])
        assert "-icount" in argv and "shift=0" in argv
        assert argv[argv.index("-semihosting-config") + 1].endswith(",arg=x,,y")


# ---- builds -----------------------------------------------------------------------------

def test_build_is_cached_by_content(cache: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "value.h").write_text("#define VALUE 3\n")
    src = tmp_path / "main.c"
    src.write_text('#include "value.h"\nint main(void) { return VALUE; }\n')
    spec = BuildSpec("host", (src,), include_dirs=(inc,))
    exe = build(spec, cache_dir=cache)
    assert run(exe, "host", []).exit_code == 3

    def no_compiler(*args: object, **kwargs: object) -> str:
        raise AssertionError("a cache hit must not run the compiler")

    with monkeypatch.context() as m:
        m.setattr(tc, "_run_tool", no_compiler)
        assert build(spec, cache_dir=cache) == exe
    (inc / "value.h").write_text("#define VALUE 4\n")  # a header change rebuilds
    exe2 = build(spec, cache_dir=cache)
    assert run(exe2, "host", []).exit_code == 4
    exe3 = build(BuildSpec("host", (src,), include_dirs=(inc,), opt="-O0"), cache_dir=cache)
    assert exe3 != exe2  # flags are part of the key


def test_compile_error_carries_the_compiler_message(cache: Path, tmp_path: Path) -> None:
    src = tmp_path / "bad.c"
    src.write_text("int main(void) { int unused_var; return 0 }\n")
    with pytest.raises(ToolchainError) as err:
        build(BuildSpec("host", (src,)), cache_dir=cache)
    assert "bad.c" in err.value.message and "error" in err.value.message


def test_warnings_are_errors(cache: Path, tmp_path: Path) -> None:
    src = tmp_path / "warn.c"
    src.write_text("int main(void) { int unused_var; return 0; }\n")
    with pytest.raises(ToolchainError, match="unused_var"):
        build(BuildSpec("host", (src,)), cache_dir=cache)


def test_missing_compiler_has_an_apt_hint(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nnopt.firmware.toolchain.shutil.which", lambda name: None)
    with pytest.raises(ToolchainError) as err:
        build(BuildSpec("qemu-m7", (PORT_TEST,)), cache_dir=cache)
    assert "arm-none-eabi-gcc" in err.value.message
    assert err.value.hint is not None and "apt-get install" in err.value.hint


def test_bad_specs(cache: Path) -> None:
    with pytest.raises(ToolchainError, match="cortex-m3"):
        build(BuildSpec("qemu-m3", (PORT_TEST,), board=load_board("nucleo_f767zi")),
              cache_dir=cache)
    with pytest.raises(ToolchainError, match="host target only"):
        build(BuildSpec("qemu-m7", (PORT_TEST,), sanitize=True), cache_dir=cache)
    with pytest.raises(ToolchainError, match="not found"):
        build(BuildSpec("host", (HERE / "firmware" / "nope.c",)), cache_dir=cache)


@needs_arm
def test_linker_refuses_overflow_naming_the_region(cache: Path) -> None:
    with pytest.raises(ToolchainError) as err:
        _build(cache, "qemu-m7", "nucleo_f767zi", PORT_TEST, TEST_BSS_BYTES="500000")
    msg = err.value.message
    assert "nucleo_f767zi" in msg and "region `sram' overflowed by" in msg
    assert err.value.hint is not None and "--swap" in err.value.hint


# ---- the port on every target -----------------------------------------------------------

@pytest.mark.parametrize(("target", "board"), TARGETS)
def test_port_reads_transforms_writes(cache: Path, tmp_path: Path, target: tc.Target,
                                      board: str | None) -> None:
    exe = _build(cache, target, board, PORT_TEST)
    data = bytes((i * 37 + 11) & 0xFF for i in range(3000))
    src, dst = tmp_path / "in put.bin", tmp_path / "out.bin"  # a space in the path
    src.write_bytes(data)
    res = run(exe, target, ["copy", str(src), str(dst), str(len(data))], board=_board(board))
    assert res.exit_code == 0, res.stdout + res.stderr
    assert dst.read_bytes() == _transform(data)

    # exact length: a file of another size is refused with the size it has
    res = run(exe, target, ["copy", str(src), str(dst), "2999"], board=_board(board))
    assert res.exit_code == 3
    assert "wrong input size: 3000" in res.stdout


@pytest.mark.parametrize(("target", "board"), TARGETS)
def test_exit_codes_and_console_streams(cache: Path, target: tc.Target,
                                        board: str | None) -> None:
    exe = _build(cache, target, board, PORT_TEST)
    for code in (0, 1, 42, 255):
        assert run(exe, target, ["exit", str(code)], board=_board(board)).exit_code == code
    res = run(exe, target, ["log"], board=_board(board))
    assert res.exit_code == 0
    assert res.stdout == "hello stdout\n" and res.stderr == "hello stderr\n"
    res = run(exe, target, ["no-such-command"], board=_board(board))
    assert res.exit_code == 2 and "unknown command" in res.stderr


@pytest.mark.parametrize(("target", "board"), TARGETS)
def test_arguments_survive_the_command_line(cache: Path, tmp_path: Path, target: tc.Target,
                                            board: str | None) -> None:
    exe = _build(cache, target, board, PORT_TEST)
    out = tmp_path / "dir with, comma" / "args.txt"
    out.parent.mkdir()
    args = ["a b", 'q"uote', "back\\slash", "", "c,d", "tab\tx", "plain"]
    res = run(exe, target, ["args", str(out), *args], board=_board(board))
    assert res.exit_code == 0, res.stderr
    assert out.read_text().split("\n")[:-1] == args


@pytest.mark.parametrize(("target", "board"), QEMU_TARGETS)
def test_fault_is_reported_and_exits_non_zero(cache: Path, target: tc.Target,
                                              board: str) -> None:
    exe = _build(cache, target, board, PORT_TEST)
    addr = FAULT_ADDRESS.get(board, 0x30000000)
    res = run(exe, target, ["fault", str(addr)], board=_board(board))
    assert res.exit_code == 100  # NNRT_PORT_EXIT_FAULT
    b = _board(board)
    assert b is not None
    if b.cpu == "cortex-m0":  # Armv6-M: HardFault, no fault status registers
        assert "nnrt: fault: HardFault pc=0x" in res.stderr
        assert "cfsr" not in res.stderr
        return
    assert "nnrt: fault: BusFault pc=0x" in res.stderr
    assert "cfsr=0x00008200" in res.stderr and f"bfar=0x{addr:08x}" in res.stderr
    assert "PRECISERR" in res.stderr


@pytest.mark.parametrize(("target", "board"), QEMU_TARGETS)
def test_stack_overflow_is_reported(cache: Path, target: tc.Target, board: str) -> None:
    exe = _build(cache, target, board, PORT_TEST)
    ok = run(exe, target, ["stack", "4"], board=_board(board))
    assert ok.exit_code == 0
    used = int(ok.stdout.split("stack_used=")[1])
    assert 4 * 256 < used < 4096
    res = run(exe, target, ["stack", "200"], board=_board(board))  # 50 KB of frames
    assert res.exit_code == 101, res.stderr  # NNRT_PORT_EXIT_STACK
    assert "stack overflow" in res.stderr


@pytest.mark.parametrize(("target", "board"), [*QEMU_TARGETS[:2], *NEW_CORES])
def test_instruction_counts_are_deterministic_and_proportional(
        cache: Path, target: tc.Target, board: str) -> None:
    exe = _build(cache, target, board, PORT_TEST)

    def count(n: int) -> int:
        res = run(exe, target, ["loop", str(n)], board=_board(board))
        assert res.exit_code == 0 and res.instructions is not None
        return res.instructions

    n = 50_000
    one, again, two = count(n), count(n), count(2 * n)
    assert one == again  # deterministic
    # 2 instructions per iteration, SysTick resolution 40 instructions (62.5 on the
    # 16 MHz microbit, 31.25 on the 32 MHz AN547)
    b = _board(board)
    assert b is not None and b.emulation is not None
    slack = 2 * math.ceil(instructions_per_tick_ratio(b.emulation.machine))
    assert abs(one - 2 * n) <= slack
    assert abs((two - one) - 2 * n) <= slack
    assert two / one == pytest.approx(2.0, rel=0.002)


@pytest.mark.parametrize("board", ["nucleo_f767zi", "mps2_an385", "qemu_cortex_m0",
                                   "mps2_an386", "mps2_an521", "mps3_an547"])
@pytest.mark.qemu
@needs_arm
@pytest.mark.skipif(not HAVE_QEMU, reason="qemu-system-arm not installed")
def test_instructions_per_tick_calibration(cache: Path, board: str) -> None:
    """Raw SysTick ticks for a loop of known length give the machine's factor (its
    SYSCLK_HZ: 10^9 / Hz instructions per tick under -icount shift=0)."""
    b = load_board(board)
    assert b.emulation is not None
    target: tc.Target = "qemu"
    exe = _build(cache, target, board, PORT_TEST, NNRT_PORT_INSTR_PER_TICK="1",
                 NNRT_PORT_INSTR_PER_TICK_DEN="1")

    def ticks(n: int) -> int:
        res = run(exe, target, ["loop", str(n)], board=b)
        assert res.exit_code == 0 and res.instructions is not None
        return res.instructions

    n = 400_000  # 800,000 loop instructions
    per_tick = 2 * n / (ticks(2 * n) - ticks(n))
    expected = instructions_per_tick_ratio(b.emulation.machine)
    assert per_tick == pytest.approx(float(expected), rel=1e-3)
    assert INSTRUCTIONS_PER_TICK.get(b.emulation.machine, expected) == expected


@pytest.mark.qemu
@needs_arm
@pytest.mark.skipif(not HAVE_QEMU, reason="qemu-system-arm not installed")
def test_qemu_timeout_is_a_toolchain_error(cache: Path) -> None:
    exe = _build(cache, "qemu-m7", None, PORT_TEST)
    with pytest.raises(ToolchainError, match="timed out"):
        run(exe, "qemu-m7", ["loop", "4000000000"], timeout_s=0.5)


def test_run_missing_program(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError, match="not found"):
        run(tmp_path / "nothing", "host", [])


# ---- the generic harness ----------------------------------------------------------------

@pytest.fixture
def io_files(tmp_path: Path) -> Iterator[dict[str, Path]]:
    files = {
        "in0": tmp_path / "in0.bin", "in1": tmp_path / "in1.bin",
        "short": tmp_path / "short.bin", "bad0": tmp_path / "bad0.bin",
        "out": tmp_path / "out.bin", "trace": tmp_path / "trace.bin",
        "stats": tmp_path / "stats.json",
    }
    files["in0"].write_bytes(struct.pack("8b", 1, 2, 3, 4, 120, -120, 0, -1))
    files["in1"].write_bytes(struct.pack("8b", 10, 10, 10, 10, 10, -10, 0, 0))
    files["short"].write_bytes(bytes(7))
    files["bad0"].write_bytes(struct.pack("8b", -128, 0, 0, 0, 0, 0, 0, 0))
    yield files


def _fake_expected(in0: bytes, in1: bytes) -> tuple[bytes, bytes]:
    bias = (1, 2, 3, 4, -1, -2, -3, -4)
    a = struct.unpack("8b", in0)
    b = struct.unpack("8b", in1)
    t2 = [max(-128, min(127, x + y)) for x, y in zip(a, bias, strict=True)]
    out = [max(-128, min(127, x + y)) for x, y in zip(t2, b, strict=True)]
    return struct.pack("8b", *t2), struct.pack("8b", *out)


@pytest.mark.parametrize(("target", "board"), TARGETS[:3])
def test_harness_runs_a_model(cache: Path, io_files: dict[str, Path], target: tc.Target,
                              board: str | None) -> None:
    f = io_files
    exe = _build(cache, target, board, HARNESS, FAKE_MODEL,
                 NNRT_HARNESS_MODEL="fake_model", NNRT_TRACE="1")
    res = run(exe, target, ["-i", str(f["in0"]), "-i", str(f["in1"]), "-o", str(f["out"]),
                            "-t", str(f["trace"]), "-s", str(f["stats"])], board=_board(board))
    assert res.exit_code == 0, res.stderr
    t2, out = _fake_expected(f["in0"].read_bytes(), f["in1"].read_bytes())
    assert f["out"].read_bytes() == out
    trace = f["trace"].read_bytes()
    assert trace == struct.pack("<II", 2, 8) + t2 + struct.pack("<II", 3, 8) + out
    stats = json.loads(f["stats"].read_text())
    assert stats["status"] == 0
    if target == "host":
        assert stats["instructions"] is None and res.instructions is None
    else:
        assert res.instructions is not None and 0 < res.instructions < 2000
        assert stats["instructions"] == res.instructions
        assert 0 < stats["stack_bytes"] < 4096


@pytest.mark.parametrize(("target", "board"), TARGETS[:2])
def test_harness_failures_name_the_step(cache: Path, io_files: dict[str, Path],
                                        target: tc.Target, board: str | None) -> None:
    f = io_files
    exe = _build(cache, target, board, HARNESS, FAKE_MODEL,
                 NNRT_HARNESS_MODEL="fake_model", NNRT_TRACE="1")
    b = _board(board)

    def go(*args: str) -> tc.RunResult:
        return run(exe, target, list(args), board=b)

    res = go("-i", str(f["short"]), "-i", str(f["in1"]), "-o", str(f["out"]))
    assert res.exit_code == 4
    assert f"file {f['short']} has 7 bytes, the model expects 8" in res.stderr
    assert "input 0 (in0)" in res.stderr

    res = go("-i", str(f["in0"]), "-i", str(f["in0"].with_name("missing.bin")))
    assert res.exit_code == 3 and "input 1 (in1): cannot read" in res.stderr

    res = go("-i", str(f["in0"]))
    assert res.exit_code == 2 and "has 2 input(s) and 1 output(s); got 1 -i" in res.stderr

    res = go("-i", str(f["in0"]), "-i", str(f["in1"]), "-x", "y")
    assert res.exit_code == 2 and "bad argument: -x" in res.stderr

    res = go("-i", str(f["bad0"]), "-i", str(f["in1"]), "-s", str(f["stats"]))
    assert res.exit_code == 5 and "status -1 (NNRT_ERR_ARG)" in res.stderr
    assert json.loads(f["stats"].read_text())["status"] == -1

    res = go("-i", str(f["in0"]), "-i", str(f["in1"]), "-o",
             str(f["out"].parent / "no-dir" / "out.bin"))
    assert res.exit_code == 6 and "output 0 (out): cannot write" in res.stderr

    res = go("-i", str(f["in0"]), "-i", str(f["in1"]))  # outputs are optional
    assert res.exit_code == 0


def test_harness_trace_needs_a_trace_build(cache: Path, io_files: dict[str, Path]) -> None:
    f = io_files
    exe = _build(cache, "host", None, HARNESS, FAKE_MODEL, NNRT_HARNESS_MODEL="fake_model")
    res = run(exe, "host", ["-i", str(f["in0"]), "-i", str(f["in1"]), "-t", str(f["trace"])])
    assert res.exit_code == 2 and "NNRT_TRACE" in res.stderr
    res = run(exe, "host", ["-i", str(f["in0"]), "-i", str(f["in1"]), "-o", str(f["out"])])
    assert res.exit_code == 0 and not f["trace"].exists()


def test_harness_with_sanitizers(cache: Path, io_files: dict[str, Path]) -> None:
    f = io_files
    exe = build(BuildSpec("host", (HARNESS, FAKE_MODEL), sanitize=True,
                          defines={"NNRT_HARNESS_MODEL": "fake_model", "NNRT_TRACE": "1"}),
                cache_dir=cache)
    res = run(exe, "host", ["-i", str(f["in0"]), "-i", str(f["in1"]), "-o", str(f["out"]),
                            "-t", str(f["trace"])])
    assert res.exit_code == 0, res.stderr
    assert f["out"].read_bytes() == _fake_expected(f["in0"].read_bytes(),
                                                   f["in1"].read_bytes())[1]


@pytest.mark.qemu
@needs_arm
@pytest.mark.skipif(not HAVE_QEMU, reason="qemu-system-arm not installed")
def test_runs_do_not_depend_on_cwd(cache: Path, io_files: dict[str, Path], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    f = io_files
    exe = _build(cache, "qemu-m3", "mps2_an385", HARNESS, FAKE_MODEL,
                 NNRT_HARNESS_MODEL="fake_model", NNRT_TRACE="1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    res = run(exe, "qemu-m3", ["-i", str(f["in0"]), "-i", str(f["in1"]), "-o", str(f["out"])])
    assert res.exit_code == 0, res.stderr
    assert list(elsewhere.iterdir()) == []
    monkeypatch.chdir(f["in0"].parent)  # relative paths mean what they mean to the caller
    f["out"].unlink()
    res = run(exe, "qemu-m3", ["-i", "in0.bin", "-i", "in1.bin", "-o", "out.bin"])
    assert res.exit_code == 0, res.stderr
    assert f["out"].read_bytes() == _fake_expected(f["in0"].read_bytes(),
                                                   f["in1"].read_bytes())[1]
