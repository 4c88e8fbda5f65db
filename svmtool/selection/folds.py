"""The folds of a cross validation: LIBSVM's own split, or svmtool's seeded one.

LIBSVM's ``svm_cross_validation`` (svm.cpp, 3.24 to 3.37 alike) never seeds ``rand()``, so
svm-train -v draws from glibc's generator in its initial state, the state of ``srand(1)``.
For C-SVC and nu-SVC with fewer folds than rows the split is stratified: the rows are grouped
by class (LIBSVM's ``svm_group_classes``: labels in order of first appearance, except that a
two-class problem of labels -1 and +1 whose first row is -1 puts +1 first; rows of a class in
file order), the rows of each class are shuffled in turn by ``j = i + rand() % (count - i)``,
swap(i, j), and fold f takes rows ``f count / k`` to ``(f + 1) count / k`` of every class, class
after class.  Otherwise one shuffle of all rows by the same rule is cut into k slices.
``libsvm_folds`` returns the folds in that order; a fold's training set is, as LIBSVM builds
it, the folds before it followed by the folds after it (:func:`training_rows`).  Together with
a solver that follows LIBSVM's steps this gives svm-train -v's rate cell for cell.

glibc's ``rand()`` is the additive feedback generator of
:func:`svmtool.solvers.common.rng.glibc_rand_state` (r_k = r_{k-3} + r_{k-31} mod 2^32, output
r_k >> 1); one value per row is drawn here in plain Python (linear in the rows, a small cost
beside the folds' training).
"""

import numpy as np

from svmtool.labels import group_classes


class GlibcRand:
    """glibc's ``rand()`` after ``srand(seed)``, one value per call."""

    def __init__(self, seed=1):
        from svmtool.solvers.common.rng import glibc_rand_state

        state = glibc_rand_state(seed)
        self.table = [int(v) for v in state[:31]]
        self.front = int(state[31])
        self.rear = int(state[32])

    def __call__(self):
        t = self.table
        v = (t[self.front] + t[self.rear]) & 0xFFFFFFFF
        t[self.front] = v
        self.front = 0 if self.front == 30 else self.front + 1
        self.rear = 0 if self.rear == 30 else self.rear + 1
        return v >> 1


def _shuffle(rows, rand):
    """LIBSVM's in-place shuffle of a list: swap(i, i + rand() % (len - i)) for every i."""
    m = len(rows)
    for i in range(m):
        j = i + rand() % (m - i)
        rows[i], rows[j] = rows[j], rows[i]


def libsvm_folds(y, nr_fold, stratified=True, seed=1):
    """svm-train -v's folds, in order, as arrays of row indices (see the module doc)."""
    y = np.asarray(y)
    n = len(y)
    nr_fold = min(int(nr_fold), n)
    rand = GlibcRand(seed)
    if stratified and nr_fold < n:
        labels, perm, start, count = group_classes(y)
        parts = [[] for _ in range(nr_fold)]
        for c in range(len(labels)):
            rows = perm[start[c]:start[c] + count[c]].tolist()
            _shuffle(rows, rand)
            for f in range(nr_fold):
                parts[f] += rows[f * count[c] // nr_fold:(f + 1) * count[c] // nr_fold]
        return [np.asarray(p, dtype=np.int64) for p in parts]
    rows = list(range(n))
    _shuffle(rows, rand)
    return [np.asarray(rows[f * n // nr_fold:(f + 1) * n // nr_fold], dtype=np.int64)
            for f in range(nr_fold)]


def seeded_folds(y, nr_fold, stratified=True, seed=1):
    """svmtool's folds (a numpy generator of ``seed``), split as LIBSVM splits: the seeded
    folds of ``svmtool svm-train -v`` (:func:`svmtool.solvers.kernel.libsvm_train.cv_folds`)."""
    from svmtool.solvers.kernel.libsvm_train import cv_folds

    return [np.asarray(f, dtype=np.int64) for f in cv_folds(y, nr_fold, stratified, seed)]


def training_rows(folds, f):
    """Fold f's training rows in LIBSVM's order: the folds before it, then those after it."""
    parts = [folds[k] for k in range(len(folds)) if k != f]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
