"""The plumbing the coordinate-descent drivers share around their jitted loops: the batch-and-
replay driver and the CSR arrays with unsigned index types.

A jitted loop runs a batch of outer iterations per call (until a work budget or its history
buffer is full) and records one history row per iteration; the Python driver calls it again
until its stopping flag is set (:class:`Batches`) and replays the history to the callback, one
call per outer iteration (:func:`replay`), so that progress bars and traces see every iteration
at the cost of one Python call per batch.
"""

import time

import numpy as np


class Batches:
    """The calls of a jitted loop that does a batch of outer iterations per call: iterating
    yields what each call of ``run()`` returns (the iterations it did) until the loop's stopping
    flag ``istate[stop_field]`` is set, ``istate[iter_field]`` reaches ``max_iter``, a call did
    none, or -- between calls, the loop neither converged nor at its cap -- the ``deadline``
    (``time.monotonic()``) has passed; then ``out_of_time`` is True.  ``istate`` is an integer
    array with the fields as indices, or a numpy record with them as names."""

    def __init__(self, run, istate, iter_field, stop_field, max_iter, deadline=None):
        self.run, self.istate, self.max_iter, self.deadline = run, istate, max_iter, deadline
        self.iter_field, self.stop_field = iter_field, stop_field
        self.out_of_time = False

    def _going(self):
        return not self.istate[self.stop_field] and self.istate[self.iter_field] < self.max_iter

    def __iter__(self):
        from svmtool.solvers.common.result import time_up

        while self._going():
            done = self.run()
            yield done
            if done == 0:
                break
            if self._going() and time_up(self.deadline):
                self.out_of_time = True
                break


def replay(callback, last_iteration, done, hist, names, t_start=None, derived=()):
    """Call ``callback`` once for each of the ``done`` iterations of a batch that ended at
    ``last_iteration``, with the columns of its history rows ``hist[:done]`` named by ``names``
    ((name, type), ...), the values ``derived`` computes from a row ((name, function), ...)
    and, given ``t_start``, the seconds elapsed."""
    first = last_iteration - done
    for t in range(done):
        info = {name: conv(hist[t, c]) for c, (name, conv) in enumerate(names)}
        for name, fn in derived:
            info[name] = fn(hist[t])
        if t_start is not None:
            info["elapsed"] = time.perf_counter() - t_start
        callback(first + t + 1, info)


def unsigned_views(indptr, indices, n_features):
    """(indptr int64, indptr as uint64, indices as uint32) after checking them: the unsigned
    views spare numba's wrap-around code for negative indices in the hot loops."""
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    if indptr.size and (indptr[0] < 0 or np.any(np.diff(indptr) < 0)):
        raise ValueError("indptr must be non-negative and non-decreasing")
    indices = np.ascontiguousarray(indices)
    nnz_end = int(indptr[-1]) if indptr.size else 0
    if indices.shape[0] < nnz_end:
        raise ValueError(f"indices holds {indices.shape[0]} entries, indptr needs {nnz_end}")
    if nnz_end:
        used = indices[int(indptr[0]):nnz_end]
        lo, hi = int(used.min()), int(used.max())
        if lo < 0 or hi >= n_features:
            raise ValueError(f"feature index {lo if lo < 0 else hi} outside [0, {n_features})")
    if n_features > 0xFFFFFFFF:
        raise ValueError("more than 2^32 - 1 features are not supported by the dual solver")
    if indices.dtype == np.int32 or indices.dtype == np.uint32:
        indices_u = indices.view(np.uint32)
    else:
        indices_u = indices.astype(np.uint32)
    return indptr, indptr.view(np.uint64), indices_u
