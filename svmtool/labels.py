"""Class labels as LIBLINEAR and LIBSVM see them: grouping, indices, per-class C.

Every multi-class driver (one-vs-rest, one-vs-one, Crammer-Singer, ordinal pairs) groups the
labels the same way, so the order of classes in a model file, and with it the decision values,
match the C programs'.  A types-level module: numpy only.
"""

import warnings

import numpy as np


def group_classes(y):
    """LIBLINEAR's class grouping.

    Returns (labels, perm, start, count): ``labels`` in order of first appearance, except that a
    problem with exactly the labels {-1, +1} puts +1 first; ``perm`` lists the rows class by class
    (stable within a class); class ``i`` occupies ``perm[start[i]:start[i] + count[i]]``.
    """
    y = np.asarray(y, dtype=np.float64)
    uniq, first, inverse = np.unique(y, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")          # classes by first appearance
    labels = uniq[order]
    if len(labels) == 2 and labels[0] == -1 and labels[1] == 1:
        order = order[::-1]
        labels = labels[::-1]
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq))
    cls = rank[inverse.reshape(-1)]
    perm = np.argsort(cls, kind="stable")
    count = np.bincount(cls, minlength=len(labels))
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    return labels.copy(), perm, start, count


def class_index(y, labels):
    """Index into ``labels`` of every entry of ``y`` (-1 where a label is unknown)."""
    y = np.asarray(y, dtype=np.float64)
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    pos = np.searchsorted(sorted_labels, y)
    pos = np.clip(pos, 0, len(labels) - 1)
    found = sorted_labels[pos] == y
    return np.where(found, order[pos], -1)


def class_factors(weights, labels):
    """The ``-w LABEL FACTOR`` factor of each label (1 when none is given); a warning for a
    weighted label that the data do not have."""
    out = np.ones(len(labels))
    for label, factor in weights:
        hit = np.nonzero(labels == float(label))[0]
        if len(hit) == 0:
            warnings.warn(f"class weight for label {label:g} specified, but no such label in data")
            continue
        out[hit[0]] *= float(factor)
    return out


def class_weights(params, labels):
    """C of every class: ``params.C`` times its ``-w`` factor."""
    return float(params.C) * class_factors(params.weights, labels)
