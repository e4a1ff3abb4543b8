#!/usr/bin/env bash
# Fuzz smoke: builds every cargo-fuzz target and runs each for FUZZ_SECONDS (default 10, capped so
# that all runs together take about FUZZ_BUDGET seconds) on a temporary copy of its seed corpus,
# so the committed corpus is never touched. Exits non-zero when a target crashes (the input is
# kept in fuzz/artifacts/<target>/ and printed as base64) or fails to build. If cargo-fuzz
# cannot be installed, prints a NOTICE and exits 0.
#
# Environment:
#   FUZZ_SECONDS     seconds per target (default 10)
#   FUZZ_BUDGET      seconds for all runs together (default 60): each target gets
#                    min(FUZZ_SECONDS, FUZZ_BUDGET / number of targets), at least 2
#   FUZZ_TARGETS     space-separated targets (default: every fuzz_targets/*.rs)
#   FUZZ_SANITIZER   address (default) | none | ...: passed to `cargo fuzz --sanitizer`
#   FUZZ_TIMEOUT     libFuzzer per-input timeout in seconds (default 30)
set -euo pipefail

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$FUZZ_DIR/.." && pwd)"
SECONDS_PER_TARGET="${FUZZ_SECONDS:-10}"
BUDGET="${FUZZ_BUDGET:-60}"
SANITIZER="${FUZZ_SANITIZER:-address}"
TIMEOUT="${FUZZ_TIMEOUT:-30}"
t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

if ! command -v cargo >/dev/null 2>&1; then
  echo "NOTICE: fuzz smoke skipped: cargo is not installed"
  exit 0
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz smoke: installing cargo-fuzz (cargo install cargo-fuzz --locked)"
  if ! cargo install cargo-fuzz --locked; then
    echo "NOTICE: fuzz smoke skipped: cargo-fuzz is missing and 'cargo install cargo-fuzz --locked' failed"
    exit 0
  fi
fi
echo "fuzz smoke: $(cargo fuzz --version) ($(elapsed))"

# cargo-fuzz needs nightly flags (-Zsanitizer, sanitizer coverage): use a nightly toolchain
# when rustup has one, else let the default toolchain accept them.
if command -v rustup >/dev/null 2>&1 && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  FUZZ=(cargo +nightly fuzz)
  echo "fuzz smoke: using $(rustc +nightly --version)"
else
  export RUSTC_BOOTSTRAP=1
  FUZZ=(cargo fuzz)
  echo "fuzz smoke: no nightly toolchain; using RUSTC_BOOTSTRAP=1 with $(rustc --version)"
fi

if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a TARGETS <<<"$FUZZ_TARGETS"
else
  TARGETS=()
  for f in "$FUZZ_DIR"/fuzz_targets/*.rs; do
    TARGETS+=("$(basename "$f" .rs)")
  done
fi

share=$(( BUDGET / ${#TARGETS[@]} ))
[ "$share" -ge 2 ] || share=2
if [ "$share" -lt "$SECONDS_PER_TARGET" ]; then
  echo "fuzz smoke: ${#TARGETS[@]} targets in a ${BUDGET}s budget: ${share}s each (FUZZ_SECONDS=$SECONDS_PER_TARGET capped; raise FUZZ_BUDGET for longer runs)"
  SECONDS_PER_TARGET=$share
fi

# cargo-fuzz resolves paths from the project root; --fuzz-dir makes it independent of cwd.
cd "$ROOT"

echo "fuzz smoke: building ${TARGETS[*]} (sanitizer: $SANITIZER) ($(elapsed))"
"${FUZZ[@]}" build --fuzz-dir "$FUZZ_DIR" --sanitizer "$SANITIZER"
echo "fuzz smoke: built ($(elapsed))"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/toolgate-fuzz.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

failed=()
for target in "${TARGETS[@]}"; do
  corpus="$WORK/corpus-$target"
  artifacts="$FUZZ_DIR/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  if compgen -G "$FUZZ_DIR/corpus/$target/seed-*" >/dev/null; then
    cp "$FUZZ_DIR"/corpus/"$target"/seed-* "$corpus"/
  fi
  dict=()
  if [ -f "$FUZZ_DIR/dict/json.dict" ]; then
    dict=("-dict=$FUZZ_DIR/dict/json.dict")
  fi
  before="$(ls -A "$artifacts")"
  echo "fuzz smoke: running $target for ${SECONDS_PER_TARGET}s ($(elapsed))"
  if "${FUZZ[@]}" run --fuzz-dir "$FUZZ_DIR" --sanitizer "$SANITIZER" "$target" "$corpus" -- \
      -max_total_time="$SECONDS_PER_TARGET" -timeout="$TIMEOUT" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "${dict[@]}"; then
    echo "fuzz smoke: $target ok ($(elapsed))"
  else
    echo "fuzz smoke: $target FAILED ($(elapsed))"
    failed+=("$target")
    for f in "$artifacts"/*; do
      [ -f "$f" ] || continue
      case $'\n'"$before"$'\n' in *$'\n'"$(basename "$f")"$'\n'*) continue ;; esac
      echo "--- $f (base64) ---"
      base64 -w0 "$f"
      echo
      echo "reproduce: cargo +nightly fuzz run --fuzz-dir fuzz $target $f"
    done
  fi
done

echo "fuzz smoke: done in $(elapsed)"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz smoke: crashed: ${failed[*]}"
  exit 1
fi
