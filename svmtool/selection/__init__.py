"""Model selection in one process: LIBSVM's ``tools/grid.py`` and ``tools/easy.py``.

The layer between ``bench`` and ``api``: it drives the API and the solvers over a grid of
parameters and shares the work the cells have in common (kernel rows, warm starts, clusterings,
threads).  :mod:`~svmtool.selection.spec` holds grid.py's ranges, order, lines and files;
:mod:`~svmtool.selection.folds` svm-train -v's folds; :mod:`~svmtool.selection.grid` runs a
grid (:func:`~svmtool.selection.grid.run_grid`) through the evaluator of the solver;
:mod:`~svmtool.selection.halving` is successive halving over cells;
:mod:`~svmtool.selection.easy` is easy.py's whole job.
"""
