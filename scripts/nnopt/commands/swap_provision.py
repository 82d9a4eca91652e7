"""``nnopt swap-provision``: put the swap key into a host key store under a PSA key id."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..swap.pipeline import configured_key_for
from ..swap.provision import deprovision, parse_key_id, provision
from ..swap.sealed_blob import ALGORITHMS, algorithm_id

DESCRIPTION = """\
Development flow for firmware built with --swap-key-id: import the swap key as a
persistent PSA key (psa_import_key() with PSA_KEY_LIFETIME_PERSISTENT, the blob's AEAD
as the only permitted algorithm, usage DECRYPT only) into a host key store: a
directory of PSA Internal Trusted Storage files written by nnopt's host Mbed TLS build.
`nnopt run --target host --swap-key-id ID --swap-key-store DIR` then runs by key id.

The host key store keeps the key in clear in a file (mode 0600): it stands in for a
device's key store, it is not one. A device is provisioned once, at manufacturing, by
firmware that makes the same psa_import_key() call into its own ITS (TF-M, or Zephyr's
CONFIG_SECURE_STORAGE; see the NNRT_SWAP help in modules/nnrt/Kconfig).

The key: --swap-key, --swap-key-file, $NNOPT_SWAP_KEY or $NNOPT_SWAP_KEY_FILE, as for
`nnopt optimize` (the key the blob is sealed with)."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("swap-provision", help="import the swap key into a host key store "
                       "under a PSA key id (for --swap-key-id builds)",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--key-store", type=Path, required=True, metavar="DIR",
                   help="the host key store directory (created if needed)")
    p.add_argument("--swap-key-id", required=True, metavar="ID",
                   help="PSA key id, decimal or 0x hex in 0x1..0x3fffffff")
    p.add_argument("--algorithm", choices=sorted(ALGORITHMS), metavar="ALG",
                   help="the blob's AEAD: " + " or ".join(sorted(ALGORITHMS))
                   + " (required unless --remove)")
    p.add_argument("--swap-key", metavar="HEX", help="the key, hex")
    p.add_argument("--swap-key-file", type=Path, metavar="PATH",
                   help="file holding the key as hex text or raw bytes")
    p.add_argument("--replace", action="store_true",
                   help="overwrite a key already provisioned under this id")
    p.add_argument("--remove", action="store_true",
                   help="destroy the key of this id instead (psa_destroy_key)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    key_id = parse_key_id(args.swap_key_id)
    if args.remove:
        deprovision(args.key_store, key_id)
        print(f"removed key id 0x{key_id:08x} from {args.key_store}")
        return 0
    if args.algorithm is None:
        raise UsageError("swap-provision needs --algorithm",
                         hint="the blob's AEAD: " + " or ".join(sorted(ALGORITHMS)) +
                         " (the board's external_flash.crypto)")
    alg = algorithm_id(args.algorithm)
    cfg = configured_key_for(alg, key_hex=args.swap_key, key_file=args.swap_key_file)
    if cfg is None:
        raise UsageError("no swap key given",
                         hint="pass --swap-key HEX or --swap-key-file PATH (or set "
                         "$NNOPT_SWAP_KEY): the key the blob is sealed with")
    path = provision(args.key_store, key_id, cfg[0], alg, replace=args.replace)
    print(f"provisioned key id 0x{key_id:08x} ({args.algorithm}, usage DECRYPT, persistent) "
          f"from {cfg[1]} in {path}")
    return 0
