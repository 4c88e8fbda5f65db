"""Choosing parameters by cross validation: LIBLINEAR's warm-started -C path."""
