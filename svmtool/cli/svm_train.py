"""``svmtool svm-train``: LIBSVM's svm-train, its argument vector unchanged (see
:mod:`svmtool.cli.libsvm_cli`)."""

from svmtool.cli.libsvm_cli import make_command, run_train

command = make_command("svm-train", run_train)
