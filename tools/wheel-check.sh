#!/usr/bin/env bash
# The product as users install it (make test runs this after the test suite):
#   tools/wheel-check.sh PYTHON DIST
# DIST holds the wheel `make aot` built (with its kernel extension). It is installed, with pip as
# a user runs it, into fresh venvs outside the checkout:
#   latest  PYTHON, the newest dependencies pip resolves
#   floor   PYTHON, every dependency at the lowest version pyproject.toml declares
#   oldest  the lowest Python pyproject.toml declares (when this machine has it), every dependency
#           at its floor, from a wheel built for that Python without the extension: the JIT path
# In each: the README's main commands and Python example, pasted as written in a folder holding
# a copy of data/, then `svmtool bench --quick` and `--list-suites`; the state of the kernel
# extension is printed. Any failure stops with a non-zero exit.
set -euo pipefail
PYTHON=${1:?usage: wheel-check.sh PYTHON DIST}
DIST=${2:?usage: wheel-check.sh PYTHON DIST}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WHEEL=$(ls "$DIST"/svmtool-*.whl | head -1)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/svmtool-wheel-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# the floors: name==version for every `name>=version` of [project] dependencies
FLOORS=$("$PYTHON" - "$ROOT/pyproject.toml" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
deps = re.search(r'^dependencies = \[(.*?)\]', text, re.S | re.M).group(1)
print(" ".join(f"{n}=={v}" for n, v in re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9.]+)"', deps)))
EOF
)
LOWEST=$(sed -n 's/^requires-python = ">=\([0-9.]*\)"/\1/p' "$ROOT/pyproject.toml")

readme_block() {   # the indented code block after a README heading, one command a line
  "$PYTHON" - "$ROOT/README.md" "$1" <<'EOF'
import re, sys
section = open(sys.argv[1], encoding="utf-8").read().split(sys.argv[2], 1)[1]
block = re.search(r"\n\n((?:    .*\n)+)", section).group(1)
for line in block.splitlines():
    print(line[4:].split("  #", 1)[0].strip())
EOF
}

check() {   # check NAME VENV: the README's commands and the quick benchmarks in that venv
  local name=$1 venv=$2 here="$WORK/$1-run"
  mkdir -p "$here"
  cp -r "$ROOT/data" "$here/data"
  cd "$here"
  export PATH="$venv/bin:$PATH"
  echo "== $name: $("$venv/bin/python" -c 'import sys; from importlib.metadata import version; import svmtool._aot as a; print("Python", sys.version.split()[0], *(f"{n} {version(n)}" for n in ("numpy", "scipy", "numba", "click", "tqdm")), "| kernel extension:", a.state(), a.report().get("variant", ""))')"
  while IFS= read -r command; do
    echo "   \$ $command"
    /bin/sh -c "$command" > "$here/out.txt" 2>&1 || { cat "$here/out.txt"; echo "== $name: FAILED: $command"; exit 1; }
  done < <(readme_block "## The main commands")
  readme_block "## Python" | sed -n '/^import svmtool/,/^svmtool.save_model/p' > "$here/example.py"
  "$venv/bin/python" "$here/example.py" || { echo "== $name: FAILED: README's Python example"; exit 1; }
  svmtool bench --list-suites > /dev/null
  svmtool bench --quick --suite dcd --out "$here/bench-out" --markdown "$here/BENCH.md" > "$here/out.txt" 2>&1 \
    || { cat "$here/out.txt"; echo "== $name: FAILED: svmtool bench --quick"; exit 1; }
  test "$(wc -l < a9a.predict)" -eq 16281
  cd "$ROOT"
  echo "== $name: the README's commands, its Python example and the quick benchmarks passed"
}

fresh() {   # fresh VENV PYTHON PIP-ARGS...: a new venv with the given packages
  local venv=$1 py=$2; shift 2
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" 2>&1 \
    | grep -v "^WARNING: Location .* is ignored" || true
  test -x "$venv/bin/svmtool"
}

fresh "$WORK/latest" "$PYTHON" "$WHEEL"
check latest "$WORK/latest"

# shellcheck disable=SC2086
fresh "$WORK/floor" "$PYTHON" "$WHEEL" $FLOORS
check floor "$WORK/floor"

OLD=""     # a working python$LOWEST: on PATH, or one pyenv keeps (its shim may not select it)
for candidate in "python$LOWEST" "${PYENV_ROOT:-${HOME:-/root}/.pyenv}"/versions/"$LOWEST".*/bin/"python$LOWEST"; do
  if [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$LOWEST" ]; then
    OLD=$candidate
    break
  fi
done
if [ -n "$OLD" ]; then
  mkdir -p "$WORK/dist-old"
  SVMTOOL_BUILD_KERNELS=0 "$OLD" -m pip wheel -q --no-deps -w "$WORK/dist-old" "$ROOT"
  # shellcheck disable=SC2086
  fresh "$WORK/oldest" "$OLD" "$WORK"/dist-old/svmtool-*.whl $FLOORS
  SVMTOOL_AOT=0 check oldest "$WORK/oldest"      # (a stray extension would not be used)
else
  echo "== oldest: skipped: this machine has no python$LOWEST (requires-python's floor)"
fi
