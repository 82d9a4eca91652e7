"""Feature-map tiles out of core, the runtime (issue 39: nnrt/fmstore.h): tiles sealed
with the swap driver's PSA AEAD, written to a file device (host file; the semihosting
file under QEMU) and read back bit-exact over several inferences; a flipped bit, a stale
tile (not rewritten in this inference), a replayed tile (an earlier inference's sealed
bytes) and a wrong key each stop with NNRT_ERR_AUTH and leave no unauthenticated byte.

The harness is tests/swap/fmstore_main.c, built with the store, the file tile device and
the PSA backend, linked with nnopt's mbedTLS (nnopt.swap.mbedtls_build)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nnopt.boards import load_board
from nnopt.cdefs import Status
from nnopt.firmware.toolchain import BuildSpec, Target, build, run
from nnopt.paths import nnrt_dir
from nnopt.swap.mbedtls_build import MbedtlsSources, library_defines, mbedtls_library
from support.swap_checks import EXIT

HARNESS = Path(__file__).parent / "swap" / "fmstore_main.c"
_LINE = re.compile(r"fm: status=(-?\d+) tile=(-?\d+) written=(\d+) read=(\d+)")
TILE_SEALED = 750 + 16


def _exe(mbed: MbedtlsSources, target: Target, board: str | None = None,
         sanitize: bool = False) -> Path:
    b = load_board(board) if board else None
    src = nnrt_dir() / "src" / "swap"
    spec = BuildSpec(target=target,
                     sources=(HARNESS, src / "fmstore.c", src / "tiledev_file.c",
                              src / "tiledev_nor.c", src / "swap_psa.c"),
                     include_dirs=mbed.include_dirs, defines=library_defines(mbed, target),
                     sanitize=sanitize, board=b,
                     libraries=(mbedtls_library(target, board=b, sanitize=sanitize),))
    return build(spec)


def _run(exe: Path, target: Target, path: Path, mode: str,
         board: str | None = None) -> tuple[int, int, int, int, int]:
    res = run(exe, target, [str(path), mode], board=load_board(board) if board else None,
              timeout_s=300)
    m = _LINE.search(res.stdout)
    assert m is not None, (res.stdout, res.stderr)
    return res.exit_code, int(m[1]), int(m[2]), int(m[3]), int(m[4])


def _check_all(exe: Path, target: Target, tmp: Path, board: str | None = None) -> None:
    code, status, tile, written, read = _run(exe, target, tmp / "ok.bin", "ok", board)
    assert (code, status, tile) == (0, int(Status.OK), -1)
    # three inferences of four sealed tiles, each written once and read once
    assert written == read == 3 * 4 * TILE_SEALED
    assert (tmp / "ok.bin").stat().st_size >= 4 * TILE_SEALED
    for mode, bad_tile in (("flip", 2), ("stale", 2), ("replay", 2), ("wrongkey", 3)):
        code, status, tile, _, _ = _run(exe, target, tmp / f"{mode}.bin", mode, board)
        assert status == int(Status.ERR_AUTH), mode
        assert code == EXIT[Status.ERR_AUTH], mode
        assert tile == bad_tile, mode


def test_host_nor_erases_before_write_and_wears_evenly(mbed: MbedtlsSources,
                                                       tmp_path: Path) -> None:
    """40 inferences of 4 tiles (3,064 sealed bytes each) round a 64 KB simulated NOR
    (4 KB blocks, programming clears bits only) almost twice: every tile authenticates
    (so every block was erased before its rewrite), and the blocks' erase counts differ
    by at most one."""
    exe = _exe(mbed, "host", sanitize=True)
    res = run(exe, "host", [str(tmp_path / "unused.bin"), "nor"], timeout_s=300)
    m = _LINE.search(res.stdout)
    assert m is not None and res.exit_code == 0 and int(m[1]) == int(Status.OK), res.stdout
    nor = re.search(r"nor: erases=(\d+) min=(\d+) max=(\d+)", res.stdout)
    assert nor is not None, res.stdout
    total, lo, hi = (int(x) for x in nor.groups())
    written = 40 * 4 * TILE_SEALED
    assert written // 4096 <= total <= written // 4096 + 16  # one erase per block entered
    assert lo >= 1 and hi - lo <= 1


_AHEAD = re.compile(r"ahead: prefetches=(\d+) hits=(\d+) misses=(\d+)")


def test_host_read_ahead_follows_the_learned_order_and_still_authenticates(
        mbed: MbedtlsSources, tmp_path: Path) -> None:
    """The store's read-ahead hint (nnrt_tiledev_t.prefetch, used by Zephyr's
    CONFIG_NNRT_SWAP_FM_ASYNC): tiles read last first (3, 2, 1, 0). Inference 1 learns the
    order (its reads all miss: the fallback guess, the next index, is wrong for a
    descending order); in inferences 2 and 3 every read but the first (tile 3, whose
    place is new each inference) is served from the read-ahead buffer, bit-exact. A bit
    flipped in a tile that is then read ahead still fails authentication."""
    exe = _exe(mbed, "host", sanitize=True)
    res = run(exe, "host", [str(tmp_path / "ahead.bin"), "ahead"], timeout_s=300)
    m = _LINE.search(res.stdout)
    assert m is not None and res.exit_code == 0 and int(m[1]) == int(Status.OK), res.stdout
    counts = [tuple(int(x) for x in a) for a in _AHEAD.findall(res.stdout)]
    assert len(counts) == 2, res.stdout  # after inferences 2 and 3 (cumulative)
    _, hits, misses = counts[-1]
    assert (hits, misses) == (2 * 3, 4 + 2 * 1), res.stdout
    assert int(m[3]) == int(m[4]) == 3 * 4 * TILE_SEALED
    res = run(exe, "host", [str(tmp_path / "flip.bin"), "ahead_flip"], timeout_s=300)
    m = _LINE.search(res.stdout)
    assert m is not None, res.stdout
    assert (int(m[1]), int(m[2])) == (int(Status.ERR_AUTH), 1), res.stdout
    assert res.exit_code == EXIT[Status.ERR_AUTH]
    (_, hits2, _), (_, hits3, _) = ((int(x) for x in a) for a in _AHEAD.findall(res.stdout))
    # inference 3 read tile 3 (miss), then tiles 2 and 1 from the read-ahead buffer: the
    # flipped tile 1 came from it and was refused
    assert hits3 - hits2 == 2, res.stdout


def test_host_tiles_round_trip_and_attacks_refused(mbed: MbedtlsSources, tmp_path: Path) -> None:
    _check_all(_exe(mbed, "host", sanitize=True), "host", tmp_path)


@pytest.mark.qemu
def test_qemu_m7_tiles_round_trip_and_attacks_refused(mbed: MbedtlsSources,
                                                      tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    _check_all(_exe(mbed, "qemu-m7", "nucleo_f767zi"), "qemu-m7", tmp_path, "nucleo_f767zi")
