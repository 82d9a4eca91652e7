#!/usr/bin/env bash
# Print the environment that makes `west build` / `west twister` work for a Zephyr board
# on this machine, as `export VAR=VALUE` lines:
#
#   eval "$(scripts/zephyr-env.sh nucleo_h743zi)"
#   west build -b nucleo_h743zi nnopt/samples/hello
#
# BOARD is one of nnopt's boards (boards/nnopt/*.yaml) or any Zephyr board target. Its
# architecture comes from its devicetree's CPU (`nnopt board BOARD --json`: the
# compatible of /cpus/cpu@0, scripts/nnopt/devicetree.py), not from a list of boards.
#
# The Zephyr tree: ZEPHYR_BASE, else NNOPT_ZEPHYR_WORKSPACE/zephyr, else the west
# workspace around the current directory. Outside a west workspace (a tree of
# ../shared/zephyr/make-workspace.sh) ZEPHYR_MODULES lists the modules around it (with
# modules/lib/picolibc, which Zephyr builds from source for a toolchain without its own
# picolibc: lib/libc/picolibc/Kconfig, PICOLIBC_USE_MODULE) and this checkout.
#
# The toolchain, first that applies:
#   - the Zephyr SDK when one is installed (ZEPHYR_SDK_INSTALL_DIR, or ~/zephyr-sdk-*,
#     /opt/zephyr-sdk-*): ZEPHYR_TOOLCHAIN_VARIANT=zephyr (cmake/modules/FindZephyr-sdk.cmake);
#   - Arm: Debian's gcc-arm-none-eabi as gnuarmemb (cmake/toolchain/gnuarmemb/generic.cmake,
#     GNUARMEMB_TOOLCHAIN_PATH = the prefix of bin/arm-none-eabi-gcc);
#   - RISC-V: the host riscv64-unknown-elf GCC through nnopt's copy of Zephyr's
#     cross-compile variant (zephyr/toolchain/, printed by scripts/zephyr-env-riscv.sh).
#
# Exit status 1 (and a message on stderr, nothing on stdout) when the board or a
# toolchain for it cannot be found.
set -euo pipefail

usage() {
    echo "usage: $0 BOARD   (e.g. nucleo_h743zi, nrf52840dk/nrf52840, mps2/an385, hifive1)" >&2
    exit 1
}
[ $# -eq 1 ] || usage
case "$1" in -h|--help) usage ;; esac
BOARD=$1
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-}
if [ -z "$PY" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then PY=$REPO/.venv/bin/python; else PY=python3; fi
fi

die() { echo "zephyr-env.sh: error: $1" >&2; [ -n "${2:-}" ] && echo "hint: $2" >&2; exit 1; }

# The Zephyr tree and whether west manages its modules.
ZB=${ZEPHYR_BASE:-}
if [ -z "$ZB" ] && [ -n "${NNOPT_ZEPHYR_WORKSPACE:-}" ]; then ZB=$NNOPT_ZEPHYR_WORKSPACE/zephyr; fi
if [ -z "$ZB" ]; then
    d=$PWD
    while [ "$d" != / ]; do
        if [ -d "$d/.west" ] && [ -f "$d/zephyr/VERSION" ]; then ZB=$d/zephyr; break; fi
        d=$(dirname "$d")
    done
fi
[ -n "$ZB" ] && [ -f "$ZB/VERSION" ] || die "no Zephyr tree" \
    "set ZEPHYR_BASE (or NNOPT_ZEPHYR_WORKSPACE to a workspace), or run inside a west workspace"
ZB=$(cd "$ZB" && pwd)
TOP=$(dirname "$ZB")

# The board's CPU from its devicetree (or nnopt's board file); its progress and errors
# go to stderr.
if ! INFO=$(ZEPHYR_BASE=$ZB PYTHONPATH="$REPO/scripts${PYTHONPATH:+:$PYTHONPATH}" \
        "$PY" -m nnopt.cli board "$BOARD" --json); then
    exit 1
fi
CPU=$(printf '%s' "$INFO" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["cpu"])')
case "$CPU" in
    cortex-a*) ARCH=arm64 ;;
    cortex-*) ARCH=arm ;;
    riscv*|rv32*|rv64*) ARCH=riscv ;;
    *) ARCH=unknown ;;
esac

echo "# nnopt: Zephyr environment for $BOARD ($CPU, arch $ARCH) -- eval \"\$($0 $BOARD)\""
echo "export ZEPHYR_BASE=$ZB"
if [ ! -d "$TOP/.west" ]; then
    # No west: the modules at west's places around the tree, and this checkout.
    if [ -n "${ZEPHYR_MODULES:-}" ]; then
        MODS=$ZEPHYR_MODULES
    else
        MODS=""
        for m in "$TOP"/modules/*/* "$TOP"/optional/modules/*/*; do
            [ -d "$m" ] && MODS="${MODS:+$MODS;}$m"
        done
    fi
    case ";$MODS;" in *";$REPO;"*) ;; *) MODS="${MODS:+$MODS;}$REPO" ;; esac
    echo "export ZEPHYR_MODULES=\"$MODS\""
fi

# The Zephyr SDK wins when there is one.
SDK=${ZEPHYR_SDK_INSTALL_DIR:-}
if [ -z "$SDK" ]; then
    for d in "$HOME"/zephyr-sdk-* /opt/zephyr-sdk-* /usr/local/zephyr-sdk-*; do
        if [ -f "$d/sdk_version" ]; then SDK=$d; fi
    done
fi
if [ -n "$SDK" ] && [ -f "$SDK/sdk_version" ]; then
    echo "export ZEPHYR_TOOLCHAIN_VARIANT=zephyr"
    echo "export ZEPHYR_SDK_INSTALL_DIR=$SDK"
    exit 0
fi

case "$ARCH" in
    arm)
        GCC=$(command -v arm-none-eabi-gcc || true)
        [ -n "$GCC" ] || die "no Arm toolchain for $BOARD" \
            "apt-get install gcc-arm-none-eabi (gnuarmemb), or install the Zephyr SDK"
        PREFIX=$(dirname "$(dirname "$(readlink -f "$GCC")")")
        echo "export ZEPHYR_TOOLCHAIN_VARIANT=gnuarmemb"
        echo "export GNUARMEMB_TOOLCHAIN_PATH=$PREFIX"
        ;;
    riscv)
        # RISC-V: Debian's riscv64-unknown-elf GCC through nnopt's copy of Zephyr's
        # cross-compile variant (TOOLCHAIN_ROOT, libgcc of the rv32imac/ilp32 multilib):
        # scripts/zephyr-env-riscv.sh says why and prints the lines.
        echo "# RISC-V: the host riscv64-unknown-elf GCC through nnopt's cross-compile variant"
        "$(dirname "${BASH_SOURCE[0]}")/zephyr-env-riscv.sh" ||
            die "no RISC-V toolchain for $BOARD" \
                "apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf, or install the Zephyr SDK"
        ;;
    *)
        die "no toolchain known for $BOARD (cpu $CPU)" \
            "install the Zephyr SDK (ZEPHYR_SDK_INSTALL_DIR) and run this again"
        ;;
esac
