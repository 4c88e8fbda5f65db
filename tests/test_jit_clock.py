"""numba's time said apart from svmtool's: `read ... in` and `trained in` lines print their own
seconds and, beside them, numba's start-up and the compilation of kernels the cache lacked."""

import subprocess
import sys

from svmtool.cli.common import jit_clock, jit_since, timed_note


def test_a_compilation_is_counted_once_and_a_second_call_costs_nothing():
    from svmtool import _jit

    @_jit.njit(cache=False)
    def plus_one(x):
        return x + 1

    before = jit_clock()
    assert plus_one(1) == 2
    startup, compiling = jit_since(before)
    assert compiling > 0.0 and startup >= 0.0
    again = jit_clock()
    assert plus_one(2) == 3
    assert jit_since(again) == (0.0, 0.0)


def test_numba_free_process_reads_zeros():
    code = ("import sys; from svmtool.cli.common import jit_clock; "
            "assert 'numba' not in sys.modules; print(jit_clock())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(0.0, 0.0)"


def test_the_line_says_each_part():
    assert timed_note(1.0, (0.0, 0.0)) == "in 1.000 s"
    assert timed_note(1.0, (0.2, 0.3), "dcd-l2") == (
        "in 0.500 s (dcd-l2; +0.300 s compiling numba's kernels, once; +0.200 s numba start-up)")
    assert timed_note(0.1, (0.4, 0.0)) == "in 0.000 s (+0.400 s numba start-up)"


def _startup_block(tmp_path, *args, env=None):
    import json

    from tests.svmtool_proc import svmtool

    report = tmp_path / "run.json"
    out = svmtool("train", "-q", *args, "--report", report, "data/heart_scale",
                  tmp_path / "m", env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(report.read_text())["startup"]


def test_report_startup_block_of_a_numba_free_run(tmp_path):
    # heart_scale with -s 1: the pure-Python parser and dual CD, numba never loaded
    block = _startup_block(tmp_path, "-s", "1")
    assert set(block) == {"python", "numpy", "parse", "fixed"}
    for part in ("python", "numpy", "parse"):
        assert block[part]["wall"] > 0 and block[part]["cpu"] > 0
    fixed = block["fixed"]["wall"]
    assert abs(fixed - block["python"]["wall"] - block["numpy"]["wall"]) < 1e-5


def test_report_startup_block_counts_numba_and_its_cache_loads(tmp_path):
    # the kernel solver on numba's JIT (the kernel extension turned off): numba's import and
    # its loads of cached kernels, counted (the first run of a fresh install may compile
    # instead: counted apart)
    import os

    jit = dict(os.environ, SVMTOOL_AOT="0")
    _startup_block(tmp_path, "-s", "kernel", env=jit)
    block = _startup_block(tmp_path, "-s", "kernel", env=jit)
    assert block["aot"]["state"] == "off"
    for part in ("numba", "cache_loads"):
        assert block[part]["wall"] > 0, block
    assert block["cache_loads"]["count"] >= 1
    assert "compile" not in block          # the second run finds every kernel in the cache
    parts = ("python", "numpy", "aot", "scipy", "numba", "cache_loads")
    assert abs(block["fixed"]["wall"] - sum(block[p]["wall"] for p in parts if p in block)) < 1e-5


def test_report_startup_block_of_a_run_on_the_kernel_extension(tmp_path):
    # the same run with the kernel extension (make test builds it): no numba part at all
    from svmtool import _aot

    assert _aot.state() == "used", _aot.state()
    block = _startup_block(tmp_path, "-s", "kernel")
    assert block["aot"]["state"] == "used" and block["aot"]["kernels"] >= 1, block
    assert "misses" not in block["aot"], block
    assert not {"scipy", "numba", "cache_loads", "compile"} & set(block), block
    parts = ("python", "numpy", "aot")
    assert abs(block["fixed"]["wall"] - sum(block[p]["wall"] for p in parts)) < 1e-5
