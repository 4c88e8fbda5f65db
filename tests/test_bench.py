"""Smoke test of `svmtool bench` on the bundled data, and the harness's own arithmetic."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from svmtool.bench import harness, report
from svmtool.bench.anchors import have, select_solvers, spec_group
from svmtool.cli import cli

DATA = Path(__file__).resolve().parents[1] / "data"
HEART = DATA / "heart_scale"


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    res = CliRunner().invoke(cli, ["bench", str(HEART), "--test", str(HEART), "--repeat", "1",
                                   "--no-memory", "--against", "liblinear,sklearn",
                                   "--out", str(out), "--tag", "smoke"])
    assert res.exit_code == 0, res.output + repr(res.exception)
    return res, out


def test_json_has_a_row_per_solver_with_sane_numbers(bench_run):
    res, out = bench_run
    result = json.loads((out / "smoke.json").read_text())
    rows = result["blocks"][0]["rows"]
    names = {r["runner"] for r in rows}
    for spec in select_solvers(None):
        assert spec.name in names, f"no row for solver {spec.name}"
    if have("liblinear"):
        assert {"liblinear -s 1", "liblinear -s 3"} <= names
    for r in rows:
        assert r["time"] is not None and math.isfinite(r["time"]) and r["time"] > 0, r
        assert r["objective"] is not None and math.isfinite(r["objective"]), r
        assert r["rel_gap"] is not None and r["rel_gap"] >= 0, r
        assert r["accuracy"] is not None and 0.5 < r["accuracy"] <= 1.0, r
    # the best run of every problem has gap 0, and every problem's runs agree to a few percent
    for g in {r["group"] for r in rows}:
        gaps = [r["rel_gap"] for r in rows if r["group"] == g]
        assert min(gaps) == 0.0
        if g != "own":
            exact = [r for r in rows if r["group"] == g and not r["runner"].startswith(
                "sklearn SGD")]
            assert max(r["rel_gap"] for r in exact) < 0.05, exact
    # traces: replays end with the final point; cp/ocas callbacks give the common objective
    traces = result["blocks"][0]["traces"]
    assert all(t["replays"] and t["replays"][-1]["cap"] == "final" for t in traces)
    for t in traces:
        if t["runner"] in ("cp", "ocas") and t.get("callback_objective"):
            assert t["callback_objective_matches"], t["runner"]


def test_markdown_table_parses_and_matches_the_json(bench_run):
    res, out = bench_run
    result = json.loads((out / "smoke.json").read_text())
    n_rows = len(result["blocks"][0]["rows"])
    for text in (res.stdout, (out / "smoke.md").read_text()):
        table = report.parse_markdown_table(text)
        assert len(table) == n_rows
        assert set(table[0]) == set(report.COLUMNS)
        for row in table:
            float(row["time ms"].split()[0])
            float(row["primal objective"])
            assert float(row["rel. gap"]) >= 0
    # the plot, or the one line telling how to get it
    from svmtool.bench import plots

    if plots.available():
        assert result["plots"] and all((out / p).stat().st_size > 1000 for p in result["plots"])
    else:
        assert any("pip install" in n for n in result["notes"])


def test_parse_markdown_table_rejects_ragged_rows():
    with pytest.raises(ValueError):
        report.parse_markdown_table("| a | b |\n|---|---|\n| 1 |\n")
    assert report.parse_markdown_table("| a | b |\n|---|---:|\n| 1 | 2 |\n") == [{"a": "1",
                                                                                  "b": "2"}]


def test_objectives_match_hand_computation():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    y = np.array([1.0, -1.0, 1.0])
    w = np.array([[0.5], [-0.25]])
    m = np.array([0.5, 0.5, 0.25])                  # y * Xw
    C = 2.0
    reg = 0.5 * (0.25 + 0.0625)
    assert harness.linear_objective(X, y, w, [1.0], C, "hinge") == pytest.approx(
        reg + C * np.sum(1 - m))
    assert harness.linear_objective(X, y, w, [1.0], C, "squared_hinge") == pytest.approx(
        reg + C * np.sum((1 - m) ** 2))
    assert harness.linear_objective(X, y, w, [1.0], C, "logistic") == pytest.approx(
        reg + C * np.sum(np.log1p(np.exp(-m))))
    # the label of the column decides the sign
    assert harness.linear_objective(X, y, -w, [-1.0], C, "hinge") == pytest.approx(
        reg + C * np.sum(1 - m))


def test_gaps_are_relative_to_the_best_run_of_the_same_problem():
    rows = [dict(data="d", n=3, C=1.0, group="hinge", objective=10.0),
            dict(data="d", n=3, C=1.0, group="hinge", objective=11.0),
            dict(data="d", n=3, C=1.0, group="logistic", objective=20.0),
            dict(data="d", n=3, C=2.0, group="hinge", objective=5.0)]
    harness.add_gaps(rows)
    assert [r["rel_gap"] for r in rows] == [0.0, pytest.approx(0.1), 0.0, 0.0]


def test_registry_groups():
    from svmtool.solvers import get_spec

    assert spec_group(get_spec("3")) == "hinge"
    assert spec_group(get_spec("1")) == spec_group(get_spec("2")) == "squared_hinge"
    assert spec_group(get_spec("0")) == "logistic"


def test_without_matplotlib_tables_and_json_still_come_out(tmp_path, monkeypatch):
    from svmtool.bench import plots
    from svmtool.bench.run import BenchConfig, finish, run_one

    monkeypatch.setattr(plots, "available", lambda: False)
    cfg = BenchConfig(train=str(HEART), solvers=["3"], against=[], repeat=1,
                      trace=False, memory=False)
    result = run_one(cfg)
    md, files = finish(result, str(tmp_path), "noplot")
    assert files == []
    assert any("pip install 'svmtool[plot]'" in n for n in result["notes"])
    assert "pip install 'svmtool[plot]'" in md
    assert len(report.parse_markdown_table(md)) == 1
    saved = json.loads((tmp_path / "noplot.json").read_text())
    assert saved["plots"] == [] and saved["blocks"][0]["rows"][0]["runner"] == "dcd-l1"


def test_trace_scores_w_when_the_callback_gives_it():
    from svmtool.bench.anchors import Evaluation, Runner

    class Fake(Runner):
        name, group, source, cap = "fake", "hinge", "svmtool", None

        def fit(self, state, C, eps, cap=None, callback=None):
            w = np.zeros(13)
            for it in (1, 2, 3):
                w[it] = 0.1 * it
                if callback is not None:
                    callback(0, it, {"w": w, "primal": -1.0})
            return w.copy()

        def evaluate(self, state, raw, data):
            return Evaluation(iterations=3, W=raw.reshape(-1, 1), col_labels=np.array([1.0]))

    data = harness.load_bench_data(str(HEART), str(HEART))
    row, tr = harness.run_case(Fake(), data, None, 1.0, None, repeat=1, memory=False)
    assert [p["it"] for p in tr["callback"]] == [1, 2, 3]
    assert all("objective" in p and "accuracy" in p for p in tr["callback"])
    assert tr["callback"][-1]["objective"] == pytest.approx(row["objective"])
    assert tr["callback_objective"] == "objective" and tr["callback_objective_matches"]


def test_head_takes_the_first_rows_in_file_order_and_commands_read_them(tmp_path):
    from svmtool.io.svmlight import load_data

    full = load_data("data/heart_scale")
    d = harness.load_bench_data("data/heart_scale", head=25)
    assert d.n == 25
    np.testing.assert_array_equal(d.y, full.y[:25])
    np.testing.assert_array_equal(d.train.data, full.data[:full.indptr[25]])
    # a command reads the same 25 rows from the text file written for it
    again = load_data(d.train_text(str(tmp_path / "head.txt")))
    assert again.n_rows == 25
    np.testing.assert_array_equal(again.data, d.train.data)


def test_timed_call_carries_cpu_seconds_and_a_command_its_own():
    import sys
    import time

    from svmtool.bench.anchors.programs import run_timed
    from svmtool.bench.timing import cpu_of, timed_call

    def spin():
        t = time.process_time()
        while time.process_time() - t < 0.05:
            pass

    _, s = timed_call(spin)
    assert s.cpu >= 0.04 and float(s) >= 0.04
    dt, rc, _, _ = run_timed([sys.executable, "-c", "import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.1: pass"])
    assert rc == 0 and dt.cpu >= 0.09       # the child's CPU, from the kernel's accounting
    assert cpu_of([dt, s])[1] == s.cpu


def test_startup_medians_of_counts_and_of_kernel_names():
    """A command run without the kernel extension names the kernels numba loaded (a list);
    with it the extension's block counts them: the medians of both (the end-to-end rows of an
    installed wheel failed on the lists)."""
    from svmtool.bench.anchors.programs import median_startup

    blocks = [{"cache_loads": {"wall": 0.2, "cpu": 0.1, "count": 3, "kernels": ["a", "b"]},
               "aot": {"wall": 0.0, "cpu": 0.0, "kernels": 4}},
              {"cache_loads": {"wall": 0.4, "cpu": 0.3, "count": 5, "kernels": ["b", "c"]},
               "aot": {"wall": 0.0, "cpu": 0.0, "kernels": 6}}]
    got = median_startup(blocks)
    loads = got["cache_loads"]
    assert (loads["wall"], loads["cpu"]) == (pytest.approx(0.3), pytest.approx(0.2))
    assert (loads["count"], loads["kernels"]) == (4, ["a", "b", "c"])
    assert got["aot"]["kernels"] == 5
