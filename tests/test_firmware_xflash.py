"""samples/swapnn on QEMU: the flash simulator's 16 MB NOLOAD section must not be an ELF
segment, or QEMU refuses the -device loader that writes the blob at the same address.

Reproduced with nnopt's bare-metal flow: nnopt's linker script for mps2_an385 plus the
section Zephyr generates for the overlay's memory-region (NNRT_XFLASH, (NOLOAD), at the
PSRAM 0x21000000), and the sample's own QEMU loader flag. The fix is the post-build
command of samples/swapnn/CMakeLists.txt, read from there and applied to the same ELF.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from conftest import REPO
from nnopt.boards import load_board
from nnopt.firmware import linker_script, qemu_available

SAMPLE = REPO / "samples" / "swapnn"
GCC = shutil.which("arm-none-eabi-gcc")
OBJCOPY = shutil.which("arm-none-eabi-objcopy")
pytestmark = pytest.mark.skipif(not (GCC and OBJCOPY), reason="arm-none-eabi toolchain absent")

FIRMWARE = r"""
#include <stdint.h>
/* drivers/flash/flash_simulator.c: the buffer, in the memory-region's section */
static uint8_t mock_flash[16u << 20] __attribute__((section("NNRT_XFLASH"), used));
void nnrt_reset_handler(void) { volatile uint8_t b = mock_flash[0]; (void)b; for (;;) {} }
__attribute__((section(".isr_vector"), used))
const void *vectors[2] = {(void *)0x20001000, (void *)nnrt_reset_handler};
"""


def _blob_addr() -> int:
    cml = (SAMPLE / "CMakeLists.txt").read_text()
    # the mps2/an385 address (the else branch; this test's firmware is an AN385 one)
    (addr,) = re.findall(r"else\(\)\s*set\(SWAPNN_QEMU_BLOB_ADDR (0x[0-9a-fA-F]+)\)", cml)
    return int(addr, 16)


def _build(tmp: Path) -> Path:
    addr = _blob_addr()
    script = linker_script(load_board("mps2_an385"))
    script = script.replace(
        "\n}\n\n__nnrt_stack_size",
        f"\n  NNRT_XFLASH (rw) : ORIGIN = 0x{addr:08x}, LENGTH = 16777216\n}}\n\n"
        "__nnrt_stack_size", 1)
    # the output section Zephyr's LINKER_DT_SECTIONS() writes for a zephyr,memory-region
    script = script.replace("  /* not loaded", "  NNRT_XFLASH (NOLOAD) :\n  {\n"
                            "    KEEP(*(NNRT_XFLASH))\n  } > NNRT_XFLASH\n\n  /* not loaded", 1)
    (tmp / "fw.ld").write_text(script)
    (tmp / "fw.c").write_text(FIRMWARE)
    elf = tmp / "zephyr.elf"
    subprocess.run([str(GCC), "-mcpu=cortex-m3", "-mthumb", "-O1", "-nostdlib",
                    "-T", str(tmp / "fw.ld"), str(tmp / "fw.c"), "-o", str(elf)],
                   check=True, capture_output=True, text=True)
    return elf


def _post_build(elf: Path) -> None:
    """The sample's extra_post_build_commands, with the sample's arguments."""
    cml = (SAMPLE / "CMakeLists.txt").read_text()
    m = re.search(r"extra_post_build_commands\s+COMMAND "
                  r"\$<TARGET_PROPERTY:bintools,elfconvert_command> ([^\n]+)\n\s*"
                  r"\$\{CMAKE_BINARY_DIR\}/zephyr/zephyr\.elf\)", cml)
    assert m, "samples/swapnn/CMakeLists.txt: no objcopy post-build command for the ELF"
    # Zephyr reads the property while find_package(Zephyr) runs: set later, it is ignored
    found = re.search(r"^find_package\(Zephyr", cml, re.M)
    assert found and m.start() < found.start()
    subprocess.run([str(OBJCOPY), *shlex.split(m.group(1)), str(elf)], check=True,
                   capture_output=True, text=True)


def _loaded_segments_at(elf: Path, addr: int) -> list[tuple[int, int]]:
    with elf.open("rb") as f:
        return [(seg["p_vaddr"], seg["p_memsz"]) for seg in ELFFile(f).iter_segments()
                if seg["p_type"] == "PT_LOAD" and seg["p_memsz"]
                and seg["p_paddr"] <= addr < seg["p_paddr"] + seg["p_memsz"]]


def _qemu_starts(elf: Path, blob: Path) -> tuple[bool, str]:
    """QEMU with the sample's loader flag, paused (-S): a ROM overlap exits at once."""
    cmd = ["qemu-system-arm", "-M", "mps2-an385", "-nographic", "-monitor", "none", "-S",
           "-kernel", str(elf),
           "-device", f"loader,file={blob},addr=0x{_blob_addr():08x},force-raw=on"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=4)
    except subprocess.TimeoutExpired:
        return True, ""  # still running: it accepted the image and the blob
    return False, res.stderr


def test_the_zephyr_section_layout_gives_the_simulated_flash_a_load_segment(
        tmp_path: Path) -> None:
    elf = _build(tmp_path)
    assert _loaded_segments_at(elf, _blob_addr()) == [(_blob_addr(), 16 << 20)]
    if qemu_available():
        blob = tmp_path / "blob.bin"
        blob.write_bytes(bytes(range(256)) * 16)
        ok, err = _qemu_starts(elf, blob)
        assert not ok and "Some ROM regions are overlapping" in err


def test_the_sample_post_build_step_removes_the_segment(tmp_path: Path) -> None:
    elf = _build(tmp_path)
    _post_build(elf)
    assert _loaded_segments_at(elf, _blob_addr()) == []
    if qemu_available():
        blob = tmp_path / "blob.bin"
        blob.write_bytes(bytes(range(256)) * 16)
        ok, err = _qemu_starts(elf, blob)
        assert ok, err


def test_nnopt_firmware_has_no_load_segment_beyond_its_regions(tmp_path: Path) -> None:
    # nnopt's own linker script has no simulated-flash section: every PT_LOAD lies inside
    # a board region, so a -device loader outside them never overlaps.
    board = load_board("mps2_an385")
    elf = tmp_path / "plain.elf"
    (tmp_path / "fw.ld").write_text(linker_script(board))
    (tmp_path / "fw.c").write_text(FIRMWARE.replace('__attribute__((section("NNRT_XFLASH"), '
                                                    'used))', "__attribute__((used))")
                                   .replace("16u << 20", "16"))
    subprocess.run([str(GCC), "-mcpu=cortex-m3", "-mthumb", "-O1", "-nostdlib", "-T",
                    str(tmp_path / "fw.ld"), str(tmp_path / "fw.c"), "-o", str(elf)],
                   check=True, capture_output=True, text=True)
    assert _loaded_segments_at(elf, _blob_addr()) == []
