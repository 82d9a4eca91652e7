"""The NOR tile device with a program unit (issue 39, the Zephyr binding's portable
half): what port/zephyr/nnrt_tiledev_zephyr.c puts over a flash partition
(flash_area_erase / flash_area_write / flash_area_read, program unit =
flash_area_align()). The harness tests/swap/tiledev_nor_main.c simulates a flash with
the rules of Zephyr's flash simulator (writes aligned to the write-block-size, no unit
programmed twice without an erase, erases of whole blocks): tiles whose sealed length
ends inside a unit are written with a padded last unit, every tile starts on a unit and
reads back authenticated over 1.6 passes of the ring, the blocks' erase counts differ by
at most one, and a geometry the device cannot serve is refused at init."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nnopt.cdefs import Status
from nnopt.firmware.toolchain import BuildSpec, build, run
from nnopt.paths import nnrt_dir
from nnopt.swap.mbedtls_build import MbedtlsSources, library_defines, mbedtls_library
from support.swap_checks import EXIT

HARNESS = Path(__file__).parent / "swap" / "tiledev_nor_main.c"
_LINE = re.compile(r"nor: status=(-?\d+) erases=(\d+) min=(\d+) max=(\d+) programs=(\d+) "
                   r"refused=(\d+) bad=(\d+)")
PART, BLOCK, TILES, INFERENCES = 48 * 1024, 4096, 3, 40


@pytest.fixture(scope="module")
def exe(mbed: MbedtlsSources) -> Path:
    src = nnrt_dir() / "src" / "swap"
    return build(BuildSpec(target="host",
                           sources=(HARNESS, src / "fmstore.c", src / "tiledev_nor.c",
                                    src / "swap_psa.c"),
                           include_dirs=mbed.include_dirs,
                           defines=library_defines(mbed, "host"), sanitize=True,
                           libraries=(mbedtls_library("host", sanitize=True),)))


def _run(exe: Path, flash_unit: int, device_unit: int, tile: int,
         inferences: int = INFERENCES) -> tuple[int, dict[str, int]]:
    res = run(exe, "host", [str(flash_unit), str(device_unit), str(tile), str(inferences)],
              timeout_s=300)
    m = _LINE.search(res.stdout)
    if m is None:
        return res.exit_code, {}
    keys = ("status", "erases", "min", "max", "programs", "refused", "bad")
    return res.exit_code, dict(zip(keys, (int(x) for x in m.groups()), strict=True))


@pytest.mark.parametrize(("unit", "tile"), [(1, 750), (4, 750), (16, 750), (64, 750),
                                            (64, 1008), (4, 4095)])
def test_tiles_padded_to_the_write_block_round_trip(exe: Path, unit: int, tile: int) -> None:
    code, r = _run(exe, unit, unit, tile)
    assert code == 0 and r["status"] == int(Status.OK), r
    assert r["refused"] == 0 and r["bad"] == 0, r
    sealed = tile + 16
    span = -(-sealed // unit) * unit  # each tile takes whole units
    tails = sealed % unit != 0
    # one program() of the whole units, plus one of the padded tail when there is one
    assert r["programs"] == TILES * INFERENCES * (2 if tails else 1), r
    # the ring goes round: each erase block erased once per pass, wear even
    written = TILES * INFERENCES * span
    assert written > PART
    assert written // BLOCK <= r["erases"] <= written // BLOCK + PART // BLOCK, r
    assert r["min"] >= 1 and r["max"] - r["min"] <= 1, r


def test_flash_refuses_a_device_that_ignores_the_write_block(exe: Path) -> None:
    """The simulated flash is strict: told a unit of 1 over a flash that programs 4-byte
    units, the device writes a 766-byte tile whose tail the flash refuses (NNRT_ERR_IO),
    as Zephyr's flash driver would; the Zephyr port passes flash_area_align()."""
    code, r = _run(exe, 4, 1, 750, 1)
    assert r["status"] == int(Status.ERR_IO) and code == EXIT[Status.ERR_IO], r
    assert r["refused"] >= 1 and r["bad"] == 0, r


@pytest.mark.parametrize("unit", [3, 128])
def test_geometry_the_device_cannot_serve_is_refused(exe: Path, unit: int) -> None:
    """A program unit that is not a power of two, or larger than the device pads
    (NNRT_TILEDEV_NOR_MAX_UNIT, 64): nnrt_tiledev_nor_init() says NNRT_ERR_ARG."""
    code, _ = _run(exe, unit, unit, 750, 1)
    assert code == 4
