"""The Python API a notebook would use, on the bundled data (run from the repository root)."""

import numpy as np

import svmtool

train = svmtool.load_data("data/a9a")          # a Problem: CSR arrays + labels
test = svmtool.load_data("data/a9a.t", n_features=train.n_features)

for solver in ("dcd-l2", "dcd-l1", "newton", "lr", "ocas"):
    model = svmtool.train(train, solver=solver, C=1.0)
    labels, scores = svmtool.predict(model, test)
    report = model.report["classes"][0]
    print(f"{solver:8s} accuracy {100 * np.mean(labels == test.y):.2f}%  "
          f"iterations {report['iterations']}  primal {report['primal']:.6g}  "
          f"{report['gap_kind']} {report['gap']:.2g}")

svmtool.save_model(model, "a9a-ocas.model")    # LIBLINEAR's format
