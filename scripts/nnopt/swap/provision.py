"""Key ids: the swap key as a PSA key the device already holds, not bytes in its flash.

With ``--swap-key-id ID`` the generated code opens the blob with
``nnrt_swap_config_t.key_id = ID`` (``key = NULL``) and embeds no key byte; the blob is
still sealed on the build machine with the key from ``--swap-key`` /
``--swap-key-file`` / ``$NNOPT_SWAP_KEY``. The device must hold that key as a PSA key
with this id, type and algorithm of the blob's AEAD and usage DECRYPT (checked at
attach, ``NNRT_ERR_ARG`` otherwise; see ``nnrt/swap.h``).

On a device the key is provisioned once, at manufacturing, by firmware that calls
``psa_import_key()`` with ``PSA_KEY_LIFETIME_PERSISTENT`` and the id (the key lands in
PSA Internal Trusted Storage: TF-M, or Zephyr's ``CONFIG_SECURE_STORAGE``).
On the host, the stand-in key store is a directory of PSA ITS files written by
nnopt's host mbedTLS build (``MBEDTLS_PSA_ITS_FILE_C``): :func:`provision` imports a
key there with ``modules/nnrt/harness/swap_provision_main.c`` (``nnopt
swap-provision``), and host runs by key id execute in that directory
(``nnopt run --swap-key-id ID --swap-key-store DIR``). Bare-metal QEMU firmware has no
non-volatile storage: those targets keep key bytes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..errors import NnoptError, ToolchainError
from ..firmware.toolchain import BuildSpec, build
from ..paths import nnrt_dir
from .mbedtls_build import library_defines, mbedtls_library, mbedtls_sources

#: PSA's application key id range (PSA_KEY_ID_USER_MIN .. PSA_KEY_ID_USER_MAX).
KEY_ID_MIN = 0x00000001
KEY_ID_MAX = 0x3FFFFFFF

_KEY_ID_HINT = ("a PSA key id is decimal or 0x hex within the application range "
                f"0x{KEY_ID_MIN:08x}..0x{KEY_ID_MAX:08x} (PSA_KEY_ID_USER_MIN..MAX; ids "
                "above are reserved for the implementation and for volatile keys)")

#: Exit statuses of swap_provision_main.c.
_ID_TAKEN = 3


class KeyStoreError(NnoptError):
    """A key id is invalid, or the key store refused or lacks a key."""


def parse_key_id(text: str, *, source: str = "--swap-key-id") -> int:
    """A PSA user key id from ``text`` (decimal or ``0x`` hex); KeyStoreError otherwise."""
    t = text.strip().lower().replace("_", "")
    if re.fullmatch(r"0x[0-9a-f]+", t):
        value = int(t, 16)
    elif re.fullmatch(r"[0-9]+", t):
        value = int(t, 10)
    else:
        raise KeyStoreError(f"{source} {text!r} is not a number", hint=_KEY_ID_HINT)
    if not KEY_ID_MIN <= value <= KEY_ID_MAX:
        raise KeyStoreError(f"{source} {text} (0x{value:x}) is outside PSA's application "
                            "key id range", hint=_KEY_ID_HINT)
    return value


def check_key_store(target: str, key_store: Path | None) -> Path:
    """The host key store for a run by key id on ``target``; KeyStoreError when the
    target has none or the directory is missing."""
    if target != "host":
        raise KeyStoreError(
            f"--swap-key-id cannot run on {target}: bare-metal QEMU firmware has no "
            "persistent key store (PSA ITS)",
            hint="run by key id on --target host with --swap-key-store DIR, or drop "
            "--swap-key-id on QEMU (the key is then compiled in)")
    if key_store is None:
        raise KeyStoreError(
            "--swap-key-id on the host needs the key store that holds the key",
            hint="pass --swap-key-store DIR, a directory provisioned with `nnopt "
            "swap-provision --key-store DIR --swap-key-id ID --swap-key HEX`")
    if not key_store.is_dir():
        raise KeyStoreError(f"key store {key_store} is not a directory",
                            hint="provision it with `nnopt swap-provision --key-store DIR "
                            "--swap-key-id ID --swap-key HEX`")
    return key_store


def provision_tool() -> Path:
    """The host provisioning program (built once, cached by content)."""
    mbed = mbedtls_sources()
    return build(BuildSpec(
        target="host",
        sources=(nnrt_dir() / "harness" / "swap_provision_main.c",
                 nnrt_dir() / "src" / "swap" / "swap_psa.c"),
        include_dirs=(*mbed.include_dirs, nnrt_dir() / "include"),
        defines=library_defines(mbed, "host"),
        libraries=(mbedtls_library("host"),)))


def provision(store: Path, key_id: int, key: bytes, algorithm: int, *, usage: str = "d",
              policy: str | None = None, replace: bool = False) -> Path:
    """Import ``key`` as the persistent PSA key ``key_id`` for blobs of ``algorithm``
    (NNRT_SWAP_ALG_*) into the host key store ``store`` (created if needed); usage
    letters ``d``/``e``/``x`` (DECRYPT/ENCRYPT/EXPORT) and ``policy`` (another permitted
    algorithm: ``gcm``, ``ccm``, ``chachapoly``) exist for tests of keys that do not fit.
    Returns the ITS file written."""
    key_id = parse_key_id(str(key_id))
    store.mkdir(mode=0o700, parents=True, exist_ok=True)
    args = ["-i", str(key_id), "-k", key.hex(), "-a", str(algorithm), "-u", usage]
    if policy is not None:
        args += ["-p", policy]
    if replace:
        args.append("-f")
    code, out = _run_tool(store, args)
    if code == _ID_TAKEN:
        raise KeyStoreError(f"key id 0x{key_id:x} is already provisioned in {store}",
                            hint="pass --replace to overwrite it, or choose another id")
    if code != 0:
        raise KeyStoreError(f"provisioning key id 0x{key_id:x} into {store} failed: "
                            f"{out.strip()[-500:]}")
    path = its_file(store, key_id)
    path.chmod(0o600)  # the host stand-in keeps the key in clear: owner only
    return path


def deprovision(store: Path, key_id: int) -> None:
    """Destroy the key ``key_id`` in the host key store ``store`` (none there: no-op)."""
    code, out = _run_tool(store, ["-i", str(parse_key_id(str(key_id))), "-x"])
    if code != 0:
        raise KeyStoreError(f"destroying key id 0x{key_id:x} in {store} failed: "
                            f"{out.strip()[-500:]}")


def its_file(store: Path, key_id: int) -> Path:
    """The ITS file of a persistent key in the host key store (psa_its_file.c names
    each entry by its 64-bit uid as 16 hex digits; a key's uid is its id)."""
    return store / f"{0:08x}{key_id:08x}.psa_its"


def _run_tool(store: Path, args: list[str]) -> tuple[int, str]:
    exe = provision_tool()
    try:
        proc = subprocess.run([str(exe), *args], cwd=store, capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ToolchainError(f"cannot run the provisioning tool {exe}: {err}") from err
    return proc.returncode, proc.stdout + proc.stderr
