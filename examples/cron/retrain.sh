#!/usr/bin/env bash
# Nightly retrain of one model: warm start from the published model, a time budget, a validation
# gate, a JSON report and a JSON Lines log.  Exit status: 0 published, 3 refused by the gate (the
# published model untouched), 75 another run holds the model, 2 bad input or options, 1 failure.
#
#   retrain.sh DATA MODEL VALID
#
# Settings come from the environment (defaults in brackets): SVMTOOL [svmtool], SOLVER [newton],
# C [1], BIAS [1], TIME_LIMIT [3000] seconds, WAIT [60] seconds for a running job, MAX_DROP [1]
# accuracy points, MIN_ACCURACY [0] percent, REPORT [MODEL.report.json], LOG [MODEL.log.jsonl].
set -euo pipefail

if [ "$#" -ne 3 ]; then
    echo "usage: $0 DATA MODEL VALID" >&2
    exit 2
fi
data=$1
model=$2
valid=$3

svmtool=${SVMTOOL:-svmtool}
args=(train -q -s "${SOLVER:-newton}" -c "${C:-1}" -B "${BIAS:-1}"
      --time-limit "${TIME_LIMIT:-3000}" --wait "${WAIT:-60}"
      --validate "$valid" --max-drop "${MAX_DROP:-1}" --min-accuracy "${MIN_ACCURACY:-0}"
      --report "${REPORT:-$model.report.json}" --log "${LOG:-$model.log.jsonl}")
if [ -s "$model" ]; then
    args+=(--init-model "$model")       # yesterday's model: today's solve starts next to it
fi
exec "$svmtool" "${args[@]}" "$data" "$model"
