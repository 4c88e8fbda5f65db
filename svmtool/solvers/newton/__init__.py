"""Truncated Newton-CG over an objective (LIBLINEAR -s 0, 2, 11): the loop, the objectives."""
