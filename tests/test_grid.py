"""svmtool grid: LIBSVM's grid.py in one process.

Independent truths: svm-train -v's rate for every cell of grid.py's default grid on heart_scale
(the C program where installed, else libsvm-official's cross validation in a fresh process: the
folds come from the C library's unseeded rand()); grid.py's own order, line and file formats
(written out from its source's rules); glibc's rand() sequence; liblinear-train -C's best C;
the duality gaps of the SMO (a seeded cell's objective within the two gaps of the cold one's).
Bad input is in tests/test_bad_input.py (the grid rows of the README's matrix)."""

import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import DATA
from svmtool_proc import svmtool

from svmtool.io.svmlight import load_data
from svmtool.params import TrainParams
from svmtool.selection.folds import GlibcRand, libsvm_folds
from svmtool.selection.grid import GridOptions, run_grid
from svmtool.selection.spec import (GridSpec, better, cell_line, centre_out, final_line,
                                    job_order, out_line, range_values, read_resume)
from svmtool.solvers import get_spec

HEART = DATA / "heart_scale"
DEFAULT_C = range(-5, 16, 2)
DEFAULT_G = range(3, -16, -2)


@pytest.fixture(scope="module")
def heart():
    return load_data(str(HEART))


# -- grid.py's rules ---------------------------------------------------------------------------

def test_ranges_order_and_lines_as_grid_py():
    assert range_values((-5, 15, 2)) == list(DEFAULT_C)
    assert range_values((3.0, -15.0, -2.0)) == [float(v) for v in DEFAULT_G]
    assert range_values((0.0, 0.3, 0.1)) == [0.0, 0.1, 0.2, 0.30000000000000004][:3]
    # permute_sequence: the middle, then the halves' middles alternately
    assert centre_out([1, 2, 3, 4, 5]) == [3, 2, 5, 1, 4]
    assert centre_out(list(range(-5, 16, 2)))[:4] == [5, -1, 11, -3]
    cells = job_order(centre_out([1, 2, 3]), centre_out([10, 20]))
    assert cells == [(2, 20), (1, 20), (2, 10), (1, 10), (3, 20), (3, 10)]
    # the first cells grid.py 3.37 ran on heart_scale (its [local] lines)
    assert GridSpec().cells()[:12] == [(5, -7), (-1, -7), (5, -1), (-1, -1), (11, -7), (11, -1),
                                       (5, -13), (-1, -13), (11, -13), (-3, -7), (-3, -1),
                                       (-3, -13)]
    assert len(GridSpec().cells()) == 110
    assert cell_line(5, -7, 83.3333, (83.3333, 5, -7)) == \
        "[local] 5 -7 83.3333 (best c=32.0, g=0.0078125, rate=83.3333)"
    assert cell_line(-1.0, None, 84.0, (84.0, -1.0, None)) == \
        "[local] -1.0 84.0 (best c=0.5, rate=84.0)"
    assert out_line(5, -7, 83.3333) == "log2c=5 log2g=-7 rate=83.3333"
    assert final_line((84.4444, 11, -13)) == "2048.0 0.0001220703125 84.4444"
    # the update rule: a tie replaces the best only at the same gamma with a smaller C
    assert better(80.0, 3, -1, (80.0, 5, -1)) and not better(80.0, 3, -3, (80.0, 5, -1))
    assert better(0.5, 3, None, (0.7, 1, None), lower_is_better=True)


def test_glibc_rand_after_srand_1():
    """The first values of glibc's rand() in a program that never seeds it."""
    r = GlibcRand(1)
    assert [r() for _ in range(5)] == [1804289383, 846930886, 1681692777, 1714636915,
                                       1957747793]


def test_libsvm_folds_are_stratified_partitions(heart):
    folds = libsvm_folds(heart.y, 5)
    rows = np.sort(np.concatenate(folds))
    assert np.array_equal(rows, np.arange(heart.n_rows))
    pos = [int(np.sum(heart.y[f] > 0)) for f in folds]
    assert max(pos) - min(pos) <= 1


def test_resume_file_of_grid_py(tmp_path):
    spec = GridSpec()
    p = tmp_path / "h.out"
    p.write_text("log2c=5 log2g=-7 rate=83.3333\nlog2c=-1 log2g=-7 rate=83.3333\n\n")
    assert read_resume(str(p), spec) == {(5, -7): 83.3333, (-1, -7): 83.3333}


# -- the rates: svm-train -v, cell for cell ------------------------------------------------------

def _svm_train_rates(tmp_path):
    """{(log2c, log2g): rate} of svm-train -v 5 over the default grid on heart_scale."""
    exe = shutil.which("svm-train")
    if exe is not None:
        out = {}
        for c in DEFAULT_C:
            for g in DEFAULT_G:
                r = subprocess.run([exe, "-c", repr(2.0 ** c), "-g", repr(2.0 ** g), "-v", "5",
                                    "-q", str(HEART)], capture_output=True, text=True,
                                   check=True)
                out[(c, g)] = float(r.stdout.split()[-1].rstrip("%"))
        return out
    pytest.importorskip("libsvm.svmutil", reason="needs svm-train on PATH or libsvm-official")
    # a fresh process: LIBSVM's folds come from the process's unseeded rand()
    code = (
        "import json, sys\nfrom libsvm.svmutil import svm_read_problem, svm_train\n"
        f"y, x = svm_read_problem({str(HEART)!r})\nout = {{}}\n"
        f"for c in {list(DEFAULT_C)!r}:\n  for g in {list(DEFAULT_G)!r}:\n"
        "    acc = svm_train(y, x, '-c %r -g %r -v 5 -q' % (2.0 ** c, 2.0 ** g))\n"
        "    out['%d %d' % (c, g)] = float('%g' % acc)\nprint(json.dumps(out))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {tuple(map(int, k.split())): v for k, v in json.loads(r.stdout).items()}


def test_every_cell_is_svm_train_v_on_heart_scale(heart, tmp_path):
    """grid.py's default grid on heart_scale: every cell's rate is svm-train -v's (LIBSVM's
    folds, LIBSVM's subproblems and SMO, kernel rows shared per gamma), and so is the best
    cell -- with alpha seeding (the default) and from alpha = 0.  Two solutions within the
    tolerance -e of one optimum can put one held-out row on either side of the margin: in
    the cells of C = 2^11 .. 2^15 (near a hard margin) that happens to one cell of the 110
    (e.g. C 2^15, gamma 2^-11: svm-train's five objectives sum to -10124891, svmtool's to
    -10125567 with a duality gap of 478), so at most two cells may differ by one row."""
    truth = _svm_train_rates(tmp_path)
    one_row = 100.0 / heart.n_rows + 1e-3
    for seed in ("c", "none"):
        res = run_grid(heart, TrainParams(solver="c_svc"), GridSpec(), get_spec("c_svc"),
                       GridOptions(threads=2, seed_alpha=seed))
        got = {(c.c, c.g): c.rate for c in res.cells}
        assert set(got) == set(truth)
        off = [(k, got[k], truth[k]) for k in truth if got[k] != truth[k]]
        assert len(off) <= 2 and all(k[0] >= 11 and abs(a - b) < one_row for k, a, b in off), off
        assert res.best == (84.4444, 11, -13)


def test_seeded_cells_are_the_cold_cells_to_the_tolerance(heart):
    """Alpha seeding changes where the SMO starts, not where it stops: per cell, the sum over
    the folds of the dual objective is within the two solves' duality gaps of the cold one's."""
    grid = GridSpec(log2c=(-1.0, 13.0, 2.0), log2g=(-3.0, -11.0, -4.0))
    p = TrainParams(solver="c_svc")
    runs = {}
    for seed in ("none", "fold", "c"):
        res = run_grid(heart, p, grid, get_spec("c_svc"), GridOptions(threads=1, seed_alpha=seed))
        runs[seed] = {(c.c, c.g): c for c in res.cells}
    cold = runs["none"]
    seeded = 0
    for seed in ("fold", "c"):
        for key, cell in runs[seed].items():
            ref = cold[key]
            bound = cell.stats["gap"] + ref.stats["gap"] + 1e-9 * abs(ref.stats["objective"])
            assert abs(cell.stats["objective"] - ref.stats["objective"]) <= bound, key
            assert abs(cell.rate - ref.rate) <= 100.0 / heart.n_rows + 1e-9, key
            seeded += sum(v for k, v in cell.stats["seeds"].items() if k != "cold")
    assert seeded > 0
    assert all(c.stats["seeds"] == {"cold": 5} for c in cold.values())


def test_threads_units_and_row_sharing_do_not_change_a_rate(heart):
    grid = GridSpec(log2c=(1.0, 9.0, 4.0), log2g=(-1.0, -9.0, -4.0))
    p = TrainParams(solver="c_svc")
    outs = []
    for kw in ({"threads": 1}, {"threads": 2, "fold_groups": 2},
               {"threads": 1, "share_rows": False}):
        res = run_grid(heart, p, grid, get_spec("c_svc"), GridOptions(seed_alpha="none", **kw))
        outs.append({(c.c, c.g): c.rate for c in res.cells})
    assert outs[0] == outs[1] == outs[2]


def test_three_classes_vote_as_svm_train(heart, tmp_path):
    """One-vs-one pairs, each with its own rows: the rates of svm-train -v on a three-class
    problem."""
    from conftest import write_svmlight
    from svmtool.problem import Problem

    exe = shutil.which("svm-train")
    if exe is None:
        pytest.skip("needs LIBSVM's svm-train on PATH (the truth of a three-class cell)")
    y = heart.y.copy()
    y[heart.X.toarray()[:, 0] > 0.3] = 2.0
    prob = Problem(heart.indptr, heart.indices, heart.data, y, heart.n_features)
    path = tmp_path / "three.svm"
    write_svmlight(prob, path)
    prob = load_data(str(path))
    res = run_grid(prob, TrainParams(solver="c_svc"),
                   GridSpec(log2c=(1.0, 5.0, 4.0), log2g=(-3.0, -5.0, -2.0)),
                   get_spec("c_svc"), GridOptions(threads=2))
    for cell in res.cells:
        r = subprocess.run([exe, "-c", repr(2.0 ** cell.c), "-g", repr(2.0 ** cell.g), "-v",
                            "5", "-q", str(path)], capture_output=True, text=True, check=True)
        assert cell.rate == float(r.stdout.split()[-1].rstrip("%")), (cell.c, cell.g)


# -- the command ---------------------------------------------------------------------------------

LINE = re.compile(r"^\[local\] (-?\d+\.0) (-?\d+\.0) (\d+(\.\d+)?) \(best c=([0-9.e-]+), "
                  r"g=([0-9.e-]+), rate=(\d+(\.\d+)?)\)$")


def test_command_lines_out_file_png_and_report(tmp_path):
    pytest.importorskip("matplotlib", reason="the contour plot needs matplotlib (svmtool[plot])")
    r = svmtool("grid", "-log2c", "1,9,4", "-log2g", "-3,-11,-4", "-png", "h.png",
                "--report", "r.json", "-svmtrain", "/usr/bin/svm-train", HEART, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert len(lines) == 10
    assert all(LINE.match(line) for line in lines[:-1]), lines
    rec = json.loads((tmp_path / "r.json").read_text())
    b = rec["best"]
    assert lines[-1] == f"{2.0 ** b['log2c']!r} {2.0 ** b['log2g']!r} {b['rate']!r}"
    out = (tmp_path / "heart_scale.out").read_text().splitlines()
    assert len(out) == 9 and all(re.fullmatch(r"log2c=-?\d+\.0 log2g=-?\d+\.0 rate=[\d.]+", x)
                                 for x in out)
    assert [c["rate"] for c in rec["cells"]] == [float(x.split("rate=")[1]) for x in out]
    assert all(c["seconds"] >= 0 for c in rec["cells"])
    assert b"-svmtrain /usr/bin/svm-train is ignored" in r.stderr
    png = (tmp_path / "h.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_marks_the_best_cell():
    pytest.importorskip("matplotlib", reason="the contour plot needs matplotlib (svmtool[plot])")
    from svmtool.selection.plot import figure

    cells = [(c, g, 80.0 + c - g / 3.0) for c in (1.0, 3.0, 5.0) for g in (-1.0, -3.0, -5.0)]
    best = max((r, c, g) for c, g, r in cells)
    fig = figure(cells, best, "t", (1.0, 5.0, 2.0), (-1.0, -5.0, -2.0))
    marks = [line for line in fig.axes[0].lines if line.get_marker() == "*"]
    assert len(marks) == 1
    assert (marks[0].get_xdata()[0], marks[0].get_ydata()[0]) == (best[1], best[2])
    assert figure([(1.0, -1.0, 80.0)], (80.0, 1.0, -1.0), "t", (1, 1, 1), (-1, -1, -1)) is None


def test_resume_a_grid_py_out_file_skips_its_cells(tmp_path):
    """A .out file as grid.py writes it (integer logs of the default grid): its cells are
    printed as [resumed], not run again, and the new lines are appended to it."""
    done = "log2c=5 log2g=-7 rate=83.3333\nlog2c=-1 log2g=-7 rate=83.3333\n"
    (tmp_path / "heart_scale.out").write_text(done)
    r = svmtool("grid", "-log2c", "-1,5,6", "-log2g", "-7,-7,-2", "-resume", "--report",
                "r.json", HEART, cwd=tmp_path)
    # the file holds -5..15 integer logs; this grid's values are -1.0 and 5.0: the same cells
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    # grid.py prints a resumed cell with the logs it read from the file, as floats
    assert lines[:2] == ["[resumed] 5.0 -7.0 83.3333 (best c=32.0, g=0.0078125, "
                         "rate=83.3333)",
                         "[resumed] -1.0 -7.0 83.3333 (best c=0.5, g=0.0078125, rate=83.3333)"]
    assert lines[-1] == "0.5 0.0078125 83.3333"
    rec = json.loads((tmp_path / "r.json").read_text())
    assert [c["resumed"] for c in rec["cells"]] == [True, True]
    assert (tmp_path / "heart_scale.out").read_text() == done


def test_quiet_time_limit_and_order(tmp_path):
    r = svmtool("grid", "-q", "-out", "null", "-png", "null", "--time-limit", "0.001", HEART,
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.decode().splitlines()) == 1          # -q: the final line only
    assert r.stderr == b""                                   # -q silences the warning too
    r = svmtool("grid", "-out", "null", "-png", "null", "--time-limit", "0.001",
                "--threads", "1", HEART, cwd=tmp_path)
    assert r.returncode == 0
    assert b"--time-limit: the grid stopped after 1 of 110 cells" in r.stderr
    r = svmtool("grid", "-q", "-out", "o.out", "-png", "null", "--order", "path",
                "-log2c", "1,5,4", "-log2g", "-3,-5,-2", HEART, cwd=tmp_path)
    keys = [line.split()[:2] for line in (tmp_path / "o.out").read_text().splitlines()]
    # gamma by gamma (grid.py's centre-out order of gamma: -5 before -3), C increasing
    assert keys == [["log2c=1.0", "log2g=-5.0"], ["log2c=5.0", "log2g=-5.0"],
                    ["log2c=1.0", "log2g=-3.0"], ["log2c=5.0", "log2g=-3.0"]]


def test_linear_grid_finds_liblinear_train_C_best(tmp_path):
    """-s dcd-l2: the C path of the L2-loss SVM (run by -s newton, LIBLINEAR's -C solver) on
    LIBLINEAR's folds: the best C of liblinear-train -C -s 2."""
    exe = shutil.which("liblinear-train")
    if exe is None:
        pytest.skip("needs LIBLINEAR's liblinear-train on PATH")
    ref = subprocess.run([exe, "-C", "-s", "2", str(HEART)], capture_output=True, text=True,
                         check=True).stdout
    best_c = float(re.search(r"Best C = (\S+)", ref).group(1))
    r = svmtool("grid", "-s", "dcd-l2", "-out", "null", HEART, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert re.fullmatch(r"\[local\] -13\.0 [\d.]+ \(best c=[\d.e-]+, rate=[\d.]+\)", lines[0])
    assert float(lines[-1].split()[0]) == pytest.approx(best_c, rel=1e-5)
    assert b"runs -s newton" in r.stderr


def test_easy_writes_easy_py_files(tmp_path):
    rows = HEART.read_text().splitlines(keepends=True)
    (tmp_path / "tr").write_text("".join(rows[:200]))
    (tmp_path / "te").write_text("".join(rows[200:]))
    r = svmtool("grid", "--easy", "-log2c", "1,5,4", "-log2g", "-5,-7,-2", "-png", "null",
                "tr", "te", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode().splitlines()
    assert out[0] == "Scaling training data..." and out[1] == "Cross validation..."
    assert out[2].startswith("Best c=") and out[-2].startswith("Accuracy = ")
    for name in ("tr.scale", "tr.range", "tr.scale.out", "tr.model", "te.scale", "te.predict"):
        assert (tmp_path / name).exists(), name
    assert len((tmp_path / "te.predict").read_text().splitlines()) == 70
    # the model is LIBSVM's and scores the scaled test file as svm-predict does
    r2 = svmtool("svm-predict", "te.scale", "tr.model", "p2", cwd=tmp_path)
    assert r2.stdout.decode().splitlines()[-1] == out[-2]


def test_halving_and_dcsvm_early_with_refine(heart, tmp_path):
    grid = GridSpec(log2c=(-1.0, 11.0, 2.0), log2g=(-3.0, -11.0, -2.0))
    from svmtool.selection.halving import run_halving

    full = run_grid(heart, TrainParams(solver="c_svc"), grid, get_spec("c_svc"),
                    GridOptions(threads=2))
    half = run_halving(heart, TrainParams(solver="c_svc"), grid, get_spec("c_svc"),
                       GridOptions(threads=2))
    info = half.extra["halving"]
    assert info and info[0]["cells"] == 35 and info[0]["rows"] < heart.n_rows
    assert len(half.cells) < len(full.cells)
    rates = {(c.c, c.g): c.rate for c in full.cells}
    assert all(rates[(c.c, c.g)] == c.rate for c in half.cells)   # the last round is exact
    r = svmtool("grid", "-s", "dcsvm", "--early", "--refine", "2", "-log2c", "1,5,4",
                "-log2g", "-3,-5,-2", "-out", "null", "-png", "null", HEART, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert sum(line.startswith("[local]") for line in lines) == 4
    assert sum(line.startswith("[refine]") for line in lines) == 2


def test_dask_units_give_the_threads_cells(heart, tmp_path):
    """--dask local:1: every unit a task on a worker process; the same cells and best cell as
    threads (each unit is a function of its cells and the folds)."""
    pytest.importorskip("distributed", reason="--dask needs dask.distributed (svmtool[dask])")
    grid = GridSpec(log2c=(1.0, 5.0, 4.0), log2g=(-3.0, -5.0, -2.0))
    p = TrainParams(solver="c_svc")
    here = run_grid(heart, p, grid, get_spec("c_svc"), GridOptions(threads=2))
    there = run_grid(heart, p, grid, get_spec("c_svc"), GridOptions(dask="local:1"))
    assert [(c.c, c.g, c.rate) for c in there.cells] == [(c.c, c.g, c.rate) for c in here.cells]
    assert there.best == here.best


def test_linear_svr_grid_over_C_and_p_is_liblinear_per_fold(heart, tmp_path):
    """-s svr-l2 -log2p: every cell (C, p) is the cross-validated mean squared error of
    LIBLINEAR's -s 11 (liblinear-official) trained on the same folds with that C and p; the
    lines say p=, the .out file log2p=, and -resume reads it back."""
    liblinear = pytest.importorskip("liblinear.liblinearutil",
                                    reason="needs liblinear-official (the test extra)")
    args = ["-s", "svr-l2", "-e", "0.0001", "-log2c", "-3,1,2", "-log2p", "-1,-5,-2"]
    r = svmtool("grid", *args, "-out", "g.out", "-png", "null", HEART, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert len(lines) == 10 and "p=" in lines[0] and "g=" not in lines[0]
    rates = {}
    for line in (tmp_path / "g.out").read_text().splitlines():
        m = re.fullmatch(r"log2c=(\S+) log2p=(\S+) rate=(\S+)", line)
        assert m, line
        rates[(float(m.group(1)), float(m.group(2)))] = float(m.group(3))
    assert len(rates) == 9
    folds = libsvm_folds(heart.y, 5, stratified=False, seed=1)
    X = heart.X
    for (lc, lp), rate in rates.items():
        pred = np.empty(heart.n_rows)
        for test in folds:
            keep = np.ones(heart.n_rows, dtype=bool)
            keep[test] = False
            m = liblinear.train(heart.y[keep], X[keep], f"-s 11 -c {2.0 ** lc} -p {2.0 ** lp} "
                                                         f"-e 0.0001 -q")
            pred[test] = liblinear.predict(heart.y[test], X[test], m, "-q")[0]
        assert rate == pytest.approx(float(np.mean((pred - heart.y) ** 2)), rel=1e-4)
    best = min(rates.items(), key=lambda kv: kv[1])
    assert float(lines[-1].split()[2]) == best[1]
    again = svmtool("grid", *args, "-resume", "g.out", "-out", "null", "-png", "null", HEART,
                    cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert all(line.startswith("[resumed]") for line in again.stdout.decode().splitlines()[:-1])
    assert again.stdout.decode().splitlines()[-1] == lines[-1]
    for bad, msg in ((["-s", "dcd-l2", "-log2p", "-1,-5,-2"], b"-log2p: p is searched for"),
                     (["-s", "svr-l2", "-p", "0.5", "-log2p", "-1,-5,-2"], b"-p and -log2p")):
        r = svmtool("grid", *bad, HEART, cwd=tmp_path)
        assert r.returncode == 2 and msg in r.stderr and len(r.stderr.splitlines()) == 1
