"""Jitted scoring of CSR rows against a linear model's feature-major weight matrix.

:func:`decision_values` computes, for every row ``i`` and weight column ``k``::

    out[i, k] = sum over stored (j, v) of row i with 0 <= j < nr_feature of w[j, k] * v
                + (bias * w[nr_feature, k]  when bias >= 0)

Terms are added in storage order and the bias term last -- the order of LIBLINEAR's
``predict_values`` on a row whose bias node comes last -- so the result matches LIBLINEAR's
decision values bit for bit.  Columns at or beyond ``nr_feature`` are skipped (test features the
model never saw).  Pure: arrays in, the ``out`` array filled, no I/O.
"""

from svmtool._jit import njit


@njit
def decision_values(indptr, indices, data, w, nr_feature, bias, out):
    """Fill ``out`` (n_rows, nr_w) with the decision values of the CSR rows.

    ``indptr`` int64 (n_rows + 1), ``indices`` int32/int64, ``data`` float64, ``w`` float64
    (nr_feature [+1], nr_w) C-contiguous.  Returns ``out``.
    """
    n_rows = indptr.shape[0] - 1
    nr_w = w.shape[1]
    for i in range(n_rows):
        for k in range(nr_w):
            out[i, k] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j >= 0 and j < nr_feature:
                v = data[p]
                for k in range(nr_w):
                    out[i, k] += w[j, k] * v
        if bias >= 0:
            for k in range(nr_w):
                out[i, k] += w[nr_feature, k] * bias
    return out
