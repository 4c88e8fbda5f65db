"""Data files shipped inside svmtool for the benchmarks (package data, declared in pyproject.toml's
``[tool.setuptools.package-data]``): heart_scale, the set of every ``svmtool bench --quick``
run, a copy of the checkout's data/heart_scale.  Larger sets are not shipped: the suites read
them from a data folder (``--data-dir``)."""

from importlib import resources

FILES = ("heart_scale",)


def bundled(name):
    """The path of the shipped data file ``name`` (one of FILES)."""
    if name not in FILES:
        raise KeyError(f"{name!r} is not shipped with svmtool (shipped: {', '.join(FILES)})")
    return str(resources.files(__name__) / name)
