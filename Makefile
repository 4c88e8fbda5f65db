# Two commands do all the set-up on a fresh machine (see README.md):
#   make test   creates .venv if missing, installs svmtool with its test extras and the C programs
#               the cross-checks compare against (tools/install-anchors.sh, outside the
#               repository in ANCHORS), builds the wheel with its kernel extension (make aot),
#               runs the tests, then installs that wheel into fresh venvs -- the newest
#               dependencies, and the lowest that pyproject.toml declares -- and runs the
#               README's commands and the quick benchmarks there, outside the checkout
#               (tools/wheel-check.sh)
#   make demo   creates .venv if missing, installs svmtool, builds the kernel extension, runs
#               the main job on the bundled data
# (editable installs in "compat" mode: a .pth path entry, which imports 30 ms faster than the
# default import hook -- start-up time is what a cron job pays on every call; setuptools warns
# that the mode is transitional, which PIP_QUIET_BUILD keeps off the screen, and should it go
# away the install falls back to the default mode)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    := out
ANCHORS ?= $(or $(HOME),/tmp)/.cache/svmtool-anchors

.PHONY: test demo demo-steps bench fuzz clean venv anchors aot

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip 'setuptools>=77'

# the editable install leaves the kernel extension out (SVMTOOL_BUILD_KERNELS=0): make aot builds it
PIP_QUIET_BUILD := PYTHONWARNINGS=ignore SVMTOOL_BUILD_KERNELS=0

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(PIP_QUIET_BUILD) $(BIN)/python -m pip install -q -e . --config-settings editable_mode=compat \
	  || $(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(PIP_QUIET_BUILD) $(BIN)/python -m pip install -q -e '.[test]' --config-settings editable_mode=compat \
	  || $(BIN)/python -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.runtime

venv: $(VENV)/.runtime

# The wheel, built as `pip install .` builds it (setup.py: the kernel extension compiled by numba
# while the wheel is built; a few minutes; needs a C compiler), with this venv's numba; its
# extension and manifest are also unpacked into the checkout, so that the tests and the demo run
# what the wheel holds.  Commands whose kernels are all in the extension never import numba.
# Rebuilt when a source file changes; without it (or while it is out of date) svmtool runs on
# numba's JIT.
AOT     := svmtool/_kernels_aot.json
SOURCES := $(shell find svmtool -name '*.py' -not -path '*/__pycache__/*') setup.py pyproject.toml
$(AOT): $(SOURCES) | $(VENV)/.runtime
	rm -rf dist build
	$(BIN)/python -m pip wheel -q --no-deps --no-build-isolation -w dist .
	$(BIN)/python -m zipfile -e dist/svmtool-*.whl build/wheel-unpacked
	cp build/wheel-unpacked/svmtool/_kernels_aot* svmtool/

aot: $(AOT)

anchors: | $(BIN)/python
	@tools/install-anchors.sh "$(ANCHORS)" $(BIN)/python

# the tests in a worker process per core (pytest-xdist; at most TEST_WORKERS)
TEST_WORKERS ?= 4
test: $(VENV)/.test anchors $(AOT)
	PATH="$(ANCHORS)/bin:$$PATH" $(BIN)/python -m pytest -q -n auto --maxprocesses=$(TEST_WORKERS)
	PATH="$(ANCHORS)/bin:$$PATH" tools/wheel-check.sh $(PYTHON) dist

# The demo runs its steps twice: once quietly to fill numba's cache (a new install compiles its
# kernels there, once), then for the record, so the times it prints are every later run's.
demo: $(VENV)/.runtime
	@$(MAKE) -s --no-print-directory aot || echo "== svmtool runs on numba's JIT alone"
	@mkdir -p $(OUT)
	@echo "== warm numba's cache: the demo's commands once, quietly (compiles on a new install)"
	@$(MAKE) -s --no-print-directory demo-steps Q=-q >/dev/null
	@$(MAKE) -s --no-print-directory demo-steps
	@echo "models and predictions are in $(OUT)/"

Q ?=
demo-steps:
	@echo "== convert: text -> binary cache"
	$(BIN)/svmtool $(Q) convert data/a9a $(OUT)/a9a.cache
	@echo "== train on data/a9a (LIBLINEAR -s 1, C = 1), predict data/a9a.t"
	$(BIN)/svmtool $(Q) train -c 1 $(OUT)/a9a.cache $(OUT)/a9a.model
	$(BIN)/svmtool $(Q) predict data/a9a.t $(OUT)/a9a.model $(OUT)/a9a.t.predict
	@echo "== the same with L1-loss dual CD (-s 3) and a bias column, from text"
	$(BIN)/svmtool $(Q) train -s 3 -c 1 -B 1 data/a9a $(OUT)/a9a-s3.model
	$(BIN)/svmtool $(Q) predict data/a9a.t $(OUT)/a9a-s3.model $(OUT)/a9a-s3.t.predict
	@echo "== 5-fold cross validation on heart_scale"
	$(if $(Q),@: small data: no numba to warm,$(BIN)/svmtool train -v 5 data/heart_scale)

# make bench: the default suites of `svmtool bench` (svmtool/bench/suites/; `svmtool bench
# --list-suites`) on ../shared/data when present, else on data/; writes their sections of
# BENCHMARKS.md and the plots in bench-out/.  Never part of `make test`.
# BENCH_ARGS="--quick" for the bundled heart_scale only; BENCH_SUITES=dcd,newton for others.
BENCH_ARGS ?=
BENCH_SUITES ?= default
$(VENV)/.bench: pyproject.toml | $(BIN)/python
	$(PIP_QUIET_BUILD) $(BIN)/python -m pip install -q -e '.[bench]' --config-settings editable_mode=compat \
	  || $(BIN)/python -m pip install -q -e '.[bench]'
	touch $@ $(VENV)/.runtime

# coverage-guided fuzzing of the readers (atheris; not part of make test): FUZZ_SECONDS per target
fuzz: $(VENV)/.fuzz
	fuzz/run.sh $(BIN)/python fuzz-out $(FUZZ_TARGETS)

$(VENV)/.fuzz: pyproject.toml | $(BIN)/python
	$(PIP_QUIET_BUILD) $(BIN)/python -m pip install -q -e '.[fuzz]' --config-settings editable_mode=compat \
	  || $(BIN)/python -m pip install -q -e '.[fuzz]'
	touch $@ $(VENV)/.runtime

bench: $(VENV)/.bench
	$(BIN)/svmtool bench --suite $(BENCH_SUITES) --out bench-out --markdown BENCHMARKS.md $(BENCH_ARGS)

clean:
	rm -rf $(OUT) bench-out build dist *.egg-info svmtool/_kernels_aot*
