"""nnopt.firmware on RISC-V: the RV32IMAC bare-metal port (riscv/startup.c, RISC-V
semihosting) built with riscv64-unknown-elf-gcc + picolibc and run under
qemu-system-riscv32 on the two RISC-V boards: qemu_riscv32 (QEMU virt) and hifive1
(QEMU sifive_e, 16 KB DTIM). The same C test program as tests/test_firmware.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nnopt.boards import load_board
from nnopt.errors import BoardError, ToolchainError
from nnopt.firmware import BuildSpec, build, linker_script, qemu_available, run
from nnopt.firmware.qemu import INSTRUCTIONS_PER_TICK, qemu_command
from nnopt.firmware.toolchain import port_sources, target_flags

HERE = Path(__file__).resolve().parent
PORT_TEST = HERE / "firmware" / "port_test.c"

HAVE_CC = shutil.which("riscv64-unknown-elf-gcc") is not None
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="riscv64-unknown-elf-gcc not installed "
                              "(apt-get install gcc-riscv64-unknown-elf "
                              "picolibc-riscv64-unknown-elf)")
qemu = [pytest.mark.qemu, needs_cc,
        pytest.mark.skipif(not qemu_available("riscv"), reason="qemu-system-riscv32 not "
                           "installed (apt-get install qemu-system-misc)")]
BOARDS = [pytest.param(b, marks=qemu, id=b) for b in ("qemu_riscv32", "hifive1")]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nnopt-cache")


def _build(cache: Path, board: str, **defines: str) -> Path:
    return build(BuildSpec("qemu", (PORT_TEST,), defines=defines, board=load_board(board)),
                 cache_dir=cache)


# ---- board data, flags, linker script, command line (no toolchain needed) ------------

def test_riscv_boards_and_flags() -> None:
    for name, machine in (("qemu_riscv32", "virt"), ("hifive1", "sifive_e")):
        b = load_board(name)
        assert b.arch == "riscv" and b.cpu == "rv32imac" and b.fpu is None
        assert b.emulation is not None and b.emulation.machine == machine
        assert INSTRUCTIONS_PER_TICK[machine] == 1  # minstret
        assert target_flags("qemu", b, False) == ["-march=rv32imac", "-mabi=ilp32",
                                                   "--specs=picolibc.specs"]
        names = [p.relative_to(p.parents[1]).as_posix() for p in port_sources("qemu", b)]
        assert "riscv/startup.c" in names and "baremetal/startup.c" not in names
    h = load_board("hifive1")
    assert h.arena_region == "dtim" and h.sram_bytes == 16384
    assert load_board("mps2_an385").arch == "arm"
    with pytest.raises(BoardError, match="arch"):
        type(h).from_data({"name": "x", "cpu": "x", "arch": "mips",
                           "regions": {"sram": {"kind": "ram", "origin": 0, "size": 1}}})


def test_riscv_linker_script() -> None:
    script = linker_script(load_board("hifive1"))
    assert "flash (rx) : ORIGIN = 0x20400000, LENGTH = 12582912" in script
    assert "dtim (rwx) : ORIGIN = 0x80000000, LENGTH = 16384" in script
    sections = script.split("SECTIONS")[1]
    assert sections.index(".nnrt_reset") < sections.index(".text :")  # first in the image
    assert ".isr_vector" not in sections and "__global_pointer$" in sections
    assert "*(.sdata .sdata.*)" in sections and "*(.sbss .sbss.*)" in sections
    assert "} > dtim AT> flash" in sections
    # the Arm scripts gain none of it
    arm = linker_script(load_board("mps2_an385"))
    assert "__global_pointer$" not in arm and ".isr_vector" in arm


def test_target_qemu_needs_a_board(cache: Path) -> None:
    with pytest.raises(ToolchainError, match="needs a board") as err:
        build(BuildSpec("qemu", (PORT_TEST,)), cache_dir=cache)
    assert err.value.hint is not None and "hifive1" in err.value.hint


def test_qemu_command_line(tmp_path: Path) -> None:
    if not qemu_available("riscv"):
        pytest.skip("qemu-system-riscv32 not installed (apt-get install qemu-system-misc)")
    cmd = qemu_command(tmp_path / "fw.elf", load_board("qemu_riscv32"), ["a"])
    assert Path(cmd[0]).name == "qemu-system-riscv32"
    assert cmd[1:5] == ["-M", "virt", "-bios", "none"]  # no OpenSBI before the firmware
    assert "-icount" in cmd and "shift=0" in cmd
    cmd = qemu_command(tmp_path / "fw.elf", load_board("hifive1"), [])
    assert cmd[1:3] == ["-M", "sifive_e"] and "-bios" not in cmd


def test_missing_riscv_compiler_has_an_apt_hint(cache: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nnopt.firmware.toolchain.shutil.which", lambda name: None)
    with pytest.raises(ToolchainError) as err:
        _build(cache, "qemu_riscv32")
    assert "riscv64-unknown-elf-gcc" in err.value.message
    assert err.value.hint is not None and "picolibc-riscv64-unknown-elf" in err.value.hint


# ---- the port on both boards ----------------------------------------------------------

def _transform(data: bytes) -> bytes:
    """What port_test.c's `copy` computes."""
    return bytes((((b * 3 + i) & 0xFF) ^ (b // 2)) & 0xFF for i, b in enumerate(data))


@pytest.mark.parametrize("board", BOARDS)
def test_port_files_console_exit_arguments(cache: Path, tmp_path: Path, board: str) -> None:
    exe = _build(cache, board)
    b = load_board(board)
    data = bytes((i * 37 + 11) & 0xFF for i in range(3000))
    src, dst = tmp_path / "in put.bin", tmp_path / "out.bin"
    src.write_bytes(data)
    res = run(exe, "qemu", ["copy", str(src), str(dst), str(len(data))], board=b)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert dst.read_bytes() == _transform(data)
    res = run(exe, "qemu", ["copy", str(src), str(dst), "2999"], board=b)
    assert res.exit_code == 3 and "wrong input size: 3000" in res.stdout

    for code in (0, 1, 42, 255):
        assert run(exe, "qemu", ["exit", str(code)], board=b).exit_code == code
    res = run(exe, "qemu", ["log"], board=b)
    assert res.exit_code == 0
    assert res.stdout == "hello stdout\n" and res.stderr == "hello stderr\n"

    out = tmp_path / "dir with, comma" / "args.txt"
    out.parent.mkdir()
    args = ["a b", 'q"uote', "back\\slash", "", "c,d", "tab\tx", "plain"]
    res = run(exe, "qemu", ["args", str(out), *args], board=b)
    assert res.exit_code == 0, res.stderr
    assert out.read_text().split("\n")[:-1] == args


@pytest.mark.parametrize("board", BOARDS)
def test_trap_is_reported_and_exits_non_zero(cache: Path, board: str) -> None:
    exe = _build(cache, board)
    res = run(exe, "qemu", ["fault"], board=load_board(board))
    assert res.exit_code == 100, res.stderr  # NNRT_PORT_EXIT_FAULT
    assert "nnrt: fault: illegal instruction mepc=0x" in res.stderr
    assert "mcause=0x00000002" in res.stderr


@pytest.mark.parametrize("board", BOARDS)
def test_stack_overflow_is_reported(cache: Path, board: str) -> None:
    exe = _build(cache, board)
    b = load_board(board)
    ok = run(exe, "qemu", ["stack", "1"], board=b)
    assert ok.exit_code == 0, ok.stderr
    used = int(ok.stdout.split("stack_used=")[1])
    assert 256 < used < 2048
    res = run(exe, "qemu", ["stack", "200"], board=b)  # 50 KB of frames
    assert res.exit_code == 101, res.stderr  # NNRT_PORT_EXIT_STACK
    assert "stack overflow" in res.stderr
    if board == "hifive1":  # below the DTIM nothing is mapped: the first push traps
        assert "store/AMO access fault with the stack pointer at 0x7fff" in res.stderr


@pytest.mark.parametrize("board", BOARDS)
def test_minstret_counts_every_instruction(cache: Path, board: str) -> None:
    """Under -icount shift=0, minstret is the instruction count: a 2-instruction loop
    of N iterations reads 2N plus a constant, the same on every run."""
    exe = _build(cache, board)
    b = load_board(board)

    def count(n: int) -> int:
        res = run(exe, "qemu", ["loop", str(n)], board=b)
        assert res.exit_code == 0 and res.instructions is not None
        return res.instructions

    n = 100_000
    one, again, two = count(n), count(n), count(2 * n)
    assert one == again
    assert two - one == 2 * n  # exact: resolution 1 instruction
    assert 0 <= one - 2 * n < 16  # the counter reads around the loop


def test_run_target_qemu_needs_a_board() -> None:
    """`nnopt run --target qemu` without --board: a usage error (64) with a hint."""
    import subprocess
    import sys

    model = HERE.parent / "models" / "hello_world_int8.tflite"
    proc = subprocess.run([sys.executable, "-m", "nnopt", "run", str(model), "--target",
                           "qemu", "--seed", "1"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 64
    assert "--target qemu needs --board" in proc.stderr and "hint:" in proc.stderr
    assert "Traceback" not in proc.stderr
