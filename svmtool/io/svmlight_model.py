"""SVMlight / SVMperf model files (svm_common.c's layout; FORMATS.md section 4), linear only.

Written (``--model-format svmlight`` or ``svmperf``, and by default for ranking models) the way
SVMperf writes a linear model, the first line being the version the target program compares
against (:data:`HEADERS`; SVMperf 3.00: ``SVM-light Version V6.20``): a header of ``value # comment`` lines, then a single pseudo support vector holding
``w`` with ``alpha*y = 1``, the bias column's weight folded into the threshold (the decision value
is ``w'x - b``, so ``b = -bias * w_bias``).  Zero weights are left out; numbers are ``%.17g``.

Read: any SVMlight-format model with the linear kernel (type 0): SVMperf's single pseudo vector
or SVMlight's many support vectors, summed into ``w = sum alpha_y x_sv``.  The result is a
two-class :class:`~svmtool.models.linear.LinearModel` with labels ``(+1, -1)`` (``dec > 0`` predicts +1,
SVMlight's rule; other labels when svmtool wrote them in the threshold line's comment, see
``_LABELS_TAG``) and, when ``b != 0``, a bias column of value 1 whose weight is ``-b``.  Kernel
models (types 1-4) are refused with a message.
"""

import numpy as np

from svmtool.errors import ModelFormatError
from svmtool.io.model_text import parse_float, parse_int

MAX_FEATURES = 2**31 - 1

HEADER = "SVM-light Version V6.20"
# the first line each target program reads (it compares the whole line): SVMperf 3.00 carries
# SVM-light 6.20 inside, and its svm_perf_classify refuses any other version
HEADERS = {"svmlight": HEADER, "svmperf": "SVM-light Version V6.20"}
# kernel parameters of a linear model's header when none are given: svm_learn's and
# svm_perf_learn's defaults of -d, -g, -s, -r, -u
DEFAULT_KERNEL_HEADER = (3, 1.0, 1.0, 1.0, "empty")


def svmlight_text(model, n_train=None, fmt="svmlight", kernel_header=None) -> str:
    """SVMperf-style text of a one-column linear model (binary classifier or ranking scorer).

    ``fmt`` picks the version line (:data:`HEADERS`); ``kernel_header`` the values written for
    the kernel parameters -d -g -s -r -u (the trainer's own, which a linear model ignores)."""
    if model.nr_w != 1:
        raise ValueError(f"the SVMlight format holds one weight vector; this model has "
                         f"{model.nr_w} (multi-class models: use LIBLINEAR's format)")
    w = model.w[:, 0]
    nf = model.nr_feature
    b = 0.0
    if model.has_bias:
        b = -model.bias * float(w[nf])
    if n_train is None:
        n_train = int(model.report.get("n_train", 0)) if model.report else 0
    if fmt not in HEADERS:
        raise ValueError(f"unknown SVMlight model flavour {fmt!r}")
    d, g, s_, r, u = DEFAULT_KERNEL_HEADER if kernel_header is None else kernel_header
    head = [
        HEADERS[fmt],
        "0 # kernel type",
        "%d # kernel parameter -d" % int(d),
        "%.8g # kernel parameter -g" % float(g),
        "%.8g # kernel parameter -s" % float(s_),
        "%.8g # kernel parameter -r" % float(r),
        "%s# kernel parameter -u" % u,
        f"{nf} # highest feature index",
        f"{n_train} # number of training documents",
        "2 # number of support vectors plus 1",
        "%.17g # threshold b, each following line is a SV (starting with alpha*y)" % b
        + _labels_comment(model),
    ]
    nz = np.flatnonzero(w[:nf])
    sv = "1 " + " ".join("%d:%.17g" % (j + 1, w[j]) for j in nz) + " #"
    return "\n".join(head + [sv]) + "\n"


# SVMlight's models have no label field: a decision value > 0 means +1.  A model trained on other
# labels (say 2 / 1) keeps them in the comment of the threshold line, which SVMlight's reader skips
# (it reads the number and ignores the rest of the line): "..., svmtool labels 2 1" (the label of
# a decision value > 0 first).  svmtool's reader puts them back; without it, (+1, -1).
_LABELS_TAG = "svmtool labels"


def _labels_comment(model):
    labels = getattr(model, "labels", None)
    labels = np.zeros(0) if labels is None else np.asarray(labels, dtype=np.float64).ravel()
    if len(labels) != 2 or (labels[0] == 1.0 and labels[1] == -1.0):
        return ""
    return "; %s %s %s" % (_LABELS_TAG, "%.17g" % labels[0], "%.17g" % labels[1])


def _labels_of(line, name, number):
    comment = line.split("#", 1)[1] if "#" in line else ""
    if _LABELS_TAG not in comment:
        return np.array([1.0, -1.0])
    toks = comment.split(_LABELS_TAG, 1)[1].split()
    try:
        pos, neg = float(toks[0]), float(toks[1])
    except (IndexError, ValueError):
        raise ModelFormatError(name, number, f"'{_LABELS_TAG}' must be followed by two "
                                             f"labels") from None
    if not (np.isfinite(pos) and np.isfinite(neg)):
        raise ModelFormatError(name, number, f"'{_LABELS_TAG}': a label is not finite")
    if pos == neg:
        raise ModelFormatError(name, number, f"'{_LABELS_TAG}': the two labels are equal")
    return np.array([pos, neg])


def _value(line, name, number, what):
    text = line.split("#", 1)[0].strip()
    if not text:
        raise ModelFormatError(name, number, f"missing value of '{what}'")
    return text


def read_svmlight_model(text, name):
    from svmtool.models.linear import LinearModel

    lines = text.split("\n")
    if not lines[0].strip().startswith("SVM-light Version"):
        raise ModelFormatError(name, 1, "not an SVMlight model (no 'SVM-light Version' line)")
    fields = ["kernel type", "kernel parameter -d", "kernel parameter -g",
              "kernel parameter -s", "kernel parameter -r", "kernel parameter -u",
              "highest feature index", "number of training documents",
              "number of support vectors plus 1", "threshold b"]
    if len(lines) < 1 + len(fields):
        raise ModelFormatError(name, len(lines), "truncated header")
    vals = [_value(lines[1 + k], name, 2 + k, f) for k, f in enumerate(fields)]

    def as_int(k):
        try:
            if "_" in vals[k]:
                raise ValueError
            return int(vals[k])
        except ValueError:
            raise ModelFormatError(name, 2 + k, f"'{fields[k]}' must be an integer, "
                                               f"got {vals[k]!r}") from None

    def as_float(k):
        return parse_float(vals[k], name, 2 + k, f"'{fields[k]}'")

    kernel = as_int(0)
    if kernel != 0:
        raise ModelFormatError(name, 2, f"SVMlight kernel type {kernel} is not supported: only "
                                        f"linear models (type 0) can be read")
    as_int(1)
    for k in (2, 3, 4):
        as_float(k)         # unused by a linear model; still a number, and finite
    nf = as_int(6)
    n_sv = as_int(8) - 1
    b = as_float(9)
    if nf < 0 or n_sv < 0:
        raise ModelFormatError(name, 9, "negative feature or support-vector count")
    if nf > MAX_FEATURES:
        raise ModelFormatError(name, 8, f"highest feature index {nf} is beyond what a model can "
                                        f"hold ({MAX_FEATURES})")
    # w = sum of alpha*y * x_sv: the terms first (feature, product), in file order
    cols, terms = [], []
    first = 1 + len(fields)
    seen = 0
    for k in range(first, len(lines)):
        line = lines[k].split("#", 1)[0].strip()
        if not line:
            continue
        if seen == n_sv:
            raise ModelFormatError(name, k + 1, f"more support vectors than the {n_sv} "
                                                f"announced")
        toks = line.split()
        coef = parse_float(toks[0], name, k + 1, "alpha*y")
        for t in toks[1:]:
            idx, sep, val = t.partition(":")
            if not sep:
                raise ModelFormatError(name, k + 1, f"bad feature {t!r} (not index:value)")
            j = parse_int(idx, name, k + 1, "feature index", minimum=1)
            v = parse_float(val, name, k + 1, "feature value")
            if j > nf:
                # SVMlight sizes its weight vector by the header: an index beyond it is corrupt
                raise ModelFormatError(name, k + 1, f"feature index {j} is beyond the highest "
                                                    f"feature index {nf} of the header")
            cols.append(j - 1)
            terms.append(coef * v)
        seen += 1
    if seen != n_sv:
        raise ModelFormatError(name, len(lines), f"{seen} support vectors, {n_sv} announced")
    # one allocation, zero pages until written: a header announcing a huge feature count costs
    # address space only
    try:
        W = np.zeros((nf + (1 if b != 0.0 else 0), 1), dtype=np.float64)
    except (MemoryError, ValueError):
        raise ModelFormatError(name, 8, f"{nf} features: too many for a weight vector in "
                                        f"memory (corrupt 'highest feature index' or feature "
                                        f"index?)") from None
    # the terms added one after another in file order, as the loop of svm_common.c does
    np.add.at(W[:, 0], np.array(cols, dtype=np.int64), np.array(terms, dtype=np.float64))
    if b != 0.0:
        W[nf, 0] = -b
        bias = 1.0
    else:
        bias = -1.0
    if not np.all(np.isfinite(W[np.array(cols, dtype=np.int64), 0])):
        raise ModelFormatError(name, first + 1, "the weights sum to a number beyond the doubles "
                                                "(infinite)")
    labels = _labels_of(lines[len(fields)], name, 1 + len(fields))
    model = LinearModel(solver_type="L2R_L1LOSS_SVC_DUAL", labels=labels,
                        nr_feature=nf, bias=bias, w=W)
    model.report = {"model_format": "svmlight", "n_train": as_int(7),
                    "svmlight_version": lines[0].strip()[len("SVM-light Version"):].strip()}
    return model


def save_svmlight_model(model, path, n_train=None, fmt="svmlight", kernel_header=None):
    from svmtool.io.output import open_output

    text = svmlight_text(model, n_train, fmt, kernel_header)
    with open_output(path) as f:
        f.write(text)
