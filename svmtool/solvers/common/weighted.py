"""Instance weights in the fits: the per-row cost and the rows of weight 0.

With instance weights ``W_i`` (SVMlight's ``cost:`` tokens, LIBLINEAR-weights' ``-W``) row
``i``'s loss is scaled by ``C_i = C_class(i) * W_i``, as LIBLINEAR-weights and LIBSVM-weights
do.  A row of weight 0 takes no part: the fits solve the problem without it (its dual variable,
when the fit has one, is 0), which is also what keeps a dual's per-row bound (``C_i``) or
diagonal term (``1 / (2 C_i)``) from being 0 or infinite.  Without weights nothing here runs,
so an unweighted fit is what it was.
"""

import numpy as np


def checked(weights, n_rows):
    """The weights as a float64 vector of ``n_rows`` entries, finite and 0 or more (None stays
    None); ValueError otherwise."""
    if weights is None:
        return None
    weights = np.ascontiguousarray(weights, dtype=np.float64).reshape(-1)
    if weights.shape[0] != n_rows:
        raise ValueError(f"{weights.shape[0]} weights for {n_rows} rows")
    if not (np.all(np.isfinite(weights)) and np.all(weights >= 0)):
        raise ValueError("instance weights must be finite numbers, 0 or more")
    return weights


def has_zeros(weights):
    """Whether some row weighs 0 (so the fit runs on the others: :func:`positive_rows`)."""
    return weights is not None and not bool(np.all(weights > 0))


def positive_rows(indptr, indices, data, y, weights):
    """``(keep, indptr, indices, data, y, weights)`` of the rows of positive weight (``keep``
    their positions, int64, in order)."""
    from svmtool.problem import take_csr_rows

    keep = np.flatnonzero(weights > 0)
    sub_indptr, sub_indices, sub_data = take_csr_rows(indptr, indices, data, keep)
    y = np.asarray(y).reshape(-1)
    return keep, sub_indptr, sub_indices, sub_data, y[keep], weights[keep]


def row_costs(y, C_pos, C_neg, weights):
    """``C_class(i) * W_i`` per row (``C_pos`` where ``y > 0``; ``weights`` None: the class's
    C alone)."""
    cost = np.where(np.asarray(y) > 0, C_pos, C_neg).astype(np.float64)
    return cost if weights is None else cost * weights


def fit_positive(fit, indptr, indices, data, y, weights, *args, **kwargs):
    """``fit(indptr, indices, data, y, *args, weights=..., **kwargs)`` on the rows of positive
    weight, its ``alpha`` (if it has one a row) put back in the rows' places with 0 for the
    others."""
    keep, sub_indptr, sub_indices, sub_data, sub_y, sub_w = positive_rows(
        indptr, indices, data, y, weights)
    res = fit(sub_indptr, sub_indices, sub_data, sub_y, *args, weights=sub_w, **kwargs)
    alpha = getattr(res, "alpha", None)
    if alpha is not None and np.ndim(alpha) == 1 and len(alpha) == len(keep):
        full = np.zeros(len(weights), dtype=np.float64)
        full[keep] = alpha
        res.alpha = full
    return res
