"""The cutting-plane family: 1-slack CP (Joachims 2006), OCAS and its line searches, the reduced
QP, the multivariate losses, Crammer-Singer and ranking, and their stopping rule."""
