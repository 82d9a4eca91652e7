"""The external-flash blob: versioned header, chunk table, AEAD-sealed weight chunks.

Written at build time next to the generated sources (``<name>_swap.bin``), read by the
C swap driver (``modules/nnrt/src/swap/``) chunk by chunk. All integers little endian.

Layout (format version 1)::

    offset  size  header field
    0       4     magic "NNSW"
    4       2     format version (1)
    6       2     header size (64)
    8       1     algorithm: 1 AES-128-GCM, 2 ChaCha20-Poly1305
    9       1     tag size (16)
    10      2     table entry size (32)
    12      4     chunk count N (>= 1)
    16      4     table offset (= 64)
    20      4     data offset (table end rounded up to CHUNK_ALIGN)
    24      4     blob size in bytes (the whole file / flash image)
    28      4     largest chunk plaintext in bytes (the staging buffers must hold it)
    32      16    layout id: SHA-256 of the model and the chunk layout, first 16 bytes
    48      8     nonce salt: derived from the key and the blob's content (below)
    56      4     flags (0)
    60      4     reserved (0)

    table entry k (32 bytes, at table offset + 32 k)
    0       4     chunk offset in the blob (a multiple of CHUNK_ALIGN, >= data offset)
    4       4     sealed size: plaintext size + tag size
    8       4     tensor index (in the .tflite subgraph)
    12      2     first output channel c0
    14      2     end output channel c1 (exclusive, c0 < c1)
    16      12    nonce: nonce salt (8 bytes) || k (uint32)
    28      4     reserved (0)

Then the chunks: ciphertext followed by the tag, at their offsets; gaps are zero.

Sealing: ``AEAD(key).encrypt(nonce_k, plaintext_k, aad_k)`` with ``aad_k = header ||
entry_k`` (96 bytes). Every header field and the chunk's own entry (its index, offset,
tensor, channel range) are therefore authenticated with every chunk: a chunk cannot be
moved to another index, another blob or another layout, and a flipped byte anywhere in
the header, the entry or the sealed data fails the tag. The nonce is unique per chunk
within a blob (its index) and across blobs with overwhelming probability (the salt); the
runtime refuses a table whose nonces are not salt || index. The salt is HMAC-SHA-256
(under a key HKDF derives from the blob key, never the AEAD key itself) of the
algorithm, the layout id and every chunk (tensor, channels, plaintext), first 8 bytes (a
synthetic nonce, as AES-GCM-SIV derives one): blobs of different content under one key
get different salts with overwhelming probability, and the same key and weights give the
same blob byte for byte, so a build is reproducible given its key. The layout id ties a
blob to the exact plan compiled into the firmware.

Keys (``key_from_config``): 16 bytes for AES-128-GCM, 32 for ChaCha20-Poly1305, from
the first of ``--swap-key HEX``, ``--swap-key-file PATH`` (hex text or raw bytes),
``$NNOPT_SWAP_KEY`` (hex), ``$NNOPT_SWAP_KEY_FILE``. Without any, the build generates
a random key and writes it next to the blob (see ``nnopt.swap`` README).

All cryptography is the ``cryptography`` package's AEAD classes; nothing here is
hand-written crypto.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import struct
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..arith import align
from ..errors import BlobError

MAGIC = b"NNSW"
FORMAT_VERSION = 1
HEADER_BYTES = 64
ENTRY_BYTES = 32
TAG_BYTES = 16
NONCE_BYTES = 12
SALT_BYTES = 8
LAYOUT_ID_BYTES = 16
CHUNK_ALIGN = 16  # chunk offsets: DMA/QSPI friendly, and the table end is padded to it
MAX_CHANNEL = 0xFFFF  # c0/c1 are uint16

ALG_AES_128_GCM = 1
ALG_CHACHA20_POLY1305 = 2

#: algorithm name (board yaml ``external_flash.crypto``, CLI) -> header id
ALGORITHMS: Mapping[str, int] = {"aes-128-gcm": ALG_AES_128_GCM,
                                 "chacha20-poly1305": ALG_CHACHA20_POLY1305}
ALGORITHM_NAMES: Mapping[int, str] = {v: k for k, v in ALGORITHMS.items()}
KEY_BYTES: Mapping[int, int] = {ALG_AES_128_GCM: 16, ALG_CHACHA20_POLY1305: 32}

ENV_KEY = "NNOPT_SWAP_KEY"
ENV_KEY_FILE = "NNOPT_SWAP_KEY_FILE"

_HEADER = struct.Struct("<4sHHBBHIIIII16s8sII")
_ENTRY = struct.Struct("<IIIHH12sI")
assert _HEADER.size == HEADER_BYTES and _ENTRY.size == ENTRY_BYTES


def algorithm_id(name: str) -> int:
    try:
        return ALGORITHMS[name.lower()]
    except KeyError:
        raise BlobError(f"unknown AEAD algorithm {name!r}",
                        hint="use " + " or ".join(ALGORITHMS)) from None


def _aead(alg: int, key: bytes) -> AESGCM | ChaCha20Poly1305:
    if alg not in KEY_BYTES:
        raise BlobError(f"unknown algorithm id {alg}")
    if len(key) != KEY_BYTES[alg]:
        raise BlobError(f"{ALGORITHM_NAMES[alg]} needs a {KEY_BYTES[alg]}-byte key, "
                        f"got {len(key)} bytes",
                        hint=f"pass {2 * KEY_BYTES[alg]} hex digits with --swap-key")
    return AESGCM(key) if alg == ALG_AES_128_GCM else ChaCha20Poly1305(key)


# ----- the data model -----

@dataclass(frozen=True)
class ChunkSpec:
    """One chunk to seal: which bytes of which tensor (a range of output channels)."""

    tensor: int
    c0: int
    c1: int
    data: bytes  # plaintext, in the layout the kernel reads
    depth: int = 0  # a depth slice [k0, k1) as k0 | k1 << 16 (the entry's last word); 0: all


@dataclass(frozen=True)
class Header:
    version: int
    algorithm: int
    chunk_count: int
    table_offset: int
    data_offset: int
    blob_bytes: int
    max_plain_bytes: int
    layout_id: bytes
    nonce_salt: bytes
    flags: int = 0

    def pack(self) -> bytes:
        return _HEADER.pack(MAGIC, self.version, HEADER_BYTES, self.algorithm, TAG_BYTES,
                            ENTRY_BYTES, self.chunk_count, self.table_offset,
                            self.data_offset, self.blob_bytes, self.max_plain_bytes,
                            self.layout_id, self.nonce_salt, self.flags, 0)


@dataclass(frozen=True)
class Entry:
    offset: int
    sealed_bytes: int
    tensor: int
    c0: int
    c1: int
    nonce: bytes
    depth: int = 0  # depth slice k0 | k1 << 16 (0: the whole depth)

    @property
    def plain_bytes(self) -> int:
        return self.sealed_bytes - TAG_BYTES

    def pack(self) -> bytes:
        return _ENTRY.pack(self.offset, self.sealed_bytes, self.tensor, self.c0, self.c1,
                           self.nonce, self.depth)


def chunk_nonce(salt: bytes, index: int) -> bytes:
    return salt + struct.pack("<I", index)


def chunk_aad(header: bytes, entry: bytes) -> bytes:
    """Additional authenticated data of a chunk: the header and its table entry."""
    return header + entry


def _align(n: int, a: int = CHUNK_ALIGN) -> int:
    return align(n, a)


def layout_id(model_sha256: str, algorithm: int,
              chunks: Sequence[tuple[int, ...]]) -> bytes:
    """16-byte id of (model, algorithm, chunk layout): (tensor, c0, c1, plain bytes)."""
    doc = {"model": model_sha256, "algorithm": algorithm, "format": FORMAT_VERSION,
           "chunks": [list(c) for c in chunks]}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).digest()[:LAYOUT_ID_BYTES]


# ----- writing -----

def derived_salt(chunks: Sequence[ChunkSpec], key: bytes, algorithm: int,
                 layout: bytes) -> bytes:
    """The nonce salt of a blob: HMAC-SHA-256, under a key derived from ``key`` by
    HKDF-SHA-256 (domain-separated from the AEAD's use of it), of the algorithm, the
    layout id and every chunk (tensor, channel range, length, plaintext), first
    SALT_BYTES bytes (module docstring)."""
    # a key of its own for the MAC (HKDF-SHA-256), never the AEAD key itself
    mac_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                   info=b"nnopt swap salt key v1").derive(key)
    mac = hmac.new(mac_key, b"nnopt swap salt v1" + bytes([algorithm]) + layout,
                   hashlib.sha256)
    for c in chunks:
        mac.update(struct.pack("<qqqQ", c.tensor, c.c0, c.c1, len(c.data)))
        if c.depth:
            mac.update(struct.pack("<I", c.depth))
        mac.update(c.data)
    return mac.digest()[:SALT_BYTES]


def seal_blob(chunks: Sequence[ChunkSpec], key: bytes, *, algorithm: int,
              layout: bytes, salt: bytes | None = None) -> bytes:
    """Build a complete blob. ``salt``: 8 bytes, derived from the key and the content
    when None (:func:`derived_salt`; tests pass one)."""
    if not chunks:
        raise BlobError("a swap blob needs at least one chunk")
    if len(layout) != LAYOUT_ID_BYTES:
        raise BlobError(f"layout id must be {LAYOUT_ID_BYTES} bytes")
    salt = derived_salt(chunks, key, algorithm, layout) if salt is None else salt
    if len(salt) != SALT_BYTES:
        raise BlobError(f"nonce salt must be {SALT_BYTES} bytes")
    aead = _aead(algorithm, key)
    n = len(chunks)
    data_offset = _align(HEADER_BYTES + ENTRY_BYTES * n)
    entries: list[Entry] = []
    pos = data_offset
    for k, c in enumerate(chunks):
        if not c.data:
            raise BlobError(f"chunk {k} (tensor {c.tensor}) is empty")
        if not 0 <= c.c0 < c.c1 <= MAX_CHANNEL:
            raise BlobError(f"chunk {k} (tensor {c.tensor}): bad channel range "
                            f"[{c.c0}, {c.c1})")
        if c.depth and not c.depth & 0xFFFF < c.depth >> 16:
            raise BlobError(f"chunk {k} (tensor {c.tensor}): bad depth slice")
        sealed = len(c.data) + TAG_BYTES
        entries.append(Entry(pos, sealed, c.tensor, c.c0, c.c1, chunk_nonce(salt, k),
                             c.depth))
        pos = _align(pos + sealed)
    blob_bytes = entries[-1].offset + entries[-1].sealed_bytes
    if blob_bytes > 0xFFFFFFFF:
        raise BlobError(f"blob of {blob_bytes} bytes exceeds the 4 GiB format limit")
    header = Header(FORMAT_VERSION, algorithm, n, HEADER_BYTES, data_offset, blob_bytes,
                    max(len(c.data) for c in chunks), layout, salt).pack()
    out = bytearray(blob_bytes)
    out[:HEADER_BYTES] = header
    for k, (c, e) in enumerate(zip(chunks, entries, strict=True)):
        packed = e.pack()
        out[HEADER_BYTES + ENTRY_BYTES * k:HEADER_BYTES + ENTRY_BYTES * (k + 1)] = packed
        ct = aead.encrypt(e.nonce, c.data, chunk_aad(header, packed))
        assert len(ct) == e.sealed_bytes
        out[e.offset:e.offset + e.sealed_bytes] = ct
    return bytes(out)


def write_swap_blob(path: Path, chunks: Sequence[ChunkSpec], key: bytes, *, algorithm: int,
               layout: bytes, salt: bytes | None = None) -> Path:
    data = seal_blob(chunks, key, algorithm=algorithm, layout=layout, salt=salt)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


# ----- reading (tests, tools): the same checks as the C driver -----

@dataclass(frozen=True)
class ParsedSwapBlob:
    header: Header
    header_bytes: bytes
    entries: tuple[Entry, ...]
    entry_bytes: tuple[bytes, ...]


def parse_swap_blob(data: bytes, *, expect_layout: bytes | None = None) -> ParsedSwapBlob:
    """Check the header and table (not the tags); BlobError names the first problem."""
    if len(data) < HEADER_BYTES:
        raise BlobError(f"blob truncated: {len(data)} bytes, the header alone is "
                        f"{HEADER_BYTES}")
    (magic, version, hsize, alg, tag, esize, n, table, data_off, total, max_plain,
     layout, salt, flags, reserved) = _HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise BlobError(f"not a swap blob (magic {magic!r}, expected {MAGIC!r})")
    if version != FORMAT_VERSION:
        raise BlobError(f"blob format version {version}, this nnopt reads "
                        f"{FORMAT_VERSION}", hint="rebuild the blob with this nnopt")
    if (hsize, tag, esize, table, flags, reserved) != (HEADER_BYTES, TAG_BYTES,
                                                       ENTRY_BYTES, HEADER_BYTES, 0, 0):
        raise BlobError("blob header has unexpected sizes or non-zero reserved fields")
    if alg not in KEY_BYTES:
        raise BlobError(f"blob uses unknown algorithm id {alg}")
    if n < 1 or data_off != _align(HEADER_BYTES + ENTRY_BYTES * n) or data_off > total:
        raise BlobError(f"blob chunk table out of range ({n} chunks, data at {data_off})")
    if total != len(data):
        raise BlobError(f"blob is {len(data)} bytes, its header says {total}"
                        + (" (truncated)" if len(data) < total else ""))
    if expect_layout is not None and layout != expect_layout:
        raise BlobError("blob was built for another model or layout (layout id "
                        f"{layout.hex()}, expected {expect_layout.hex()})",
                        hint="rebuild the blob together with the firmware")
    header = Header(version, alg, n, table, data_off, total, max_plain, layout, salt, flags)
    entries: list[Entry] = []
    raw: list[bytes] = []
    for k in range(n):
        start = HEADER_BYTES + ENTRY_BYTES * k
        eb = data[start:start + ENTRY_BYTES]
        off, sealed, tensor, c0, c1, nonce, res = _ENTRY.unpack(eb)
        if (off < data_off or off % CHUNK_ALIGN or sealed <= TAG_BYTES
                or off + sealed > total or sealed - TAG_BYTES > max_plain
                or c0 >= c1 or (res != 0 and not res & 0xFFFF < res >> 16)
                or nonce != chunk_nonce(salt, k)):
            raise BlobError(f"blob chunk table entry {k} is out of range or malformed")
        entries.append(Entry(off, sealed, tensor, c0, c1, nonce, res))
        raw.append(eb)
    return ParsedSwapBlob(header, data[:HEADER_BYTES], tuple(entries), tuple(raw))


def open_chunk(blob: ParsedSwapBlob, data: bytes, key: bytes, k: int) -> bytes:
    """Authenticate and decrypt chunk k; BlobError on a failed tag."""
    e = blob.entries[k]
    aead = _aead(blob.header.algorithm, key)
    try:
        return aead.decrypt(e.nonce, data[e.offset:e.offset + e.sealed_bytes],
                            chunk_aad(blob.header_bytes, blob.entry_bytes[k]))
    except InvalidTag:
        raise BlobError(f"chunk {k} (tensor {e.tensor}) failed authentication",
                        hint="the blob was modified or the key is wrong") from None


def read_blob(data: bytes, key: bytes, *,
              expect_layout: bytes | None = None) -> list[ChunkSpec]:
    """Parse, authenticate and decrypt every chunk."""
    blob = parse_swap_blob(data, expect_layout=expect_layout)
    return [ChunkSpec(e.tensor, e.c0, e.c1, open_chunk(blob, data, key, k))
            for k, e in enumerate(blob.entries)]


# ----- keys -----

def parse_key_text(text: str, algorithm: int, source: str) -> bytes:
    t = "".join(text.split()).lower()
    t = t.removeprefix("0x")
    try:
        key = bytes.fromhex(t)
    except ValueError:
        raise BlobError(f"swap key from {source} is not hex",
                        hint=f"give {2 * KEY_BYTES[algorithm]} hex digits") from None
    if len(key) != KEY_BYTES[algorithm]:
        raise BlobError(f"swap key from {source} has {len(key)} bytes; "
                        f"{ALGORITHM_NAMES[algorithm]} needs {KEY_BYTES[algorithm]}",
                        hint=f"give {2 * KEY_BYTES[algorithm]} hex digits")
    return key


def _key_file(path: Path, algorithm: int) -> bytes:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise BlobError(f"cannot read swap key file {path}: {err.strerror}") from err
    if len(raw) == KEY_BYTES[algorithm]:
        return raw  # raw binary key
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise BlobError(f"swap key file {path} is neither {KEY_BYTES[algorithm]} raw "
                        "bytes nor hex text") from None
    return parse_key_text(text, algorithm, str(path))


def key_from_config(algorithm: int, *, key_hex: str | None = None,
                    key_file: Path | None = None,
                    env: Mapping[str, str] | None = None) -> tuple[bytes, str] | None:
    """The configured key and where it came from, or None when none is configured.

    Precedence: ``key_hex`` (--swap-key), ``key_file`` (--swap-key-file),
    ``$NNOPT_SWAP_KEY``, ``$NNOPT_SWAP_KEY_FILE``.
    """
    e = os.environ if env is None else env
    if key_hex is not None:
        return parse_key_text(key_hex, algorithm, "--swap-key"), "--swap-key"
    if key_file is not None:
        return _key_file(Path(key_file), algorithm), str(key_file)
    if e.get(ENV_KEY):
        return parse_key_text(e[ENV_KEY], algorithm, "$" + ENV_KEY), "$" + ENV_KEY
    if e.get(ENV_KEY_FILE):
        return _key_file(Path(e[ENV_KEY_FILE]), algorithm), "$" + ENV_KEY_FILE
    return None


def generate_key(algorithm: int) -> bytes:
    if algorithm not in KEY_BYTES:
        raise BlobError(f"unknown algorithm id {algorithm}")
    return os.urandom(KEY_BYTES[algorithm])


# ----- the C side of the format (kept in swap.h, checked by a test) -----

def c_constants() -> str:
    """The ``#define`` block of ``nnrt/swap.h`` that mirrors this module."""
    rows = [
        ("NNRT_SWAP_MAGIC", "0x" + MAGIC[::-1].hex().upper() + "u",
         '"NNSW" read as a little-endian uint32'),
        ("NNRT_SWAP_FORMAT_VERSION", f"{FORMAT_VERSION}u", "blob format version"),
        ("NNRT_SWAP_HEADER_BYTES", f"{HEADER_BYTES}u", "header size"),
        ("NNRT_SWAP_ENTRY_BYTES", f"{ENTRY_BYTES}u", "chunk table entry size"),
        ("NNRT_SWAP_TAG_BYTES", f"{TAG_BYTES}u", "AEAD tag size"),
        ("NNRT_SWAP_NONCE_BYTES", f"{NONCE_BYTES}u", "AEAD nonce size"),
        ("NNRT_SWAP_SALT_BYTES", f"{SALT_BYTES}u", "nonce salt size"),
        ("NNRT_SWAP_LAYOUT_ID_BYTES", f"{LAYOUT_ID_BYTES}u", "layout id size"),
        ("NNRT_SWAP_CHUNK_ALIGN", f"{CHUNK_ALIGN}u", "chunk offset alignment"),
        ("NNRT_SWAP_ALG_AES_128_GCM", f"{ALG_AES_128_GCM}u", "AES-128-GCM, 16-byte key"),
        ("NNRT_SWAP_ALG_CHACHA20_POLY1305", f"{ALG_CHACHA20_POLY1305}u",
         "ChaCha20-Poly1305, 32-byte key"),
    ]
    width = max(len(r[0]) for r in rows) + 1
    return "\n".join(f"#define {name:<{width}}{value} /* {doc} */" for name, value, doc in rows)


if __name__ == "__main__":
    sys.stdout.write(c_constants() + "\n")
