"""Data sets the suites build from the shared ones, written once into the bench's work folder
(``Where.work``) and reused while their sources are unchanged.

* ``news20 (1-10 vs 11-20)``: news20's rows with the classes 1-10 labelled +1 and 11-20 labelled
  -1 (the two-class problem svmocas and SVMperf train), training and test file.
* ``ijcnn1 120k``: ijcnn1's training and test files together (141,691 rows), shuffled with the
  fixed seed ``SPLIT_SEED``, the first 120,000 rows to train and the rest to test: a problem on
  which DC-SVM's kernel work, not start-up, decides the time.

Only the label field of a line changes (binarised) or the order of the lines (the split); the
features stay as they are written.
"""

import os
from pathlib import Path

import numpy as np

SPLIT_SEED = 30
SPLIT_TRAIN_ROWS = 120_000


def _lines(path):
    with open(path, "rb") as fh:
        return [ln if ln.endswith(b"\n") else ln + b"\n" for ln in fh if ln.strip()]


def _write(path, lines):
    """``lines`` into ``path`` through a temporary file beside it (replaced at the end)."""
    tmp = Path(str(path) + ".part")
    with open(tmp, "wb") as fh:
        fh.writelines(lines)
    os.replace(tmp, path)


def _fresh(outs, sources):
    """Whether every file of ``outs`` exists and is newer than every one of ``sources``."""
    try:
        newest = max(os.path.getmtime(s) for s in sources)
        return all(os.path.getmtime(o) >= newest for o in outs)
    except OSError:
        return False


def _relabel(line, first_negative):
    label, sep, rest = line.partition(b" ")
    sign = b"+1" if int(float(label)) < first_negative else b"-1"
    return sign + sep + rest


def binarised(train, test, work, name, first_negative):
    """``(train, test)`` of the two-class version of a multi-class set: classes below
    ``first_negative`` are +1, the others -1 (files ``name`` and ``name``.t in ``work``)."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    outs = [work / name, work / (name + ".t")]
    srcs = [train, test]
    if not _fresh(outs, srcs):
        for src, out in zip(srcs, outs):
            _write(out, [_relabel(ln, first_negative) for ln in _lines(src)])
    return str(outs[0]), str(outs[1])


def shuffled_split(train, test, work, name, n_train=SPLIT_TRAIN_ROWS, seed=SPLIT_SEED):
    """``(train, test)``: the rows of both files, shuffled by ``numpy.random.default_rng(seed)``,
    the first ``n_train`` to ``name`` and the rest to ``name``.t in ``work``."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    outs = [work / name, work / (name + ".t")]
    if not _fresh(outs, [train, test]):
        rows = _lines(train) + _lines(test)
        order = np.random.default_rng(seed).permutation(len(rows))
        _write(outs[0], [rows[i] for i in order[:n_train]])
        _write(outs[1], [rows[i] for i in order[n_train:]])
    return str(outs[0]), str(outs[1])
