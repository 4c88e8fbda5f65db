"""``python -m svmtool.solvers``: print docs/solvers.md's solver table from the registry."""
from svmtool.solvers import markdown_table

print(markdown_table())
