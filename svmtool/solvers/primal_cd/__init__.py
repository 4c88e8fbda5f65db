"""Primal coordinate descent for the L1-regularised problems: L2-loss SVM (LIBLINEAR -s 5) and
logistic regression by newGLMNET (-s 6)."""
