"""Every sample and suite under Twister, on a real Zephyr workspace.

With a workspace (``NNOPT_ZEPHYR_WORKSPACE``, or ``ZEPHYR_BASE`` + ``ZEPHYR_MODULES``;
see tests/support/twister.py), one test per platform runs
``twister -p PLATFORM -T samples -T tests/zephyr``: mps2/an385, qemu_cortex_m3 and
mps2/an500/qemu (Cortex-M7, this repository's board extension) in QEMU, nucleo_f767zi
built only; and the other cores in QEMU: qemu_cortex_m0, mps2/an386/qemu (Cortex-M4,
a board extension too), mps2/an521/cpu0 (M33), mps3/corstone300/an547 (M55), and
qemu_riscv32 (RISC-V, with scripts/zephyr-env-riscv.sh's toolchain).
It reads Twister's twister.json and fails naming every failed scenario with
Twister's reason; it also fails when nothing passed (everything filtered out). Without a
workspace these tests skip with the reason, so CI without Zephyr stays green; the
twister.json reading itself is checked below without Zephyr.

A run takes minutes per platform (picolibc is built from source in every
configuration): select one with ``-k an500`` and set ``NNOPT_TWISTER_JOBS``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO
from support.twister import (
    WORKSPACE_VAR,
    Setup,
    TwisterSetupError,
    find_setup,
    read_results,
    setup_or_skip,
    twister_command,
)

# (board target, build only): the platforms the README's Twister figures are for.
PLATFORMS = [("mps2/an385", False), ("qemu_cortex_m3", False), ("mps2/an500/qemu", False),
             ("nucleo_f767zi", True),
             # the other cores (docs/cores.md): M0, M4 (this repository's board
             # extension), M33, M55, all in QEMU
             ("qemu_cortex_m0", False), ("mps2/an386/qemu", False),
             ("mps2/an521/cpu0", False), ("mps3/corstone300/an547", False),
             # RISC-V (QEMU virt) with the host riscv64-unknown-elf GCC through
             # scripts/zephyr-env-riscv.sh's toolchain variant
             ("qemu_riscv32", False)]
RISCV_PLATFORMS = {"qemu_riscv32"}


def _platform_env(setup: Setup, platform: str) -> dict[str, str]:
    """The setup's environment, with the RISC-V toolchain's for a RISC-V platform
    (the `export` lines of scripts/zephyr-env-riscv.sh; skip when it has no compiler)."""
    if platform not in RISCV_PLATFORMS:
        return setup.env
    proc = subprocess.run(["bash", os.fspath(REPO / "scripts" / "zephyr-env-riscv.sh")],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"no RISC-V toolchain for Zephyr: {proc.stderr.strip()}")
    env = dict(setup.env)
    for line in proc.stdout.splitlines():
        if line.startswith("export ") and "=" in line:
            name, value = line[len("export "):].split("=", 1)
            env[name] = value.strip("'\"")
    return env


@pytest.fixture(scope="module")
def setup() -> Setup:
    return setup_or_skip(REPO)


@pytest.mark.slow
@pytest.mark.qemu
@pytest.mark.parametrize(("platform", "build_only"), PLATFORMS,
                         ids=[p.replace("/", "_") for p, _ in PLATFORMS])
def test_twister_passes_every_scenario(setup: Setup, tmp_path: Path, platform: str,
                                       build_only: bool) -> None:
    out = tmp_path / "twister-out"
    cmd = twister_command(setup, REPO, platform, out, build_only)
    proc = subprocess.run(cmd, cwd=setup.cwd, env=_platform_env(setup, platform),
                          capture_output=True, text=True, check=False)
    report = out / "twister.json"
    if not report.is_file():
        pytest.fail(f"Twister wrote no {report} (exit {proc.returncode}): "
                    f"{(proc.stdout + proc.stderr)[-2000:]}")
    results = read_results(report)
    print(f"Zephyr {setup.version()}, {platform}: {results.summary()}")
    failures = results.failures()
    assert not failures, (f"{platform}: {len(failures)} of {len(results.outcomes)} "
                          f"configurations failed:\n{results.failure_report()}")
    done = results.counts()["not run" if build_only else "passed"]
    assert done > 0, f"{platform}: nothing {'built' if build_only else 'passed'}: " \
                     f"{results.summary()}"
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]


# --- without Zephyr: what the test above relies on ---------------------------------

def _suite(name: str, status: str, reason: str | None = None) -> dict[str, object]:
    suite: dict[str, object] = {"name": name, "arch": "arm", "platform": "mps2/an385",
                                "path": "samples/x", "runnable": True, "status": status}
    if reason is not None:
        suite["reason"] = reason
    return suite


def test_results_name_every_failed_scenario(tmp_path: Path) -> None:
    # The shape of twisterlib/reports.py's json_report (Zephyr 4.1).
    report = tmp_path / "twister.json"
    report.write_text(json.dumps({"environment": {"zephyr_version": "v4.1.0"}, "testsuites": [
        _suite("samples/hello/sample.nnopt.hello", "passed"),
        _suite("tests/zephyr/allocator/nnrt.allocator.static", "error", "Build failure"),
        _suite("samples/swapnn/sample.nnopt.swapnn.qemu", "failed", "Testsuite failed"),
        _suite("tests/zephyr/swap/nnrt.swap.aes", "filtered", "not in platform allow list"),
        _suite("samples/pingpong/sample.nnopt.pingpong", "not run", "built only"),
    ]}))
    results = read_results(report)
    assert results.summary() == "passed 1, built 1, failed 2, filtered 1"
    assert [o.name for o in results.failures()] == [
        "tests/zephyr/allocator/nnrt.allocator.static", "samples/swapnn/sample.nnopt.swapnn.qemu"]
    text = results.failure_report()
    assert "mps2/an385 tests/zephyr/allocator/nnrt.allocator.static: error: Build failure" in text
    assert "sample.nnopt.swapnn.qemu: failed: Testsuite failed" in text
    assert "hello" not in text


def test_unreadable_report_is_named(tmp_path: Path) -> None:
    report = tmp_path / "twister.json"
    report.write_text('{"environment": {}}')
    with pytest.raises(ValueError, match=r"twister\.json: not a readable twister\.json"):
        read_results(report)


def test_no_workspace_skips_with_the_variable_to_set() -> None:
    env = {k: v for k, v in os.environ.items() if k not in (WORKSPACE_VAR, "ZEPHYR_BASE")}
    reason = find_setup(REPO, env)
    assert isinstance(reason, str) and WORKSPACE_VAR in reason and "ZEPHYR_BASE" in reason


def test_a_workspace_that_is_not_one_is_an_error(tmp_path: Path) -> None:
    env = {**os.environ, WORKSPACE_VAR: os.fspath(tmp_path), "ZEPHYR_TOOLCHAIN_VARIANT": "zephyr"}
    try:
        found = find_setup(REPO, env)
    except TwisterSetupError as e:
        assert "not a west workspace" in str(e) and "Hint:" in str(e)
    else:
        # Only when Twister's packages are missing is that checked first.
        assert isinstance(found, str) and "pip install" in found


def test_a_workspace_without_west_gives_its_zephyr_and_modules(tmp_path: Path) -> None:
    """NNOPT_ZEPHYR_WORKSPACE may name a tree of make-workspace.sh (no .west/), as the
    benchmarks use it: its zephyr/ and the modules around it, this checkout added."""
    (tmp_path / "zephyr" / "scripts").mkdir(parents=True)
    (tmp_path / "zephyr" / "VERSION").write_text("VERSION_MAJOR = 4\n")
    (tmp_path / "zephyr" / "scripts" / "twister").write_text("")
    mod = tmp_path / "modules" / "lib" / "cmsis-nn"
    (mod / "zephyr").mkdir(parents=True)
    (mod / "zephyr" / "module.yml").write_text("name: cmsis-nn\n")
    env = {k: v for k, v in os.environ.items() if k not in ("ZEPHYR_BASE", "ZEPHYR_MODULES")}
    env.update({WORKSPACE_VAR: os.fspath(tmp_path), "ZEPHYR_TOOLCHAIN_VARIANT": "zephyr"})
    found = find_setup(REPO, env)
    if isinstance(found, str):  # Twister's packages or a toolchain missing here
        assert "pip install" in found or "toolchain" in found.lower()
        return
    assert found.zephyr_base == (tmp_path / "zephyr").resolve()
    assert found.env["ZEPHYR_MODULES"].split(";") == [os.fspath(mod.resolve()),
                                                      os.fspath(REPO)]


def test_command_selects_the_platform_and_the_project_roots(tmp_path: Path) -> None:
    setup = Setup(Path("/z"), ("west", "twister"), tmp_path, {}, ())
    cmd = twister_command(setup, REPO, "nucleo_f767zi", tmp_path / "out", build_only=True)
    assert cmd[:2] == ["west", "twister"]
    assert cmd[cmd.index("-p") + 1] == "nucleo_f767zi" and "--build-only" in cmd
    roots = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-T"]
    assert roots == [os.fspath(REPO / "samples"), os.fspath(REPO / "tests" / "zephyr")]
    assert "--build-only" not in twister_command(setup, REPO, "mps2/an385", tmp_path, False)
