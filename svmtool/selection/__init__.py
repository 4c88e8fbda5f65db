"""Model selection in one process: LIBSVM's ``tools/grid.py``.

The layer between ``bench`` and ``api``: it drives the API and the solvers over a grid of
parameters and shares the work the cells have in common (kernel rows, warm starts, clusterings,
threads).  :mod:`~svmtool.selection.spec` holds grid.py's ranges, order, lines and files;
:mod:`~svmtool.selection.folds` svm-train -v's folds; :mod:`~svmtool.selection.grid` runs a
grid (:func:`~svmtool.selection.grid.run_grid`) through the evaluator of the solver
(:mod:`~svmtool.selection.evaluators` picks it: :mod:`~svmtool.selection.kernel_cells` for
C-SVC, :mod:`~svmtool.selection.linear_cells` for the linear solvers' C path,
:mod:`~svmtool.selection.early_cells` for ``-s dcsvm --early``,
:mod:`~svmtool.selection.generic_cells` for any other solver);
:mod:`~svmtool.selection.engine` runs the units of cells on threads, and
:mod:`~svmtool.selection.remote` on a dask cluster; :mod:`~svmtool.selection.halving` is
successive halving over cells; :mod:`~svmtool.selection.plot` draws grid.py's contour plot.
easy.py's whole job (scale, grid, train, predict) is a command, ``svmtool grid --easy``
(:mod:`svmtool.cli.grid_easy`), built on this package.
"""
