"""The C swap driver against real sealed blobs: every chunk authenticated and decrypted
bit-exact; tampering, wrong keys and malformed blobs give the defined status, every
time, without crashing (ASan/UBSan build), on the host and under QEMU.

The harness is tests/swap/swap_reader_main.c, built with
:func:`nnopt.firmware.toolchain.build` together with the driver, linked with mbedTLS
built from Debian's source package as a cached static library
(:mod:`nnopt.swap.mbedtls_build`).
"""

from __future__ import annotations

import random
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnopt.boards import load_board
from nnopt.cdefs import Status
from nnopt.firmware.toolchain import Target, run
from nnopt.swap import sealed_blob as B
from nnopt.swap.costmodel import AEAD_CYCLES_PER_BYTE, AEAD_CYCLES_PER_CHUNK
from nnopt.swap.mbedtls_build import (
    MbedtlsSources,
)
from support.swap_checks import EXIT, RealBlob, make_blob, reader

_LINE = re.compile(r"swap: status=(-?\d+) chunk=(-?\d+) chunks=(\d+) bytes=(\d+) "
                   r"decrypt=(\d+) wait=(\d+)")


@pytest.fixture(scope="module")
def blobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RealBlob]:
    tmp = tmp_path_factory.mktemp("blobs")
    return {
        "chacha20-poly1305": make_blob(tmp, "mlperf_tiny/vww_96_int8.tflite",
                                       "chacha20-poly1305", 4096),
        "aes-128-gcm": make_blob(tmp, "mlperf_tiny/kws_ref_model.tflite", "aes-128-gcm", 2048),
    }


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    status: int
    chunk: int
    chunks: int
    decrypt: int
    stdout: str
    stderr: str


def run_reader(exe: Path, target: Target, args: list[str], board: str | None = None) -> Outcome:
    res = run(exe, target, args, board=load_board(board) if board else None, timeout_s=300)
    m = _LINE.search(res.stdout)
    if m is None:
        return Outcome(res.exit_code, 1, -1, 0, 0, res.stdout, res.stderr)
    return Outcome(res.exit_code, int(m[1]), int(m[2]), int(m[3]), int(m[5]), res.stdout,
                   res.stderr)


def flip(data: bytes, pos: int, mask: int = 0x01) -> bytes:
    b = bytearray(data)
    b[pos] ^= mask
    return bytes(b)


def expect(o: Outcome, status: Status, chunk: int | None = None) -> None:
    assert o.status == int(status), (o.stdout, o.stderr)
    assert o.exit_code == EXIT[status]
    if chunk is not None:
        assert o.chunk == chunk, o.stdout


# ----- host -----

@pytest.mark.parametrize("alg", ["chacha20-poly1305", "aes-128-gcm"])
def test_host_reads_every_chunk(mbed: MbedtlsSources, blobs: dict[str, RealBlob], alg: str,
                                tmp_path: Path) -> None:
    exe = reader(mbed, "host")
    rb = blobs[alg]
    assert len(rb.plain) > 10
    out = tmp_path / "plain.bin"
    o = run_reader(exe, "host", [*rb.args(), "-o", str(out)])
    expect(o, Status.OK)
    assert o.chunks == len(rb.plain)
    assert out.read_bytes() == b"".join(rb.plain)  # bit-exact weights
    for extra in (["-r"], ["-p"]):  # reverse order / no prefetch: same result
        expect(run_reader(exe, "host", [*rb.args(), *extra]), Status.OK)
    # no expectations at all (a tool reading any blob)
    expect(run_reader(exe, "host", ["-b", str(rb.path), "-k", rb.key.hex()]), Status.OK)


_DEV_READS = re.compile(r"swap: device_reads=(\d+)")


def test_host_pipelining_across_frames_reads_the_next_frames_first_chunk_early(
        mbed: MbedtlsSources, blobs: dict[str, RealBlob], tmp_path: Path) -> None:
    """NNRT_SWAP_PIPELINE_FRAMES=1: three frames read the same plaintexts as without
    it; the next frame's chunk 0 is read after each frame's last chunk, so nnrt_swap_start(0)
    of frames 2 and 3 issues nothing and one read (the fourth frame's chunk 0) is still
    in flight at close: the device completes one read more (the open's reads of the
    header and the chunk table, then 3 N chunks, + 1)."""
    rb = blobs["chacha20-poly1305"]
    n = len(rb.plain)
    for pipelined, reads in ((False, 2 + 3 * n), (True, 2 + 3 * n + 1)):
        exe = reader(mbed, "host", sanitize=True, pipeline_frames=pipelined)
        out = tmp_path / f"plain_{int(pipelined)}.bin"
        o = run_reader(exe, "host", [*rb.args(), "-F", "3", "-o", str(out)])
        expect(o, Status.OK)
        assert o.chunks == 3 * n
        assert out.read_bytes() == b"".join(rb.plain) * 3  # bit-exact, every frame
        m = _DEV_READS.search(o.stdout)
        assert m is not None and int(m[1]) == reads, (pipelined, o.stdout)
    # a flipped bit in chunk 0, read early for frame 2: refused when frame 2 waits for it
    bad = tmp_path / "bad.bin"
    e0 = rb.parsed.entries[0]
    bad.write_bytes(flip(rb.path.read_bytes(), e0.offset + e0.sealed_bytes // 2))
    o = run_reader(reader(mbed, "host", pipeline_frames=True), "host",
                   [*rb.args(bad), "-F", "2"])
    expect(o, Status.ERR_AUTH, chunk=0)


def test_host_flipped_byte_in_every_chunk(mbed: MbedtlsSources, blobs: dict[str, RealBlob],
                                          tmp_path: Path) -> None:
    exe = reader(mbed, "host")
    rb = blobs["chacha20-poly1305"]
    data = rb.path.read_bytes()
    rnd = random.Random(5)
    bad = tmp_path / "bad.bin"
    for k, e in enumerate(rb.parsed.entries):
        for pos in (e.offset + rnd.randrange(e.sealed_bytes),  # ciphertext or tag
                    e.offset + e.sealed_bytes - 1):  # last tag byte
            bad.write_bytes(flip(data, pos, 1 << rnd.randrange(8)))
            expect(run_reader(exe, "host", rb.args(bad)), Status.ERR_AUTH, chunk=k)


def test_host_authenticated_header_and_table(mbed: MbedtlsSources,
                                             blobs: dict[str, RealBlob], tmp_path: Path) -> None:
    """Bytes the open checks cannot judge (layout id, tensor, channels) are in every
    chunk's AAD: a flip fails the first chunk that covers it."""
    exe = reader(mbed, "host")
    rb = blobs["aes-128-gcm"]
    data = rb.path.read_bytes()
    bad = tmp_path / "bad.bin"
    no_layout = ["-b", str(bad), "-k", rb.key.hex()]
    bad.write_bytes(flip(data, 40))  # layout id: not checked without -l
    expect(run_reader(exe, "host", no_layout), Status.ERR_AUTH, chunk=0)
    expect(run_reader(exe, "host", rb.args(bad)), Status.ERR_FORMAT)  # checked with -l
    bad.write_bytes(flip(data, 64 + 32 * 3 + 8))  # entry 3: tensor index
    expect(run_reader(exe, "host", rb.args(bad)), Status.ERR_AUTH, chunk=3)
    bad.write_bytes(flip(data, 64 + 32 * 2 + 12))  # entry 2: c0
    expect(run_reader(exe, "host", rb.args(bad)), Status.ERR_AUTH, chunk=2)


@pytest.mark.parametrize("alg", ["chacha20-poly1305", "aes-128-gcm"])
def test_host_wrong_key(mbed: MbedtlsSources, blobs: dict[str, RealBlob], alg: str) -> None:
    exe = reader(mbed, "host")
    rb = blobs[alg]
    for key in (flip(rb.key, 0), flip(rb.key, len(rb.key) - 1, 0x80), bytes(len(rb.key))):
        expect(run_reader(exe, "host", rb.args(key=key)), Status.ERR_AUTH, chunk=0)
    short = rb.args(key=rb.key[:8])
    expect(run_reader(exe, "host", short), Status.ERR_ARG)


def test_host_truncated_and_malformed(mbed: MbedtlsSources, blobs: dict[str, RealBlob],
                                      tmp_path: Path) -> None:
    exe = reader(mbed, "host")
    rb = blobs["chacha20-poly1305"]
    data = rb.path.read_bytes()
    h = rb.parsed.header
    bad = tmp_path / "bad.bin"

    def check(blob: bytes, status: Status = Status.ERR_FORMAT,
              args: list[str] | None = None) -> None:
        bad.write_bytes(blob)
        expect(run_reader(exe, "host", args or rb.args(bad)), status)

    for cut in (0, 1, 63, 64, 64 + 32 * 5, h.data_offset, h.data_offset + 100, len(data) - 1):
        check(data[:cut])

    def patched(offset: int, fmt: str, *values: object) -> bytes:
        b = bytearray(data)
        struct.pack_into(fmt, b, offset, *values)
        return bytes(b)

    check(patched(0, "<4s", b"NNSX"))  # bad magic
    check(patched(4, "<H", 2))  # bad version
    check(patched(6, "<H", 65))  # header size
    check(patched(8, "<B", 3))  # unknown algorithm
    check(patched(8, "<B", 1))  # the other algorithm than expected (-a)
    check(patched(9, "<B", 12))  # tag size
    check(patched(12, "<I", 0))  # no chunks
    check(patched(12, "<I", 0xFFFFFFFF))  # table out of range
    check(patched(12, "<I", len(rb.plain) + 1))  # chunk count != expected
    check(patched(20, "<I", h.data_offset + 16))  # data offset
    check(patched(24, "<I", len(data) + 1))  # blob longer than the device
    check(patched(28, "<I", 40_000))  # chunks larger than the staging buffers
    check(patched(56, "<I", 1))  # flags
    check(patched(60, "<I", 1))  # reserved
    e3 = 64 + 32 * 3
    check(patched(e3, "<I", len(data)))  # chunk offset past the end
    check(patched(e3, "<I", 8))  # chunk offset inside the header
    check(patched(e3, "<I", rb.parsed.entries[3].offset + 1))  # misaligned
    check(patched(e3 + 4, "<I", 0xFFFFFFF0))  # sealed size huge
    check(patched(e3 + 4, "<I", 16))  # sealed size = tag only
    check(patched(e3 + 12, "<HH", 5, 5))  # empty channel range
    check(patched(e3 + 16 + 8, "<I", 4))  # nonce != salt || index
    check(patched(e3 + 28, "<I", 7))  # reserved
    check(data, args=[*rb.args(bad), "-s", "1024"])  # staging too small for the blob
    check(data, args=[*rb.args(bad)[:6], "-l", "00" * 16])  # another layout


@pytest.mark.slow
def test_host_random_corruption_never_crashes(mbed: MbedtlsSources,
                                              blobs: dict[str, RealBlob],
                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    """Property: any corruption (flips, overwrites, truncation, garbage) gives OK with the
    exact plaintext, or AUTH / FORMAT / IO; never another code, a sanitizer report or a
    crash (ASan + UBSan build, first error aborts)."""
    exe = reader(mbed, "host", sanitize=True)
    work = tmp_path_factory.mktemp("fuzz")
    rb = blobs["aes-128-gcm"]
    data = rb.path.read_bytes()
    allowed = {Status.ERR_AUTH, Status.ERR_FORMAT, Status.ERR_IO}

    @settings(max_examples=120, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(flips=st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(1, 255)), max_size=4),
           words=st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(0, 0xFFFFFFFF)),
                          max_size=2),
           cut=st.one_of(st.none(), st.integers(0, len(data))),
           garbage=st.one_of(st.none(), st.binary(max_size=200)),
           reverse=st.booleans())
    def prop(flips: list[tuple[int, int]], words: list[tuple[int, int]], cut: int | None,
             garbage: bytes | None, reverse: bool) -> None:
        b = bytearray(data if garbage is None else garbage)
        for pos, mask in flips:
            if b:
                b[pos % len(b)] ^= mask
        for pos, value in words:
            if len(b) >= 4:
                struct.pack_into("<I", b, pos % (len(b) - 3), value)
        if cut is not None:
            del b[cut:]
        path = work / "fuzz.bin"
        path.write_bytes(bytes(b))
        out = work / "fuzz.out"
        o = run_reader(exe, "host", [*rb.args(path), "-o", str(out), *(["-r"] if reverse else [])])
        assert "Sanitizer" not in o.stderr and "runtime error" not in o.stderr, o.stderr
        if o.status == 0:
            assert o.exit_code == 0
            if not reverse:
                assert out.read_bytes() == b"".join(rb.plain)
        else:
            assert Status(o.status) in allowed, o.stdout + o.stderr
            assert o.exit_code == EXIT[Status(o.status)]

    prop()


# ----- QEMU -----

@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize(("target", "board", "alg"), [
    ("qemu-m7", "nucleo_f767zi", "chacha20-poly1305"),
    ("qemu-m7", "nucleo_f767zi", "aes-128-gcm"),
    ("qemu-m3", "mps2_an385", "aes-128-gcm"),
])
def test_qemu_reads_and_detects_tampering(mbed: MbedtlsSources, blobs: dict[str, RealBlob],
                                          target: Target, board: str, alg: str,
                                          tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    exe = reader(mbed, target, board=board)
    rb = blobs[alg]
    data = rb.path.read_bytes()
    out = tmp_path / "plain.bin"
    o = run_reader(exe, target, [*rb.args(), "-o", str(out)], board)
    expect(o, Status.OK)
    assert out.read_bytes() == b"".join(rb.plain)
    assert o.decrypt > 0  # instructions counted on QEMU
    bad = tmp_path / "bad.bin"
    rnd = random.Random(11)
    ks = sorted({0, len(rb.plain) - 1, *rnd.sample(range(len(rb.plain)), 3)})
    for k in ks:
        e = rb.parsed.entries[k]
        bad.write_bytes(flip(data, e.offset + rnd.randrange(e.sealed_bytes)))
        expect(run_reader(exe, target, rb.args(bad), board), Status.ERR_AUTH, chunk=k)
    expect(run_reader(exe, target, rb.args(key=flip(rb.key, 3)), board), Status.ERR_AUTH, 0)
    for cut in (10, rb.parsed.header.data_offset - 1, len(data) - 1):
        bad.write_bytes(data[:cut])
        expect(run_reader(exe, target, rb.args(bad), board), Status.ERR_FORMAT)
    bad.write_bytes(flip(data, 0))
    expect(run_reader(exe, target, rb.args(bad), board), Status.ERR_FORMAT)
    expect(run_reader(exe, target, rb.args(tmp_path / "missing.bin"), board), Status.ERR_IO)


@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize("alg", ["chacha20-poly1305", "aes-128-gcm"])
def test_qemu_aead_cost_matches_cost_model(mbed: MbedtlsSources, alg: str,
                                           tmp_path: Path) -> None:
    """The cost model's AEAD constants are measured figures: instructions of
    psa_aead_decrypt per byte and per chunk on the Cortex-M7 (QEMU mps2-an500)."""
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    exe = reader(mbed, "qemu-m7", board="nucleo_f767zi")
    a = B.algorithm_id(alg)
    key = bytes(B.KEY_BYTES[a])

    def per_chunk(size: int, n: int) -> float:
        chunks = [B.ChunkSpec(1, i, i + 1, bytes([i]) * size) for i in range(n)]
        p = tmp_path / f"{size}.bin"
        p.write_bytes(B.seal_blob(chunks, key, algorithm=a, layout=bytes(16)))
        o = run_reader(exe, "qemu-m7", ["-b", str(p), "-k", key.hex()], "nucleo_f767zi")
        expect(o, Status.OK)
        return o.decrypt / n

    small, large = per_chunk(16, 64), per_chunk(16384, 8)
    per_byte = (large - small) / (16384 - 16)
    fixed = small - 16 * per_byte
    assert per_byte == pytest.approx(AEAD_CYCLES_PER_BYTE[alg], rel=0.05)
    assert fixed == pytest.approx(AEAD_CYCLES_PER_CHUNK[alg], rel=0.15)
