"""``python -m svmtool.sklearn``: the estimators' table of docs/python.md."""

from svmtool.sklearn import markdown_table

print(markdown_table())
