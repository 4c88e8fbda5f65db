"""The per-row memory of cp, ocas, gca2 and tca (issue 19: OCAS on 10M rows within 400 MB).

What changed, and the truth each representation is checked against:

* the API groups the classes in chunks (``labels.class_labels``, a byte a row) -- against
  ``group_classes`` / ``class_index``, which hold the whole grouping at once;
* labels as int8 signs with the costs by class, or float64 signed costs when they differ
  within a class (``engine.hinge``) -- against the per-row label and cost vectors, in numpy;
* no stored cut coefficients, no stored ``zd = zt - zb``, OCAS's score updates in place --
  against numpy's expressions, bit for bit;
* the exact line search by selection over the breakpoints' bit patterns -- against numpy's
  histogram of those patterns and OCAS's sort and walk;
* the whole OCAS run -- against the same driver over a risk adapter that keeps the old per-row
  vectors and does everything in numpy;
* the bytes a row of a whole ``api.train`` on a million rows, in a child process.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import DATA
from svmtool import labels as L
from svmtool.engine import hinge
from svmtool.engine.passes_cp import CPOracle
from svmtool.io.svmlight import load_svmlight
from svmtool.solvers.cutting_plane.cutting_plane import HingeRisk
from svmtool.solvers.cutting_plane.linesearch import HingeLine, _exact_walk
from svmtool.solvers.cutting_plane.ocas import make_search, solve_ocas

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- labels --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_class_labels_is_group_classes_in_chunks(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(L, "CHUNK", int(rng.integers(1, 300)))
    for trial in range(30):
        n = int(rng.integers(1, 2000))
        K = 200 if trial == 0 else int(rng.integers(1, 6))
        values = rng.permutation(np.arange(-100, 100) * 1.0)[:K]
        if trial % 3 == 1:
            values = np.array([-1.0, 1.0])[:K] if K <= 2 else values
        y = values[rng.integers(0, len(values), n)]
        labels, perm, _, count = L.group_classes(y)
        l2, cls, c2 = L.class_labels(y)
        assert np.array_equal(labels, l2)
        assert np.array_equal(cls, L.class_index(y, labels))
        assert np.array_equal(count, c2) and np.array_equal(perm, np.argsort(cls, kind="stable"))
        assert cls.dtype == (np.int8 if len(labels) < 127 else np.int32)


def test_signs_of_and_check_signs():
    cls = np.array([0, 2, 1, 2, 0], dtype=np.int8)
    s = L.signs_of(cls, 2)
    assert s.dtype == np.int8 and s.tolist() == [-1, 1, -1, 1, -1]
    y, cp, cn = L.check_signs(5, [1.0, -1.0, 1.0, 1.0, -1.0], 2, 3)
    assert y.dtype == np.int8 and y.tolist() == [1, -1, 1, 1, -1] and (cp, cn) == (2.0, 3.0)
    assert np.shares_memory(L.check_signs(5, s, 1, 1)[0], s)    # int8 in: no copy
    for bad in ([1.0, 0.0, 1.0, 1.0, 1.0], np.array([1, 2, 1, 1, 1], dtype=np.int8)):
        with pytest.raises(ValueError, match="-1 or \\+1"):
            L.check_signs(5, bad, 1, 1)
    with pytest.raises(ValueError, match="C must be"):
        L.check_signs(5, s, 0, 1)


# --- the hinge kernels against the old per-row vectors -----------------------------------------

def _line_data(seed, n=3000):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    zb = rng.normal(size=n)
    zt = zb + rng.normal(size=n) * rng.uniform(0.05, 2.0)
    zb[:50] = np.round(zb[:50])               # margins exactly 0 and rows without a slope
    zt[:20] = zb[:20]
    zb[50:60] = y[50:60]
    return rng, y, zb, zt


@pytest.mark.parametrize("per_row", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_hinge_kernels_against_the_stored_vectors(seed, per_row):
    rng, y, zb, zt = _line_data(seed)
    n = len(y)
    cost = rng.uniform(0.5, 2.0, n) if per_row else np.where(y > 0, 0.7, 1.9)
    lab, cp, cn = hinge.signs_and_costs(y, cost)
    assert lab.dtype == (np.float64 if per_row else np.int8)
    # the old computation: labels, costs, zd and the cut's coefficients all stored
    zd = zt - zb
    viol = 1.0 - y * zb > 0
    risk, off, nv = hinge.hinge_sums(zb, lab, cp, cn)
    assert risk == pytest.approx(float(cost @ np.maximum(0.0, 1.0 - y * zb)), rel=1e-12)
    assert off == pytest.approx(float(cost[viol].sum()), rel=1e-12) and nv == viol.sum()
    assert hinge.hinge_risk(zb, lab, cp, cn) == pytest.approx(risk, rel=1e-12)
    for mu in (0.0, 0.3, 1.7):
        old = float(cost @ np.maximum(0.0, 1.0 - y * (zb + mu * zd)))
        assert hinge.hinge_risk_line(zb, zt, lab, cp, cn, mu) == pytest.approx(old, rel=1e-12)
    # OCAS's updates in place: numpy's roundings, bit for bit
    a = zb.copy()
    hinge.step_inplace(a, zt, 0.37)
    assert np.array_equal(a, zb + 0.37 * zd)
    b = zt.copy()
    hinge.cut_point_inplace(zb, b, 0.1)
    assert np.array_equal(b, (1.0 - 0.1) * zb + 0.1 * zt)
    # the breakpoints: the old kernel's keys, jumps and slope at 0, recomputed here
    m, s = 1.0 - y * zb, y * zd
    with np.errstate(divide="ignore", invalid="ignore"):
        t = m / s
    has = (s != 0) & (t > 0)
    slope0 = 0.0
    for i in np.flatnonzero((s != 0) & ((m > 0) | ((m == 0) & (s < 0)))):
        slope0 -= cost[i] * s[i]
    keys, jumps = np.empty(n), np.empty(n)
    s0, nb = hinge.hinge_breakpoints(zb, zt, lab, cp, cn, keys, jumps)
    assert s0 == slope0 and np.array_equal(keys[:nb], t[has])
    assert np.array_equal(jumps[:nb], (cost * np.abs(s))[has])
    # histogram by bit pattern and the copy of one bucket, against numpy on the patterns
    bits = t[has].view(np.uint64)
    for lo, shift, nbk in ((0, 52, 2048), (int(np.median(bits)) & ~((1 << 40) - 1), 28, 4096)):
        counts, sums = np.empty(nbk + 1, np.int64), np.empty(nbk + 1)
        assert hinge.break_hist(zb, zt, lab, cp, cn, np.uint64(lo), np.uint64(shift), counts,
                                sums) == slope0
        inside = (bits >= lo) & (((bits - np.uint64(lo)) >> np.uint64(shift)) < nbk)
        k = ((bits[inside] - np.uint64(lo)) >> np.uint64(shift)).astype(np.int64)
        assert np.array_equal(counts[:nbk], np.bincount(k, minlength=nbk))
        np.testing.assert_allclose(sums[:nbk], np.bincount(
            k, weights=jumps[:nb][inside], minlength=nbk), rtol=1e-12, atol=0)
        hi = lo + (1 << (shift + 12 if shift < 52 else 63))
        want = (bits >= lo) & (bits < hi)
        kk, jj = np.empty(want.sum() + 1), np.empty(want.sum() + 1)
        got = hinge.break_collect(zb, zt, lab, cp, cn, np.uint64(lo), np.uint64(hi), kk, jj)
        assert got == want.sum() and np.array_equal(kk[:got], t[has][want])
        assert np.array_equal(jj[:got], jumps[:nb][want])


@pytest.mark.parametrize("seed", range(4))
def test_selection_is_the_sorted_walk(seed):
    """The exact search by rounds of histograms (copying out at most ``limit`` breakpoints)
    against OCAS's sort and walk over every breakpoint, with ties, repeated rows (a bucket of
    one bit pattern) and rows without a breakpoint."""
    rng = np.random.default_rng(seed)
    for trial in range(60):
        n = int(rng.integers(1, 2500))
        zb = rng.normal(size=n)
        zt = zb + rng.normal(size=n) * rng.uniform(0.01, 3.0)
        if trial % 3 == 0:
            zb, zt = np.round(zb * 2) / 2, np.round(zt * 2) / 2
        if trial % 4 == 1:
            reps = int(rng.integers(2, 60))
            zb, zt = np.tile(zb[:40], reps), np.tile(zt[:40], reps)
            n = len(zb)
        lab = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
        A, B = rng.random() * n / 20, rng.normal() * n / 10
        line = HingeLine(zb, zt, lab, rng.uniform(0.1, 3), rng.uniform(0.1, 3), A, B, 0.0)
        line.limit = int(rng.integers(1, 20)) if trial % 2 else line.limit
        s0, keys, jumps = line.breakpoints()
        ref = _exact_walk(keys.copy(), jumps.copy(), len(keys), s0, A, B) if A > 0 else 0.0
        assert line.exact() == pytest.approx(ref, rel=1e-12, abs=1e-14)
        assert line.exact(sort=True) == ref


# --- the whole OCAS run against one over the old per-row vectors --------------------------------

class _StoredRisk:
    """The binary hinge risk as it was kept before: float64 labels, a cost per row, the cut's
    coefficients, ``zd = zt - zb`` and every breakpoint stored; numpy throughout."""

    def __init__(self, oracle, y, cost):
        self.oracle, self.y, self.cost = oracle, np.asarray(y, float), np.asarray(cost, float)
        self.dim = oracle.n_features

    def zeros_scores(self):
        return np.zeros(len(self.y))

    def scores(self, w, out=None):
        return self.oracle.matvec(w)

    def risk(self, z):
        return float(self.cost @ np.maximum(0.0, 1.0 - self.y * z))

    def cut(self, z):
        viol = 1.0 - self.y * z > 0
        v = np.where(viol, self.cost * self.y, 0.0)
        return -self.oracle.rmatvec(v), float(self.cost[viol].sum()), self.risk(z)

    def line(self, zb, zt, A, B, c0):
        return _StoredLine(self, zb, zt - zb, A, B, c0)

    def step(self, zb, zt, mu):
        return zb + mu * (zt - zb)

    def cut_point(self, zb, zt, lam):
        return (1.0 - lam) * zb + lam * zt


class _StoredLine:
    def __init__(self, risk, zb, zd, A, B, c0):
        self.r, self.zb, self.zd, self.A, self.B, self.c0 = risk, zb, zd, A, B, c0
        self.evals = 0

    def f(self, mu):
        self.evals += 1
        return self.c0 + mu * (self.B + 0.5 * self.A * mu) + self.r.risk(self.zb + mu * self.zd)

    def exact(self, sort=False):
        y, c = self.r.y, self.r.cost
        m, s = 1.0 - y * self.zb, y * self.zd
        g = self.B - float(c[(s != 0) & ((m > 0) | ((m == 0) & (s < 0)))] @
                           s[(s != 0) & ((m > 0) | ((m == 0) & (s < 0)))])
        with np.errstate(divide="ignore", invalid="ignore"):
            t = m / s
        has = (s != 0) & (t > 0)
        t, jump = t[has], (c * np.abs(s))[has]
        if g >= 0 or self.A <= 0:
            return 0.0
        for k in np.argsort(t, kind="stable"):
            if -g / self.A <= t[k]:
                return -g / self.A
            g += jump[k]
            if self.A * t[k] + g >= 0:
                return float(t[k])
        return -g / self.A


@pytest.mark.parametrize("search", ["exact", "gca2", "tca"])
@pytest.mark.parametrize("weights", [(1.0, 1.0), (2.0, 0.5)])
def test_ocas_is_the_run_over_stored_vectors(search, weights):
    prob = load_svmlight(str(DATA / "a9a"))
    X = (prob.indptr, prob.indices, prob.data, prob.n_features)
    y = np.where(prob.y > 0, 1.0, -1.0)
    runs = []
    for risk in (HingeRisk(CPOracle(*X), y, weights),
                 _StoredRisk(CPOracle(*X), y, np.where(y > 0, *weights))):
        runs.append(solve_ocas(risk, 0.01, 1000, make_search(search)))
    new, old = runs
    assert new.iterations == old.iterations
    assert abs(new.primal - old.primal) <= 1e-10 * abs(old.primal)
    np.testing.assert_allclose(new.w, old.w, rtol=1e-7, atol=1e-10)


# --- bytes a row of a whole training run -----------------------------------------------------

_CHILD = r"""
import sys
import peak_memory
from svmtool import api
from svmtool.io.svmlight import load_data

path, solver, ooc = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
prob = load_data(path)
small = prob.__class__(prob.indptr[:301].copy(), prob.indices[:int(prob.indptr[300])].copy(),
                       prob.data[:int(prob.indptr[300])].copy(), prob.y[:300].copy(),
                       prob.n_features)
api.train(small, solver=solver, max_iter=3)       # the kernels loaded before measuring
api.train(prob, solver=solver, out_of_core=ooc, memory_budget=64, max_iter=1)
for a in (prob.indptr, prob.indices, prob.data, prob.y):
    a.sum()              # the mapped cache resident before measuring: only new memory counts
with peak_memory.growth() as cost:
    m = api.train(prob, solver=solver, C=float(sys.argv[4]) / prob.n_rows, out_of_core=ooc,
                  memory_budget=64)
print(cost["peak"] / prob.n_rows, m.report["classes"][0]["iterations"])
"""


def test_bytes_a_row_of_a_training_run(tmp_path):
    """A million rows (a 40 MB cache, mapped and made resident first): the peak resident
    memory of api.train, read from the kernel in a child process (tests/peak_memory.py), grows
    by the per-row vectors only -- ocas 19 bytes a row (two score vectors, the class byte, the
    sign byte), cp 11 -- in memory and out of core.  Before: 56 and 41 (measured with this
    test's earlier sampler); one float64 vector more breaks the bounds (ocas: 26.8).  The
    allocator maps every array of its own (MALLOC_MMAP_THRESHOLD_), so a freed array goes back
    to the system at once and the peak is that of the arrays alive together."""
    import peak_memory

    why = peak_memory.measurable()
    if why:
        pytest.skip(why)
    from svmtool.io.cache_stream import CacheWriter
    from svmtool.problem import Problem

    n, per = 1_000_000, 2
    rng = np.random.default_rng(5)
    cols = np.sort(rng.choice(8, size=(n, per)), axis=1)
    cols[:, 1] = np.where(cols[:, 1] == cols[:, 0], cols[:, 0] + 8, cols[:, 1])
    vals = rng.normal(size=(n, per))
    y = np.where(vals[:, 0] * np.where(cols[:, 0] % 2, 1, -1) + 0.5 * rng.normal(size=n) > 0,
                 1.0, -1.0)
    path = tmp_path / "rows.cache"
    with CacheWriter(str(path)) as w:
        w.append(Problem(np.arange(n + 1, dtype=np.int64) * per,
                         cols.reshape(-1).astype(np.int32), vals.reshape(-1), y, 16))
        w.finish()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tests")]),
               MALLOC_MMAP_THRESHOLD_="65536")
    # C = 1000 / n: ocas takes 8 iterations (line searches included), cp 44
    for solver, ooc, bound in (("ocas", "0", 24), ("ocas", "1", 24), ("cp", "0", 16)):
        r = subprocess.run([sys.executable, "-c", _CHILD, str(path), solver, ooc, "1000"],
                           env=env, capture_output=True, timeout=300)
        assert r.returncode == 0, r.stderr.decode()[-2000:]
        per_row, its = r.stdout.split()
        assert float(per_row) < bound and int(its) > 3, (solver, ooc, per_row, its)
