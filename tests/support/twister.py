"""Run Zephyr's Twister on nnopt's samples and suites, and read what it reports.

Two ways to a Zephyr tree, checked in this order:

- ``NNOPT_ZEPHYR_WORKSPACE``: a west workspace whose manifest repository is this
  checkout (``west init -l`` of it, or a symlink to it as the manifest path): Twister
  runs as ``west twister`` in the workspace top, with the modules west lists;
- ``ZEPHYR_BASE`` outside a west workspace (e.g. ../shared/zephyr/make-workspace.sh's
  output) with ``ZEPHYR_MODULES`` listing the modules: Twister runs as
  ``$ZEPHYR_BASE/scripts/twister``, this checkout appended to the modules and its
  ``boards/`` added as a board root.

The toolchain is the environment's (``ZEPHYR_TOOLCHAIN_VARIANT``); without one, the
GNU Arm toolchain on PATH (``gnuarmemb``). Results come from Twister's ``twister.json``
(``scripts/pylib/twister/twisterlib/reports.py``: ``testsuites[]`` with ``name``,
``platform``, ``status``, ``reason``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from nnopt.zephyr_build import toolchain_env, workspace_modules

WORKSPACE_VAR = "NNOPT_ZEPHYR_WORKSPACE"
JOBS_VAR = "NNOPT_TWISTER_JOBS"

# Twister's Python needs beyond west's (Zephyr's scripts/requirements-run-test.txt and
# -base.txt), as import names.
TWISTER_IMPORTS = ("elftools", "yaml", "pykwalify", "junitparser", "natsort", "colorama",
                   "ply", "psutil", "serial", "anytree", "tabulate")

# twister.json statuses (twisterlib/statuses.py, TwisterStatus) that mean "broken".
FAILED = ("failed", "error", "blocked")


class TwisterSetupError(Exception):
    """A Zephyr workspace was asked for (an environment variable) but is unusable."""


@dataclass(frozen=True)
class Setup:
    """How to run Twister: the command's first words, where, and with what."""

    zephyr_base: Path
    command: tuple[str, ...]  # the Twister command without its options
    cwd: Path
    env: dict[str, str]
    extra: tuple[str, ...]  # options this setup needs (board roots)

    def version(self) -> str:
        fields = dict(line.split(" = ") for line in
                      (self.zephyr_base / "VERSION").read_text().splitlines() if " = " in line)
        return f"{fields['VERSION_MAJOR']}.{fields['VERSION_MINOR']}.{fields['PATCHLEVEL']}"


def _west_manifest_path(top: Path, west: Path, env: dict[str, str]) -> Path:
    proc = subprocess.run([os.fspath(west), "list", "-f", "{abspath}", "manifest"], cwd=top,
                          env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise TwisterSetupError(f"{WORKSPACE_VAR}={top}: `west list` failed: "
                                f"{proc.stderr.strip()[:300]}")
    return Path(proc.stdout.strip())


def tree_modules(top: Path, repo: Path) -> list[Path]:
    """The modules of a workspace without west: every folder at west's module places,
    ``modules/<group>/<name>`` and ``optional/modules/<group>/<name>`` (the list
    make-workspace.sh prints; CMSIS_6 has no zephyr/module.yml, Zephyr knows it by
    name), with any other folder holding a ``zephyr/module.yml``; not this checkout."""
    found = {p.resolve() for pattern in ("modules/*/*", "optional/modules/*/*")
             for p in top.glob(pattern) if p.is_dir()}
    found.update(m.resolve() for m in workspace_modules(top / "zephyr", exclude=repo))
    return sorted(m for m in found if repo.resolve() not in (m, *m.parents))


def find_setup(repo: Path, env: dict[str, str]) -> Setup | str:
    """The Twister setup the environment gives, or why there is none (a skip reason):
    a west workspace (``NNOPT_ZEPHYR_WORKSPACE``), a workspace without west
    (``NNOPT_ZEPHYR_WORKSPACE`` naming a tree with ``zephyr/`` and its modules, as
    ../shared/zephyr/make-workspace.sh makes: the modules found around it unless
    ``ZEPHYR_MODULES`` lists them), or ``ZEPHYR_BASE`` + ``ZEPHYR_MODULES``.

    Raises TwisterSetupError when a variable names a workspace that cannot be used."""
    missing = [m for m in TWISTER_IMPORTS if importlib.util.find_spec(m) is None]
    west = Path(sys.executable).with_name("west")
    ws = env.get(WORKSPACE_VAR)
    base = env.get("ZEPHYR_BASE")
    if not ws and not base:
        return (f"no Zephyr workspace: set {WORKSPACE_VAR} to a west workspace of this "
                "checkout (docs/zephyr.md: Quick start), or ZEPHYR_BASE and ZEPHYR_MODULES")
    if missing:
        return (f"Twister's Python packages are missing ({', '.join(missing)}): "
                "pip install -r $ZEPHYR_BASE/scripts/requirements-run-test.txt")
    tool = toolchain_env(env)
    if isinstance(tool, str):
        return tool
    env = dict(tool)
    if ws and not (Path(ws) / ".west").is_dir() and (Path(ws) / "zephyr" / "VERSION").is_file():
        # a tree of ../shared/zephyr/make-workspace.sh (no west): its zephyr/ and the
        # modules around it, as ZEPHYR_BASE + ZEPHYR_MODULES would give them
        base = os.fspath(Path(ws) / "zephyr")
        if not env.get("ZEPHYR_MODULES"):
            env["ZEPHYR_MODULES"] = ";".join(os.fspath(m) for m in tree_modules(Path(ws), repo))
        ws = None
    if ws:
        top = Path(ws).resolve()
        if not (top / ".west").is_dir():
            raise TwisterSetupError(f"{WORKSPACE_VAR}={ws} is not a west workspace (no .west/) "
                                    "nor a Zephyr tree with its modules (no zephyr/VERSION); "
                                    "Hint: make one with west init -l + west update")
        if not west.is_file():
            raise TwisterSetupError(f"{WORKSPACE_VAR} is set but there is no west next to "
                                    f"{sys.executable}; Hint: pip install west")
        env.pop("ZEPHYR_BASE", None)  # west sets it from the workspace
        manifest = _west_manifest_path(top, west, env)
        if manifest.resolve() != repo.resolve():
            raise TwisterSetupError(
                f"{WORKSPACE_VAR}={ws}: its manifest repository is {manifest}, not this "
                f"checkout {repo}; Hint: west init -l this checkout, or make {manifest} a "
                "symlink to it")
        zephyr = top / "zephyr"
        if not (zephyr / "VERSION").is_file():
            raise TwisterSetupError(f"{WORKSPACE_VAR}={ws} has no zephyr/VERSION; "
                                    "Hint: run west update there")
        return Setup(zephyr, (os.fspath(west), "twister"), top, env, ())
    assert base is not None
    zephyr = Path(base).resolve()
    script = zephyr / "scripts" / "twister"
    if not script.is_file():
        raise TwisterSetupError(f"ZEPHYR_BASE={base} has no scripts/twister")
    modules = [m for m in env.get("ZEPHYR_MODULES", "").split(";") if m]
    if not modules:
        return ("ZEPHYR_BASE is set without ZEPHYR_MODULES (the modules' paths, as "
                f"make-workspace.sh prints them); or set {WORKSPACE_VAR}")
    env["ZEPHYR_MODULES"] = ";".join([*modules, os.fspath(repo)])
    return Setup(zephyr, (sys.executable, os.fspath(script)), repo, env,
                 ("--board-root", os.fspath(repo / "boards")))


def setup_or_skip(repo: Path) -> Setup:
    """The environment's setup for a pytest fixture: the test fails when a variable names
    an unusable workspace, and skips with the reason when there is none."""
    import pytest

    try:
        found = find_setup(repo, dict(os.environ))
    except TwisterSetupError as e:
        error = str(e)
    else:
        error = ""
    if error:  # outside the except: the message alone, without the exception chain
        pytest.fail(error, pytrace=False)
    if isinstance(found, str):
        pytest.skip(found)
    return found


def twister_command(setup: Setup, repo: Path, platform: str, outdir: Path,
                    build_only: bool) -> list[str]:
    jobs = os.environ.get(JOBS_VAR, "2")
    cmd = [*setup.command, *setup.extra, "-p", platform,
           "-T", os.fspath(repo / "samples"), "-T", os.fspath(repo / "tests" / "zephyr"),
           "--outdir", os.fspath(outdir), "-j", jobs, "--report-filtered", "--inline-logs"]
    if build_only:
        cmd.append("--build-only")
    return cmd


@dataclass(frozen=True)
class Outcome:
    """One configuration (scenario on a platform) as twister.json reports it."""

    name: str
    platform: str
    status: str
    reason: str


@dataclass(frozen=True)
class Results:
    outcomes: tuple[Outcome, ...]

    def counts(self) -> Counter[str]:
        return Counter(o.status for o in self.outcomes)

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in FAILED]

    def summary(self) -> str:
        """``passed 5, built 0, failed 1, filtered 3, ...`` ("built": built, not run)."""
        c = self.counts()
        parts = [f"passed {c['passed']}", f"built {c['not run']}",
                 f"failed {sum(c[s] for s in FAILED)}", f"filtered {c['filtered']}"]
        parts += [f"{s} {n}" for s, n in sorted(c.items())
                  if s not in ("passed", "not run", "filtered", *FAILED)]
        return ", ".join(parts)

    def failure_report(self) -> str:
        return "\n".join(f"  {o.platform} {o.name}: {o.status}: {o.reason}"
                         for o in self.failures())


def read_results(path: Path) -> Results:
    """Parse Twister's twister.json; ValueError naming the file when it is not one."""
    try:
        data = json.loads(path.read_text())
        suites = data["testsuites"]
        outcomes = tuple(Outcome(str(s["name"]), str(s["platform"]),
                                 str(s.get("status") or "none"), str(s.get("reason") or ""))
                         for s in suites)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a readable twister.json ({e})") from e
    return Results(outcomes)
