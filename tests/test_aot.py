"""svmtool's kernels compiled ahead of time (svmtool/_aot.py, built with the wheel by
svmtool/_aot_build.py; `make aot` unpacks the wheel's extension into the checkout): the models
numba's JIT trains -- byte for byte where the kernels are exact IEEE arithmetic, the same optimum
where a kernel lets LLVM fuse and reorder (``fastmath``: the extension's generic code and the
JIT's code for this CPU round differently); threads released from the GIL; the main commands
without numba; an out-of-date extension never used."""

import json
import math
import os
import subprocess
import sys

import pytest

from svmtool import _aot
from tests.svmtool_proc import svmtool

ENV_JIT = dict(os.environ, SVMTOOL_AOT="0")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from svmtool._aot_build import make_data

    if _aot.state() != "used":
        pytest.skip(f"the kernel extension is not in use ({_aot.state()}): `make aot` builds it "
                    "(make test does)")
    # the build's own generator, a different seed: new numbers, the same kinds of files
    return make_data(str(tmp_path_factory.mktemp("aot")), seed=11)


# (command, data file, options): the solvers of every family, the LIBSVM/SVMlight/SVMperf lines.
# Kernels of exact arithmetic (no fastmath): the same bytes from either compiler.
EXACT = [
    ("train", "binary", []),
    ("train", "binary", ["-c", "1000", "-e", "0.001"]),
    ("train", "multi", ["-s", "3"]),
    ("train", "binary", ["-s", "lr"]),
    ("train", "binary", ["-s", "l1r-lr"]),
    ("train", "regression", ["-s", "svr-l2-dual"]),
    ("train", "binary-3000", ["-s", "c_svc", "-g", "0.5"]),
    ("svm-train", "multi-3000", ["-c", "4", "-g", "0.5"]),
    ("svm-train", "regression-3000", ["-s", "3", "-g", "0.5"]),
]
# Solvers whose kernels are fastmath (the cutting planes' passes, the rbf blocks): each run
# stops within its tolerance of the same optimum, so the runs' [lower bound, primal] intervals
# meet, and their models label the data alike.
CLOSE = [
    ("train", "binary", ["-s", "cp"]),
    ("train", "binary", ["-s", "ocas"]),
    ("train", "multi", ["-s", "ocas-mc"]),
    ("train", "binary", ["-s", "dcsvm", "-g", "0.5"]),
    ("train", "binary", ["-s", "dcsvm", "--early", "-g", "0.5"]),
    ("train", "multi", ["-s", "dcsvm", "--early", "-g", "0.5"]),
    ("svm_perf_learn", "binary", ["-c", "325.61", "-e", "0.1", "--b", "0"]),
]


def _run(args, env, report=None):
    extra = ["--report", report] if report is not None else []
    out = svmtool(*args, *extra, env=env, timeout=600)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    return out


def _manifest():
    with open(_aot.MANIFEST, encoding="utf-8") as fh:
        return json.load(fh)


def _levels():
    """The CPU names of the extension's variants that this CPU runs, plainest first."""
    return _aot.runnable_levels()


def _both(data, tmp_path, command, which, options, every_level=False):
    """{mode: (model bytes, run record or None)} of the same command on the JIT ("jit") and on
    the twins of the variant chosen by default ("aot"); ``every_level``: also of each other
    variant this CPU runs ("aot-<cpu>", asked for by SVMTOOL_AOT)."""
    got = {}
    modes = [("jit", ENV_JIT, None), ("aot", None, _levels()[-1])]
    if every_level:
        modes += [(f"aot-{cpu}", dict(os.environ, SVMTOOL_AOT=cpu), cpu)
                  for cpu in _levels()[:-1]]
    for mode, env, level in modes:
        model = tmp_path / f"{mode}.model"
        report = tmp_path / f"{mode}.json" if command == "train" else None
        _run([command, *options, data[which], model], env, report)
        record = json.loads(report.read_text()) if report is not None else None
        if record is not None:
            if level is not None:
                assert record["startup"]["aot"]["state"] == "used"
                assert record["startup"]["aot"]["kernels"] > 0
                assert record["startup"]["aot"]["variant"] == level
            else:
                assert "numba" in record["startup"]
        got[mode] = (model, record)
    return got


@pytest.mark.parametrize("command,which,options", EXACT,
                         ids=[" ".join([c[0], *c[2]]) for c in EXACT])
def test_twins_train_the_models_numba_trains(data, tmp_path, command, which, options):
    got = _both(data, tmp_path, command, which, options, every_level=True)
    for mode in got:
        assert got[mode][0].read_bytes() == got["jit"][0].read_bytes(), mode


@pytest.mark.parametrize("command,which,options", CLOSE,
                         ids=[" ".join([c[0], *c[2]]) for c in CLOSE])
def test_fastmath_twins_reach_the_optimum_numba_reaches(data, tmp_path, command, which, options):
    got = _both(data, tmp_path, command, which, options)
    # (DC-SVM's early model solves the subproblems of its clusters, which float32 kernel sums
    # may draw a little differently: its labels are compared, not its objectives)
    if command == "train" and "--early" not in options:
        subs = [rec["subproblems"] for _, rec in got.values()]
        assert len(subs[0]) == len(subs[1])
        for a, b in zip(*subs):
            assert a["converged"] and b["converged"], (a, b)
            finite = all(x.get(k) is not None and math.isfinite(x[k])
                         for x in (a, b) for k in ("primal", "dual"))
            if finite:
                # both intervals hold the optimum: they meet (up to rounding)
                slack = 1e-9 * max(1.0, abs(a["primal"]))
                assert max(a["dual"], b["dual"]) <= min(a["primal"], b["primal"]) + slack, (a, b)
            else:
                # a dual solver that reports its dual objective alone: both stop within -e
                key = "primal" if math.isfinite(a.get("primal", math.nan)) else "dual"
                assert a[key] == pytest.approx(b[key], rel=1e-3), (a, b)
    labels = {}
    for mode, (model, _) in got.items():
        out = tmp_path / f"{mode}.out"
        _run(["predict", data[which.split("-")[0]], model, out], ENV_JIT)
        labels[mode] = out.read_text().split()
    same = sum(x == y for x, y in zip(labels["jit"], labels["aot"]))
    assert len(labels["jit"]) == len(labels["aot"]) and same >= 0.99 * len(labels["jit"])


@pytest.mark.parametrize("which,options", [
    ("binary-3000", ["-s", "c_svc", "-g", "0.5"]),
    ("multi", ["-s", "dcsvm", "--early", "-g", "0.5"]),     # nearest centres, local models
])
def test_predictions_are_the_same(data, tmp_path, which, options):
    model = tmp_path / "m"
    _run(["train", *options, data[which], model], ENV_JIT)
    got = {}
    for mode, env in (("jit", ENV_JIT), ("aot", None)):
        out = tmp_path / f"{mode}.out"
        _run(["predict", data[which.split("-")[0]], model, out], env)
        got[mode] = out.read_bytes()
    assert got["aot"] == got["jit"]


_NO_NUMBA = """
import sys
from svmtool.cli import run
rc = run(sys.argv[1:])
print(rc, 'numba' in sys.modules, 'llvmlite' in sys.modules)
"""


@pytest.mark.parametrize("args", [
    ["svm-train", "-c", "32", "-g", "2", "-m", "1000"],
    ["train", "-c", "1000", "-e", "0.001"],
    ["train", "-s", "ocas"],
    ["train", "-s", "dcsvm", "--early", "-g", "0.5"],
])
def test_main_commands_never_import_numba(data, tmp_path, args):
    """A 1.5 MB text file (the jitted reader's size) trained by whole commands in a fresh
    process: every kernel they call has its twin, so numba is never imported."""
    out = subprocess.run([sys.executable, "-c", _NO_NUMBA, "-q", *args, data["binary"],
                          str(tmp_path / "m")], capture_output=True, text=True, timeout=600,
                         check=False)
    assert out.stdout.split() == ["0", "False", "False"], out.stdout + out.stderr[-2000:]


_STALE = """
import json, sys
from svmtool import _aot
_aot.MANIFEST = sys.argv[1]
print(json.dumps(_aot.state()))
"""


def test_an_extension_whose_sources_changed_is_not_used(tmp_path):
    with open(_aot.MANIFEST, encoding="utf-8") as fh:
        manifest = json.load(fh)
    rel = min(manifest["sources"])
    manifest["sources"][rel] = "0" * 64            # as if the file had been edited since
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    out = subprocess.run([sys.executable, "-c", _STALE, str(path)], capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == f"stale: {rel} changed since the build"


def test_a_call_without_a_twin_goes_to_numba():
    """Argument types the build never saw (float32 data) are not given to the extension, whose
    exports would misread them: numba compiles for them, and the answer is right."""
    import numpy as np

    from svmtool.ops.kernels import row_sq_norms

    indptr = np.array([0, 2, 3], dtype=np.int64)
    indices = np.array([0, 1, 1], dtype=np.int32)
    values = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    key = _aot.arg_key((indptr, indices, values))
    assert key not in _aot.twins(row_sq_norms.name)
    assert list(row_sq_norms(indptr, indices, values)) == [5.0, 9.0]


def test_twins_release_the_gil_while_they_run():
    """A twin's kernel runs without the GIL, as numba's ``nogil`` kernels do: while one thread is
    inside a long call, this thread's Python keeps running (a twin that held the GIL would let
    it run only between calls)."""
    import threading

    import numpy as np

    from svmtool.ops.kernels import row_sq_norms

    n, per = 200_000, 100
    indptr = np.arange(n + 1, dtype=np.int64) * per
    indices = np.tile(np.arange(per, dtype=np.int32), n)
    values = np.ones(n * per)
    assert _aot.arg_key((indptr, indices, values)) in _aot.twins(row_sq_norms.name)
    calls, ticks, done = 5, [], threading.Event()

    def work():
        for _ in range(calls):
            row_sq_norms(indptr, indices, values)
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    while not done.is_set():
        ticks.append(None)          # Python bytecode: needs the GIL
    worker.join()
    # holding the GIL, the worker would leave this loop a few switch intervals per call
    assert len(ticks) > 10_000, len(ticks)


def test_the_build_compiled_every_level_of_this_architecture():
    """One module per CPU level of the architecture (on x86-64 generic code, x86-64-v3 and v4), the
    plainest needing nothing; the best this CPU runs is the one used."""
    if _aot.state() != "used":
        pytest.skip(f"the kernel extension is not in use ({_aot.state()}): `make aot` builds it")
    variants = _manifest()["variants"]
    want = [{"module": _aot.NAME + suffix, "cpu": cpu, "needs": list(needs)}
            for suffix, cpu, needs in _aot.build_variants()]
    assert variants == want
    assert variants[0]["needs"] == []
    assert _aot.report()["variant"] == _levels()[-1]


def test_the_variant_follows_the_cpu_flags(tmp_path):
    """/proc/cpuinfo's flags decide: a CPU without AVX2 gets the generic code, one with the
    x86-64-v3 sets that variant; asking (SVMTOOL_AOT=<cpu>) for one this CPU lacks says what
    it lacks instead of crashing on an illegal instruction."""
    variants = [{"module": _aot.NAME + s, "cpu": c, "needs": list(n)}
                for s, c, n in _aot.VARIANTS["x86_64"]]
    old = tmp_path / "old"
    old.write_text("processor\t: 0\nflags\t\t: fpu sse sse2 sse4_1 sse4_2 popcnt avx\n\n")
    new = tmp_path / "new"
    new.write_text("processor\t: 0\nflags\t\t: " + " ".join(_aot._V3_FLAGS) + " avx512f\n")
    assert _aot.cpu_flags(str(tmp_path / "none")) == frozenset()
    assert _aot.choose_variant(variants, _aot.cpu_flags(str(old)))[0]["cpu"] == ""
    assert _aot.choose_variant(variants, _aot.cpu_flags(str(new)))[0]["cpu"] == "x86-64-v3"
    assert _aot.choose_variant(variants, _aot.cpu_flags(str(new)), "generic")[0]["cpu"] == ""
    none, why = _aot.choose_variant(variants, _aot.cpu_flags(str(old)), "x86-64-v3")
    assert none is None and "lacks" in why and "avx2" in why and "fma" in why
    assert _aot.choose_variant(variants, frozenset(), "pentium")[1] == \
        "no variant 'pentium' in this build"
    assert [v[1] for v in _aot.build_variants("aarch64")] == [""]
    assert [v[1] for v in _aot.build_variants("AMD64")] == ["", "x86-64-v3", "x86-64-v4"]
    v4 = tmp_path / "v4"
    v4.write_text("flags\t\t: " + " ".join(_aot._V4_FLAGS) + "\n")
    assert _aot.choose_variant(variants, _aot.cpu_flags(str(v4)))[0]["cpu"] == "x86-64-v4"
    assert _aot.choose_variant(variants, _aot.cpu_flags(str(new)))[0]["cpu"] == "x86-64-v3"


def test_asking_for_a_level_not_built_leaves_the_jit_in_charge():
    """SVMTOOL_AOT naming a variant not in the build: the extension is not used (its state says
    why)."""
    if not os.path.exists(_aot.MANIFEST):
        pytest.skip("the kernel extension is not built: `make aot` builds it")
    out = subprocess.run([sys.executable, "-c", _STALE, _aot.MANIFEST], capture_output=True,
                         text=True, timeout=300, check=False,
                         env=dict(os.environ, SVMTOOL_AOT="no-such-cpu"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == "stale: no variant 'no-such-cpu' in this build"
