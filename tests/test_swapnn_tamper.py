"""samples/swapnn/tamper_blob.py: the bad blobs of the swapnn tamper scenarios.

The Twister scenarios sample.nnopt.swapnn.qemu.bitflip / .wrongkey (samples/swapnn/
sample.yaml) expect the firmware to attach the bad blob (header, table and layout id
intact) and to fail authentication at exactly one chunk (bitflip) or at chunk 0
(wrongkey). These tests check that the script produces such blobs, with the compiler's
own reader (nnopt.swap.sealed_blob) as the judge, and that bad input is an error, not a
traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nnopt.errors import BlobError
from nnopt.swap.sealed_blob import (
    ALG_AES_128_GCM,
    ALG_CHACHA20_POLY1305,
    KEY_BYTES,
    LAYOUT_ID_BYTES,
    ChunkSpec,
    open_chunk,
    parse_swap_blob,
    seal_blob,
)

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "samples" / "swapnn" / "tamper_blob.py"
CHUNKS = [ChunkSpec(3, 0, 4, bytes(range(200))), ChunkSpec(3, 4, 8, bytes(range(55, 255))),
          ChunkSpec(7, 0, 2, b"\x11" * 77)]


def _run(*args: str | Path, env_key: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NNOPT_SWAP_KEY")}
    env["PYTHONPATH"] = str(REPO / "scripts")
    if env_key is not None:
        env["NNOPT_SWAP_KEY"] = env_key
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], env=env,
                          capture_output=True, text=True, check=False)


def _auth(data: bytes, key: bytes) -> list[bool]:
    blob = parse_swap_blob(data)
    out = []
    for k in range(len(blob.entries)):
        try:
            open_chunk(blob, data, key, k)
            out.append(True)
        except BlobError:
            out.append(False)
    return out


@pytest.fixture(params=[ALG_AES_128_GCM, ALG_CHACHA20_POLY1305], ids=["aes", "chacha"])
def sealed(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, bytes, bytes]:
    alg: int = request.param
    key = bytes(range(1, 1 + KEY_BYTES[alg]))
    data = seal_blob(CHUNKS, key, algorithm=alg, layout=bytes(LAYOUT_ID_BYTES),
                     salt=b"saltsalt")
    path = tmp_path / "m_swap.bin"
    path.write_bytes(data)
    (tmp_path / "m_swap.key").write_text(key.hex() + "\n")
    return path, key, data


@pytest.mark.parametrize("chunk", [0, 1, 2])
def test_bitflip_fails_exactly_the_named_chunk(sealed: tuple[Path, bytes, bytes],
                                               chunk: int) -> None:
    path, key, data = sealed
    out = path.with_name("bad.bin")
    r = _run("bitflip", path, out, "--chunk", str(chunk))
    assert r.returncode == 0, r.stderr
    bad = out.read_bytes()
    assert len(bad) == len(data)
    assert sum(bin(a ^ b).count("1") for a, b in zip(bad, data, strict=True)) == 1
    assert parse_swap_blob(bad).header_bytes == parse_swap_blob(data).header_bytes
    assert _auth(bad, key) == [k != chunk for k in range(len(CHUNKS))]


def test_wrongkey_keeps_the_header_and_fails_every_chunk(
        sealed: tuple[Path, bytes, bytes]) -> None:
    path, key, data = sealed
    out = path.with_name("bad.bin")
    r = _run("wrongkey", path, out, "--key-file", path.with_name("m_swap.key"))
    assert r.returncode == 0, r.stderr
    bad = out.read_bytes()
    good, tampered = parse_swap_blob(data), parse_swap_blob(bad)
    assert tampered.header_bytes == good.header_bytes
    assert tampered.entry_bytes == good.entry_bytes
    assert _auth(bad, key) == [False] * len(CHUNKS)
    wrong = bytes([key[0] ^ 1]) + key[1:]
    assert _auth(bad, wrong) == [True] * len(CHUNKS)


def test_wrongkey_takes_the_configured_key_first(sealed: tuple[Path, bytes, bytes]) -> None:
    path, key, _ = sealed
    out = path.with_name("bad.bin")
    # $NNOPT_SWAP_KEY wins over the key file, as in the compiler (blob.key_from_config).
    r = _run("wrongkey", path, out, "--key-file", path.with_name("nope.key"),
             env_key=key.hex())
    assert r.returncode == 0, r.stderr
    r = _run("wrongkey", path, out, env_key="00" * len(key))
    assert r.returncode == 1
    assert "failed authentication" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, message", [
    (("bitflip", "{blob}", "{out}", "--chunk", "3"), "--chunk 3 is out of range"),
    (("wrongkey", "{blob}", "{out}", "--key-file", "{dir}/none.key"),
     "cannot read the swap key file"),
    (("wrongkey", "{blob}", "{out}"), "no swap key configured"),
    (("bitflip", "{dir}/none.bin", "{out}"), "cannot read the blob"),
])
def test_bad_input_is_an_error_with_a_hint(sealed: tuple[Path, bytes, bytes],
                                           args: tuple[str, ...], message: str) -> None:
    path, _, _ = sealed
    fill = {"blob": path, "out": path.with_name("bad.bin"), "dir": path.parent}
    r = _run(*(a.format(**fill) for a in args))
    assert r.returncode == 1
    assert message in r.stderr and "hint:" in r.stderr
    assert "Traceback" not in r.stderr
