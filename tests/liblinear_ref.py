"""Helpers for the tests of LIBLINEAR's remaining solvers (-s 5, 6, 7, 11, 12, 13, 21): LIBLINEAR
itself (liblinear-official) in a fresh subprocess, model weights read with plain text parsing,
and every primal objective computed from ``w`` with numpy/scipy alone (independent of svmtool)."""

import subprocess
import sys

import numpy as np
import scipy.sparse as sp

from conftest import DATA, need


def liblinear_train(data, options, out):
    """LIBLINEAR's model file for ``data`` (a fresh process: rand() as after srand(1))."""
    need("liblinear.liblinearutil")
    code = ("import sys; from liblinear.liblinearutil import svm_read_problem, train, save_model;"
            "y, x = svm_read_problem(sys.argv[1]); m = train(y, x, sys.argv[2]);"
            "save_model(sys.argv[3], m)")
    subprocess.run([sys.executable, "-c", code, str(data), options + " -q", str(out)],
                   check=True)
    return out


def liblinear_predict(data, model):
    """LIBLINEAR's predictions (labels or values) of ``model`` on ``data``, in a subprocess."""
    need("liblinear.liblinearutil")
    code = ("import sys, json; from liblinear.liblinearutil import *;"
            "y, x = svm_read_problem(sys.argv[1]); m = load_model(sys.argv[2]);"
            "l, a, v = predict(y, x, m, '-q'); print(json.dumps([l, v]))")
    r = subprocess.run([sys.executable, "-c", code, str(data), str(model)], check=True,
                       capture_output=True, text=True)
    import json

    labels, values = json.loads(r.stdout)
    return np.array(labels), np.array(values)


def read_model(path):
    """(header dict, w as (rows, nr_w) array) of a LIBLINEAR model file."""
    lines = open(path).read().split("\n")
    head = {}
    i = 0
    while lines[i] != "w":
        t = lines[i].split()
        head[t[0]] = t[1:]
        i += 1
    w = np.array([[float(v) for v in ln.split()] for ln in lines[i + 1:] if ln.strip()])
    return head, w


def load_xy(path, bias=-1.0):
    load_svmlight_file = need("sklearn.datasets").load_svmlight_file

    X, y = load_svmlight_file(str(path))
    X = sp.csr_matrix(X)
    if bias >= 0:
        X = sp.hstack([X, np.full((X.shape[0], 1), bias)]).tocsr()
    return X, y


def objective(kind, X, y, w, C=1.0, p=0.1, unreg_bias=False, pos_label=None):
    """Primal objective of problem ``kind`` at ``w`` (one column), LIBLINEAR's convention.

    ``kind``: svr-l2, svr-l1 (regression, real y), l2-svc, lr (L2-regularised), l1-l2svc, l1-lr
    (L1-regularised); classification labels are mapped to +1 for ``pos_label`` (default: the
    first label of ``y``), -1 otherwise.
    """
    w = np.asarray(w, dtype=np.float64).reshape(-1)
    X = X[:, :len(w)]
    z = X @ w
    wr = w[:-1] if unreg_bias else w
    if kind in ("svr-l2", "svr-l1"):
        r = np.maximum(0.0, np.abs(z - y) - p)
        return 0.5 * wr @ wr + C * float(np.sum(r * r if kind == "svr-l2" else r))
    if pos_label is None:
        pos_label = y[0]
    yb = np.where(y == pos_label, 1.0, -1.0)
    m = yb * z
    if kind in ("l2-svc", "l1-l2svc"):
        loss = C * float(np.sum(np.maximum(0.0, 1.0 - m) ** 2))
    else:
        loss = C * float(np.sum(np.logaddexp(0.0, -m)))
    reg = 0.5 * wr @ wr if kind in ("l2-svc", "lr") else float(np.abs(wr).sum())
    return reg + loss


def regression_file(tmp_path):
    """A small regression set: heart_scale's rows with a real target made from its features."""
    X, _ = load_xy(DATA / "heart_scale")
    rng = np.random.default_rng(7)
    v = rng.normal(size=X.shape[1])
    y = X @ v + 0.3 * rng.normal(size=X.shape[0]) + 2.0
    out = tmp_path / "reg.svm"
    lines = []
    X = X.tocsr()
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        feats = " ".join(f"{j + 1}:{val!r}" for j, val in zip(X.indices[lo:hi].tolist(),
                                                             X.data[lo:hi].tolist()))
        lines.append(f"{round(float(y[i]), 4)!r} {feats}")
    out.write_text("\n".join(lines) + "\n")
    return out
