"""Kernel SVMs: greedy kernel CD, LIBSVM's SMO and problems, the one-vs-one driver, SVMlight's
svm_learn."""
