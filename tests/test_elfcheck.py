"""nnopt.elfcheck and `nnopt check-elf`: ROM/RAM per region of a firmware ELF.

Figures are cross-checked with arm-none-eabi-size on the same ELF (Berkeley format:
ROM = text + data, RAM = data + bss for nnopt's firmware).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from nnopt.boards import Board, load_board
from nnopt.commands import check_elf as cmd
from nnopt.elfcheck import ElfReport, check_elf, format_report
from nnopt.errors import ElfError, NnoptError
from nnopt.firmware import BuildSpec, build

HERE = Path(__file__).resolve().parent
PORT_TEST = HERE / "firmware" / "port_test.c"

pytestmark = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("arm-none-eabi-size") is None,
    reason="arm-none-eabi-gcc not installed "
           "(apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)")

ARENA_BYTES = 12345
DTCM_BYTES = 1000


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nnopt-cache")


@pytest.fixture(scope="module")
def m7_elf(cache: Path) -> Path:
    """nucleo_f767zi firmware at the emulated addresses, with arena, weights and DTCM."""
    return build(BuildSpec("qemu-m7", (PORT_TEST,), defines={
        "TEST_ARENA_BYTES": str(ARENA_BYTES), "TEST_WEIGHTS": "1",
        "TEST_DTCM_BYTES": str(DTCM_BYTES)}), cache_dir=cache)


@pytest.fixture(scope="module")
def m7_real_elf(cache: Path) -> Path:
    """The same firmware linked at the real STM32F767 addresses (like a Zephyr ELF)."""
    return build(BuildSpec("qemu-m7", (PORT_TEST,), addresses="board", defines={
        "TEST_ARENA_BYTES": str(ARENA_BYTES), "TEST_WEIGHTS": "1",
        "TEST_DTCM_BYTES": str(DTCM_BYTES)}), cache_dir=cache)


@pytest.fixture(scope="module")
def big_m3_elf(cache: Path) -> Path:
    """Fits mps2_an385 (4 MB) but not qemu_cortex_m3 (64 KB of SRAM)."""
    return build(BuildSpec("qemu-m3", (PORT_TEST,), board=load_board("mps2_an385"),
                           defines={"TEST_BSS_BYTES": "100000",
                                    "TEST_ARENA_BYTES": "2048"}), cache_dir=cache)


def berkeley_size(elf: Path) -> tuple[int, int, int]:
    out = subprocess.run(["arm-none-eabi-size", "-B", str(elf)], capture_output=True,
                         text=True, check=True).stdout.splitlines()[1].split()
    return int(out[0]), int(out[1]), int(out[2])


# ---- figures ----------------------------------------------------------------------------

@pytest.mark.parametrize(("elf_fixture", "board"), [
    ("m7_elf", "nucleo_f767zi"), ("m7_real_elf", "nucleo_f767zi"),
    ("big_m3_elf", "mps2_an385"), ("big_m3_elf", "qemu_cortex_m3")])
def test_figures_equal_arm_none_eabi_size(request: pytest.FixtureRequest, elf_fixture: str,
                                          board: str) -> None:
    elf: Path = request.getfixturevalue(elf_fixture)
    text, data, bss = berkeley_size(elf)
    report = check_elf(elf, load_board(board))
    assert report.rom_used == text + data
    assert report.ram_used == data + bss
    assert report.unplaced == ()


def test_regions_and_categories(m7_elf: Path) -> None:
    report = check_elf(m7_elf, load_board("nucleo_f767zi"))
    assert report.address_map == "emulation" and report.machine == "mps2-an500"
    flash, sram, dtcm = (report.region(n) for n in ("flash", "sram", "dtcm"))
    assert (flash.origin, sram.origin, dtcm.origin) == (0, 0x20000000, 0x20100000)
    assert (flash.size, sram.size, dtcm.size) == (2097152, 393216, 131072)  # real sizes
    assert flash.categories["weights"] == 64
    assert flash.categories["data (load image)"] == sram.categories["data"]
    assert {"text", "rodata", "vectors"} <= set(flash.categories)
    assert sram.categories["stack"] == 8192
    assert sram.categories["arena"] == ARENA_BYTES
    assert dtcm.used == DTCM_BYTES
    assert not report.over_budget


def test_arena_symbol_shows_up_with_its_exact_size(m7_elf: Path) -> None:
    report = check_elf(m7_elf, load_board("nucleo_f767zi"))
    syms = {s.name: s for s in report.symbols}
    arena = syms["test_arena"]
    assert arena.size == ARENA_BYTES and arena.region == report.arena_region == "sram"
    assert arena.section == ".nnrt_arena"
    assert syms["test_weights"].region == "flash" and syms["test_weights"].size == 64
    assert syms["test_dtcm"].region == "dtcm"
    assert report.symbols[0].name == "test_arena"  # largest first
    assert all(a.size >= b.size for a, b in itertools.pairwise(report.symbols))


def test_real_and_emulated_maps_give_the_same_use(m7_elf: Path, m7_real_elf: Path) -> None:
    board = load_board("nucleo_f767zi")
    emu, real = check_elf(m7_elf, board), check_elf(m7_real_elf, board)
    assert real.address_map == "board" and real.machine is None
    assert real.region("flash").origin == 0x08000000
    assert real.region("sram").origin == 0x20020000
    assert [(r.name, r.used) for r in emu.regions] == [(r.name, r.used) for r in real.regions]
    assert "the board's addresses" in format_report(real)


def test_over_budget_reports_by_how_much(big_m3_elf: Path) -> None:
    fits = check_elf(big_m3_elf, load_board("mps2_an385"))
    assert not fits.over_budget
    report = check_elf(big_m3_elf, load_board("qemu_cortex_m3"))
    assert report.over_budget
    sram = report.region("sram")
    assert sram.over == sram.used - 65536 > 0
    assert sram.categories["bss"] >= 100000 and sram.categories["arena"] == 2048
    assert report.region("flash").over == 0
    text = format_report(report, top=3)
    assert f"OVER BUDGET: sram by {sram.over:,} B" in text
    assert "tiling" in text and "hint:" in text
    assert "100,000  sram" in text  # the culprit symbol
    doc = report.to_json()
    assert doc["over_budget"] is True
    assert doc["regions"][1]["over"] == sram.over and doc["hints"]


def test_rom_over_budget_hints_at_swap() -> None:
    from nnopt.elfcheck import RegionUse

    r = ElfReport(Path("x.elf"), "b", "board", None,
                  (RegionUse("flash", "rom", 0, 100, 150, {"weights": 120, "text": 30}),),
                  (), (), "sram", False)
    assert r.over_budget and "--swap" in r.hints()[0] and "120 B of weights" in r.hints()[0]


# ---- the command ------------------------------------------------------------------------

def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="nnopt")
    sub = parser.add_subparsers()
    cmd.add_parser(sub)
    return parser.parse_args(["check-elf", *argv])


def test_command_within_budget(m7_elf: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    args = _parse(str(m7_elf), "--board", "nucleo_f767zi", "--json", str(out), "--top", "3")
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "fits board nucleo_f767zi" in text and "largest symbols (top 3)" in text
    doc = json.loads(out.read_text())
    assert doc["board"] == "nucleo_f767zi" and doc["over_budget"] is False
    assert len(doc["symbols"]) == len(check_elf(m7_elf, load_board("nucleo_f767zi")).symbols)


def test_command_over_budget_exits_2(big_m3_elf: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse(str(big_m3_elf), "-b", "qemu_cortex_m3")
    assert cmd.run(args) == 2
    out = capsys.readouterr().out
    assert "OVER BUDGET: sram by" in out and "bss 1" in out  # breakdown by category


# ---- bad input --------------------------------------------------------------------------

def _bad_files(tmp: Path, good: Path) -> dict[str, Path]:
    data = good.read_bytes()
    files = {
        "missing": tmp / "missing.elf",
        "directory": tmp,
        "empty": tmp / "empty.elf",
        "short-header": tmp / "short.elf",
        "truncated": tmp / "truncated.elf",
        "random": tmp / "random.bin",
        "x86-64": Path(sys.executable).resolve(),
        "not-arm": tmp / "i386.elf",
    }
    files["empty"].write_bytes(b"")
    files["short-header"].write_bytes(data[:30])
    files["truncated"].write_bytes(data[: len(data) // 2])
    files["random"].write_bytes(random.Random(7).randbytes(20000))
    patched = bytearray(data)
    struct.pack_into("<H", patched, 18, 3)  # e_machine = EM_386
    files["not-arm"].write_bytes(bytes(patched))
    patched = bytearray(data)
    struct.pack_into("<H", patched, 16, 1)  # e_type = ET_REL
    files["object-file"] = tmp / "object.o"
    files["object-file"].write_bytes(bytes(patched))
    return files


@pytest.mark.parametrize("kind", ["missing", "directory", "empty", "short-header", "truncated",
                                  "random", "x86-64", "not-arm", "object-file"])
def test_bad_files_raise_elf_error(m7_elf: Path, tmp_path: Path, kind: str) -> None:
    path = _bad_files(tmp_path, m7_elf)[kind]
    with pytest.raises(ElfError) as err:
        check_elf(path, load_board("nucleo_f767zi"))
    assert err.value.hint


def test_cli_reports_bad_files_without_traceback(
        m7_elf: Path, big_m3_elf: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    try:
        from nnopt.cli import main
    except ImportError as err:  # the dispatcher belongs to another part of nnopt
        pytest.skip(f"nnopt.cli does not import: {err}")
    bad = _bad_files(tmp_path, m7_elf)
    for kind in ("truncated", "random", "x86-64"):
        assert main(["check-elf", str(bad[kind]), "--board", "nucleo_f767zi"]) == 1
        stderr = capsys.readouterr().err
        assert stderr.startswith("error: ") and "hint: " in stderr
        assert "Traceback" not in stderr
    assert main(["check-elf", str(big_m3_elf), "--board", "qemu_cortex_m3"]) == 2
    assert "OVER BUDGET: sram" in capsys.readouterr().out


def test_sections_outside_the_board_are_flagged(m7_real_elf: Path) -> None:
    # linked at 0x08000000 / 0x20020000: mps2_an385 has no flash there (unplaced), but its
    # RAM at 0x20000000..0x203fffff contains the STM32's SRAM and DTCM
    report = check_elf(m7_real_elf, load_board("mps2_an385"))
    assert report.unplaced and all(s.region is None for s in report.unplaced)
    assert {s.name for s in report.unplaced} >= {".text", ".isr_vector"}
    assert "outside every region" in format_report(report)


def test_elf_for_another_memory_map_is_an_elf_error(m7_real_elf: Path) -> None:
    other = Board.from_data({
        "name": "other", "cpu": "cortex-m4", "regions": {
            "flash": {"kind": "rom", "origin": 0x10000000, "size": 0x100000},
            "sram": {"kind": "ram", "origin": 0x30000000, "size": 0x10000}}})
    with pytest.raises(ElfError, match="none of its sections"):
        check_elf(m7_real_elf, other)


def test_corrupted_elfs_never_crash(m7_elf: Path, tmp_path: Path) -> None:
    data = m7_elf.read_bytes()
    rng = random.Random(1234)
    board = load_board("nucleo_f767zi")
    path = tmp_path / "fuzz.elf"
    for _ in range(30):
        d = bytearray(data)
        for _ in range(rng.choice((1, 4, 32))):
            pos = rng.randrange(52 + 20 * 40) if rng.random() < 0.5 else rng.randrange(len(d))
            d[pos] = rng.randrange(256)
        path.write_bytes(bytes(d[: rng.randrange(len(d))] if rng.random() < 0.2 else d))
        try:
            check_elf(path, board)
        except NnoptError as exc:
            assert isinstance(exc, ElfError), exc
