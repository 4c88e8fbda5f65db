#!/usr/bin/env bash
# Run every fuzz target for FUZZ_SECONDS each, one after another (see fuzz/README.md).
#   fuzz/run.sh PYTHON OUT_DIR [TARGET ...]
# Prints, per target, libFuzzer's run count and time; exits 1 if any target found something
# (the input is kept in OUT_DIR/crashes/TARGET/).
set -uo pipefail
py=$1 out=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(text-python text-jit model cache ranges compressed)
secs=${FUZZ_SECONDS:-240}
"$py" "$(dirname "$0")/seed.py" "$out/seeds" || exit 1
status=0
for t in "${targets[@]}"; do
  mkdir -p "$out/corpus/$t" "$out/crashes/$t"
  cp -n "$out/seeds/$t/"* "$out/corpus/$t/" 2>/dev/null
  "$py" "$(dirname "$0")/fuzz_targets.py" "$t" -max_total_time="$secs" -timeout=20 \
    -rss_limit_mb=4096 -artifact_prefix="$out/crashes/$t/" "$out/corpus/$t" > "$out/$t.log" 2>&1
  rc=$?
  runs=$(grep -Eo '^Done [0-9]+ runs in [0-9]+ second' "$out/$t.log" | tail -1)
  echo "$t: ${runs:-no summary} (exit $rc)"
  if [ $rc -ne 0 ]; then
    status=1
    grep -E -A12 'Uncaught Python exception|ERROR: libFuzzer' "$out/$t.log" | head -30
  fi
done
exit $status
