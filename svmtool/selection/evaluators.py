"""Which evaluator scores the cells of a solver, its folds, and the values of a unit's keys
(see :mod:`svmtool.selection.grid`)."""

from dataclasses import replace

from svmtool.errors import ParameterError
from svmtool.selection.folds import libsvm_folds, seeded_folds


def kind_of(spec, params):
    """Which evaluator scores the cells of ``spec``'s solver (see the module doc)."""
    if spec.libsvm_id == 0 and not params.libsvm.probability and \
            int(params.kernel.kernel_type) != 4:
        return "kernel"
    if spec.model_type == "linear" and spec.kind in ("binary", "single") and \
            spec.task in ("classification", "regression"):
        return "linear"
    if spec.reads("dcsvm") and params.dcsvm.early:
        return "early"
    return "generic"


def path_solver(spec):
    """The solver that runs a linear C path for ``spec``'s problem: LIBLINEAR's -C solver of
    the same problem (primal Newton, warm-started from the previous w: -s 0, 2 or 11) when
    there is one, else ``spec`` itself."""
    from svmtool.solvers import specs

    for other in specs():
        if other.liblinear_id in (0, 2, 11) and other.problem == spec.problem and \
                other.regulariser == spec.regulariser and other.warm_start == "w":
            return other
    return spec


def uses_gamma(spec, params):
    """Whether the solver has a gamma to search (a kernel of -t 1, 2 or 3)."""
    return spec.model_type != "linear" and int(params.kernel.kernel_type) in (1, 2, 3)


def make_folds(problem, spec, nr_fold, opts):
    if nr_fold < 2:
        raise ParameterError(f"-v {nr_fold}: n-fold cross validation needs n >= 2")
    if nr_fold > problem.n_rows:
        raise ParameterError(f"-v {nr_fold}: more folds than the {problem.n_rows} rows of "
                             f"{problem.source or 'the data'}")
    # LIBSVM stratifies C-SVC's and nu-SVC's folds; LIBLINEAR's -C (the linear solvers'
    # anchor) shuffles all rows by the same rule without strata
    stratified = spec.task == "classification" and spec.model_type != "linear"
    make = libsvm_folds if opts.folds == "libsvm" else seeded_folds
    return make(problem.y, nr_fold, stratified=stratified, seed=opts.seed)


def threads_of(opts):
    from svmtool.ops.kernels import n_threads

    return n_threads(opts.threads)


def evaluator_for(kind, problem, params, spec, folds, opts):
    threads = threads_of(opts)
    if kind == "kernel":
        from svmtool.selection.kernel_cells import KernelGrid

        return KernelGrid(problem, params, folds, seed_mode=opts.seed_alpha,
                          share_rows=opts.share_rows)
    if kind == "linear":
        from svmtool.selection.linear_cells import LinearGrid

        return LinearGrid(problem, replace(params, threads=1), spec, folds, threads=threads,
                          early_stop=opts.linear_path)
    if kind == "early":
        from svmtool.labels import group_classes

        if len(group_classes(problem.y)[0]) == 2:
            from svmtool.selection.early_cells import EarlyGrid

            return EarlyGrid(problem, params, folds)
    from svmtool.selection.generic_cells import GenericGrid

    return GenericGrid(problem, replace(params, threads=1), spec, folds)


def values(params, problem, c_scale=1.0):
    """The function giving (gamma, [(log2c, C)]) of a unit's keys; ``c_scale`` multiplies
    every C (successive halving's C~ = C sqrt(n / N) on a sample of n of N rows)."""
    gamma0 = params.kernel.gamma
    if gamma0 is None or gamma0 == 0:
        gamma0 = 1.0 / problem.n_features if problem.n_features else 0.0

    def value_of(g, cs):
        gamma = 2.0 ** g if g is not None else gamma0
        return gamma, [(c, c_scale * (2.0 ** c if c is not None else params.C)) for c in cs]

    return value_of
