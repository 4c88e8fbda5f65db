"""The ``grid`` suite: ``svmtool grid`` (model selection in one process) against LIBSVM's
grid.py with the C svm-train, scikit-learn's GridSearchCV and ``liblinear-train -C``; the share
of each shared mechanism; DC-SVM's early grid against the exact one; successive halving
against the whole grid.  Tables from :mod:`svmtool.bench.grid_study`."""

import os
import tempfile

from svmtool.bench import grid_study
from svmtool.bench.suites.registry import Case, Suite, register

IJCNN1_ROWS = 10000
IJCNN1_GRID = ["-log2c", "-1,7,2", "-log2g", "1,-7,-2"]
SKLEARN_IJCNN1 = {"c0": -1, "c1": 7, "cs": 2, "g0": 1, "g1": -7, "gstep": -2}


def _head(path, rows):
    """The first ``rows`` lines of ``path`` in a temporary file (the issue's ijcnn1 subset)."""
    dst = os.path.join(tempfile.gettempdir(), f"svmtool-bench-{os.path.basename(path)}-{rows}")
    if not os.path.exists(dst):
        with open(path, "rb") as src, open(dst + ".tmp", "wb") as out:
            for i, line in enumerate(src):
                if i >= rows:
                    break
                out.write(line)
        os.replace(dst + ".tmp", dst)
    return dst


def _sets(w):
    """(title, heart, ijcnn1 subset, a9a) present here."""
    heart = w.files("heart")
    ij = w.files("ijcnn1") if not w.quick else None
    a9a = w.files("a9a") if not w.quick else None
    return (heart[0] if heart else None, _head(ij[0], IJCNN1_ROWS) if ij else None,
            a9a[0] if a9a else None)


def _with(fn, *args, **kw):
    def table(repeat, log=None):
        return fn(*args, repeat=repeat, log=log, **kw)
    return table


def _problems(paths_grids):
    from svmtool.io.svmlight import load_data

    return [(title, load_data(path), grid) for title, path, grid in paths_grids]


def _quality_sets(w):
    """Data sets of the early and halving studies: heart_scale, ijcnn1's first 10000 rows (the
    grid of the first table), a9a's and mushrooms' first 2000 rows (those present), with grids
    of 20-42 cells."""
    from svmtool.selection.spec import GridSpec

    out = []
    heart = w.files("heart")
    if heart:
        out.append(("heart_scale", heart[0], GridSpec(log2c=(-1.0, 11.0, 2.0),
                                                       log2g=(-3.0, -13.0, -2.0))))
    if not w.quick:
        for name, grid in (("ijcnn1", GridSpec(log2c=(-1.0, 7.0, 2.0),
                                              log2g=(1.0, -7.0, -2.0))),
                           ("a9a", GridSpec(log2c=(-1.0, 7.0, 2.0), log2g=(-3.0, -9.0, -2.0))),
                           ("mushrooms", GridSpec(log2c=(-1.0, 7.0, 2.0),
                                                  log2g=(-1.0, -7.0, -2.0)))):
            f = w.files(name)
            rows = IJCNN1_ROWS if name == "ijcnn1" else 2000
            if f:
                out.append((f"{name} ({rows} rows)", _head(f[0], rows), grid))
    return out


def _cases(w):
    heart, ij, a9a = _sets(w)
    rows, share_rows = [], []
    if heart:
        rows.append(("heart_scale, grid.py's default grid", heart, [], [], None, None))
        share_rows.append(("heart_scale, default grid", heart, []))
    if ij:
        rows.append((f"ijcnn1 first {IJCNN1_ROWS} rows, -log2c -1,7,2 -log2g 1,-7,-2", ij,
                     IJCNN1_GRID, IJCNN1_GRID, SKLEARN_IJCNN1, None))
        share_rows.append((f"ijcnn1 first {IJCNN1_ROWS} rows", ij, IJCNN1_GRID))
    if a9a:
        rows.append(("a9a, linear (L2-loss SVM)", a9a, ["-s", "dcd-l2"], None, None,
                     ["-C", "-s", "2"]))
    files = [p for p in (heart, ij, a9a) if p]
    cases = [Case("svmtool grid against grid.py, GridSearchCV and liblinear-train -C",
                  table=_with(grid_study.anchors_table, rows), files=files),
             Case("the share of each shared mechanism",
                  table=_with(grid_study.shares_table, share_rows), files=files)]
    qsets = _quality_sets(w)
    if qsets:
        qfiles = [p for _, p, _ in qsets]
        cases.append(Case("dcsvm --early against the exact dcsvm grid",
                          table=lambda repeat, log=None: grid_study.early_table(
                              _problems(qsets), log=log), files=qfiles))
        cases.append(Case("--halving against the whole grid",
                          table=lambda repeat, log=None: grid_study.halving_table(
                              _problems(qsets), log=log), files=qfiles))
    return cases


register(Suite(
    "grid",
    "svmtool grid against grid.py + svm-train, GridSearchCV, liblinear-train -C; shared work",
    "Model selection as LIBSVM's users run it: `svmtool grid` (one process: kernel rows shared "
    "per gamma, alpha seeding along C, units of cells on threads) against LIBSVM's tools/grid.py "
    "running the C svm-train for every cell (grid.py from --anchor-bin, e.g. a LIBSVM source "
    "tree's tools/, or Debian's svm-grid), scikit-learn's GridSearchCV(SVC, n_jobs=2) and, for "
    "a linear grid, liblinear-train -C -s 2; then each shared mechanism switched off in turn, "
    "DC-SVM's early grid against its exact grid, and successive halving against the whole "
    "grid.  --quick: heart_scale alone.",
    _cases))
