"""LIBSVM model files (KernelModel), read and written.

LIBSVM (svm.cpp's layout, FORMATS.md section 3)::

    svm_type c_svc
    kernel_type rbf
    gamma 2                      (poly, rbf, sigmoid)   degree (poly)   coef0 (poly, sigmoid)
    nr_class 2
    total_sv 1234
    rho 0                        K(K-1)/2 values
    label 1 -1                   classification
    nr_sv 600 634                classification
    SV
    <K-1 coefficients> <index>:<value> ...

svmtool writes every number with ``%.17g`` -- SV feature values too (LIBSVM itself writes them
with ``%.8g``) -- so a model reads back exactly; stock LIBSVM reads the file unchanged.  The reader
takes any LIBSVM model: c_svc, nu_svc, one_class, epsilon_svr, nu_svr, the four kernels and
``precomputed`` (whose support vectors are ``0:serial`` alone), and the probability lines
``probA``/``probB`` (K(K-1)/2 values for classification, one -- the Laplace sigma -- for SVR)
and ``prob_density_marks`` (one-class, ten values), in LIBSVM's order (after ``label``, before
``nr_sv``).
"""

import numpy as np

from svmtool.errors import ModelFormatError
from svmtool.io.model_text import (format_g17, format_label, kernel_from_header, kernel_head,
                                   parse_float, parse_int, parse_rows, sv_lines)
from svmtool.models.kernel import SVM_TYPES, KernelModel


def libsvm_text(model) -> str:
    head = [f"svm_type {model.svm_type}"] + kernel_head(model.kernel)
    head.append(f"nr_class {model.nr_class}")
    head.append(f"total_sv {model.total_sv}")
    head.append(" ".join(["rho"] + [format_g17(r + 0.0) for r in model.rho]))
    if model.labels is not None and model.is_classification():
        head.append("label " + " ".join(format_label(v) for v in model.labels))
    for key in ("probA", "probB"):
        v = getattr(model, key, None)
        if v is not None:
            head.append(key + " " + " ".join(format_g17(float(x)) for x in v))
    marks = getattr(model, "prob_density_marks", None)
    if marks is not None and model.is_oneclass():
        head.append("prob_density_marks " + " ".join(format_g17(float(x)) for x in marks))
    if model.nr_sv is not None and model.is_classification():
        head.append("nr_sv " + " ".join("%d" % v for v in model.nr_sv))
    head.append("SV")
    coef = model.sv_coef
    pre = [" ".join(format_g17(c) for c in coef[:, s]) for s in range(model.total_sv)]
    if model.kernel.ktype == 4:
        # precomputed: each support vector is its serial number in the training file
        rows = model.sv_rows
        body = [p + " 0:%d " % int(rows.data[rows.indptr[s]]) for s, p in enumerate(pre)]
        return "\n".join(head + body) + "\n"
    return "\n".join(head + sv_lines(model.sv_rows, pre)) + "\n"


_HEADER_KEYS = ("svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv",
                "rho", "label", "probA", "probB", "nr_sv", "prob_density_marks")


def read_libsvm(text, name):
    """The KernelModel of a LIBSVM model file's ``text``: the header (svm_type, kernel, classes,
    rho per pair, labels and support-vector counts per class, probability fields) checked
    against itself, then the support vectors after the ``SV`` line.  ``name`` names the file in
    errors."""
    lines = text.split("\n")
    h, sv_line = _header(lines, name)
    ln, (svm_type, *_) = h["svm_type"]
    if svm_type not in SVM_TYPES:
        raise ModelFormatError(name, ln, f"unknown svm_type {svm_type!r}")
    if h.get("kernel_type", (0, [""]))[1][0] == "precomputed":
        from svmtool.ops.kernels import PRECOMPUTED, Kernel

        kernel = Kernel(PRECOMPUTED, 0.0, 0.0, 3, 0.0)
    else:
        kernel = kernel_from_header(h, name)
    ln, t = h["nr_class"]
    K = parse_int(t[0], name, ln, "nr_class", minimum=1)
    if svm_type not in ("c_svc", "nu_svc") and K != 2:
        # LIBSVM writes 2 for these; K - 1 coefficients per SV would be read
        raise ModelFormatError(name, ln, f"nr_class must be 2 for a {svm_type} model (got {K})")
    ln, t = h["total_sv"]
    l = parse_int(t[0], name, ln, "total_sv")
    ln, t = h["rho"]
    # one per pair of classes (none when the training data held one class) or one
    npairs = K * (K - 1) // 2 if svm_type in ("c_svc", "nu_svc") else 1
    if len(t) != npairs:
        raise ModelFormatError(name, ln, f"rho has {len(t)} values, expected {npairs}")
    rho = np.array([parse_float(v, name, ln, "rho") for v in t])
    labels = nr_sv = None
    if svm_type in ("c_svc", "nu_svc"):
        labels, nr_sv = _classes(h, svm_type, K, l, sv_line, name)
    prob = _probability(h, svm_type, npairs, name)
    body = [x for x in lines[sv_line:] if x.strip()]
    if len(body) != l:
        raise ModelFormatError(name, sv_line + len(body), f"expected {l} support vectors, found "
                                                          f"{len(body)} (truncated file?)")
    ncoef = max(K - 1, 1)
    if kernel.ktype == 4:
        coef, rows = _serial_rows(body, sv_line + 1, ncoef, name)
    else:
        coef, rows = parse_rows(body, sv_line + 1, ncoef, name, "support vector")
    model = KernelModel(kernel=kernel, labels=labels, rho=rho, nr_sv=nr_sv,
                        sv_indptr=rows.indptr, sv_indices=rows.indices, sv_data=rows.data,
                        sv_coef=coef.T.copy(), nr_feature=rows.n_features, svm_type=svm_type)
    for key, v in prob.items():
        setattr(model, key, v)
    return model


def _header(lines, name):
    """(key -> (line number, values), the number of the ``SV`` line): the header read up to
    its ``SV`` line, every key known, the ones every model needs present."""
    h = {}
    sv_line = None
    for no, line in enumerate(lines, 1):
        toks = line.split()
        if not toks:
            continue
        if toks[0] == "SV":
            sv_line = no
            break
        if no == len(lines):
            # the header's last line without its newline: the file was cut there
            raise ModelFormatError(name, no, f"the file ends inside the header, at "
                                             f"{line.strip()!r} (truncated file?)")
        if toks[0] not in _HEADER_KEYS:
            raise ModelFormatError(name, no, f"unknown key {toks[0]!r} in the header of a "
                                             f"LIBSVM model")
        if len(toks) < 2 and toks[0] != "rho":      # (one class: no pair, no rho)
            raise ModelFormatError(name, no, f"{toks[0]} needs a value")
        h[toks[0]] = (no, toks[1:])
    if sv_line is None:
        raise ModelFormatError(name, len(lines), "missing 'SV' line (truncated file?)")
    for key in ("svm_type", "kernel_type", "nr_class", "total_sv", "rho"):
        if key not in h:
            raise ModelFormatError(name, sv_line, f"missing {key!r} in the LIBSVM model header")
    return h, sv_line


def _classes(h, svm_type, K, l, sv_line, name):
    """(labels, nr_sv) of a classifier's header: K of each, the counts adding up to total_sv."""
    for key in ("label", "nr_sv"):
        if key not in h:
            raise ModelFormatError(name, sv_line, f"missing {key!r}, which a {svm_type} "
                                                  f"model needs")
    ln, t = h["label"]
    if len(t) != K:
        raise ModelFormatError(name, ln, f"{len(t)} labels but nr_class is {K}")
    labels = np.array([parse_float(v, name, ln, "label") for v in t])
    ln, t = h["nr_sv"]
    if len(t) != K:
        raise ModelFormatError(name, ln, f"{len(t)} nr_sv values but nr_class is {K}")
    counts = [parse_int(v, name, ln, "nr_sv") for v in t]
    if sum(counts) != l:
        raise ModelFormatError(name, ln, f"nr_sv adds up to {sum(counts)}, total_sv is {l}")
    return labels, np.array(counts, dtype=np.int64)


def _probability(h, svm_type, npairs, name):
    """The probability fields present (probA, probB: one per pair; prob_density_marks: 10)."""
    prob = {}
    for key in ("probA", "probB", "prob_density_marks"):
        if key in h:
            ln, t = h[key]
            prob[key] = np.array([parse_float(v, name, ln, key) for v in t])
            want = {"prob_density_marks": 10}.get(key, max(npairs, 1))
            if len(t) != want and svm_type != "one_class":
                raise ModelFormatError(name, ln, f"{key} has {len(t)} values, expected {want}")
    return prob


def _serial_rows(body, first_line, ncoef, name):
    """Support vectors of a precomputed-kernel model: coefficients, then ``0:serial``."""
    from svmtool.ops.kernels import Rows

    coef = np.empty((len(body), ncoef))
    serial = np.empty(len(body))
    for r, line in enumerate(body):
        no = first_line + r
        toks = line.split()
        if len(toks) != ncoef + 1 or not toks[-1].startswith("0:"):
            raise ModelFormatError(name, no, "a support vector of a precomputed-kernel model is "
                                             f"{ncoef} coefficient(s) and 0:<serial number>")
        for k in range(ncoef):
            coef[r, k] = parse_float(toks[k], name, no, "support vector")
        serial[r] = parse_int(toks[-1][2:], name, no, "serial number", minimum=1)
    n = len(body)
    return coef, Rows(np.arange(n + 1, dtype=np.int64), np.zeros(n, dtype=np.int32), serial,
                      n_features=1)
