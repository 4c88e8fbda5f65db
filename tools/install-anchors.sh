#!/bin/sh
# Installs the C programs that the cross-checks in tests/ compare svmtool against, outside the
# repository, so that `make test` runs those checks instead of skipping them:
#   - Debian's liblinear-tools, libsvm-tools and libocas-tools (liblinear-train, svm-train,
#     svm-predict, svm-scale, svmocas), with apt-get when run as root on a Debian machine;
#   - SVMlight 6.02 (svm_learn, svm_classify), built from the PyPI sdist of `svmlight` 0.4, whose
#     lib/ folder is SVMlight 6.02's C source, into DIR/bin.
# SVMperf 3.00 is in no package registry: its checks skip (build it by hand and put
# svm_perf_learn / svm_perf_classify on PATH to run them).
# Nothing here is fatal: a program that cannot be had is named in one line, and the tests that
# need it skip with that reason.
#
#   tools/install-anchors.sh DIR PYTHON
set -u
dir=$1
python=$2

missing=""
for prog in liblinear-train liblinear-predict svm-train svm-predict svm-scale svmocas; do
    command -v "$prog" >/dev/null 2>&1 || missing="$missing $prog"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing Debian's liblinear-tools libsvm-tools libocas-tools (for:$missing)"
        export DEBIAN_FRONTEND=noninteractive
        pkgs="liblinear-tools libsvm-tools libocas-tools"
        apt-get install -y -q $pkgs >/dev/null 2>&1 \
            || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $pkgs >/dev/null 2>&1; } \
            || echo "note: apt-get could not install $pkgs: the cross-checks against them skip"
    else
        echo "note:$missing not installed (as root on Debian, make test installs them):" \
             "the cross-checks against them skip"
    fi
fi

if [ -x "$dir/bin/svm_learn" ] && [ -x "$dir/bin/svm_classify" ]; then
    exit 0
fi
if ! command -v cc >/dev/null 2>&1; then
    echo "note: no C compiler: SVMlight 6.02 not built, its cross-checks skip"
    exit 0
fi
echo "== building SVMlight 6.02 (PyPI sdist svmlight 0.4, lib/) into $dir/bin"
work=$(mktemp -d) || exit 0
trap 'rm -rf "$work"' EXIT
if ! "$python" -m pip download -q --no-deps --no-binary :all: svmlight==0.4 -d "$work" >/dev/null 2>&1; then
    echo "note: could not download the svmlight 0.4 sdist from PyPI: SVMlight's cross-checks skip"
    exit 0
fi
tar xzf "$work"/svmlight-0.4.tar.gz -C "$work" || exit 0
src="$work/svmlight-0.4/lib"
mkdir -p "$dir/bin" || exit 0
# -fcommon: SVMlight 6.02 defines its globals in a header, which GCC 10 and later reject by default
if cc -O3 -fcommon -o "$dir/bin/svm_learn" "$src/svm_learn_main.c" "$src/svm_learn.c" \
        "$src/svm_common.c" "$src/svm_hideo.c" -lm >/dev/null 2>&1 \
   && cc -O3 -fcommon -o "$dir/bin/svm_classify" "$src/svm_classify.c" "$src/svm_common.c" \
        -lm >/dev/null 2>&1; then
    :
else
    rm -f "$dir/bin/svm_learn" "$dir/bin/svm_classify"
    echo "note: SVMlight 6.02 did not build: its cross-checks skip"
fi
exit 0
