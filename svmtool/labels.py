"""Class labels as LIBLINEAR and LIBSVM see them: grouping, indices, per-class C.

Every multi-class driver (one-vs-rest, one-vs-one, Crammer-Singer, ordinal pairs) groups the
labels the same way, so the order of classes in a model file, and with it the decision values,
match the C programs'.  A types-level module: numpy only.
"""

import warnings

import numpy as np

# LIBLINEAR and LIBSVM keep class labels as C ints in their models (``label 1 -1``); a
# classification solver takes only labels that are such integers (regression and ranking take any)
MIN_CLASS_LABEL = -2.0**31
MAX_CLASS_LABEL = 2.0**31 - 1


def check_class_labels(y, solver, source="<memory>", note=None):
    """Refuse labels that are not class labels for the classification solver ``solver``.

    Raises :class:`~svmtool.errors.DataFormatError` naming the first such label: its file and
    line when ``note`` (``Problem.label_note``, set by the text readers) gives them, else its
    example number.  Costs a few vectorised passes over ``y``.
    """
    y = np.asarray(y, dtype=np.float64)
    ok = (y == np.floor(y)) & (y >= MIN_CLASS_LABEL) & (y <= MAX_CLASS_LABEL)
    if ok.all():
        return
    from svmtool.errors import DataFormatError

    row = int(np.argmin(ok))
    reason = (f"is not a class label (an integer from {int(MIN_CLASS_LABEL)} to "
              f"{int(MAX_CLASS_LABEL)}): -s {solver} is a classification solver; for "
              f"real-valued targets use a regression solver (-s svr-l2, svr-l2-dual, svr-l1-dual) "
              f"or -s ordinal")
    if note is not None:
        line, token = note
        raise DataFormatError(source, line, f"label {token!r} {reason}")
    raise DataFormatError(source, None, f"example {row + 1}: label '{float(y[row])!r}' {reason}")


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


CHUNK = 1 << 16      # rows a time in the passes over labels below (512 KB of float64 labels:
#                      small temporaries, which the allocator reuses instead of keeping many)


def distinct_values(y):
    """The distinct values of ``y``, increasing, as floats: np.unique's answer without its plain
    form, which imports numpy.ma (milliseconds of a short command's start)."""
    v = np.sort(np.asarray(y, dtype=np.float64).ravel())
    if len(v) == 0:
        return v
    return v[np.concatenate(([True], v[1:] != v[:-1]))]


def class_labels(y):
    """LIBLINEAR's class grouping (:func:`group_classes`) without its per-row arrays.

    Returns (labels, cls, count): ``labels`` as group_classes orders them, ``cls`` the index of
    every row's label in ``labels`` as int8 (int32 from 127 classes on), ``count`` the rows of
    each class.  One pass over ``y`` in chunks (a mapped label vector is read, never copied):
    a byte a row, where grouping the whole vector at once (sort, inverse, permutation) took
    some 40.  The permutation of group_classes is ``np.argsort(cls, kind="stable")``."""
    y = np.asarray(y)
    n = y.shape[0]
    labels = np.empty(0, dtype=np.float64)       # in order of first appearance
    order = np.empty(0, dtype=np.int64)          # labels[order] sorted
    cls = np.empty(n, dtype=np.int8)
    for a in range(0, n, CHUNK):
        part = np.asarray(y[a:a + CHUNK], dtype=np.float64)
        pos = np.searchsorted(labels[order], part)
        found = labels[order][np.minimum(pos, max(len(labels) - 1, 0))] == part \
            if len(labels) else np.zeros(len(part), dtype=bool)
        if not found.all():
            miss = np.flatnonzero(~found)
            new, first = np.unique(part[miss], return_index=True)
            labels = np.concatenate([labels, new[np.argsort(first, kind="stable")]])
            order = np.argsort(labels, kind="stable")
            if len(labels) >= 127 and cls.dtype == np.int8:
                cls = cls.astype(np.int32)
            pos = np.searchsorted(labels[order], part)
        cls[a:a + len(part)] = order[pos]
    if len(labels) == 2 and labels[0] == -1 and labels[1] == 1:
        labels = labels[::-1].copy()
        np.subtract(1, cls, out=cls)
    count = np.zeros(len(labels), dtype=np.int64)
    for a in range(0, n, CHUNK):
        count += np.bincount(cls[a:a + CHUNK], minlength=len(labels))
    return labels, cls, count


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


def check_signs(n_rows, y, C_pos, C_neg):
    """(y, C_pos, C_neg) of a binary solver that keeps only the signs of its labels: as
    :func:`check_binary`, but ``y`` an int8 vector (no copy when it is one already)."""
    C_pos, C_neg = float(C_pos), float(C_neg)
    if not (C_pos > 0 and C_neg > 0):
        raise ValueError(f"C must be > 0 (got C_pos={C_pos}, C_neg={C_neg})")
    y = np.asarray(y).reshape(-1)
    if y.shape[0] != n_rows:
        raise ValueError(f"{y.shape[0]} labels for {n_rows} rows")
    if y.dtype != np.int8:
        if not np.all((y == 1.0) | (y == -1.0)):
            raise ValueError("labels must be -1 or +1")
        y = np.where(y > 0, 1, -1).astype(np.int8)
    elif y.size and not (np.abs(y).min() == 1 and np.abs(y).max() == 1):
        raise ValueError("labels must be -1 or +1")
    return np.ascontiguousarray(y), C_pos, C_neg


def signs_of(cls, k):
    """int8 labels of one-vs-rest class ``k`` from class indices ``cls``: +1 where ``cls ==
    k``, else -1 (a byte a row, no other per-row array)."""
    out = np.equal(cls, k).view(np.int8)
    out *= 2
    out -= 1
    return out


def check_binary(n_rows, y, C_pos, C_neg):
    """(y, C_pos, C_neg) of a binary solver checked: both costs > 0 (as floats), ``y`` a
    contiguous float64 vector of ``n_rows`` labels in {-1, +1}; ValueError otherwise."""
    C_pos, C_neg = float(C_pos), float(C_neg)
    if not (C_pos > 0 and C_neg > 0):
        raise ValueError(f"C must be > 0 (got C_pos={C_pos}, C_neg={C_neg})")
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != n_rows:
        raise ValueError(f"{y.shape[0]} labels for {n_rows} rows")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("labels must be -1 or +1")
    return y, C_pos, C_neg
