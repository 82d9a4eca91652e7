"""The swap key as a PSA key id (no key bytes in the firmware).

- C driver (tests/swap/swap_reader_main.c, host): keys provisioned as persistent PSA
  keys into a temporary key store (PSA ITS files written by one process,
  modules/nnrt/harness/swap_provision_main.c) and used by id in another: bit-exact
  plaintext; a key with other bytes -> NNRT_ERR_AUTH at chunk 0; no key, or a key whose
  type, algorithm or usage does not fit -> NNRT_ERR_ARG at open; a corrupt key store ->
  NNRT_ERR_CRYPTO; the driver never destroys the caller's key. QEMU (no persistent
  storage): a key the program imported itself, by id.
- Compiler and CLI: --swap-key-id puts no key byte into the generated sources nor the
  linked executable (host and Cortex-M7 ELF; the key-bytes build, as a control, does);
  `nnopt swap-provision` then `nnopt run --swap-key-id --swap-key-store` bit-exact with
  TFLM; every refusal is a clean error (exit 1, no traceback, no output file).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from conftest import model_path
from nnopt.cdefs import Status
from nnopt.firmware.toolchain import Target, run
from nnopt.swap import sealed_blob as B
from nnopt.swap.mbedtls_build import MbedtlsSources
from nnopt.swap.provision import (
    KEY_ID_MAX,
    KeyStoreError,
    deprovision,
    its_file,
    parse_key_id,
    provision,
)
from support.swap_checks import (
    EXIT,
    KWS,
    RealBlob,
    assert_matches_tflm,
    clean_error,
    make_blob,
    nnopt,
    reader,
    write_inputs,
)

pytestmark = pytest.mark.usefixtures("mbed_ok")

#: Keys that occur nowhere by chance (a repeated byte might be found in weights).
KEY = hashlib.sha256(b"nnopt swap key id test: chacha20-poly1305").digest()
OTHER = hashlib.sha256(b"nnopt swap key id test: another key").digest()
_LINE = re.compile(r"swap: status=(-?\d+) chunk=(-?\d+) chunks=(\d+)")


# ----- key ids -----

def test_key_id_range() -> None:
    assert parse_key_id("1") == 1
    assert parse_key_id("0x2A") == 42
    assert parse_key_id("1_000") == 1000
    assert parse_key_id(f"0x{KEY_ID_MAX:x}") == 0x3FFFFFFF
    for bad in ("0", "0x40000000", "4294967295", "-1", "abc", "", "0x"):
        with pytest.raises(KeyStoreError) as e:
            parse_key_id(bad)
        assert e.value.hint is not None and "0x3fffffff" in e.value.hint


# ----- C driver, host: persistent keys written by one process, used by another -----

@pytest.fixture(scope="module")
def host_blobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RealBlob]:
    tmp = tmp_path_factory.mktemp("keyid_blobs")
    return {"aes-128-gcm": make_blob(tmp, "mlperf_tiny/kws_ref_model.tflite",
                                     "aes-128-gcm", 2048),
            "chacha20-poly1305": make_blob(tmp, "mlperf_tiny/kws_ref_model.tflite",
                                           "chacha20-poly1305", 4096)}


def read_by(exe: Path, rb: RealBlob, key_args: list[str], *, cwd: Path,
            target: Target = "host", out: Path | None = None,
            board: str | None = None) -> tuple[int, int, int, str]:
    """(status, failing chunk, exit code, stdout) of the reader opening rb by key_args."""
    from nnopt.boards import load_board

    args = ["-b", str(rb.path.resolve()), "-a", str(rb.algorithm), "-l", rb.layout.hex(),
            "-n", str(len(rb.plain)), *key_args]
    if out is not None:
        args += ["-o", str(out.resolve())]
    res = run(exe, target, args, cwd=cwd, timeout_s=300,
              board=load_board(board) if board else None)
    m = _LINE.search(res.stdout)
    assert m is not None, res.stdout + res.stderr
    status = int(m[1])
    assert res.exit_code == EXIT[Status(status)], res.stdout
    return status, int(m[2]), res.exit_code, res.stdout


@pytest.mark.parametrize("alg", ["aes-128-gcm", "chacha20-poly1305"])
def test_host_persistent_key_id(mbed: MbedtlsSources, host_blobs: dict[str, RealBlob],
                                alg: str, tmp_path: Path) -> None:
    exe = reader(mbed, "host")
    rb = host_blobs[alg]
    n = len(rb.key)
    store = tmp_path / "store"
    provision(store, 7, rb.key, rb.algorithm)
    assert its_file(store, 7).is_file()
    out = tmp_path / "plain.bin"
    for id_text in ("7", "0x00000007"):
        st, _, code, _ = read_by(exe, rb, ["-K", id_text], cwd=store, out=out)
        assert (st, code) == (Status.OK, 0)
        assert out.read_bytes() == b"".join(rb.plain)  # bit-exact weights
    # the driver did not destroy the key: still stored, and usable again
    assert its_file(store, 7).is_file()
    assert read_by(exe, rb, ["-K", "7", "-r"], cwd=store)[0] == Status.OK
    # a key that fits but is not the blob's -> AUTH at the first chunk
    other = OTHER[:n]
    provision(store, 8, other, rb.algorithm)
    assert read_by(exe, rb, ["-K", "8"], cwd=store)[:2] == (Status.ERR_AUTH, 0)
    # no such key (never provisioned; provisioned in another store; removed)
    assert read_by(exe, rb, ["-K", "9"], cwd=store)[0] == Status.ERR_ARG
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    assert read_by(exe, rb, ["-K", "7"], cwd=elsewhere)[0] == Status.ERR_ARG
    provision(store, 10, rb.key, rb.algorithm)
    deprovision(store, 10)
    assert not its_file(store, 10).exists()
    assert read_by(exe, rb, ["-K", "10"], cwd=store)[0] == Status.ERR_ARG
    # the right bytes under a policy that does not fit -> ARG at open, nothing read
    wrong_alg = "ccm" if alg == "aes-128-gcm" else "gcm"
    bad_policies: list[tuple[int, str, str | None]] = [
        (11, "e", None),  # ENCRYPT only
        (12, "x", None),  # EXPORT only
        (13, "d", wrong_alg),  # another permitted algorithm (AES-CCM; GCM on ChaCha20)
    ]
    for key_id, usage, policy in bad_policies:
        provision(store, key_id, rb.key, rb.algorithm, usage=usage, policy=policy)
        st, chunk, _, _ = read_by(exe, rb, ["-K", str(key_id)], cwd=store)
        assert (st, chunk) == (Status.ERR_ARG, -1), (usage, policy)
    # the other algorithm's key (type and size differ) for this blob
    other_alg = B.ALG_CHACHA20_POLY1305 if alg == "aes-128-gcm" else B.ALG_AES_128_GCM
    provision(store, 14, OTHER[:B.KEY_BYTES[other_alg]], other_alg)
    assert read_by(exe, rb, ["-K", "14"], cwd=store)[0] == Status.ERR_ARG
    # DECRYPT plus more usage fits (not refused; the docs say: grant DECRYPT only)
    provision(store, 15, rb.key, rb.algorithm, usage="dex")
    assert read_by(exe, rb, ["-K", "15"], cwd=store)[0] == Status.OK
    # the same id again: refused unless replaced
    with pytest.raises(KeyStoreError, match="already provisioned"):
        provision(store, 7, other, rb.algorithm)
    provision(store, 7, other, rb.algorithm, replace=True)
    assert read_by(exe, rb, ["-K", "7"], cwd=store)[:2] == (Status.ERR_AUTH, 0)
    # a corrupt key store entry: the store failed -> CRYPTO
    its_file(store, 8).write_bytes(b"PSA\0ITS\0" + bytes(5))
    assert read_by(exe, rb, ["-K", "8"], cwd=store)[0] == Status.ERR_CRYPTO


def test_host_application_key_is_kept(mbed: MbedtlsSources, host_blobs: dict[str, RealBlob],
                                      tmp_path: Path) -> None:
    """-V: the program imports the key itself (volatile) and opens by its id; after
    close (success, AUTH failure or FORMAT failure) the key still exists."""
    exe = reader(mbed, "host")
    rb = host_blobs["chacha20-poly1305"]
    st, _, _, log = read_by(exe, rb, ["-k", rb.key.hex(), "-V"], cwd=tmp_path)
    assert st == Status.OK and "swap: caller key kept" in log
    bad = tmp_path / "bad.bin"
    data = rb.path.read_bytes()
    e = rb.parsed.entries[2]
    bad.write_bytes(data[:e.offset] + bytes([data[e.offset] ^ 1]) + data[e.offset + 1:])
    bad_rb = RealBlob(bad, rb.key, rb.layout, rb.algorithm, rb.plain, rb.parsed)
    st, chunk, _, log = read_by(exe, bad_rb, ["-k", rb.key.hex(), "-V"], cwd=tmp_path)
    assert (st, chunk) == (Status.ERR_AUTH, 2) and "swap: caller key kept" in log
    bad.write_bytes(data[:100])
    st, _, _, log = read_by(exe, bad_rb, ["-k", rb.key.hex(), "-V"], cwd=tmp_path)
    assert st == Status.ERR_FORMAT and "swap: caller key kept" in log


@pytest.mark.slow
def test_host_key_id_under_sanitizers(mbed: MbedtlsSources, host_blobs: dict[str, RealBlob],
                                      tmp_path: Path) -> None:
    """The key id paths (persistent key from ITS files, missing key, corrupt entry,
    application key) in the ASan + UBSan build: no report, the same statuses."""
    exe = reader(mbed, "host", sanitize=True)
    rb = host_blobs["aes-128-gcm"]
    store = tmp_path / "store"
    provision(store, 3, rb.key, rb.algorithm)
    provision(store, 4, rb.key, rb.algorithm, usage="e")
    provision(store, 5, rb.key, rb.algorithm)
    its_file(store, 5).write_bytes(its_file(store, 5).read_bytes()[:-3])  # truncated entry
    cases: list[tuple[list[str], Status]] = [
        (["-K", "3"], Status.OK), (["-K", "4"], Status.ERR_ARG), (["-K", "6"], Status.ERR_ARG),
        (["-K", "5"], Status.ERR_CRYPTO), (["-k", rb.key.hex(), "-V"], Status.OK),
    ]
    for key_args, want in cases:
        res = run(exe, "host", ["-b", str(rb.path.resolve()), "-a", str(rb.algorithm),
                                *key_args], cwd=store, timeout_s=300)
        assert "Sanitizer" not in res.stderr and "runtime error" not in res.stderr, res.stderr
        m = _LINE.search(res.stdout)
        assert m is not None and int(m[1]) == want, (key_args, res.stdout)


@pytest.mark.qemu
def test_qemu_application_key_id(mbed: MbedtlsSources, host_blobs: dict[str, RealBlob],
                                 tmp_path: Path) -> None:
    """Bare metal has no persistent storage: the key id path with a key the firmware
    imported itself; an id with no key -> ARG."""
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    board = "nucleo_f767zi"
    exe = reader(mbed, "qemu-m7", board=board)
    rb = host_blobs["chacha20-poly1305"]
    out = tmp_path / "plain.bin"
    st, _, _, log = read_by(exe, rb, ["-k", rb.key.hex(), "-V"], cwd=tmp_path,
                            target="qemu-m7", board=board, out=out)
    assert st == Status.OK and "swap: caller key kept" in log
    assert out.read_bytes() == b"".join(rb.plain)
    st, _, _, _ = read_by(exe, rb, ["-K", "7"], cwd=tmp_path, target="qemu-m7", board=board)
    assert st == Status.ERR_ARG


# ----- compiler and CLI -----

def _c_hex(key: bytes) -> str:
    return ", ".join(f"0x{b:02x}" for b in key)


@pytest.fixture(scope="module")
def kws_key_id(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`nnopt optimize --swap force --swap-key-id 0x2a` output for kws."""
    out = tmp_path_factory.mktemp("kws_key_id")
    res = nnopt("optimize", model_path(KWS), "--swap", "force", "--swap-key", KEY.hex(),
                "--swap-key-id", "0x2a", "-o", out, "--table", "none")
    assert res.returncode == 0, res.stderr
    return out


def test_generated_sources_hold_no_key_bytes(kws_key_id: Path, tmp_path: Path) -> None:
    c = (kws_key_id / "kws_ref_model_model.c").read_text()
    h = (kws_key_id / "kws_ref_model_model.h").read_text()
    assert ".key_id = 0x0000002au," in c and ".key = NULL," in c
    assert "#define KWS_REF_MODEL_SWAP_KEY_ID 0x0000002au" in h
    for text in (c, h):
        assert _c_hex(KEY) not in text and _c_hex(KEY[:8]) not in text
        assert KEY.hex() not in text.lower()
    assert not list(kws_key_id.glob("*.key"))  # no key file written either
    # the blob is sealed with the configured key
    data = (kws_key_id / "kws_ref_model_swap.bin").read_bytes()
    assert len(B.read_blob(data, KEY)) == len(B.parse_swap_blob(data).entries) > 1
    # control: the key-bytes build does contain them (so the checks above can fail)
    res = nnopt("optimize", model_path(KWS), "--swap", "force", "--swap-key", KEY.hex(),
                "-o", tmp_path, "--table", "none")
    assert res.returncode == 0, res.stderr
    assert _c_hex(KEY) in (tmp_path / "kws_ref_model_model.c").read_text()


@pytest.mark.parametrize("target", ["host", "qemu-m7"])
def test_linked_executable_holds_no_key_bytes(target: Target, tmp_path: Path) -> None:
    """The linked program (host executable; Cortex-M7 firmware ELF) of a key-id build
    has no copy of the key; the key-bytes build of the same plan has one."""
    from nnopt.boards import load_board
    from nnopt.frontend.tflite import load_model
    from nnopt.planner import PlanOptions, plan_model
    from nnopt.runner import build_planned
    from nnopt.swap.pipeline import plan_swap_for

    board = load_board("nucleo_f767zi") if target != "host" else None
    pm = plan_model(load_model(model_path(KWS)), PlanOptions(board=board))
    pm = plan_swap_for(pm, board, "force", None)
    by_id = build_planned(pm, target, tmp_path / "id", board=board, swap_key=KEY,
                          swap_key_id=0x2A).read_bytes()
    by_bytes = build_planned(pm, target, tmp_path / "bytes", board=board,
                             swap_key=KEY).read_bytes()
    assert KEY in by_bytes  # control
    assert KEY not in by_id and KEY[:16] not in by_id and KEY[16:] not in by_id


def test_run_by_key_id_bitexact_and_refusals(kws_key_id: Path, tmp_path: Path) -> None:
    path = model_path(KWS)
    blob = kws_key_id / "kws_ref_model_swap.bin"
    store = tmp_path / "store"
    res = nnopt("swap-provision", "--key-store", store, "--swap-key-id", "42",
                "--algorithm", "chacha20-poly1305", "--swap-key", KEY.hex())
    assert res.returncode == 0, res.stderr
    assert "provisioned key id 0x0000002a" in res.stdout
    xs, args = write_inputs(path, tmp_path, seed=5)
    out = tmp_path / "out.bin"

    def run_by(key_id: str, *extra: str | Path, key_store: Path = store,
               blob_path: Path = blob, target: str = "host"
               ) -> subprocess.CompletedProcess[str]:
        out.unlink(missing_ok=True)
        return nnopt("run", path, "--target", target, "--swap", "force", "--swap-key-id",
                     key_id, "--swap-key-store", key_store, "--blob", blob_path, *args,
                     "-o", out, *extra)

    # the production flow: the program holds no key, the key store does
    res = run_by("0x2a")
    assert res.returncode == 0, res.stderr
    assert_matches_tflm(path, xs, out)
    # this run's own blob, sealed with the configured key, opened by id
    out.unlink()
    res = nnopt("run", path, "--swap", "force", "--swap-key", KEY.hex(), "--swap-key-id", "42",
                "--swap-key-store", store, *args, "-o", out)
    assert res.returncode == 0, res.stderr
    assert_matches_tflm(path, xs, out)

    def refused(res: subprocess.CompletedProcess[str], what: str) -> None:
        err = clean_error(res, 1)
        assert what in err, err
        assert not out.exists()

    # no key under that id; a store that lacks it
    refused(run_by("43"), "key id 0x0000002b is not usable")
    empty = tmp_path / "empty"
    empty.mkdir()
    refused(run_by("42", key_store=empty), "(NNRT_ERR_ARG)")
    # a key with the wrong algorithm or usage policy
    provision(store, 44, KEY[:16], B.ALG_AES_128_GCM)  # AES-128-GCM key, ChaCha blob
    refused(run_by("44"), "type, algorithm or usage does not fit")
    provision(store, 45, KEY, B.ALG_CHACHA20_POLY1305, usage="e")  # ENCRYPT only
    refused(run_by("45"), "(NNRT_ERR_ARG)")
    # the right policy, other bytes
    res = nnopt("swap-provision", "--key-store", store, "--swap-key-id", "46",
                "--algorithm", "chacha20-poly1305", "--swap-key", OTHER.hex())
    assert res.returncode == 0, res.stderr
    refused(run_by("46"), "failed authentication (NNRT_ERR_AUTH) with the key stored under "
            "key id 0x0000002e")
    # a tampered blob, by key id
    data = bytearray(blob.read_bytes())
    data[B.parse_swap_blob(bytes(data)).entries[-1].offset] ^= 0x10
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(data))
    refused(run_by("42", blob_path=bad), "(NNRT_ERR_AUTH)")
    # bad ids, QEMU, options without their partner: before building anything
    refused(run_by("0x40000000"), "outside PSA's application key id range")
    refused(run_by("0"), "outside PSA's application key id range")
    refused(run_by("key"), "is not a number")
    refused(run_by("42", target="qemu-m7"), "no persistent key store")
    refused(run_by("42", key_store=tmp_path / "missing"), "is not a directory")
    res = nnopt("run", path, "--swap", "force", "--swap-key-store", store, "--seed", "1")
    assert "--swap-key-store needs --swap-key-id" in clean_error(res, 64)
    res = nnopt("run", path, "--swap", "force", "--swap-key-id", "42", "--swap-key-store",
                store, "--seed", "1")  # no --blob and no key to seal this run's blob
    assert "no key is configured" in clean_error(res, 1)


def test_optimize_and_provision_refusals(tmp_path: Path) -> None:
    path = model_path(KWS)
    res = nnopt("optimize", path, "--swap", "force", "--swap-key-id", "0x40000000",
                "-o", tmp_path, "--table", "none")
    err = clean_error(res, 1)
    assert "outside PSA's application key id range" in err and "hint:" in err
    res = nnopt("optimize", path, "--swap", "force", "--swap-key-id", "42", "-o", tmp_path,
                "--table", "none")
    assert "no key is configured" in clean_error(res, 1)
    assert not (tmp_path / "kws_ref_model_model.c").exists()
    assert not (tmp_path / "kws_ref_model_plan.json").exists()  # refused before writing
    store = tmp_path / "store"
    args: list[str | Path] = ["swap-provision", "--key-store", store, "--algorithm",
                              "chacha20-poly1305"]
    assert "outside" in clean_error(nnopt(*args, "--swap-key-id", "0", "--swap-key", KEY.hex()))
    assert "needs 32" in clean_error(nnopt(*args, "--swap-key-id", "1", "--swap-key", "abcd"))
    assert "no swap key given" in clean_error(nnopt(*args, "--swap-key-id", "1"), 64)
    ok = nnopt(*args, "--swap-key-id", "1", "--swap-key", KEY.hex())
    assert ok.returncode == 0, ok.stderr
    assert (its_file(store, 1).stat().st_mode & 0o077) == 0  # owner only
    assert "already provisioned" in clean_error(
        nnopt(*args, "--swap-key-id", "1", "--swap-key", OTHER.hex()))
    assert nnopt(*args, "--swap-key-id", "1", "--swap-key", OTHER.hex(),
                 "--replace").returncode == 0
    rm = nnopt("swap-provision", "--key-store", store, "--swap-key-id", "1", "--remove")
    assert rm.returncode == 0 and not its_file(store, 1).exists()
