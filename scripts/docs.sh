#!/usr/bin/env bash
# Build the documentation site (mkdocs.yml, pages in docs/) into build/docs/. Strict: any
# warning (a broken link, a page missing from the nav) fails the build. The command-line
# reference is generated from nnopt's argument parser during the build.
# Uses .venv's mkdocs (scripts/install.sh installs it), else the one on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
MKDOCS=.venv/bin/mkdocs
[ -x "$MKDOCS" ] || MKDOCS=mkdocs
export PYTHONPATH="$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}"
"$MKDOCS" build --strict --clean --config-file mkdocs.yml --site-dir build/docs "$@"
echo "docs: build/docs/index.html"
