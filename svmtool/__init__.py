"""svmtool: support vector machines for large sparse data, from the command line or Python.

The public API is imported lazily (PEP 562) so that ``import svmtool`` and ``svmtool --help`` stay
fast: numba, scipy and the solvers load only when a function that needs them is first used.
"""

__version__ = "0.1.0"

_LAZY = {
    "load_svmlight": "svmtool.io.svmlight",
    "iter_svmlight_chunks": "svmtool.io.svmlight",
    "dump_svmlight": "svmtool.io.writer",
    "load_data": "svmtool.io.svmlight",
    "save_cache": "svmtool.io.cache",
    "load_cache": "svmtool.io.cache",
    "Problem": "svmtool.problem",
    "train": "svmtool.api",
    "predict": "svmtool.api",
    "cross_validate": "svmtool.api",
    "load_model": "svmtool.api",
    "save_model": "svmtool.api",
}

__all__ = ["__version__"] + sorted(_LAZY)


def __getattr__(name):
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'svmtool' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value
