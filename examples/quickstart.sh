#!/usr/bin/env bash
# The commands a LIBLINEAR / SVMperf / LIBSVM user runs, on the bundled data.
# Run from the repository root after `make demo` (which creates .venv/bin/svmtool).
set -euo pipefail
svmtool=${SVMTOOL:-.venv/bin/svmtool}
out=${OUT:-out/examples}
mkdir -p "$out"

# LIBLINEAR's train / predict, same flags, same model format
$svmtool train -s 1 -c 1 data/a9a "$out/a9a.model"
$svmtool predict data/a9a.t "$out/a9a.model" "$out/a9a.predict"

# a binary cache loads near memory speed; every command takes it like text
$svmtool convert data/a9a "$out/a9a.cache"
$svmtool train -q -s 2 "$out/a9a.cache" "$out/a9a-newton.model"

# logistic regression with probabilities, as LIBLINEAR's -s 0 / predict -b 1
$svmtool train -q -s 0 data/a9a "$out/a9a-lr.model"
$svmtool predict -b 1 data/a9a.t "$out/a9a-lr.model" "$out/a9a-lr.proba"
head -3 "$out/a9a-lr.proba"

# SVMperf's 1-slack cutting plane and OCAS, in LIBLINEAR's C convention
$svmtool train -s ocas --line-search tca data/a9a "$out/a9a-ocas.model"

# scale like svm-scale, keeping the ranges for the test set
$svmtool convert --scale -1,1 --save-ranges "$out/heart.range" data/heart_scale "$out/heart.scaled"

# a kernel SVM (LIBSVM's flags), written as a LIBSVM model
$svmtool train -s kernel -t 2 -g 0.5 -c 4 data/heart_scale "$out/heart-rbf.model"
$svmtool predict data/heart_scale "$out/heart-rbf.model" "$out/heart-rbf.predict"

# from a pipe (no C trainer can read one), with cross validation
gzip -c data/heart_scale | $svmtool train -v 5 -
