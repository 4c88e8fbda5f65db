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

A multi-class early model with one clustering for all pairs (svmtool.solvers.early_ovo) has,
after the same header up to ``nr_pair``, one ``shared_clusters`` block instead of the pair blocks::

    shared_clusters 64           number of clusters
    centre_const <64 values>
    nr_centre_point 1000
    centres
    <cluster> <index>:<value> ...
    cluster 0                    then, for every cluster in order, a LIBSVM one-vs-one model:
    rho <K(K-1)/2 values>        per pair, LIBSVM's pair order
    nr_sv <K values>             support vectors per class (0 for a class absent there)
    SV
    <K-1 coefficients> <index>:<value> ...   grouped by class, LIBSVM's coefficient layout
    (next "cluster" block ...)
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
            f"nr_pair {max(1, len(model.labels) * (len(model.labels) - 1) // 2)}"]
    K = len(model.labels)
    pair_ids = [(i, j) for i in range(K) for j in range(i + 1, K)] or [(0, 0)]
    lines = head
    if model.shared is not None:
        return "\n".join(lines + _shared_lines(model.shared)) + "\n"
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


def _shared_lines(sh):
    lines = [f"shared_clusters {sh.nr_cluster}",
             "centre_const " + " ".join(_g(v) for v in sh.centre_const),
             f"nr_centre_point {sh.centres.n_rows}", "centres"]
    lines += _sv_lines(sh.centres, ["%d" % c for c in sh.centre_cluster])
    for c, lm in enumerate(sh.local):
        lines += [f"cluster {c}", "rho " + " ".join(_g(r + 0.0) for r in lm.rho),
                  "nr_sv " + " ".join("%d" % v for v in lm.nr_sv), "SV"]
        coef = lm.sv_coef
        lines += _sv_lines(lm.sv_rows, [" ".join(_g(v) for v in coef[:, s])
                                        for s in range(lm.total_sv)])
    return lines


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


class _Cursor:
    """Reads an early model's lines in order: ``key values`` lines and blocks of rows."""

    def __init__(self, lines, name, pos=0):
        self.lines, self.name, self.pos = lines, name, pos

    def skip_blank(self):
        while self.pos < len(self.lines) and not self.lines[self.pos].strip():
            self.pos += 1

    def peek(self):
        """The key of the next non-blank line (None at the end)."""
        self.skip_blank()
        return self.lines[self.pos].split()[0] if self.pos < len(self.lines) else None

    def kv(self, expect):
        """(line number, values) of the next line, which must start with ``expect``."""
        self.skip_blank()
        if self.pos >= len(self.lines):
            raise ModelFormatError(self.name, self.pos, f"missing {expect!r} (truncated file?)")
        toks = self.lines[self.pos].split()
        if toks[0] != expect:
            raise ModelFormatError(self.name, self.pos + 1,
                                   f"expected {expect!r}, found {toks[0]!r}")
        self.pos += 1
        return self.pos, toks[1:]

    def rows(self, count, n_prefix, what):
        """The next ``count`` lines as (prefix numbers, Rows)."""
        if self.pos + count > len(self.lines):
            raise ModelFormatError(self.name, len(self.lines), f"truncated {what} section")
        out = _parse_rows(self.lines[self.pos:self.pos + count], self.pos + 1, n_prefix,
                          self.name, what)
        self.pos += count
        return out


def _cluster_ids(ids, nc, cur):
    ids = ids.astype(np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= nc):
        raise ModelFormatError(cur.name, cur.pos, "cluster id out of range")
    return ids


def read_early(text, name):
    from svmtool.kernel_model import EarlyModel, LocalPair

    cur = _Cursor(text.split("\n"), name, pos=1)      # after the magic line
    h = {}
    for key in ("kernel_type", "degree", "gamma", "coef0", "nr_class", "label", "nr_feature",
                "level", "nr_pair"):
        h[key] = cur.kv(key)
    kernel = _kernel_from_header(h, name)
    K = _int(h["nr_class"][1][0], name, h["nr_class"][0], "nr_class", minimum=1)
    labels = np.array([_num(v, name, h["label"][0], "label") for v in h["label"][1]])
    if len(labels) != K:
        raise ModelFormatError(name, h["label"][0], f"{len(labels)} labels but nr_class is {K}")
    nf = _int(h["nr_feature"][1][0], name, h["nr_feature"][0], "nr_feature")
    level = _int(h["level"][1][0], name, h["level"][0], "level")
    npair = _int(h["nr_pair"][1][0], name, h["nr_pair"][0], "nr_pair")
    if npair != max(1, K * (K - 1) // 2):
        raise ModelFormatError(name, h["nr_pair"][0], f"nr_pair is {npair}, expected "
                                                     f"{max(1, K * (K - 1) // 2)} for {K} classes")
    if cur.peek() == "shared_clusters":
        return EarlyModel(kernel=kernel, labels=labels, pairs=[], nr_feature=nf, level=level,
                          shared=_read_shared(cur, K, npair, kernel))
    pairs = []
    for _ in range(npair):
        cur.kv("pair")
        ln, t = cur.kv("nr_cluster")
        nc = _int(t[0], name, ln, "nr_cluster", minimum=1)
        ln, t = cur.kv("centre_const")
        const = np.array([_num(v, name, ln, "centre_const") for v in t])
        ln2, t = cur.kv("rho")
        rho = np.array([_num(v, name, ln2, "rho") for v in t])
        if len(const) != nc or len(rho) != nc:
            raise ModelFormatError(name, ln, f"expected {nc} values per cluster")
        ln, t = cur.kv("nr_centre_point")
        m = _int(t[0], name, ln, "nr_centre_point")
        ln, t = cur.kv("nr_sv")
        l = _int(t[0], name, ln, "nr_sv")
        cur.kv("centres")
        cpre, centres = cur.rows(m, 1, "centre point")
        cur.kv("svs")
        spre, svs = cur.rows(l, 2, "support vector")
        pairs.append(LocalPair(centres=centres, centre_cluster=_cluster_ids(cpre[:, 0], nc, cur),
                               centre_const=const, svs=svs,
                               sv_cluster=_cluster_ids(spre[:, 0], nc, cur),
                               sv_coef=spre[:, 1].copy(), rho=rho))
    return EarlyModel(kernel=kernel, labels=labels, pairs=pairs, nr_feature=nf, level=level)


def _read_shared(cur, K, npair, kernel):
    """The ``shared_clusters`` block of a multi-class early model (a ClusterOvO)."""
    from svmtool.kernel_model import ClusterOvO, KernelModel

    name = cur.name
    ln, t = cur.kv("shared_clusters")
    nc = _int(t[0], name, ln, "shared_clusters", minimum=1)
    ln, t = cur.kv("centre_const")
    const = np.array([_num(v, name, ln, "centre_const") for v in t])
    if len(const) != nc:
        raise ModelFormatError(name, ln, f"expected {nc} values per cluster")
    ln, t = cur.kv("nr_centre_point")
    m = _int(t[0], name, ln, "nr_centre_point")
    cur.kv("centres")
    cpre, centres = cur.rows(m, 1, "centre point")
    ccl = _cluster_ids(cpre[:, 0], nc, cur)
    local = []
    for c in range(nc):
        ln, t = cur.kv("cluster")
        if len(t) != 1 or _int(t[0], name, ln, "cluster") != c:
            raise ModelFormatError(name, ln, f"expected 'cluster {c}'")
        ln, t = cur.kv("rho")
        if len(t) != npair:
            raise ModelFormatError(name, ln, f"rho has {len(t)} values, expected {npair}")
        rho = np.array([_num(v, name, ln, "rho") for v in t])
        ln, t = cur.kv("nr_sv")
        if len(t) != K:
            raise ModelFormatError(name, ln, f"{len(t)} nr_sv values but nr_class is {K}")
        nr_sv = np.array([_int(v, name, ln, "nr_sv") for v in t])
        cur.kv("SV")
        coef, svs = cur.rows(int(nr_sv.sum()), max(K - 1, 1), "support vector")
        local.append(KernelModel(kernel=kernel, labels=np.arange(K, dtype=np.float64),
                                 rho=rho, nr_sv=nr_sv, sv_indptr=svs.indptr,
                                 sv_indices=svs.indices, sv_data=svs.data,
                                 sv_coef=coef.T.copy(), nr_feature=svs.n_features))
    extra = cur.peek()
    if extra is not None:
        raise ModelFormatError(name, cur.pos + 1, f"unexpected {extra!r} after the last cluster")
    return ClusterOvO(centres=centres, centre_cluster=ccl, centre_const=const, local=local)
