"""svmtool's DC-SVM early-prediction model files (EarlyModel), read and written.

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
Hsieh et al. 2014); pairs vote as in LIBSVM.  The rows' feature values are written in the shortest
form that reads back the same double (Python's ``repr``: for values read from text, their own
digits, shorter than ``%.17g`` and quicker to write), other numbers with ``%.17g``.

A multi-class early model with one clustering for all pairs (svmtool.solvers.dcsvm.early_ovo) has,
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
from svmtool.io.model_text import (format_g17, format_label, kernel_from_header, parse_float,
                                   parse_int, parse_rows, sv_lines)
from svmtool.models.early import ClusterOvO, EarlyModel, LocalPair
from svmtool.models.kernel import KernelModel


def early_text(model) -> str:
    k = model.kernel
    head = ["svmtool_early_model 1", f"kernel_type {k.name}", f"degree {int(k.degree)}",
            f"gamma {format_g17(k.gamma)}", f"coef0 {format_g17(k.coef0)}", f"nr_class {len(model.labels)}",
            "label " + " ".join(format_label(v) for v in model.labels),
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
        lines.append("centre_const " + " ".join(format_g17(v) for v in lp.centre_const))
        lines.append("rho " + " ".join(format_g17(v + 0.0) for v in lp.rho))
        lines.append(f"nr_centre_point {lp.centres.n_rows}")
        lines.append(f"nr_sv {lp.svs.n_rows}")
        lines.append("centres")
        lines += sv_lines(lp.centres, ["%d" % c for c in lp.centre_cluster], "%r")
        lines.append("svs")
        lines += sv_lines(lp.svs, ["%d %s" % (c, format_g17(a))
                                    for c, a in zip(lp.sv_cluster.tolist(), lp.sv_coef.tolist())],
                          "%r")
    return "\n".join(lines) + "\n"


def _shared_lines(sh):
    lines = [f"shared_clusters {sh.nr_cluster}",
             "centre_const " + " ".join(format_g17(v) for v in sh.centre_const),
             f"nr_centre_point {sh.centres.n_rows}", "centres"]
    lines += sv_lines(sh.centres, ["%d" % c for c in sh.centre_cluster], "%r")
    for c, lm in enumerate(sh.local):
        lines += [f"cluster {c}", "rho " + " ".join(format_g17(r + 0.0) for r in lm.rho),
                  "nr_sv " + " ".join("%d" % v for v in lm.nr_sv), "SV"]
        coef = lm.sv_coef
        lines += sv_lines(lm.sv_rows, [" ".join(format_g17(v) for v in coef[:, s])
                                        for s in range(lm.total_sv)], "%r")
    return lines


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

    def one(self, expect):
        """(line number, value) of the next line, which must be ``expect`` and one value."""
        ln, toks = self.kv(expect)
        if len(toks) != 1:
            raise ModelFormatError(self.name, ln, f"{expect} takes one value, found {len(toks)}")
        return ln, toks[0]

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
        if count > len(self.lines) - self.pos:
            raise ModelFormatError(self.name, len(self.lines), f"truncated {what} section")
        out = parse_rows(self.lines[self.pos:self.pos + count], self.pos + 1, n_prefix,
                          self.name, what)
        self.pos += count
        return out


def _cluster_ids(ids, nc, cur):
    if ids.size and (ids.min() < 0 or ids.max() >= nc or np.any(ids != np.floor(ids))):
        raise ModelFormatError(cur.name, cur.pos, f"cluster id out of range (0..{nc - 1})")
    return ids.astype(np.int64)


def read_early(text, name):
    cur = _Cursor(text.split("\n"), name, pos=1)      # after the magic line
    h = {}
    for key in ("kernel_type", "degree", "gamma", "coef0", "nr_class", "label", "nr_feature",
                "level", "nr_pair"):
        if key == "label":
            h[key] = cur.kv(key)
        else:
            ln, tok = cur.one(key)
            h[key] = (ln, [tok])
    kernel = kernel_from_header(h, name)
    K = parse_int(h["nr_class"][1][0], name, h["nr_class"][0], "nr_class", minimum=1)
    labels = np.array([parse_float(v, name, h["label"][0], "label") for v in h["label"][1]])
    if len(labels) != K:
        raise ModelFormatError(name, h["label"][0], f"{len(labels)} labels but nr_class is {K}")
    nf = parse_int(h["nr_feature"][1][0], name, h["nr_feature"][0], "nr_feature")
    level = parse_int(h["level"][1][0], name, h["level"][0], "level")
    npair = parse_int(h["nr_pair"][1][0], name, h["nr_pair"][0], "nr_pair")
    if npair != max(1, K * (K - 1) // 2):
        raise ModelFormatError(name, h["nr_pair"][0], f"nr_pair is {npair}, expected "
                                                     f"{max(1, K * (K - 1) // 2)} for {K} classes")
    if cur.peek() == "shared_clusters":
        return EarlyModel(kernel=kernel, labels=labels, pairs=[], nr_feature=nf, level=level,
                          shared=_read_shared(cur, K, npair, kernel))
    pairs = []
    for _ in range(npair):
        cur.kv("pair")
        ln, t = cur.one("nr_cluster")
        nc = parse_int(t, name, ln, "nr_cluster", minimum=1)
        ln, t = cur.kv("centre_const")
        const = np.array([parse_float(v, name, ln, "centre_const") for v in t])
        ln2, t = cur.kv("rho")
        rho = np.array([parse_float(v, name, ln2, "rho") for v in t])
        if len(const) != nc or len(rho) != nc:
            raise ModelFormatError(name, ln, f"expected {nc} values per cluster")
        ln, t = cur.one("nr_centre_point")
        m = parse_int(t, name, ln, "nr_centre_point")
        ln, t = cur.one("nr_sv")
        l = parse_int(t, name, ln, "nr_sv")
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
    name = cur.name
    ln, t = cur.one("shared_clusters")
    nc = parse_int(t, name, ln, "shared_clusters", minimum=1)
    ln, t = cur.kv("centre_const")
    const = np.array([parse_float(v, name, ln, "centre_const") for v in t])
    if len(const) != nc:
        raise ModelFormatError(name, ln, f"expected {nc} values per cluster")
    ln, t = cur.one("nr_centre_point")
    m = parse_int(t, name, ln, "nr_centre_point")
    cur.kv("centres")
    cpre, centres = cur.rows(m, 1, "centre point")
    ccl = _cluster_ids(cpre[:, 0], nc, cur)
    local = []
    for c in range(nc):
        ln, t = cur.kv("cluster")
        if len(t) != 1 or parse_int(t[0], name, ln, "cluster") != c:
            raise ModelFormatError(name, ln, f"expected 'cluster {c}'")
        ln, t = cur.kv("rho")
        if len(t) != npair:
            raise ModelFormatError(name, ln, f"rho has {len(t)} values, expected {npair}")
        rho = np.array([parse_float(v, name, ln, "rho") for v in t])
        ln, t = cur.kv("nr_sv")
        if len(t) != K:
            raise ModelFormatError(name, ln, f"{len(t)} nr_sv values but nr_class is {K}")
        counts = [parse_int(v, name, ln, "nr_sv") for v in t]
        nr_sv = np.array(counts, dtype=np.int64)
        cur.kv("SV")
        coef, svs = cur.rows(sum(counts), max(K - 1, 1), "support vector")
        local.append(KernelModel(kernel=kernel, labels=np.arange(K, dtype=np.float64),
                                 rho=rho, nr_sv=nr_sv, sv_indptr=svs.indptr,
                                 sv_indices=svs.indices, sv_data=svs.data,
                                 sv_coef=coef.T.copy(), nr_feature=svs.n_features))
    extra = cur.peek()
    if extra is not None:
        raise ModelFormatError(name, cur.pos + 1, f"unexpected {extra!r} after the last cluster")
    return ClusterOvO(centres=centres, centre_cluster=ccl, centre_const=const, local=local)
