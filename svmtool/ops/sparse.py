"""Small jitted helpers on raw CSR arrays (see :mod:`svmtool.problem` for the array contract).

All functions take the three CSR arrays ``indptr`` (int64), ``indices`` (int32 or int64, 0-based
columns) and ``data`` (float64) and plain numpy vectors; none builds a scipy object.

* :func:`row_dot`       -- ``x_i . w`` for one row (columns ``>= len(w)`` ignored);
* :func:`row_axpy`      -- ``w += a * x_i`` for one row (columns ``>= len(w)`` ignored);
* :func:`csr_dot_dense` -- ``X @ w`` (columns ``>= len(w)`` ignored, as LIBLINEAR's predict ignores
  test features the model does not know);
* :func:`csr_t_dot`     -- ``X.T @ v`` as a vector of length ``n_features`` (columns
  ``>= n_features`` ignored);
* :func:`row_sq_norms`  -- ``||x_i||^2`` for every row;
* :func:`csr_to_csc`    -- the same matrix by columns (a counting sort: each column's rows in
  increasing order), with unsigned index arrays.

Sums run left to right over each row's stored entries, the order LIBLINEAR's ``sparse_operator``
uses, so a solver built on these reproduces LIBLINEAR's rounding.
"""

import numpy as np

from svmtool._jit import njit


@njit
def row_dot(indptr, indices, data, i, w):
    """``sum_k data[k] * w[indices[k]]`` over row ``i``; columns outside ``w`` are skipped."""
    n = w.shape[0]
    s = 0.0
    for k in range(indptr[i], indptr[i + 1]):
        j = indices[k]
        if j < n:
            s += w[j] * data[k]
    return s


@njit
def row_axpy(indptr, indices, data, i, a, w):
    """``w[indices[k]] += a * data[k]`` over row ``i`` (in place); columns outside ``w`` skipped."""
    n = w.shape[0]
    for k in range(indptr[i], indptr[i + 1]):
        j = indices[k]
        if j < n:
            w[j] += a * data[k]


@njit
def csr_dot_dense(indptr, indices, data, w):
    """``X @ w`` as a float64 vector of length ``n_rows``."""
    n_rows = indptr.shape[0] - 1
    n = w.shape[0]
    out = np.empty(n_rows, dtype=np.float64)
    for i in range(n_rows):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if j < n:
                s += w[j] * data[k]
        out[i] = s
    return out


@njit
def csr_t_dot(indptr, indices, data, v, n_features):
    """``X.T @ v`` as a float64 vector of length ``n_features``."""
    n_rows = indptr.shape[0] - 1
    out = np.zeros(n_features, dtype=np.float64)
    for i in range(n_rows):
        a = v[i]
        if a != 0.0:
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                if j < n_features:
                    out[j] += a * data[k]
    return out


@njit
def row_sq_norms(indptr, data):
    """``||x_i||^2`` for every row, summed in storage order."""
    n_rows = indptr.shape[0] - 1
    out = np.empty(n_rows, dtype=np.float64)
    for i in range(n_rows):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            s += v * v
        out[i] = s
    return out


@njit
def csr_to_csc(indptr, indices, data, n_cols):
    """``(cptr uint64[n_cols + 1], rows uint32, vals float64)``: the stored entries of the rows
    ``indptr[0]..`` grouped by column, within a column in increasing row order (the order a
    stable sort by column gives).  Entries of columns ``>= n_cols`` are left out."""
    n_rows = indptr.shape[0] - 1
    lo = indptr[0]
    cptr = np.zeros(n_cols + 1, dtype=np.uint64)
    for k in range(lo, indptr[n_rows]):
        if indices[k] < n_cols:
            cptr[indices[k] + 1] += 1
    for j in range(n_cols):
        cptr[j + 1] += cptr[j]
    fill = cptr[:n_cols].copy()
    nnz = cptr[n_cols]
    rows = np.empty(nnz, dtype=np.uint32)
    vals = np.empty(nnz, dtype=np.float64)
    for i in range(n_rows):
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if j >= n_cols:
                continue
            p = fill[j]
            rows[p] = i
            vals[p] = data[k]
            fill[j] = p + 1
    return cptr, rows, vals
