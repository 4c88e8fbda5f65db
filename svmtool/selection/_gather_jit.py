"""Sums over cached kernel rows (pure array code): the decision values of held-out rows and the
gradient of a seeded start, read from the rows the SMO has already computed for a gamma."""

from svmtool._jit import njit


@njit
def gather_expansion(cache, slots, coef, cols, out):
    """out[t] += sum_s coef[s] * cache[slots[s], cols[t]] (float32 rows, float64 sums)."""
    m = cols.shape[0]
    for s in range(slots.shape[0]):
        row = cache[slots[s]]
        c = coef[s]
        for t in range(m):
            out[t] += c * row[cols[t]]
