"""SVMlight / SVMperf model files (svm_common.c's layout; FORMATS.md section 4).

The layout: a version line, ten ``value # comment`` header lines (kernel type, its parameters
-d -g -s -r -u, highest feature index, training documents, support vectors plus 1, threshold
b), then one support vector per line, ``alpha*y idx:val ... #comment``.  The decision value of
a row x is ``sum_sv alpha_y K(sv, x) - b``; SVMlight's kernels are 0 linear ``a.b``, 1
polynomial ``(s a.b + r)^d``, 2 rbf ``exp(-g |a-b|^2)``, 3 sigmoid ``tanh(s a.b + r)`` (4, a
user-defined kernel compiled into SVMlight, is refused).

Written (``--model-format svmlight`` or ``svmperf``; :data:`HEADERS`: SVMlight 6.02's
svm_classify compares the version against ``V6.02``, SVMperf 3.00's svm_perf_classify against
``V6.20``):

* a linear :class:`~svmtool.models.linear.LinearModel` (binary classifier, regression or ranking
  scorer) as SVMperf writes a linear model: one pseudo support vector holding ``w`` with
  ``alpha*y = 1``, the bias column's weight folded into the threshold (``b = -bias * w_bias``),
  zero weights left out;
* a :class:`~svmtool.models.kernel.KernelModel` of two classes (C-SVC, nu-SVC, one-class) or of
  regression (epsilon-SVR, nu-SVR) with kernel 0-3: its support vectors with their
  coefficients, ``b = rho``, the kernel parameters in SVMlight's slots (poly: ``-d degree -s
  gamma -r coef0``; rbf: ``-g gamma``; sigmoid: ``-s gamma -r coef0``).

SVMlight's decision value > 0 means +1 (the larger label): a two-class model whose first label
is the smaller one (say 1 / 2 in LIBSVM's order of appearance) is written with its coefficients
and threshold negated, so that svm_classify reads it right.  Numbers are ``%.17g`` or the
shortest text that reads back as the same double (the kernel parameters of a linear model
``%.8g``, as SVMperf), so the file reads back exactly.

Read: any SVMlight-format model.  Linear (type 0): the support vectors summed into ``w =
sum alpha_y x_sv``, a :class:`~svmtool.models.linear.LinearModel` with labels ``(+1, -1)``
(``dec > 0`` predicts +1, SVMlight's rule) and, when ``b != 0``, a bias column of value 1 whose
weight is ``-b``.  Kernels 1-3: a two-class :class:`~svmtool.models.kernel.KernelModel`
(``svm_type c_svc``, the support vectors regrouped positive coefficients first, LIBSVM's
layout) with ``rho = b``.

SVMlight's files do not say whether a model classifies, regresses or ranks.  svmtool writes it
in the threshold line's comment, which SVMlight's reader skips (it reads the number and ignores
the rest of the line): ``..., svmtool task regression`` (or ``classification``, ``ranking``),
and the labels of a
classifier trained on labels other than +1 / -1 as ``svmtool labels 2 1`` (the label of a
decision value > 0 first).  A regression model reads back as a regression model (LinearModel of
type L2R_L1LOSS_SVR_DUAL, or KernelModel epsilon_svr), a ranking model as a scorer with
``report["ranking"]``; a model without the tag (SVMlight's own files) as a classifier with
``report["task"] == "unknown"``, which ``svmtool predict`` takes as a classifier while the test
labels are all +1 / -1 and otherwise as a regressor, writing its decision values as
svm_classify does (see :mod:`svmtool.cli.predict`); ``svmtool info`` says so.
"""

from typing import NamedTuple

import numpy as np

from svmtool.errors import ModelFormatError
from svmtool.io.model_text import parse_float, parse_int

MAX_FEATURES = 2**31 - 1

# the first line each target program reads (it compares the version): SVMlight 6.02's
# svm_classify refuses any version but V6.02; SVMperf 3.00 carries SVM-light 6.20 inside, and its
# svm_perf_classify refuses any other version
HEADERS = {"svmlight": "SVM-light Version V6.02", "svmperf": "SVM-light Version V6.20"}
HEADER = HEADERS["svmlight"]
FLAVOUR_OF_VERSION = {"V6.02": "svmlight", "V6.20": "svmperf"}
KERNEL_TYPES = (0, 1, 2, 3)
# kernel parameters of a linear model's header when none are given: svm_learn's and
# svm_perf_learn's defaults of -d, -g, -s, -r, -u
DEFAULT_KERNEL_HEADER = (3, 1.0, 1.0, 1.0, "empty")


def svmlight_text(model, n_train=None, fmt="svmlight", kernel_header=None) -> str:
    """SVMlight-format text of a linear model (one weight column) or a two-class / regression
    kernel model.

    ``fmt`` picks the version line (:data:`HEADERS`); ``kernel_header`` the values written for
    the kernel parameters -d -g -s -r -u of a linear model (the trainer's own, which a linear
    model ignores)."""
    if fmt not in HEADERS:
        raise ValueError(f"unknown SVMlight model flavour {fmt!r}")
    if n_train is None:
        n_train = int(model.report.get("n_train", 0)) if getattr(model, "report", None) else 0
    if hasattr(model, "sv_coef"):
        return _kernel_text(model, n_train, fmt)
    if model.nr_w != 1:
        raise ValueError(f"the SVMlight format holds one weight vector; this model has "
                         f"{model.nr_w} (multi-class models: use LIBLINEAR's format)")
    sign, labels = _oriented(model)
    w = sign * model.w[:, 0]
    nf = model.nr_feature
    b = 0.0
    if model.has_bias:
        b = -model.bias * float(w[nf])
    if kernel_header is None:
        kernel_header = (model.report or {}).get("svmlight_header", DEFAULT_KERNEL_HEADER)
    d, g, s_, r, u = kernel_header
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
        + _labels_comment(labels) + _task_comment(model),
    ]
    nz = np.flatnonzero(w[:nf])
    sv = "1 " + " ".join("%d:%.17g" % (j + 1, w[j]) for j in nz) + " #"
    return "\n".join(head + [sv]) + "\n"


def kernel_slots(kernel, given=None):
    """SVMlight's header values (-d, -g, -s, -r, -u) of a :class:`Kernel`: the slots the kernel
    uses from it, the others from ``given`` (the header the model was read with) or SVMlight's
    defaults."""
    d, g, s_, r, u = DEFAULT_KERNEL_HEADER if given is None else given
    k = kernel.ktype
    if k == 1:
        d, s_, r = int(kernel.degree), float(kernel.gamma), float(kernel.coef0)
    elif k == 2:
        g = float(kernel.gamma)
    elif k == 3:
        s_, r = float(kernel.gamma), float(kernel.coef0)
    return d, g, s_, r, u


def _kernel_text(model, n_train, fmt):
    ktype = int(model.kernel.ktype)
    if ktype not in KERNEL_TYPES:
        raise ValueError(f"the SVMlight format has no kernel type {ktype} ({model.kernel.name}); "
                         f"its kernels are 0-3")
    if model.is_classification() and model.nr_class != 2:
        raise ValueError(f"the SVMlight format holds one decision function; this model has "
                         f"{model.nr_class} classes (use LIBSVM's format)")
    if float(model.kernel.kbias) != 0.0:
        raise ValueError("the SVMlight format has no kernel bias (-B of -s kernel); use "
                         "LIBSVM's format")
    report = model.report or {}
    d, g, s_, r, u = kernel_slots(model.kernel, report.get("svmlight_header"))
    sv = model.sv_rows
    sign, labels = _oriented(model)
    coef = sign * (model.sv_coef[0] if model.total_sv else np.zeros(0))
    b = sign * (float(model.rho[0]) if len(model.rho) else 0.0)
    nf = int(model.nr_feature)
    if sv.n_rows and len(sv.indices):
        nf = max(nf, int(sv.indices.max()) + 1)
    head = [
        HEADERS[fmt],
        "%d # kernel type" % ktype,
        "%d # kernel parameter -d" % int(d),
        "%s # kernel parameter -g" % _num(g),
        "%s # kernel parameter -s" % _num(s_),
        "%s # kernel parameter -r" % _num(r),
        "%s# kernel parameter -u" % u,
        f"{nf} # highest feature index",
        f"{n_train} # number of training documents",
        f"{model.total_sv + 1} # number of support vectors plus 1",
        "%s # threshold b, each following line is a SV (starting with alpha*y)" % _num(b)
        + _labels_comment(labels) + _task_comment(model),
    ]
    lines = head
    ip, ix, dv = sv.indptr, sv.indices, sv.data
    for t in range(model.total_sv):
        feats = " ".join("%d:%s" % (int(ix[q]) + 1, _num(dv[q])) for q in range(ip[t], ip[t + 1]))
        lines.append("%s %s #" % (_num(coef[t]), feats) if feats else "%s #" % _num(coef[t]))
    return "\n".join(lines) + "\n"


def _num(v):
    """The shortest text that reads back as the same double (C's strtod), without '.0'."""
    t = repr(float(v))
    return t[:-2] if t.endswith(".0") else t


# the task of the model, in the threshold line's comment (SVMlight's reader skips it)
_TASK_TAG = "svmtool task"
TASKS = ("classification", "regression", "ranking")


def model_task(model):
    """"classification", "regression", "ranking" or "unknown" (an SVMlight file without
    svmtool's tag, read as a classifier)."""
    report = getattr(model, "report", None) or {}
    if report.get("ranking"):
        return "ranking"
    if model.is_regression():
        return "regression"
    return report.get("task", "classification")


# what `svmtool predict` does with an SVMlight model that does not say its task (svm_learn's own
# files); `svmtool info` prints it
UNKNOWN_TASK_RULE = ("the SVMlight file does not record its task (svm_learn writes none): "
                     "predict takes it as a classifier while the test labels are all +1/-1, "
                     "else as a regressor, and then writes its decision values, as svm_classify")


def task_and_reason(model):
    """(task, why svmtool takes it so) of a model read from an SVMlight/SVMperf file: its task
    is known only from svmtool's tag, which svmtool's SVMlight writer adds to regression and
    ranking models (``svmtool svm_learn -z r`` / ``-z p`` among them)."""
    task = model_task(model)
    if task == "unknown":
        return task, UNKNOWN_TASK_RULE
    return task, f"svmtool's tag '{_TASK_TAG} {task}' in the threshold line's comment"


def _task_comment(model):
    task = model_task(model)
    return "; %s %s" % (_TASK_TAG, task) if task in TASKS else ""


def _task_of(line, name, number):
    comment = line.split("#", 1)[1] if "#" in line else ""
    if _TASK_TAG not in comment:
        return "unknown"
    toks = comment.split(_TASK_TAG, 1)[1].replace(";", " ").split()
    if not toks or toks[0] not in TASKS:
        raise ModelFormatError(name, number, f"'{_TASK_TAG}' must be followed by one of "
                                             f"{', '.join(TASKS)}")
    return toks[0]


# SVMlight's models have no label field: a decision value > 0 means +1.  A model trained on other
# labels (say 2 / 1) keeps them in the comment of the threshold line, which SVMlight's reader skips
# (it reads the number and ignores the rest of the line): "..., svmtool labels 2 1" (the label of
# a decision value > 0 first).  svmtool's reader puts them back; without it, (+1, -1).
_LABELS_TAG = "svmtool labels"


def _oriented(model):
    """(sign, labels as written): SVMlight's decision value > 0 means the larger label (+1 of
    +1 / -1), so a two-class model whose first label is the smaller one is written negated,
    its labels swapped."""
    labels = getattr(model, "labels", None)
    if labels is None or model.is_regression():
        return 1.0, None
    labels = np.asarray(labels, dtype=np.float64).ravel()
    if len(labels) == 2 and labels[0] < labels[1]:
        return -1.0, labels[::-1].copy()
    return 1.0, labels


def _labels_comment(labels):
    labels = np.zeros(0) if labels is None else np.asarray(labels, dtype=np.float64).ravel()
    if len(labels) != 2 or (labels[0] == 1.0 and labels[1] == -1.0):
        return ""
    return "; %s %s %s" % (_LABELS_TAG, "%.17g" % labels[0], "%.17g" % labels[1])


def _labels_of(line, name, number):
    comment = line.split("#", 1)[1] if "#" in line else ""
    if _LABELS_TAG not in comment:
        return np.array([1.0, -1.0])
    toks = comment.split(_LABELS_TAG, 1)[1].replace(";", " ").split()
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


_FIELDS = ("kernel type", "kernel parameter -d", "kernel parameter -g", "kernel parameter -s",
           "kernel parameter -r", "kernel parameter -u", "highest feature index",
           "number of training documents", "number of support vectors plus 1", "threshold b")


class _Header(NamedTuple):
    kernel: int
    degree: int
    gamma: float
    coef_lin: float
    coef_const: float
    custom: str
    nf: int
    n_train: int
    n_sv: int
    b: float
    version: str


def read_svmlight_model(text, name):
    """The model of an SVMlight (or SVMperf) model file's ``text``: its header (version, kernel
    and its parameters, feature count, support-vector count, threshold b), svmtool's tags on the
    threshold line (task, labels), then one support vector a line (alpha*y, then index:value
    terms).  A linear model becomes a :class:`LinearModel` w = sum alpha_i y_i x_i, a kernel
    model a kernel model; ``report`` tells what the file said.  ``name`` names the file in
    errors."""
    lines = text.split("\n")
    head = _header(lines, name)
    threshold_line = lines[len(_FIELDS)]
    task = _task_of(threshold_line, name, 1 + len(_FIELDS))
    labels = _labels_of(threshold_line, name, 1 + len(_FIELDS))
    report = {"model_format": FLAVOUR_OF_VERSION.get(head.version, "svmlight"),
              "n_train": head.n_train, "svmlight_version": head.version,
              "svmlight_header": (head.degree, head.gamma, head.coef_lin, head.coef_const,
                                  head.custom or "empty"),
              "task": task}
    if task == "ranking":
        report["ranking"] = True
    coefs, indptr, cols, vals = _support_vectors(lines, head, name)
    if head.kernel != 0:
        return _kernel_model(head.kernel, head.degree, head.gamma, head.coef_lin,
                             head.coef_const, head.nf, head.b, labels, task,
                             np.array(coefs, dtype=np.float64),
                             np.array(indptr, dtype=np.int64), cols, vals, report)
    return _linear_model(head, labels, task, coefs, indptr, cols, vals, report, name)


def _header(lines, name):
    """The header lines checked: kernel type and parameters, counts, threshold."""
    if not lines[0].strip().startswith("SVM-light Version"):
        raise ModelFormatError(name, 1, "not an SVMlight model (no 'SVM-light Version' line)")
    if len(lines) < 1 + len(_FIELDS):
        raise ModelFormatError(name, len(lines), "truncated header")
    vals = [_value(lines[1 + k], name, 2 + k, f) for k, f in enumerate(_FIELDS)]

    def as_int(k):
        try:
            if "_" in vals[k]:
                raise ValueError
            return int(vals[k])
        except ValueError:
            raise ModelFormatError(name, 2 + k, f"'{_FIELDS[k]}' must be an integer, "
                                               f"got {vals[k]!r}") from None

    def as_float(k):
        return parse_float(vals[k], name, 2 + k, f"'{_FIELDS[k]}'")

    kernel = as_int(0)
    if kernel == 4:
        raise ModelFormatError(name, 2, "SVMlight kernel type 4 (a user-defined kernel compiled "
                                        "into SVMlight, kernel.h) is not supported")
    if kernel not in KERNEL_TYPES:
        raise ModelFormatError(name, 2, f"SVMlight kernel type {kernel} is not supported: the "
                                        f"kernel types are 0 (linear), 1 (polynomial), 2 (rbf) "
                                        f"and 3 (sigmoid)")
    degree = as_int(1)
    if kernel == 1 and not 0 <= degree < 2**31:
        raise ModelFormatError(name, 3, f"polynomial degree {degree}: a degree from 0 to "
                                        f"2^31-1 is needed")
    gamma, coef_lin, coef_const = (as_float(k) for k in (2, 3, 4))
    custom = lines[6].split("#", 1)[0].strip()
    nf = as_int(6)
    n_sv = as_int(8) - 1
    b = as_float(9)
    if nf < 0 or n_sv < 0:
        raise ModelFormatError(name, 9, "negative feature or support-vector count")
    if nf > MAX_FEATURES:
        raise ModelFormatError(name, 8, f"highest feature index {nf} is beyond what a model can "
                                        f"hold ({MAX_FEATURES})")
    version = lines[0].strip()[len("SVM-light Version"):].strip()
    return _Header(kernel, degree, gamma, coef_lin, coef_const, custom, nf, as_int(7), n_sv, b,
                   version)


def _support_vectors(lines, head, name):
    """The support vectors after the header, in file order, as (coefficients alpha_i y_i, CSR
    row pointers, 0-based columns, values); each checked against the header."""
    coefs, indptr, cols, vals = [], [0], [], []
    seen = 0
    for k in range(1 + len(_FIELDS), len(lines)):
        line = lines[k].split("#", 1)[0].strip()
        if not line:
            continue
        if seen == head.n_sv:
            raise ModelFormatError(name, k + 1, f"more support vectors than the {head.n_sv} "
                                                f"announced")
        toks = line.split()
        coefs.append(parse_float(toks[0], name, k + 1, "alpha*y"))
        last = 0
        for t in toks[1:]:
            idx, sep, val = t.partition(":")
            if not sep:
                raise ModelFormatError(name, k + 1, f"bad feature {t!r} (not index:value)")
            j = parse_int(idx, name, k + 1, "feature index", minimum=1)
            v = parse_float(val, name, k + 1, "feature value")
            if j > head.nf:
                # SVMlight sizes its weight vector by the header: an index beyond it is corrupt
                raise ModelFormatError(name, k + 1, f"feature index {j} is beyond the highest "
                                                    f"feature index {head.nf} of the header")
            if head.kernel != 0 and j <= last:
                # a kernel's dot products need each feature once, in order
                raise ModelFormatError(name, k + 1, f"feature indices not increasing at {t!r}")
            last = j
            cols.append(j - 1)
            vals.append(v)
        indptr.append(len(cols))
        seen += 1
    if seen != head.n_sv:
        raise ModelFormatError(name, len(lines), f"{seen} support vectors, {head.n_sv} announced")
    return coefs, indptr, cols, vals


def _linear_model(head, labels, task, coefs, indptr, cols, vals, report, name):
    """The LinearModel of a linear SVMlight model: w = sum of alpha_i y_i x_i, the terms added
    in file order as svm_common.c does; b != 0 becomes a bias feature of value 1 and weight -b."""
    from svmtool.models.linear import LinearModel

    nf, b = head.nf, head.b
    rows_of_terms = np.repeat(np.arange(len(coefs)), np.diff(np.array(indptr, dtype=np.int64)))
    with np.errstate(over="ignore", invalid="ignore"):      # an infinite sum is refused below
        terms = np.array(coefs, dtype=np.float64)[rows_of_terms] * \
            np.array(vals, dtype=np.float64)
    # one allocation, zero pages until written: a header announcing a huge feature count costs
    # address space only
    try:
        W = np.zeros((nf + (1 if b != 0.0 else 0), 1), dtype=np.float64)
    except (MemoryError, ValueError):
        raise ModelFormatError(name, 8, f"{nf} features: too many for a weight vector in "
                                        f"memory (corrupt 'highest feature index' or feature "
                                        f"index?)") from None
    with np.errstate(over="ignore", invalid="ignore"):
        np.add.at(W[:, 0], np.array(cols, dtype=np.int64), terms)
    if b != 0.0:
        W[nf, 0] = -b
        bias = 1.0
    else:
        bias = -1.0
    if not np.all(np.isfinite(W[np.array(cols, dtype=np.int64), 0])):
        raise ModelFormatError(name, 2 + len(_FIELDS), "the weights sum to a number beyond the "
                                                       "doubles (infinite)")
    if task in ("regression", "ranking"):
        model = LinearModel(solver_type="L2R_L1LOSS_SVR_DUAL", labels=None, nr_feature=nf,
                            bias=bias, w=W)
    else:
        model = LinearModel(solver_type="L2R_L1LOSS_SVC_DUAL", labels=labels,
                            nr_feature=nf, bias=bias, w=W)
    model.report = report
    return model


def svmlight_kernel(ktype, degree, gamma, coef_lin, coef_const):
    """svmtool's :class:`Kernel` of SVMlight's kernel type and -d -g -s -r values."""
    from svmtool.ops.kernels import Kernel

    if ktype == 1:
        return Kernel(1, float(coef_lin), float(coef_const), int(degree), 0.0)
    if ktype == 2:
        return Kernel(2, float(gamma), 0.0, 3, 0.0)
    if ktype == 3:
        return Kernel(3, float(coef_lin), float(coef_const), 3, 0.0)
    return Kernel(0, 1.0, 0.0, 3, 0.0)


def _kernel_model(ktype, degree, gamma, coef_lin, coef_const, nf, b, labels, task, coef,
                  indptr, cols, vals, report):
    from svmtool.models.kernel import KernelModel

    cols = np.array(cols, dtype=np.int32 if nf < 2**31 - 1 else np.int64)
    vals = np.array(vals, dtype=np.float64)
    kern = svmlight_kernel(ktype, degree, gamma, coef_lin, coef_const)
    if task in ("regression", "ranking"):
        order = np.arange(len(coef))
        svm_type, labels, nr_sv = "epsilon_svr", None, None
    else:
        # LIBSVM's layout: the support vectors of labels[0] (coefficient > 0) first
        pos = coef > 0
        order = np.concatenate([np.flatnonzero(pos), np.flatnonzero(~pos)])
        svm_type, nr_sv = "c_svc", np.array([int(pos.sum()), int((~pos).sum())])
    lens = np.diff(indptr)[order]
    new_ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    take = np.concatenate([np.arange(indptr[t], indptr[t + 1]) for t in order]) \
        if len(order) else np.zeros(0, dtype=np.int64)
    model = KernelModel(kernel=kern, labels=labels, rho=np.array([b]), nr_sv=nr_sv,
                        sv_indptr=new_ptr, sv_indices=cols[take.astype(np.int64)],
                        sv_data=vals[take.astype(np.int64)], sv_coef=coef[order].reshape(1, -1),
                        nr_feature=nf, svm_type=svm_type)
    model.report = report
    return model


def save_svmlight_model(model, path, n_train=None, fmt="svmlight", kernel_header=None):
    from svmtool.io.output import open_output

    text = svmlight_text(model, n_train, fmt, kernel_header)
    with open_output(path) as f:
        f.write(text)
