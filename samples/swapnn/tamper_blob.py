#!/usr/bin/env python3
"""Write a bad copy of samples/swapnn's sealed weight blob for the tamper scenarios.

Run at build time by samples/swapnn/CMakeLists.txt (SWAPNN_TAMPER) with Zephyr's Python
and this repository's scripts/ on PYTHONPATH; QEMU's loader then puts the bad copy in the
simulated external flash instead of the good blob. Both copies keep a valid header and
chunk table (same layout id: the firmware attaches them), so what the device sees is an
authentication failure, at the chunk named below:

    tamper_blob.py bitflip  BLOB OUT --chunk K   one bit of chunk K's ciphertext inverted
    tamper_blob.py wrongkey BLOB OUT --key-file F  every chunk re-sealed (same header,
                                                   table and nonces) with the build's key
                                                   with one bit inverted: chunk 0 fails

The build's key is the one the compiler sealed with: --swap-key/--swap-key-file are not
passed by the sample, so it is $NNOPT_SWAP_KEY / $NNOPT_SWAP_KEY_FILE when set, else the
key the compiler generated (<name>_swap.key, --key-file). The blob format and its sealing
are nnopt.swap.sealed_blob's (parse_swap_blob, read_blob, seal_blob).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from nnopt.errors import BlobError, NnoptError, describe_error
from nnopt.swap.sealed_blob import (
    KEY_BYTES,
    key_from_config,
    parse_key_text,
    parse_swap_blob,
    read_blob,
    seal_blob,
)


def flip_bit(data: bytes, chunk: int) -> bytes:
    """``data`` with bit 0 of the middle byte of chunk ``chunk``'s ciphertext inverted."""
    blob = parse_swap_blob(data)
    n = len(blob.entries)
    if not 0 <= chunk < n:
        raise BlobError(f"--chunk {chunk} is out of range: the blob has {n} chunks",
                         hint=f"give 0..{n - 1}")
    e = blob.entries[chunk]
    at = e.offset + e.plain_bytes // 2
    out = bytearray(data)
    out[at] ^= 0x01
    return bytes(out)


def build_key(algorithm: int, key_file: Path | None) -> bytes:
    """The key the compiler sealed with (see the module docstring)."""
    configured = key_from_config(algorithm, env=os.environ)
    if configured is not None:
        return configured[0]
    if key_file is None:
        raise BlobError("no swap key configured and no --key-file given",
                         hint="pass the <name>_swap.key the compiler wrote next to the blob")
    try:
        text = key_file.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as err:
        raise BlobError(f"cannot read the swap key file {key_file}: {err}",
                         hint="rebuild: the compiler writes it next to the blob") from err
    return parse_key_text(text, algorithm, str(key_file))


def reseal_wrong_key(data: bytes, key: bytes) -> bytes:
    """The same chunks, header fields, layout id and nonce salt, sealed with a wrong key."""
    blob = parse_swap_blob(data)
    chunks = read_blob(data, key)
    wrong = bytes([key[0] ^ 0x01]) + key[1:]
    out = seal_blob(chunks, wrong, algorithm=blob.header.algorithm,
                    layout=blob.header.layout_id, salt=blob.header.nonce_salt)
    if len(out) != len(data) or out[:len(blob.header_bytes)] != blob.header_bytes:
        raise BlobError("re-sealing changed the blob's header or size",
                         hint="the blob was not written by this nnopt")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("bitflip", "wrongkey"))
    ap.add_argument("blob", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--chunk", type=int, default=1, help="bitflip: the chunk to damage")
    ap.add_argument("--key-file", type=Path, help="wrongkey: the compiler's generated key")
    args = ap.parse_args(argv)
    try:
        try:
            data = args.blob.read_bytes()
        except OSError as err:
            raise BlobError(f"cannot read the blob {args.blob}: {err.strerror}",
                             hint="build the sample first: the compiler writes it") from err
        if args.mode == "bitflip":
            bad = flip_bit(data, args.chunk)
            what = f"bit 0 of chunk {args.chunk}'s ciphertext inverted"
        else:
            alg = parse_swap_blob(data).header.algorithm
            key = build_key(alg, args.key_file)
            assert len(key) == KEY_BYTES[alg]
            bad = reseal_wrong_key(data, key)
            what = "re-sealed with a wrong key"
        args.out.write_bytes(bad)
    except NnoptError as err:
        text, status = describe_error(err)
        print(f"tamper_blob.py: {text}", file=sys.stderr)
        return status
    print(f"tamper_blob.py: {args.out.name}: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
