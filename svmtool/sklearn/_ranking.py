"""RankSVM: ranking and ordinal regression by svmtool's pairwise cutting-plane solver
(``-s ordinal``; SVMrank's problem).

Every pair of rows of one query (``qid``; all rows when there is none) with different labels
is a constraint w'x_i >= w'x_j + 1 - xi for y_i > y_j; C is per pair, as SVMrank's (times
100/n there).  With two label values this is the ROC-area SVM.  ``decision_function`` and
``predict`` give the scores (higher: ranked first); ``score`` is the pairwise accuracy.
"""

import numpy as np
from sklearn.base import BaseEstimator

from svmtool.ops.metrics import roc_auc
from svmtool.sklearn._base import SvmtoolEstimator, declared_parameters, keep_params


def pairwise_accuracy(y, scores, qid=None):
    """The fraction of the pairs within a query with y_i > y_j whose scores order them the same
    way (ties of the scores count one half)."""
    y = np.asarray(y, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    groups = [np.arange(len(y))] if qid is None else \
        [np.flatnonzero(qid == q) for q in np.unique(qid)]
    good = total = 0.0
    for rows in groups:
        yy, ss = y[rows], scores[rows]
        for level in np.unique(yy)[1:]:
            lower = yy <= level
            top = yy[lower] == level
            pairs = float(top.sum()) * float((~top).sum())
            if pairs:
                good += roc_auc(top, ss[lower]) * pairs
                total += pairs
    return good / total if total else float("nan")


@declared_parameters
class RankSVM(SvmtoolEstimator, BaseEstimator):
    """A linear ranking function from ordered labels, within queries: ``fit(X, y, qid=...)``.

    ``C`` costs each violated pair (SVMrank's ``-c`` is C * n / 100); ``tol`` is the cutting
    plane's violation as a fraction of the training loss (default 0.001); ``warm_start``,
    ``out_of_core``, ``memory_budget`` and ``dask`` as for LinearSVC.  No intercept: it
    cancels in every pair.  ``save`` writes SVMperf's model file (SVMrank's svm_rank_classify
    reads it) by default."""

    def __init__(self, *, C=1.0, tol=None, max_iter=None, verbose=0, random_state=None,
                 threads=None, warm_start=False, out_of_core=None, memory_budget=None,
                 dask=None):
        keep_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def fit(self, X, y=None, qid=None, *, init_model=None):
        """Train on ``X`` (array, sparse matrix, path or Problem), ranks ``y`` (any numbers:
        only their order counts) and query ids ``qid`` (a path's own when None)."""
        from svmtool.solvers import get_spec

        previous = self._previous()
        problem, _ = self._training_problem(X, y, qid=qid, y_numeric=True)
        kwargs = dict(self._common_kwargs(), solver=self._solver(), C=float(self.C))
        start, _ = self._start_model(init_model, previous, get_spec(self._solver()))
        self._model = self._train(problem, kwargs, start)
        return self

    def _solver(self):
        return "ordinal"

    @property
    def coef_(self):
        return self._model.w[:self._model.nr_feature, 0].copy()

    def decision_function(self, X):
        """The scores w'x of the rows of ``X``."""
        return self._raw_decision(X)[:, 0]

    predict = decision_function

    def score(self, X, y, qid=None):
        """Pairwise accuracy of the scores of ``X`` against ranks ``y`` (within ``qid``)."""
        return pairwise_accuracy(y, self.decision_function(X), qid)
