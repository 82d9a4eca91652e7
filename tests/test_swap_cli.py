"""Out-of-core execution through the command line (issue 5): `nnopt optimize` and
`nnopt run` with --swap auto|off|force, the blob written next to the sources, `nnopt
run --blob` on a given (or tampered) blob, the key options; bit-exact with TFLM on the
host and under QEMU; tampering is a clean error (message, exit 1, no traceback, no
output file), every time.
"""

from __future__ import annotations

import json
import re
import stat
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import model_path
from nnopt.swap import sealed_blob as B
from nnopt.testing.harness import random_inputs, run_tflm
from support.swap_checks import KWS, assert_matches_tflm, clean_error, nnopt, write_inputs

pytestmark = pytest.mark.usefixtures("mbed_ok")

KEY = "a5" * 32  # ChaCha20-Poly1305 (nucleo_f767zi's, and the default without a board)
OTHER_KEY = "5a" * 32
MNV2 = "tflm/mobilenet_v2_quantized_1x3x224x224.tflite"
VWW = "mlperf_tiny/vww_96_int8.tflite"


# ----- optimize -----

@pytest.fixture(scope="module")
def mnv2_nucleo(tmp_path_factory: pytest.TempPathFactory
                ) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("mnv2_nucleo")
    res = nnopt("optimize", model_path(MNV2), "--board", "nucleo_f767zi", "-o", out,
                "--swap-key", KEY, "--table", "none")
    return res, out


def test_optimize_mobilenet_v2_on_nucleo_streams_automatically(
        mnv2_nucleo: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    res, out = mnv2_nucleo
    name = "mobilenet_v2_quantized_1x3x224x224"
    # The weights fit once streamed; only the activation arena may still not fit the
    # F767's SRAM (activation tiling, issue 6): then the error names the arena alone.
    if res.returncode == 2:
        err = clean_error(res, 2)
        assert "activation arena" in err
        assert "weights" not in err.split("hint:")[0], err
    else:
        assert res.returncode == 0, res.stderr
    report = json.loads((out / f"{name}_report.json").read_text())
    swap = report["swap"]
    assert swap["enabled"] and swap["mode"] == "auto" and swap["fits_internal_flash"]
    assert swap["algorithm"] == "chacha20-poly1305" and swap["staging_region"] == "dtcm"
    assert swap["internal_weight_bytes"] <= swap["internal_budget_bytes"]
    assert swap["internal_weight_bytes"] + swap["external_weight_bytes"] == report["weight_bytes"]
    ext = {w["tensor"] for w in report["weights"] if w["pool"] == "external"}
    assert ext == {t["tensor"] for t in swap["tensors"] if t["pool"] == "external"}
    # the plan records every chunk and its transfer (prefetch) point
    assert len(swap["chunks"]) == swap["chunk_count"] > 1
    assert [c["index"] for c in swap["chunks"]] == list(range(swap["chunk_count"]))
    assert all(c["issue_after"] == c["index"] - 1 for c in swap["chunks"])
    assert swap["cost"]["io_bound_ops"]  # the classifier's FC is I/O-bound
    # the blob next to the sources holds exactly those chunks, sealed with the key
    blob = (out / f"{name}_swap.bin").read_bytes()
    chunks = B.read_blob(blob, bytes.fromhex(KEY))
    assert [(c.tensor, c.c0, c.c1, len(c.data)) for c in chunks] == [
        (c["tensor"], c["c0"], c["c1"], c["plain_bytes"]) for c in swap["chunks"]]
    assert not (out / f"{name}_swap.key").exists()  # a key was given
    plan = json.loads((out / f"{name}_plan.json").read_text())
    assert plan["swap"]["chunks"] == swap["chunks"]
    # the text report: placement, chunks, staging, predicted slowdown, I/O-bound layers
    assert "swap (auto, chacha20-poly1305" in res.stdout
    assert f"in {swap['chunk_count']} chunks" in res.stdout
    assert "predicted latency vs all weights internal: x" in res.stdout
    assert "I/O-bound layers" in res.stdout and "FULLY_CONNECTED" in res.stdout
    c_text = (out / f"{name}_model.c").read_text()
    # the descriptor's attach member, then reset NULL (no state), then prepare
    assert f"{name}_swap_attach, NULL,\n    {name}_prepare,\n}};" in c_text
    for t in ext:
        assert f" w{t}[" not in c_text  # streamed weights are not in the firmware


def test_swap_off_refuses_mobilenet_v2_naming_the_weights() -> None:
    res = nnopt("optimize", model_path(MNV2), "--board", "nucleo_f767zi", "--swap", "off",
                "--table", "none", "--tiling", "off", "--inplace-ops", "off")  # faster
    err = clean_error(res, 2)
    assert re.search(r"the weights need 3,5\d\d,\d\d\d bytes of internal flash", err), err
    assert "--swap auto" in err  # the hint


def test_swap_auto_without_external_flash_need_streams_nothing(tmp_path: Path) -> None:
    res = nnopt("optimize", model_path(KWS), "--board", "nucleo_f767zi", "-o", tmp_path,
                "--table", "none")
    assert res.returncode == 0, res.stderr
    report = json.loads((tmp_path / "kws_ref_model_report.json").read_text())
    assert report["swap"]["enabled"] is False
    assert all(w["pool"] == "flash" for w in report["weights"])
    assert not list(tmp_path.glob("*_swap.*"))
    assert "swap (auto): nothing streams" in res.stdout


def test_force_without_key_generates_one(tmp_path: Path) -> None:
    res = nnopt("optimize", model_path(KWS), "--swap", "force", "-o", tmp_path,
                "--table", "none")
    assert res.returncode == 0, res.stderr
    key_file = tmp_path / "kws_ref_model_swap.key"
    assert "no swap key configured: generated a random key in" in res.stderr
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = bytes.fromhex(key_file.read_text().strip())
    assert len(key) == 32
    B.read_blob((tmp_path / "kws_ref_model_swap.bin").read_bytes(), key)


# ----- run: bit-exact -----

@pytest.mark.parametrize("model", [KWS, VWW])
def test_run_forced_swap_bitexact_on_host(model: str, tmp_path: Path) -> None:
    path = model_path(model)
    xs, args = write_inputs(path, tmp_path, seed=5)
    out, stats = tmp_path / "out.bin", tmp_path / "stats.json"
    res = nnopt("run", path, "--swap", "force", "--swap-key", KEY, *args, "--output", out,
                "--stats", stats)
    assert res.returncode == 0, res.stderr
    assert_matches_tflm(path, xs, out)
    swap = json.loads(stats.read_text())["swap"]
    assert swap["enabled"] and swap["chunks"] > 1 and swap["external_weight_bytes"] > 0


@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize("model", [KWS, VWW])
def test_run_forced_swap_bitexact_on_qemu_m7(model: str, tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    path = model_path(model)
    xs, args = write_inputs(path, tmp_path, seed=6)
    out, stats = tmp_path / "out.bin", tmp_path / "stats.json"
    res = nnopt("run", path, "--target", "qemu-m7", "--board", "nucleo_f767zi", "--swap",
                "force", "--swap-key", KEY, *args, "--output", out, "--stats", stats)
    assert res.returncode == 0, res.stderr
    assert_matches_tflm(path, xs, out)
    st = json.loads(stats.read_text())
    assert st["swap"]["staging_region"] == "dtcm" and st["swap"]["fits"]
    assert st["instructions"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host", pytest.param("qemu-m3", marks=pytest.mark.qemu)])
def test_run_mobilenet_v2_streamed_bitexact(target: str, tmp_path: Path) -> None:
    """MobileNetV2 with every streamable weight in the blob, on mps2_an385 (whose 4 MB
    SRAM holds the untiled arena): AES-128-GCM, bit-exact with TFLM."""
    if target != "host":
        from nnopt.firmware.qemu import qemu_available

        if not qemu_available():
            pytest.skip("qemu-system-arm not installed")
    path = model_path(MNV2)
    xs, args = write_inputs(path, tmp_path, seed=7)
    out, stats = tmp_path / "out.bin", tmp_path / "stats.json"
    res = nnopt("run", path, "--target", target, "--board", "mps2_an385", "--swap", "force",
                "--swap-key", "c3" * 16, *args, "--output", out, "--stats", stats)
    assert res.returncode == 0, res.stderr
    assert_matches_tflm(path, xs, out)
    swap = json.loads(stats.read_text())["swap"]
    assert swap["algorithm"] == "aes-128-gcm" and swap["external_weight_bytes"] > 3_000_000


@pytest.mark.qemu
@pytest.mark.slow
def test_run_mobilenet_v2_on_qemu_m7_within_nucleo_f767zi(tmp_path: Path) -> None:
    """The whole issue on the F767's budget: --swap auto streams what does not fit the
    2 MB flash (staging in DTCM), the tiled arena fits the 384 KB SRAM; Cortex-M7
    firmware under QEMU, bit-exact with TFLM."""
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    path = model_path(MNV2)
    xs, args = write_inputs(path, tmp_path, seed=7)
    out, stats = tmp_path / "out.bin", tmp_path / "stats.json"
    res = nnopt("run", path, "--target", "qemu-m7", "--board", "nucleo_f767zi",
                "--swap-key", KEY, *args, "--output", out, "--stats", stats)
    if res.returncode == 2 and "activation arena" in res.stderr:
        pytest.skip("the activation arena does not fit the F767's SRAM without tiling")
    assert res.returncode == 0, res.stderr
    assert_matches_tflm(path, xs, out)
    st = json.loads(stats.read_text())
    assert st["swap"]["fits"] and st["swap"]["staging_region"] == "dtcm"
    assert st["arena_bytes"] <= 384 * 1024


# ----- run --blob: tampering -----

@pytest.fixture(scope="module")
def kws_blob(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`nnopt optimize --swap force` output for kws (no board: the host's plan)."""
    out = tmp_path_factory.mktemp("kws_swap")
    res = nnopt("optimize", model_path(KWS), "--swap", "force", "--swap-key", KEY, "-o", out,
                "--table", "none")
    assert res.returncode == 0, res.stderr
    return out / "kws_ref_model_swap.bin"


def run_blob(blob: Path, tmp: Path, *extra: str, target: str = "host",
             key: str | None = KEY, env: dict[str, str] | None = None
             ) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp / "out.bin"
    out.unlink(missing_ok=True)
    key_args = ["--swap-key", key] if key is not None else []
    res = nnopt("run", model_path(KWS), "--target", target, "--swap", "force", *key_args,
                "--blob", blob, "--seed", "3", "--output", out, *extra, env=env)
    return res, out


def test_run_on_the_optimize_blob_is_bitexact(kws_blob: Path, tmp_path: Path) -> None:
    path = model_path(KWS)
    xs, args = write_inputs(path, tmp_path, seed=8)
    out = tmp_path / "out.bin"
    res = nnopt("run", path, "--swap", "force", "--swap-key", KEY, "--blob", kws_blob,
                *args, "--output", out)
    assert res.returncode == 0, res.stderr
    assert_matches_tflm(path, xs, out)
    # key precedence: --swap-key over $NNOPT_SWAP_KEY; the key file, and the variable
    key_file = tmp_path / "k.txt"
    key_file.write_text(KEY + "\n")
    cases: list[tuple[str | None, list[str], dict[str, str]]] = [
        (KEY, [], {"NNOPT_SWAP_KEY": OTHER_KEY}),
        (None, ["--swap-key-file", str(key_file)], {"NNOPT_SWAP_KEY": OTHER_KEY}),
    ]
    for key, extra, env in cases:
        res, out = run_blob(kws_blob, tmp_path, *extra, key=key, env=env)
        assert res.returncode == 0, (extra, env, res.stderr)
        assert out.is_file()


def assert_blob_refused(res: subprocess.CompletedProcess[str], out: Path, what: str) -> None:
    err = clean_error(res, 1)
    assert what in err, err
    assert "no output was written" in err
    assert not out.exists()


def flip(data: bytes, pos: int, bit: int = 0x01) -> bytes:
    b = bytearray(data)
    b[pos] ^= bit
    return bytes(b)


def test_tampered_blobs_are_refused(kws_blob: Path, tmp_path: Path) -> None:
    data = kws_blob.read_bytes()
    entries = B.parse_swap_blob(data).entries
    bad = tmp_path / "bad.bin"
    # a flipped byte in a chunk (first, last; every chunk: the slow test below)
    for e in (entries[0], entries[-1]):
        bad.write_bytes(flip(data, e.offset + e.sealed_bytes // 2))
        res, out = run_blob(bad, tmp_path)
        assert_blob_refused(res, out, "failed authentication (NNRT_ERR_AUTH)")
    # truncated: a format error at attach
    for size in (len(data) - 1,):
        bad.write_bytes(data[:size])
        res, out = run_blob(bad, tmp_path)
        assert_blob_refused(res, out, "is not a valid blob for this build (NNRT_ERR_FORMAT)")
    # another key compiled in than the one the blob was sealed with
    res, out = run_blob(kws_blob, tmp_path, key=OTHER_KEY)
    assert_blob_refused(res, out, "failed authentication (NNRT_ERR_AUTH)")
    # missing blob; --blob without a key
    res, out = run_blob(tmp_path / "missing.bin", tmp_path)
    assert_blob_refused(res, out, "could not be read (NNRT_ERR_IO)")
    res, out = run_blob(kws_blob, tmp_path, key=None)
    assert "no swap key configured" in clean_error(res, 1) and not out.exists()


@pytest.mark.slow
def test_every_tampered_chunk_and_header_byte_is_refused(kws_blob: Path,
                                                         tmp_path: Path) -> None:
    """Every chunk, and bytes of every header field and of a table entry: the run
    stops with AUTH or FORMAT, every time, and writes nothing."""
    data = kws_blob.read_bytes()
    bad = tmp_path / "bad.bin"
    for e in B.parse_swap_blob(data).entries:
        for pos in (e.offset, e.offset + e.sealed_bytes - 1):  # ciphertext start, tag end
            bad.write_bytes(flip(data, pos, 0x80))
            res, out = run_blob(bad, tmp_path)
            assert_blob_refused(res, out, "failed authentication (NNRT_ERR_AUTH)")
    for size in (len(data) // 2, B.HEADER_BYTES, 10, 0):
        bad.write_bytes(data[:size])
        res, out = run_blob(bad, tmp_path)
        assert_blob_refused(res, out, "is not a valid blob for this build (NNRT_ERR_FORMAT)")
    key_file = tmp_path / "k.bin"
    key_file.write_bytes(bytes.fromhex(KEY))  # raw bytes, through $NNOPT_SWAP_KEY_FILE
    res, out = run_blob(kws_blob, tmp_path, key=None, env={"NNOPT_SWAP_KEY_FILE": str(key_file)})
    assert res.returncode == 0 and out.is_file(), res.stderr
    header_fields = (0, 4, 6, 8, 9, 10, 12, 16, 20, 24, 28, 32, 48, 56, 60)
    table_entry = tuple(B.HEADER_BYTES + k for k in (0, 4, 8, 12, 14, 16, 28))
    for pos in header_fields + table_entry:
        bad.write_bytes(flip(data, pos))
        res, out = run_blob(bad, tmp_path)
        err = clean_error(res, 1)
        assert "NNRT_ERR_AUTH" in err or "NNRT_ERR_FORMAT" in err, (pos, err)
        assert not out.exists()


def test_blob_without_streaming_and_bad_key_are_user_errors(kws_blob: Path,
                                                            tmp_path: Path) -> None:
    res = nnopt("run", model_path(KWS), "--seed", "1", "--blob", kws_blob)
    assert "streams no weights" in clean_error(res, 1)
    res = nnopt("run", model_path(KWS), "--seed", "1", "--swap", "force", "--swap-key", "abcd")
    assert "needs 32" in clean_error(res, 1)


@pytest.mark.qemu
@pytest.mark.slow
def test_tampered_blobs_are_refused_on_qemu_m7(tmp_path: Path) -> None:
    from nnopt.firmware.qemu import qemu_available

    if not qemu_available():
        pytest.skip("qemu-system-arm not installed")
    res = nnopt("optimize", model_path(KWS), "--board", "nucleo_f767zi", "--swap", "force",
                "--swap-key", KEY, "-o", tmp_path, "--table", "none")
    assert res.returncode == 0, res.stderr
    blob = tmp_path / "kws_ref_model_swap.bin"
    board = ("--board", "nucleo_f767zi")
    res, out = run_blob(blob, tmp_path, *board, target="qemu-m7")
    assert res.returncode == 0 and out.is_file(), res.stderr
    data = blob.read_bytes()
    e = B.parse_swap_blob(data).entries[-1]
    bad = tmp_path / "bad.bin"
    b = bytearray(data)
    b[e.offset + 3] ^= 0x80
    bad.write_bytes(bytes(b))
    res, out = run_blob(bad, tmp_path, *board, target="qemu-m7")
    assert_blob_refused(res, out, "failed authentication (NNRT_ERR_AUTH)")
    bad.write_bytes(data[:-16])
    res, out = run_blob(bad, tmp_path, *board, target="qemu-m7")
    assert_blob_refused(res, out, "is not a valid blob for this build (NNRT_ERR_FORMAT)")
    res, out = run_blob(blob, tmp_path, *board, target="qemu-m7", key=OTHER_KEY)
    assert_blob_refused(res, out, "failed authentication (NNRT_ERR_AUTH)")


# ----- the planning step with the below-the-bound passes -----

def test_streamed_ops_on_views_and_tiled_stages(tmp_path: Path) -> None:
    """With the below-the-bound passes, ops the plan runs on sub-views (in place, folded
    padding, row by row: nnopt.codegen.views) stream whole chunks through the plan's own
    lowering; ops inside a tiled stage keep their weights internal (plan_swap_for), and
    the swap code generator refuses a plan that streams one. Bit-exact either way."""
    from nnopt.errors import PlanError
    from nnopt.frontend.tflite import load_model_bytes
    from nnopt.planner import PlanOptions, plan_model
    from nnopt.runner import run_planned
    from nnopt.swap import SwapOptions, plan_swap
    from nnopt.swap.codegen import generate_swapped
    from nnopt.swap.pipeline import plan_swap_for, swap_of

    data = model_path(VWW).read_bytes()
    xs = random_inputs(data, seed=9)
    want, _ = run_tflm(data, xs)
    for inplace_ops, tiling in (("force", "off"), ("auto", "force")):
        pm = plan_model(load_model_bytes(data), PlanOptions(inplace_ops=inplace_ops,
                                                            tiling=tiling),
                        source_bytes=data)
        viewed = {e.op for e in pm.plan.inplace_ops}
        staged = {i for st in pm.plan.stages for i in st.ops}
        swapped = plan_swap_for(pm, None, "force")
        swap = swap_of(swapped.plan)
        assert swap is not None
        streamed = {c.op for c in swap.chunks}
        assert viewed & streamed and not staged & streamed
        assert bool(staged) == (tiling == "force")
        res = run_planned(swapped, [x.tobytes() for x in xs], swap_key=bytes.fromhex(KEY))
        np.testing.assert_array_equal(np.frombuffer(res.outputs[0], np.int8),
                                      want[0].ravel())
    naive = plan_swap(pm.graph, pm.plan, None, SwapOptions(mode="force",
                                                           kernel_channel_ranges=False))
    assert staged & {c.op for c in naive.chunks}
    with pytest.raises(PlanError, match="tiled stage"):
        generate_swapped(pm, tmp_path, naive, bytes.fromhex(KEY))
