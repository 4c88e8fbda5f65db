"""Dual coordinate descent (Hsieh et al. 2008 and its LIBLINEAR relatives): L1/L2-loss SVM,
dual logistic regression, the dual SVR and the one-class SVM, each with its jitted loop."""
