"""Row gathering: a subset of the rows of a kernel solver's :class:`~svmtool.ops.kernels.Rows`.

Used by the kernel solvers (subproblems of a pair, a cluster, the support vectors) and by the
early-prediction model (the test rows that fall in one cluster).
"""

import numpy as np

from svmtool.ops.kernels import Rows


def take_rows(X: Rows, rows) -> Rows:
    """The given rows of X as a new Rows (CSR copied, norms sliced)."""
    rows = np.asarray(rows, dtype=np.int64)
    starts = X.indptr[rows]
    lengths = X.indptr[rows + 1] - starts
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    if len(rows):
        pos = np.arange(indptr[-1], dtype=np.int64) + np.repeat(starts - indptr[:-1], lengths)
    else:
        pos = np.zeros(0, dtype=np.int64)
    out = Rows(indptr, X.indices[pos], X.data[pos], sq=X.sq[rows], n_features=X.n_features)
    parent = getattr(X, "_dense", None)
    if parent is not None:
        out._dense = parent[rows]
    return out
