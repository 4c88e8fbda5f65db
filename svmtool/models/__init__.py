"""Model types: the contract between the solvers that make models, the readers and writers of
model files (svmtool.io) and prediction.

* :class:`~svmtool.models.linear.LinearModel` -- LIBLINEAR's model (every linear solver);
* :class:`~svmtool.models.kernel.KernelModel` -- LIBSVM's kernel expansion (-s kernel, dcsvm);
* :class:`~svmtool.models.early.EarlyModel` -- DC-SVM's early-prediction model.

Each holds arrays and computes decision values and predictions from them; nothing here knows
about files, solvers or the command line.  Names are imported lazily: a linear model must not pay
for the kernel code's numba import.
"""

_LAZY = {
    "LinearModel": "svmtool.models.linear",
    "KernelModel": "svmtool.models.kernel",
    "EarlyModel": "svmtool.models.early",
    "LocalPair": "svmtool.models.early",
    "ClusterOvO": "svmtool.models.early",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'svmtool.models' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value
