"""Paired Hessian passes: the one-vs-rest classes of Newton's logistic regression (-s 0) share
their CG passes (the solvers whose registry entry says ``class_batches``).

A multi-class Newton run solves one binary problem per class over the same rows, and nearly
all of its time is conjugate gradient's Hessian-vector products, one pass over the rows each;
for the logistic loss every row takes part in every pass.
Each pass reads every stored index and value to do little arithmetic with it.  Here the classes
of a run are put in groups, and the pending CG passes of a group's classes are done two at a
time (:func:`svmtool.solvers.newton._batch_jit.hv_pair_group`), reading the rows once for both.
(Four classes a pass read the rows less often still, but the four classes' vectors no longer
stay in a core's second-level cache beside the rows, and measured no faster than pairs.)

A group is one core's work: its member classes run one at a time (each in a thread of its own,
taking the group's turn -- ``_Group.busy`` -- while it runs), and when every member has asked
for its next Hessian product, the last one to ask computes them all, in its thread.  So a run
with G groups keeps G cores busy, whatever the number of classes in flight; a member's other
work (its gradient passes, line search, CG's vector updates) is its own.  When groups stand
empty (no classes left for them) their cores help the others: a shared pass runs its row
blocks on that many more threads.

The squared hinge (-s 2) is left out: its passes visit only each class's active rows, which
differ from class to class (a pair would visit the rows active for either), and they are short,
so the classes' turns cost a visible share of them.

The results do not depend on the grouping: each class's products are the same bits as its own
pass would give (the kernels' module docstring), so the model is the same for any thread count
and any grouping.  Requests whose rows differ (other arrays, other blocks) are never paired.
"""

import contextlib
import threading

import numpy as np

BATCH = 2            # classes in a shared pass (and at most in a group)


class ClassBatches:
    """The groups of one training run: ``groups`` of them, each with ``threads`` threads (the
    cores the run may use, shared out)."""

    def __init__(self, groups, threads=1):
        self._groups = [_Group(self) for _ in range(max(1, int(groups)))]
        self.threads = max(1, int(threads))
        self.passes = {}        # classes in a pass (1 to BATCH) -> passes made so (a record)
        self._lock = threading.Lock()

    def idle(self):
        """How many groups have no member (their cores are free to help the others)."""
        return sum(1 for g in self._groups if g.members == 0)

    def members(self):
        """Classes in the groups now."""
        return sum(g.members for g in self._groups)

    def _count(self, k):
        with self._lock:
            self.passes[k] = self.passes.get(k, 0) + 1

    @contextlib.contextmanager
    def joined(self, obj):
        """Run the block with ``obj`` (an Objective) a member of the group with the fewest
        members: its :meth:`hess_vec_dot` calls go to the group; the block runs in the group's
        turn."""
        with self._lock:
            group = min(self._groups, key=lambda g: g.members)
            with group.cond:
                group.members += 1
        group.take_turn()
        obj.batch = group
        try:
            yield group
        finally:
            obj.batch = None
            group.leave()


class _Request:
    __slots__ = ("obj", "v", "xv", "result", "error", "done")

    def __init__(self, obj, v, xv):
        self.obj, self.v, self.xv = obj, v, xv
        self.result = self.error = None
        self.done = False

    def key(self):
        """What requests must share to be computed in one pass: the rows and their blocks."""
        orc = self.obj.oracle
        rows = orc.rows_key() if hasattr(orc, "rows_key") else id(orc)
        return (type(orc), rows, self.xv is not None)


class _Group:
    def __init__(self, owner):
        self.owner = owner
        self.cond = threading.Condition()
        self.members = 0
        self.pending = []
        self.busy = False           # one member runs at a time: the group's turn is taken
        self._arrays = None         # (rows' shape, the pair kernel's arrays)

    # ---- the turn --------------------------------------------------------------------------
    def take_turn(self):
        with self.cond:
            while self.busy:
                self.cond.wait()
            self.busy = True

    def leave(self):
        """The calling member (which has the turn) is done: the others' pending products are
        computed if they were waiting for it alone; then the turn is given up."""
        with self.cond:
            self.members -= 1
            batch = self._ready()
        try:
            if batch:
                self._serve(batch)
        finally:
            with self.cond:
                self.busy = False
                self.cond.notify_all()

    # ---- the products ----------------------------------------------------------------------
    def hess_vec_dot(self, obj, v, xv):
        """``obj``'s ``(H v, v'H v)`` (``X v`` into ``xv`` when given), computed with the other
        members' pending products once every member has asked."""
        req = _Request(obj, v, xv)
        with self.cond:
            self.pending.append(req)
            batch = self._ready()
            if batch is None:
                self.busy = False
                self.cond.notify_all()
                while not req.done or self.busy:
                    self.cond.wait()
                self.busy = True
        if batch is not None:
            self._serve(batch)
        if req.error is not None:
            raise req.error
        return req.result

    def _ready(self):
        """Under the lock: the pending requests, taken, once every member has one in."""
        if self.pending and len(self.pending) >= self.members:
            batch, self.pending = self.pending, []
            return batch
        return None

    def _serve(self, batch):
        """Compute every request of ``batch`` (in this thread, which has the turn): in pairs of
        the same rows, the odd one out alone."""
        error = None
        try:
            threads = self.owner.threads * (1 + self.owner.idle())
            by_key = {}
            for r in batch:
                by_key.setdefault(r.key(), []).append(r)
            for reqs in by_key.values():
                for at in range(0, len(reqs), BATCH):
                    part = reqs[at:at + BATCH]
                    self.owner._count(len(part))
                    if len(part) == 1:
                        r = part[0]
                        r.result = r.obj.own_hess_vec_dot(r.v, r.xv, threads=threads)
                    else:
                        self._pair(part, threads)
        except BaseException as e:         # every member waiting on the batch gets it
            error = e
        with self.cond:
            # no one to wake: the members served wait for the turn too, which this thread
            # holds (it is given up, with a notify, in hess_vec_dot or leave)
            for r in batch:
                if error is not None:
                    r.error = error
                r.done = True

    def _pair(self, reqs, threads):
        from svmtool.solvers.newton._batch_jit import (hv_pair_group, interleave,
                                                       sum_add_dot_pair)

        a, b = reqs
        V, bufs, vhv = self._arrays_for(a.obj)
        want = a.xv is not None
        interleave(a.v, b.v, V)
        a.obj.oracle.run_groups(hv_pair_group, V, a.obj.dcoef, b.obj.dcoef, want,
                                a.xv if want else a.obj.z, b.xv if want else b.obj.z, bufs,
                                threads=threads)
        sum_add_dot_pair(bufs, V, a.obj._hv, b.obj._hv, vhv)
        for r, h in ((a, float(vhv[0])), (b, float(vhv[1]))):
            r.obj.passes += 1
            r.result = r.obj.finish_hess_vec_dot(r.v, r.obj._hv, h)

    def _arrays_for(self, obj):
        """The pair kernel's arrays for ``obj``'s rows (kept between passes)."""
        orc = obj.oracle
        shape = (orc.n_features, orc.n_blocks)
        if self._arrays is None or self._arrays[0] != shape:
            n, nb = shape
            self._arrays = (shape, (np.zeros((n, BATCH)), np.zeros((nb, n, BATCH)),
                                    np.zeros(BATCH)))
        return self._arrays[1]
