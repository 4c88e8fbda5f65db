"""SVMperf's evaluation of a prediction vector (what ``svm_perf_classify`` prints), numpy only.

From labels ``y`` (> 0 positive, < 0 negative) and decision values ``s`` (> 0 predicts
positive), in percent:

* accuracy, precision, recall and F1 of the predictions ``s > 0`` (an undefined ratio is 0, as
  SVMperf: F1 is 0 when nothing positive is found);
* PRBEP: the precision of the ``P`` best-scored rows (``P`` = number of positives), where
  precision equals recall;
* ROC area: 100 minus the percentage of swapped positive/negative pairs;
* average precision: the mean over the positives of the precision at each one's rank.

The ranking measures break ties of the scores pessimistically, as SVMperf: among rows of equal
score the negatives come first.  With no positives or no negatives they are ``nan``.
"""

import numpy as np


def _ratio(a, b):
    return a / b if b else 0.0


def perf_measures(y, s) -> dict:
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    s = np.asarray(s, dtype=np.float64).reshape(-1)
    if y.shape != s.shape:
        raise ValueError(f"{len(y)} labels for {len(s)} scores")
    pos = y > 0
    pred = s > 0
    a = int(np.count_nonzero(pos & pred))
    b = int(np.count_nonzero(~pos & pred))
    c = int(np.count_nonzero(pos & ~pred))
    d = int(np.count_nonzero(~pos & ~pred))
    n = a + b + c + d
    P, N = a + c, b + d
    precision = _ratio(a, a + b)
    recall = _ratio(a, a + c)
    f1 = 0.0 if a == 0 else 2 * precision * recall / (precision + recall)
    out = {"table": (a, b, c, d), "errorrate": 100.0 * _ratio(b + c, n),
           "accuracy": 100.0 - 100.0 * _ratio(b + c, n), "precision": 100.0 * precision,
           "recall": 100.0 * recall, "f1": 100.0 * f1, "prbep": float("nan"),
           "rocarea": float("nan"), "avgprec": float("nan")}
    # best score first; among equal scores the negatives first (pessimistic)
    order = np.lexsort((pos.astype(np.int8), -s))
    ranked = pos[order]
    if P:
        out["prbep"] = 100.0 * float(np.count_nonzero(ranked[:P])) / P
        neg_above = np.cumsum(~ranked)[ranked]          # negatives ranked above each positive
        rank = np.flatnonzero(ranked) + 1                # 1-based rank of each positive
        out["avgprec"] = 100.0 * float(np.mean(np.arange(1, P + 1) / rank))
        if N:
            out["rocarea"] = 100.0 - 100.0 * float(np.sum(neg_above)) / (P * N)
    return out


def summary_lines(m) -> list:
    """SVMperf's closing lines of svm_perf_classify (the ``%5.2f`` percentages)."""
    return ["Accuracy : %5.2f" % m["accuracy"],
            "Precision: %5.2f" % m["precision"],
            "Recall   : %5.2f" % m["recall"],
            "F1       : %5.2f" % m["f1"],
            "PRBEP    : %5.2f" % m["prbep"],
            "ROCArea  : %5.2f" % m["rocarea"],
            "AvgPrec  : %5.2f" % m["avgprec"]]
