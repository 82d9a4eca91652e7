#!/usr/bin/env bash
# The one command that runs all tests: installs what is missing, then lint (ruff),
# types (mypy --strict), the documentation site (scripts/docs.sh: strict, warnings fail)
# and the test suite (pytest -W error). Extra arguments go to pytest (e.g.
# scripts/test.sh -k arena); tests run on every core (pytest-xdist).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
echo "== ruff"
.venv/bin/ruff check scripts tests benchmarks
echo "== mypy"
.venv/bin/mypy
echo "== docs"
./scripts/docs.sh
echo "== pytest"
.venv/bin/python -m pytest -W error -n auto "$@"
