#!/usr/bin/env bash
# The Python suite (python/tests), run by `npm test`: a virtualenv under the checkout
# (.venv-test/, gitignored) with the exact versions of python/requirements-test.txt, the wheel
# built once in release mode (`maturin build --release`; the same cargo build `maturin develop
# --release` would run) and installed like a user would, then pytest. Exits non-zero when a test
# fails, and when pytest collects no test at all (its exit 5).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${TOOLGATE_PY_VENV:-.venv-test}"
PYTHON="${PYTHON:-python3}"
WHEELS=target/wheels-test

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements-test.txt

rm -rf "$WHEELS"
"$VENV/bin/maturin" build --release --quiet --out "$WHEELS"
wheel=$(ls "$WHEELS"/toolgate-*.whl)
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"

set +e
TOOLGATE_WHEEL="$PWD/$wheel" "$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "test-python: pytest collected no test" >&2
  exit 1
fi
exit "$rc"
