"""Helpers shared by the tests of the cutting-plane family: load a binary problem, call a
registered solver's fit directly, and the L1-loss primal objective computed with numpy."""

import numpy as np
import scipy.sparse as sp

from conftest import need
from svmtool.params import TrainParams
from svmtool.solvers import get_spec


def load(path, rows=None):
    load_svmlight_file = need("sklearn.datasets").load_svmlight_file

    X, y = load_svmlight_file(str(path))
    X = sp.csr_matrix(X)
    if rows is not None:
        X, y = X[:rows], y[:rows]
    X.sort_indices()
    return X, np.where(y > 0, 1.0, -1.0)


def fit(name, X, y, C=1.0, C_neg=None, **kw):
    params = TrainParams(solver=name, C=C, **kw)
    return get_spec(name).load()(X.indptr.astype(np.int64), X.indices, X.data, y, X.shape[1], C,
                                 C if C_neg is None else C_neg, params)


def primal(X, y, w, cost):
    return 0.5 * w @ w + float(cost @ np.maximum(0.0, 1.0 - y * (X @ w)))
