"""LIBSVM model files and svmtool's DC-SVM early-prediction model files.

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
takes any LIBSVM model: c_svc, nu_svc, one_class, epsilon_svr, nu_svr, the four kernels (not
``precomputed``), ``probA``/``probB``/``prob_density_marks`` are read and ignored.

Early-prediction model (svmtool's own text format, first line ``svmtool_early_model 1``)::

    svmtool_early_model 1
    kernel_type rbf
    degree 3
    gamma 2
    coef0 0
    nr_class 2
    label 1 -1
    nr_feature 22
    level 2                      the DC-SVM level the local models come from
    nr_pair 1                    K(K-1)/2
    pair 0 1                     class indices (i, j) of the pair; then, for this pair:
    nr_cluster 16
    centre_const <16 values>     1/|S_k|^2 sum_{s,t in S_k} K(s, t) per cluster
    rho <16 values>              offset of each cluster's local model
    nr_centre_point 1000
    nr_sv 812
    centres
    <cluster> <index>:<value> ...        the sampled points; centre k is the mean of its points
    svs
    <cluster> <coef> <index>:<value> ... local model SVs (coef = alpha_i y_i, y = +1 for class i)
    (next "pair" block ...)

A row x gets, per pair, the decision value of the local model of its nearest centre (eq. 11 of
Hsieh et al. 2014); pairs vote as in LIBSVM.  Numbers are written with ``%.17g``.
"""

import numpy as np

from svmtool.errors import ModelFormatError
from svmtool.io.model_io import _parse_int
from svmtool.ops.kernels import KERNEL_NAMES, Kernel, Rows

KERNEL_TYPES = {name: i for i, name in enumerate(KERNEL_NAMES)}


def _g(v):
    return "%.17g" % v


def _label(v):
    v = float(v)
    if np.isfinite(v) and v == int(v):
        return "%d" % int(v)
    return "%.17g" % v


def _sv_lines(rows: Rows, prefixes):
    """One line per row: prefix, then index:value pairs (1-based), %.17g."""
    out = []
    ip, ix, dt = rows.indptr, rows.indices, rows.data
    for r, pre in enumerate(prefixes):
        lo, hi = ip[r], ip[r + 1]
        feats = " ".join("%d:%.17g" % (c + 1, v) for c, v in zip(ix[lo:hi].tolist(),
                                                                 dt[lo:hi].tolist()))
        out.append(pre + " " + feats + " " if feats else pre + " ")
    return out


def _kernel_head(kernel: Kernel):
    head = [f"kernel_type {kernel.name}"]
    if kernel.ktype == 1:
        head.append(f"degree {int(kernel.degree)}")
    if kernel.ktype in (1, 2, 3):
        head.append(f"gamma {_g(kernel.gamma)}")
    if kernel.ktype in (1, 3):
        head.append(f"coef0 {_g(kernel.coef0)}")
    return head


def libsvm_text(model) -> str:
    head = [f"svm_type {model.svm_type}"] + _kernel_head(model.kernel)
    head.append(f"nr_class {model.nr_class}")
    head.append(f"total_sv {model.total_sv}")
    head.append("rho " + " ".join(_g(r + 0.0) for r in model.rho))
    if model.labels is not None and model.is_classification():
        head.append("label " + " ".join(_label(v) for v in model.labels))
    if model.nr_sv is not None and model.is_classification():
        head.append("nr_sv " + " ".join("%d" % v for v in model.nr_sv))
    head.append("SV")
    coef = model.sv_coef
    pre = [" ".join(_g(c) for c in coef[:, s]) for s in range(model.total_sv)]
    return "\n".join(head + _sv_lines(model.sv_rows, pre)) + "\n"


def early_text(model) -> str:
    k = model.kernel
    head = ["svmtool_early_model 1", f"kernel_type {k.name}", f"degree {int(k.degree)}",
            f"gamma {_g(k.gamma)}", f"coef0 {_g(k.coef0)}", f"nr_class {len(model.labels)}",
            "label " + " ".join(_label(v) for v in model.labels),
            f"nr_feature {int(model.nr_feature)}", f"level {int(model.level)}",
            f"nr_pair {len(model.pairs)}"]
    K = len(model.labels)
    pair_ids = [(i, j) for i in range(K) for j in range(i + 1, K)] or [(0, 0)]
    lines = head
    for (i, j), lp in zip(pair_ids, model.pairs):
        lines.append(f"pair {i} {j}")
        lines.append(f"nr_cluster {lp.nr_cluster}")
        lines.append("centre_const " + " ".join(_g(v) for v in lp.centre_const))
        lines.append("rho " + " ".join(_g(v + 0.0) for v in lp.rho))
        lines.append(f"nr_centre_point {lp.centres.n_rows}")
        lines.append(f"nr_sv {lp.svs.n_rows}")
        lines.append("centres")
        lines += _sv_lines(lp.centres, ["%d" % c for c in lp.centre_cluster])
        lines.append("svs")
        lines += _sv_lines(lp.svs, ["%d %s" % (c, _g(a))
                                    for c, a in zip(lp.sv_cluster.tolist(), lp.sv_coef.tolist())])
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------
# reading

def _num(tok, name, line, what):
    try:
        if "_" in tok:
            raise ValueError
        return float(tok)
    except ValueError:
        raise ModelFormatError(name, line, f"{what}: {tok!r} is not a number") from None


# integers are read as in LIBLINEAR model files: one strict reader for both formats
_int = _parse_int


def _parse_rows(lines, first_line_no, n_prefix, name, what):
    """Parse lines of '<n_prefix numbers> idx:val ...'; returns (prefix array, Rows)."""
    pre = np.empty((len(lines), n_prefix))
    indptr = np.zeros(len(lines) + 1, dtype=np.int64)
    idx, val = [], []
    for r, line in enumerate(lines):
        no = first_line_no + r
        toks = line.split()
        if len(toks) < n_prefix:
            raise ModelFormatError(name, no, f"{what}: expected {n_prefix} number(s) before the "
                                             f"features, found {len(toks)}")
        for k in range(n_prefix):
            pre[r, k] = _num(toks[k], name, no, what)
        last = 0
        for t in toks[n_prefix:]:
            a, sep, b = t.partition(":")
            if not sep:
                raise ModelFormatError(name, no, f"{what}: {t!r} is not index:value")
            c = _int(a, name, no, "feature index", minimum=0)
            if c < last and last > 0:
                raise ModelFormatError(name, no, f"{what}: feature indices not increasing")
            last = c
            idx.append(c - 1 if c > 0 else 0)
            val.append(_num(b, name, no, "feature value"))
        indptr[r + 1] = len(idx)
    indices = np.array(idx, dtype=np.int32 if (not idx or max(idx) < 2 ** 31 - 1) else np.int64)
    return pre, Rows(indptr, indices, np.array(val, dtype=np.float64))


def _kernel_from_header(h, name):
    ln, toks = h.get("kernel_type", (None, None))
    if toks is None:
        raise ModelFormatError(name, None, "missing 'kernel_type' in the model header")
    if toks[0] not in KERNEL_TYPES:
        what = "precomputed kernels are not supported" if toks[0] == "precomputed" else \
            f"unknown kernel_type {toks[0]!r}"
        raise ModelFormatError(name, ln, what)
    kt = KERNEL_TYPES[toks[0]]

    def get(key, default, conv=_num):
        if key not in h:
            return default
        line, t = h[key]
        return conv(t[0], name, line, key)

    return Kernel(kt, get("gamma", 0.0), get("coef0", 0.0), int(get("degree", 3, _int)), 0.0)


def read_libsvm(text, name):
    from svmtool.kernel_model import SVM_TYPES, KernelModel

    lines = text.split("\n")
    h = {}
    sv_line = None
    known = ("svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv", "rho",
             "label", "probA", "probB", "nr_sv", "prob_density_marks")
    for no, line in enumerate(lines, 1):
        toks = line.split()
        if not toks:
            continue
        if toks[0] == "SV":
            sv_line = no
            break
        if toks[0] not in known:
            raise ModelFormatError(name, no, f"unknown key {toks[0]!r} in the header of a "
                                             f"LIBSVM model")
        if len(toks) < 2:
            raise ModelFormatError(name, no, f"{toks[0]} needs a value")
        h[toks[0]] = (no, toks[1:])
    if sv_line is None:
        raise ModelFormatError(name, len(lines), "missing 'SV' line (truncated file?)")
    for key in ("svm_type", "kernel_type", "nr_class", "total_sv", "rho"):
        if key not in h:
            raise ModelFormatError(name, sv_line, f"missing {key!r} in the LIBSVM model header")
    ln, (svm_type, *_) = h["svm_type"]
    if svm_type not in SVM_TYPES:
        raise ModelFormatError(name, ln, f"unknown svm_type {svm_type!r}")
    kernel = _kernel_from_header(h, name)
    ln, t = h["nr_class"]
    K = _int(t[0], name, ln, "nr_class", minimum=1)
    ln, t = h["total_sv"]
    l = _int(t[0], name, ln, "total_sv")
    ln, t = h["rho"]
    npairs = K * (K - 1) // 2 if svm_type in ("c_svc", "nu_svc") else 1
    if len(t) != max(npairs, 1):
        raise ModelFormatError(name, ln, f"rho has {len(t)} values, expected {max(npairs, 1)}")
    rho = np.array([_num(v, name, ln, "rho") for v in t])
    labels = nr_sv = None
    if svm_type in ("c_svc", "nu_svc"):
        for key in ("label", "nr_sv"):
            if key not in h:
                raise ModelFormatError(name, sv_line, f"missing {key!r}, which a {svm_type} "
                                                      f"model needs")
        ln, t = h["label"]
        if len(t) != K:
            raise ModelFormatError(name, ln, f"{len(t)} labels but nr_class is {K}")
        labels = np.array([_num(v, name, ln, "label") for v in t])
        ln, t = h["nr_sv"]
        if len(t) != K:
            raise ModelFormatError(name, ln, f"{len(t)} nr_sv values but nr_class is {K}")
        nr_sv = np.array([_int(v, name, ln, "nr_sv") for v in t])
        if nr_sv.sum() != l:
            raise ModelFormatError(name, ln, f"nr_sv adds up to {nr_sv.sum()}, total_sv is {l}")
    body = [x for x in lines[sv_line:] if x.strip()]
    if len(body) != l:
        raise ModelFormatError(name, sv_line + len(body), f"expected {l} support vectors, found "
                                                          f"{len(body)} (truncated file?)")
    ncoef = max(K - 1, 1)
    coef, rows = _parse_rows(body, sv_line + 1, ncoef, name, "support vector")
    return KernelModel(kernel=kernel, labels=labels, rho=rho, nr_sv=nr_sv,
                       sv_indptr=rows.indptr, sv_indices=rows.indices, sv_data=rows.data,
                       sv_coef=coef.T.copy(), nr_feature=rows.n_features, svm_type=svm_type)


def read_early(text, name):
    from svmtool.kernel_model import EarlyModel, LocalPair

    lines = text.split("\n")
    pos = 1  # skip the magic line

    def next_kv(expect):
        nonlocal pos
        while pos < len(lines) and not lines[pos].strip():
            pos += 1
        if pos >= len(lines):
            raise ModelFormatError(name, pos, f"missing {expect!r} (truncated file?)")
        toks = lines[pos].split()
        if toks[0] != expect:
            raise ModelFormatError(name, pos + 1, f"expected {expect!r}, found {toks[0]!r}")
        pos += 1
        return pos, toks[1:]

    h = {}
    for key in ("kernel_type", "degree", "gamma", "coef0", "nr_class", "label", "nr_feature",
                "level", "nr_pair"):
        h[key] = next_kv(key)
    kernel = _kernel_from_header(h, name)
    K = _int(h["nr_class"][1][0], name, h["nr_class"][0], "nr_class", minimum=1)
    labels = np.array([_num(v, name, h["label"][0], "label") for v in h["label"][1]])
    if len(labels) != K:
        raise ModelFormatError(name, h["label"][0], f"{len(labels)} labels but nr_class is {K}")
    nf = _int(h["nr_feature"][1][0], name, h["nr_feature"][0], "nr_feature")
    level = _int(h["level"][1][0], name, h["level"][0], "level")
    npair = _int(h["nr_pair"][1][0], name, h["nr_pair"][0], "nr_pair")
    pairs = []
    for _ in range(npair):
        next_kv("pair")
        ln, t = next_kv("nr_cluster")
        nc = _int(t[0], name, ln, "nr_cluster", minimum=1)
        ln, t = next_kv("centre_const")
        const = np.array([_num(v, name, ln, "centre_const") for v in t])
        ln2, t = next_kv("rho")
        rho = np.array([_num(v, name, ln2, "rho") for v in t])
        if len(const) != nc or len(rho) != nc:
            raise ModelFormatError(name, ln, f"expected {nc} values per cluster")
        ln, t = next_kv("nr_centre_point")
        m = _int(t[0], name, ln, "nr_centre_point")
        ln, t = next_kv("nr_sv")
        l = _int(t[0], name, ln, "nr_sv")
        next_kv("centres")
        if pos + m + 1 > len(lines):
            raise ModelFormatError(name, len(lines), "truncated centres section")
        cpre, centres = _parse_rows(lines[pos:pos + m], pos + 1, 1, name, "centre point")
        pos += m
        next_kv("svs")
        if pos + l > len(lines):
            raise ModelFormatError(name, len(lines), "truncated svs section")
        spre, svs = _parse_rows(lines[pos:pos + l], pos + 1, 2, name, "support vector")
        pos += l
        ccl = cpre[:, 0].astype(np.int64)
        scl = spre[:, 0].astype(np.int64)
        if (ccl.size and (ccl.min() < 0 or ccl.max() >= nc)) or \
                (scl.size and (scl.min() < 0 or scl.max() >= nc)):
            raise ModelFormatError(name, pos, "cluster id out of range")
        pairs.append(LocalPair(centres=centres, centre_cluster=ccl, centre_const=const, svs=svs,
                               sv_cluster=scl, sv_coef=spre[:, 1].copy(), rho=rho))
    return EarlyModel(kernel=kernel, labels=labels, pairs=pairs, nr_feature=nf, level=level)
