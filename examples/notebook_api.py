"""The Python API and the scikit-learn estimators a notebook would use, on the bundled data (run
from the repository root; the second part needs scikit-learn: pip install svmtool[sklearn])."""

import os
import shutil
import tempfile

import numpy as np

import svmtool

# --- the API: what `svmtool train` and `svmtool predict` run -------------------------------------
train = svmtool.load_data("data/a9a")          # a Problem: CSR arrays + labels
test = svmtool.load_data("data/a9a.t", n_features=train.n_features)

for solver in ("dcd-l2", "dcd-l1", "newton", "lr", "ocas"):
    model = svmtool.train(train, solver=solver, C=1.0)
    labels, scores = svmtool.predict(model, test)
    report = model.report["classes"][0]
    print(f"{solver:8s} accuracy {100 * np.mean(labels == test.y):.2f}%  "
          f"iterations {report['iterations']}  primal {report['primal']:.6g}  "
          f"{report['gap_kind']} {report['gap']:.2g}")

folder = tempfile.mkdtemp(prefix="svmtool-notebook-")
svmtool.save_model(model, os.path.join(folder, "a9a-ocas.model"))    # LIBLINEAR's format

# --- the same solvers as scikit-learn estimators ------------------------------------------------
try:
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
except ImportError:
    raise SystemExit("scikit-learn is not installed: pip install svmtool[sklearn] for the rest")

from svmtool.sklearn import SVC, LinearSVC, LogisticRegression, load  # noqa: E402

X, y, Xt, yt = train.X, train.y, test.X, test.y      # scipy CSR matrices and label vectors

for est in (LinearSVC(), LinearSVC(solver="ocas", loss="hinge"), LinearSVC(loss="f1"),
            LogisticRegression(C=0.5)):
    est.fit(X, y)
    print(f"{est!r:45s} accuracy {100 * est.score(Xt, yt):.2f}%")
print("probabilities of the first test rows:", est.predict_proba(Xt[:3]).round(3).tolist())

# a pipeline (scaling + an RBF SVC) tuned by a grid search, on 2000 rows
pipe = make_pipeline(StandardScaler(with_mean=False), SVC())
search = GridSearchCV(pipe, {"svc__C": [0.5, 2.0], "svc__gamma": ["scale", 0.005]}, cv=3)
search.fit(X[:2000], y[:2000])
print("grid search:", search.best_params_, f"cv accuracy {100 * search.best_score_:.2f}%")

# warm starts along a path of C: each fit starts from the previous w
path = LinearSVC(solver="newton", tol=1e-4, warm_start=True)
for C in (0.25, 0.5, 1.0):
    path.set_params(C=C).fit(X, y)
    print(f"C {C:<5g} newton iterations {path.n_iter_}  accuracy {100 * path.score(Xt, yt):.2f}%")

# fit on a binary cache (memory-mapped; out of core when larger than memory_budget, in MB)
cache = os.path.join(folder, "a9a.cache")
svmtool.save_cache(train, cache)
big = LinearSVC(solver="newton", memory_budget=1, out_of_core=True).fit(cache)
print("out of core:", big.model_.report.get("streaming"),
      f"accuracy {100 * big.score(Xt, yt):.2f}%")

# the model file the C programs read, and back
big.save(os.path.join(folder, "a9a.model"))            # liblinear-predict reads this file
again = load(os.path.join(folder, "a9a.model"))
print("loaded:", again, "same predictions:", bool(np.all(again.predict(Xt) == big.predict(Xt))))
shutil.rmtree(folder)
