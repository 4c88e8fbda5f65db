"""Problem: a data set as raw CSR arrays, the one type every reader returns and every solver takes.

Arrays (the contract the jitted kernels rely on):

* ``indptr``  int64, length ``n_rows + 1``;
* ``indices`` int32 (int64 only for arrays built in memory wider than int32: the text readers
  refuse a feature index beyond 2**31 - 1, as a model could not hold it), 0-based columns,
  strictly increasing within a row;
* ``data``    float64;
* ``y``       float64 labels, length ``n_rows``;
* ``qid``     int64 query ids or ``None``;
* ``comments`` list of str (the text after ``#`` on each row) or ``None``;
* ``weights`` float64 instance weights, length ``n_rows`` (SVMlight's ``cost:`` tokens, a
  ``-W`` weight file): row ``i``'s C is multiplied by ``weights[i]``; ``None`` means every row
  weighs 1, and a solver's registry entry says whether it takes them (``instance_weights``).

``label_note`` is set by the text readers: ``(line, label text)`` of the first row whose label is
not a class label (not an integer that a C int holds), or ``None``.  Regression and ranking take
any real label; classification solvers refuse such a label and name that line (svmtool.api).
It describes the file as read, so :meth:`take_rows` does not carry it over.

Column ``j`` is feature ``j + 1`` of a one-based svmlight file.  No scipy object is built unless
:attr:`X` is asked for, so loading and training never pay scipy's import.
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np


@dataclass
class Problem:
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    y: np.ndarray
    n_features: int
    qid: Optional[np.ndarray] = None
    comments: Optional[list] = None
    weights: Optional[np.ndarray] = field(default=None, compare=False)
    source: str = field(default="<memory>", compare=False)
    label_note: Optional[tuple] = field(default=None, compare=False, repr=False)

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1] - self.indptr[0])

    @property
    def shape(self):
        return (self.n_rows, self.n_features)

    @property
    def X(self):
        """The data as a ``scipy.sparse.csr_matrix`` (imports scipy; shares the arrays)."""
        import scipy.sparse as sp

        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)

    @classmethod
    def from_matrix(cls, X, y, qid=None, n_features=None, source="<memory>"):
        """Build from anything scipy.sparse or numpy can turn into CSR."""
        import scipy.sparse as sp

        X = sp.csr_matrix(X)
        X.sort_indices()
        X.sum_duplicates()
        indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        idx_dtype = np.int32 if X.shape[1] <= np.iinfo(np.int32).max else np.int64
        indices = np.ascontiguousarray(X.indices, dtype=idx_dtype)
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
        if len(y) != X.shape[0]:
            raise ValueError(f"{len(y)} labels for {X.shape[0]} rows")
        if qid is not None:
            qid = np.ascontiguousarray(qid, dtype=np.int64).reshape(-1)
        nf = X.shape[1] if n_features is None else int(n_features)
        return cls(indptr, indices, data, y, nf, qid=qid, source=source)

    def take_rows(self, rows):
        """A new Problem holding the given rows (in that order)."""
        rows = np.asarray(rows, dtype=np.int64)
        indptr, indices, data = take_csr_rows(self.indptr, self.indices, self.data, rows)
        return Problem(
            indptr,
            indices,
            data,
            self.y[rows],
            self.n_features,
            qid=None if self.qid is None else self.qid[rows],
            comments=None if self.comments is None else [self.comments[i] for i in rows],
            weights=None if self.weights is None else self.weights[rows],
            source=self.source,
        )


def take_csr_rows(indptr, indices, data, rows):
    """(indptr, indices, data) of the given rows (int64 positions, in that order) of CSR
    arrays."""
    rows = np.asarray(rows, dtype=np.int64)
    starts = indptr[rows]
    ends = indptr[rows + 1]
    lengths = ends - starts
    out = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    if len(rows):
        # positions of every kept nonzero, without a Python loop
        offsets = np.repeat(starts - out[:-1], lengths)
        pos = np.arange(out[-1], dtype=np.int64) + offsets
    else:
        pos = np.zeros(0, dtype=np.int64)
    return out, indices[pos], data[pos]


def refuse_weights(problem, what, why=None):
    """ParameterError when ``problem`` has instance weights and ``what`` (a solver, a search,
    a path of the data) would train on it as if every row weighed 1; ``why``: the whole
    message instead (a solver's ``weights_refused``)."""
    if getattr(problem, "weights", None) is not None:
        from svmtool.errors import ParameterError

        raise ParameterError(why or f"{what} does not take instance weights (cost: tokens "
                                    f"or -W)")


def without_zero_weights(problem):
    """The problem without its rows of weight 0 (as LIBSVM-weights drops them before training:
    a row whose C is 0 takes no part); the problem itself when it has none."""
    w = problem.weights
    if w is None or np.all(np.asarray(w) > 0):
        return problem
    return problem.take_rows(np.flatnonzero(np.asarray(w) > 0))


def with_bias(problem, bias):
    """CSR arrays with a constant column ``bias`` appended at index n_features (LIBLINEAR's -B)."""
    indptr, indices, data = problem.indptr, problem.indices, problem.data
    if bias < 0:
        return indptr, indices, data, problem.n_features
    n = problem.n_rows
    nf = problem.n_features
    ends = indptr[1:] - indptr[0]
    idx_dtype = indices.dtype if nf <= np.iinfo(np.int32).max else np.int64
    new_indices = np.insert(indices[indptr[0]:indptr[-1]].astype(idx_dtype, copy=False), ends, nf)
    new_data = np.insert(data[indptr[0]:indptr[-1]], ends, float(bias))
    new_indptr = (indptr - indptr[0]) + np.arange(n + 1, dtype=np.int64)
    return new_indptr, new_indices, new_data, nf + 1
