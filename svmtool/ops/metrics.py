"""Evaluation measures, numpy only (no scipy or scikit-learn on the predict path).

* :func:`accuracy` -- fraction of rows whose predicted label equals the true one;
* :func:`precision_recall_f1` -- of one positive class against all other labels;
* :func:`per_class_prf` -- the same for every class of a list, plus each class's support;
* :func:`roc_auc` -- area under the ROC curve from real-valued scores, computed as the
  Mann-Whitney U statistic with average ranks for ties (a tied positive/negative pair counts 1/2);
* :func:`mean_squared_error`, :func:`squared_correlation` -- what LIBLINEAR's predict prints for
  regression models; :class:`RegressionSums` accumulates them chunk by chunk.

Undefined ratios (no predicted positives, no positives at all) are 0.0, as scikit-learn's
``zero_division=0``; an AUC with only one class present is ``nan``.
"""

import numpy as np


def accuracy(y_true, y_pred) -> float:
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    if len(y_true) == 0:
        return float("nan")
    return float(np.count_nonzero(y_true == y_pred)) / len(y_true)


def _ratio(a, b):
    return a / b if b else 0.0


def precision_recall_f1(y_true, y_pred, positive):
    """``(precision, recall, f1, tp, fp, fn)`` of class ``positive`` against every other label."""
    t = np.asarray(y_true, dtype=np.float64) == positive
    p = np.asarray(y_pred, dtype=np.float64) == positive
    tp = int(np.count_nonzero(t & p))
    fp = int(np.count_nonzero(~t & p))
    fn = int(np.count_nonzero(t & ~p))
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    return precision, recall, f1, tp, fp, fn


def per_class_prf(y_true, y_pred, labels):
    """Arrays ``(precision, recall, f1, support)``, one entry per label of ``labels``."""
    labels = np.asarray(labels, dtype=np.float64)
    out = np.zeros((4, len(labels)), dtype=np.float64)
    y_true = np.asarray(y_true, dtype=np.float64)
    for c, lab in enumerate(labels):
        precision, recall, f1, tp, fp, fn = precision_recall_f1(y_true, y_pred, lab)
        out[:, c] = precision, recall, f1, tp + fn
    return out[0], out[1], out[2], out[3].astype(np.int64)


def average_ranks(values) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing the mean of their ranks."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    order = np.argsort(values, kind="mergesort")
    sorted_v = values[order]
    # start of each run of equal values in sorted order
    starts = np.flatnonzero(np.r_[True, sorted_v[1:] != sorted_v[:-1]])
    ends = np.r_[starts[1:], n]                      # one past each run's end
    run_rank = (starts + 1 + ends) / 2.0             # mean of ranks starts+1 .. ends
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(run_rank, ends - starts)
    return ranks


def roc_auc(is_positive, scores) -> float:
    """Area under the ROC curve: P(score of a random positive > score of a random negative),
    ties counting one half (the Mann-Whitney U statistic over n_pos * n_neg).

    ``is_positive``: booleans (or a 0/1 array); ``scores``: higher means more positive.
    """
    pos = np.asarray(is_positive).astype(bool)
    scores = np.asarray(scores, dtype=np.float64)
    if pos.shape != scores.shape:
        raise ValueError(f"{len(pos)} labels for {len(scores)} scores")
    n_pos = int(np.count_nonzero(pos))
    n_neg = len(pos) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    rank_sum = float(average_ranks(scores)[pos].sum())
    u = rank_sum - n_pos * (n_pos + 1) / 2.0
    return u / (float(n_pos) * float(n_neg))


class RegressionSums:
    """Running sums for mean squared error and squared correlation, fed chunk by chunk."""

    def __init__(self):
        self.n = 0
        self.sse = 0.0
        self.sum_p = self.sum_t = self.sum_pp = self.sum_tt = self.sum_pt = 0.0

    def add(self, y_true, y_pred):
        t = np.asarray(y_true, dtype=np.float64)
        p = np.asarray(y_pred, dtype=np.float64)
        self.n += len(t)
        self.sse += float(np.sum((p - t) ** 2))
        self.sum_p += float(p.sum())
        self.sum_t += float(t.sum())
        self.sum_pp += float(np.dot(p, p))
        self.sum_tt += float(np.dot(t, t))
        self.sum_pt += float(np.dot(p, t))
        return self

    def mse(self) -> float:
        return self.sse / self.n if self.n else float("nan")

    def squared_correlation(self) -> float:
        """Squared Pearson correlation of predictions and targets (LIBLINEAR's formula)."""
        n = float(self.n)
        num = n * self.sum_pt - self.sum_p * self.sum_t
        den = (n * self.sum_pp - self.sum_p ** 2) * (n * self.sum_tt - self.sum_t ** 2)
        if not den:
            return float("nan")
        return num * num / den


def mean_squared_error(y_true, y_pred) -> float:
    return RegressionSums().add(y_true, y_pred).mse()


def squared_correlation(y_true, y_pred) -> float:
    return RegressionSums().add(y_true, y_pred).squared_correlation()
