"""The sealed external-flash blob: format, roundtrip, tamper detection, keys."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnopt.errors import BlobError
from nnopt.paths import nnrt_dir
from nnopt.swap import sealed_blob as B

ALGS = (B.ALG_AES_128_GCM, B.ALG_CHACHA20_POLY1305)


def _chunks(n: int = 5, seed: int = 0) -> list[B.ChunkSpec]:
    import random

    rnd = random.Random(seed)
    return [B.ChunkSpec(7 + i // 2, 3 * i, 3 * i + 3,
                        bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 700))))
            for i in range(n)]


def _seal(alg: int, chunks: list[B.ChunkSpec] | None = None,
          salt: bytes = b"\x01" * 8) -> tuple[bytes, bytes, list[B.ChunkSpec]]:
    chunks = chunks or _chunks()
    key = bytes(range(B.KEY_BYTES[alg]))
    lid = B.layout_id("0" * 64, alg, [(c.tensor, c.c0, c.c1, len(c.data)) for c in chunks])
    return B.seal_blob(chunks, key, algorithm=alg, layout=lid, salt=salt), key, chunks


@pytest.mark.parametrize("alg", ALGS)
def test_roundtrip(alg: int) -> None:
    data, key, chunks = _seal(alg)
    got = B.read_blob(data, key)
    assert got == chunks
    parsed = B.parse_swap_blob(data)
    h = parsed.header
    assert (h.version, h.algorithm, h.chunk_count) == (B.FORMAT_VERSION, alg, len(chunks))
    assert h.blob_bytes == len(data) and h.max_plain_bytes == max(len(c.data) for c in chunks)
    assert h.data_offset == 64 + 32 * len(chunks) + (-(64 + 32 * len(chunks)) % 16)
    prev_end = h.data_offset
    for k, e in enumerate(parsed.entries):
        assert e.offset % B.CHUNK_ALIGN == 0 and e.offset >= prev_end
        assert e.nonce == h.nonce_salt + struct.pack("<I", k)
        prev_end = e.offset + e.sealed_bytes


def test_header_layout_is_the_documented_one() -> None:
    data, _, chunks = _seal(B.ALG_CHACHA20_POLY1305)
    assert data[:4] == b"NNSW"
    assert struct.unpack_from("<HHBBHI", data, 4) == (1, 64, 2, 16, 32, len(chunks))
    assert struct.unpack_from("<I", data, 16)[0] == 64
    assert data[48:56] == b"\x01" * 8 and data[56:64] == bytes(8)


def test_nonces_unique_and_salt_derived_from_key_and_content() -> None:
    """Without a salt the blob is reproducible (the same key and chunks, the same bytes:
    issue 26), and a different key, layout or chunk byte gives another salt, so no
    nonce repeats across blobs of different content."""
    chunks = _chunks(3)
    key = bytes(32)
    one = B.seal_blob(chunks, key, algorithm=2, layout=bytes(16))
    assert B.seal_blob(chunks, key, algorithm=2, layout=bytes(16)) == one
    flipped = [*chunks[:2], B.ChunkSpec(chunks[2].tensor, chunks[2].c0, chunks[2].c1,
                                        bytes([chunks[2].data[0] ^ 1]) + chunks[2].data[1:])]
    others = [B.seal_blob(chunks, b"\x01" + key[1:], algorithm=2, layout=bytes(16)),
              B.seal_blob(chunks, key, algorithm=2, layout=b"\x01" + bytes(15)),
              B.seal_blob(flipped, key, algorithm=2, layout=bytes(16))]
    parsed = [B.parse_swap_blob(d) for d in (one, *others)]
    assert len({p.header.nonce_salt for p in parsed}) == 4
    nonces = [e.nonce for p in parsed for e in p.entries]
    assert len(set(nonces)) == len(nonces)
    assert B.read_blob(one, key)  # still opens with its key


@pytest.mark.parametrize("alg", ALGS)
def test_wrong_key_fails_authentication(alg: int) -> None:
    data, key, _ = _seal(alg)
    bad = bytes([key[0] ^ 1]) + key[1:]
    with pytest.raises(BlobError, match="failed authentication"):
        B.read_blob(data, bad)


def test_swapped_chunks_fail() -> None:
    chunks = [B.ChunkSpec(1, 0, 1, b"A" * 32), B.ChunkSpec(1, 1, 2, b"B" * 32)]
    data, key, _ = _seal(2, chunks)
    p = B.parse_swap_blob(data)
    e0, e1 = p.entries
    moved = bytearray(data)
    moved[e0.offset:e0.offset + e0.sealed_bytes] = data[e1.offset:e1.offset + e1.sealed_bytes]
    moved[e1.offset:e1.offset + e1.sealed_bytes] = data[e0.offset:e0.offset + e0.sealed_bytes]
    with pytest.raises(BlobError, match="chunk 0"):
        B.read_blob(bytes(moved), key)


def test_chunk_from_another_blob_fails() -> None:
    chunks = _chunks(2)
    key = bytes(32)
    a = B.seal_blob(chunks, key, algorithm=2, layout=bytes(16), salt=b"a" * 8)
    b = B.seal_blob(chunks, key, algorithm=2, layout=bytes(16), salt=b"b" * 8)
    e = B.parse_swap_blob(a).entries[1]
    mixed = a[:e.offset] + b[e.offset:e.offset + e.sealed_bytes] + a[e.offset + e.sealed_bytes:]
    with pytest.raises(BlobError, match="chunk 1"):
        B.read_blob(mixed, key)


@pytest.mark.parametrize("cut", [0, 10, 63, 64, 100, -1, -17])
def test_truncated(cut: int) -> None:
    data, key, _ = _seal(1)
    with pytest.raises(BlobError, match=r"truncated|out of range|header says"):
        B.read_blob(data[:cut], key)


@pytest.mark.parametrize(("offset", "fmt", "value", "match"), [
    (0, "<4s", b"NNSX", "not a swap blob"),
    (4, "<H", 2, "version"),
    (8, "<B", 9, "algorithm"),
    (12, "<I", 10_000, "table out of range"),
    (12, "<I", 0, "table out of range"),
    (20, "<I", 0, "table out of range"),
    (56, "<I", 1, "reserved"),
])
def test_bad_header(offset: int, fmt: str, value: object, match: str) -> None:
    data, key, _ = _seal(2)
    bad = bytearray(data)
    struct.pack_into(fmt, bad, offset, value)
    with pytest.raises(BlobError, match=match):
        B.read_blob(bytes(bad), key)


def test_bad_table_entry_and_layout() -> None:
    data, key, _ = _seal(2)
    bad = bytearray(data)
    struct.pack_into("<I", bad, 64 + 32 * 2, len(data))  # entry 2 offset past the end
    with pytest.raises(BlobError, match="entry 2"):
        B.read_blob(bytes(bad), key)
    with pytest.raises(BlobError, match="another model"):
        B.read_blob(data, key, expect_layout=b"x" * 16)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alg=st.sampled_from(ALGS), pos=st.integers(min_value=0), bit=st.integers(0, 7))
def test_any_flipped_bit_is_detected_or_harmless(alg: int, pos: int, bit: int) -> None:
    data, key, chunks = _seal(alg)
    p = B.parse_swap_blob(data)
    i = pos % len(data)
    bad = bytearray(data)
    bad[i] ^= 1 << bit
    covered = i < p.header.data_offset or any(
        e.offset <= i < e.offset + e.sealed_bytes for e in p.entries)
    if not covered:  # zero padding between chunks: read by no one
        assert B.read_blob(bytes(bad), key) == chunks
        return
    with pytest.raises(BlobError):
        B.read_blob(bytes(bad), key)


def test_c_header_mirrors_the_format() -> None:
    text = (nnrt_dir() / "include" / "nnrt" / "swap.h").read_text()
    m = re.search(r"/\* BEGIN GENERATED[^\n]*\n(.*?)\n/\* END GENERATED \*/", text, re.S)
    assert m is not None
    assert m.group(1) == B.c_constants(), "regenerate with python -m nnopt.swap.sealed_blob"


# ----- keys -----

def test_key_precedence(tmp_path: Path) -> None:
    alg = B.ALG_AES_128_GCM
    hexkey = "00112233445566778899aabbccddeeff"
    f = tmp_path / "k.hex"
    f.write_text(hexkey.upper() + "\n")
    raw = tmp_path / "k.bin"
    raw.write_bytes(b"\x07" * 16)
    env = {B.ENV_KEY: "ff" * 16, B.ENV_KEY_FILE: str(raw)}
    assert B.key_from_config(alg, key_hex=hexkey, key_file=f, env=env) == (
        bytes.fromhex(hexkey), "--swap-key")
    assert B.key_from_config(alg, key_file=f, env=env) == (bytes.fromhex(hexkey), str(f))
    assert B.key_from_config(alg, env=env) == (b"\xff" * 16, "$" + B.ENV_KEY)
    assert B.key_from_config(alg, env={B.ENV_KEY_FILE: str(raw)}) == (
        b"\x07" * 16, "$" + B.ENV_KEY_FILE)
    assert B.key_from_config(alg, env={}) is None


def test_key_errors(tmp_path: Path) -> None:
    with pytest.raises(BlobError, match="needs 32"):
        B.key_from_config(B.ALG_CHACHA20_POLY1305, key_hex="00" * 16, env={})
    with pytest.raises(BlobError, match="not hex"):
        B.key_from_config(B.ALG_AES_128_GCM, key_hex="zz" * 16, env={})
    with pytest.raises(BlobError, match="cannot read"):
        B.key_from_config(B.ALG_AES_128_GCM, key_file=tmp_path / "missing", env={})
    with pytest.raises(BlobError, match="16-byte key"):
        B.seal_blob(_chunks(1), bytes(32), algorithm=B.ALG_AES_128_GCM, layout=bytes(16))
    assert len(B.generate_key(B.ALG_CHACHA20_POLY1305)) == 32
    with pytest.raises(BlobError, match="unknown AEAD"):
        B.algorithm_id("aes-256-ccm")
