"""svmtool's own runners: every registry solver through the public API (``api.train``), as a
user of the Python API runs it, optionally as a *variant* (typed options set: ``--liblinear-rng``,
a thread count, a line search, DC-SVM's early model, a warm start from yesterday's model, ...).

Which solvers a bench run has comes from the registry (:func:`svmtool.solvers.specs`): no list
of solver names lives here.
"""

from dataclasses import dataclass, field, fields, replace
from typing import Optional

import numpy as np

from svmtool import api
from svmtool.bench.anchors.base import (REGRESSION_GROUPS, Evaluation, Runner, kernel_terms,
                                        linear_evaluation, spec_group)
from svmtool.labels import class_index, class_weights, group_classes
from svmtool.problem import with_bias


def registry_specs():
    """Every distinct solver of the registry, in registration order."""
    from svmtool.solvers import specs

    return list(specs())


def select_solvers(names, has_qid=False):
    """Registry specs for ``names`` (a list, or None: every linear solver of the registry, plus
    the ranking ones when the data have query ids).  Unknown names raise ParameterError."""
    from svmtool.solvers import get_spec

    if names:
        out, seen = [], set()
        for n in names:
            specs = registry_specs() if n == "all" else [get_spec(n)]
            for s in specs:
                if s.name not in seen:
                    seen.add(s.name)
                    out.append(s)
        return out
    return [s for s in registry_specs()
            if s.kind in ("binary", "multiclass") or (s.kind == "ranking" and has_qid)]


@dataclass(frozen=True)
class Variant:
    """One svmtool run with options of its own, shown as ``label`` in the tables.

    ``options`` are TrainParams fields (``liblinear_rng``, ``threads``, ``eps``, ``max_iter``,
    ``bias``, ``seed``) or ``group.field`` for the typed option groups (``cp.line_search``,
    ``dcsvm.early``, ``kernel.gamma``, ...); ``warm`` trains yesterday's model first (untimed) and
    starts every timed run from it (``api.train(..., init_model=...)``)."""

    solver: str
    label: Optional[str] = None
    options: dict = field(default_factory=dict, hash=False)
    warm: bool = False


def apply_options(params, options):
    """TrainParams with ``options`` (see Variant) set."""
    top, groups = {}, {}
    names = {f.name for f in fields(params)}
    for key, value in options.items():
        group, _, name = key.partition(".")
        if name:
            if group not in names:
                raise ValueError(f"unknown option group {group!r} in {key!r}")
            groups.setdefault(group, {})[name] = value
        elif key in names:
            top[key] = value
        else:
            raise ValueError(f"unknown option {key!r}")
    for group, values in groups.items():
        top[group] = replace(getattr(params, group), **values)
    return replace(params, **top)


class SvmtoolRunner(Runner):
    """One registry solver (or a Variant of it) through the public API (api.train)."""

    source = "svmtool"

    def __init__(self, spec, bias=-1.0, kernel_opts=None, threads=None, variant=None):
        self.spec = spec
        self.variant = variant or Variant(spec.name)
        self.name = self.variant.label or spec.name
        self.solver = spec.name
        self.group = spec_group(spec)
        self.default_eps = self.variant.options.get("eps", spec.default_eps)
        self.bias = -1.0 if spec.kind == "kernel" else float(bias)
        self.kernel_opts = dict(kernel_opts or {})
        self.threads = threads
        if spec.kind == "binary" and self.group != "own" and not self.variant.warm:
            self.cap = "max_iter"
        elif spec.kind == "kernel":
            self.cap = "eps"

    def _params(self, C, eps, max_iter=None):
        from svmtool.params import KernelParams, TrainParams

        kernel = KernelParams(**self.kernel_opts) if self.spec.kind == "kernel" else KernelParams()
        p = TrainParams(solver=self.spec.name, C=float(C), eps=eps, bias=self.bias,
                        max_iter=max_iter, threads=self.threads, kernel=kernel)
        opts = dict(self.variant.options)
        if eps is not None:
            opts.pop("eps", None)       # the grid's eps wins over the variant's
        if max_iter is not None:
            opts.pop("max_iter", None)
        return apply_options(p, opts)

    def prepare(self, data):
        if not self.variant.warm:
            return data.train
        old = getattr(data, "yesterday", None)
        if old is None:
            raise ValueError("a warm-start variant needs the data's 'yesterday' (nightly=...)")
        self._yesterday = old
        self._init = {}
        return data.train

    def _init_model(self, C):
        if C not in self._init:
            self._init[C] = api.train(self._yesterday, self._params(C, None))
        return self._init[C]

    def fit(self, state, C, eps, cap=None, callback=None):
        problem = state
        if cap is not None and self.cap == "max_iter":
            return self._fit_direct(problem, self._params(C, eps, int(cap)), callback)
        if cap is not None and self.cap == "eps":
            eps = cap
        init = self._init_model(C) if self.variant.warm else None
        return api.train(problem, self._params(C, eps), callback=callback, init_model=init)

    def _fit_direct(self, problem, params, callback):
        """The API's one-vs-rest loop without LIBLINEAR's -s 1 -> -s 2 rescue, so that a capped
        run stops where the cap says (used only for the trace replays)."""
        if params.eps is None:
            params = replace(params, eps=self.spec.default_eps)
        fit = self.spec.load()
        labels, _, _, _ = group_classes(problem.y)
        cls = class_index(problem.y, labels)
        indptr, indices, data, n_cols = with_bias(problem, params.bias)
        wc = class_weights(params, labels)
        tasks = ([(0, wc[0], wc[1])] if len(labels) == 2
                 else [(i, wc[i], params.C) for i in range(len(labels))])
        W = np.zeros((n_cols, len(tasks)))
        its = 0
        for col, (i, cp, cn) in enumerate(tasks):
            yb = np.where(cls == i, 1.0, -1.0)
            cb = None if callback is None else (lambda it, info, _i=i: callback(_i, it, info))
            res = fit(indptr, indices, data, yb, n_cols, cp, cn, params, callback=cb)
            W[:, col] = res.w
            its += int(res.iterations)
        col_labels = labels[:1] if len(labels) == 2 else labels
        return ("direct", W, col_labels, its)

    def evaluate(self, state, raw, data):
        if isinstance(raw, tuple) and raw[0] == "direct":
            _, W, col_labels, its = raw
            return Evaluation(iterations=its, W=W, col_labels=col_labels)
        model = raw
        rep = getattr(model, "report", {}) or {}
        classes = rep.get("classes", [])
        # after LIBLINEAR's -s 1 -> -s 2 rescue the report counts both (as LIBLINEAR prints)
        its = (sum(int(c.get("iterations", 0)) + int(c.get("dual_iterations") or 0)
                   for c in classes) if classes else None)
        own = (sum(float(c.get("primal", np.nan)) for c in classes) if classes else None)
        if self.spec.kind == "kernel":
            ev = Evaluation(iterations=its, own_objective=own, kernel=kernel_terms(model, data))
            if data.test is not None:
                ev.test_pred = api.predict(model, data.test)[0]
            return ev
        if self.group == "own":
            ev = Evaluation(iterations=its, own_objective=own)
            if data.test is not None and self.spec.kind != "ranking":
                ev.test_pred = api.predict(model, data.test)[0]
            return ev
        ev = linear_evaluation(model, self.group)
        ev.iterations, ev.own_objective = its, own
        return ev


__all__ = ["REGRESSION_GROUPS", "SvmtoolRunner", "Variant", "apply_options", "registry_specs",
           "select_solvers"]
