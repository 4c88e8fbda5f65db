"""Status codes, messages and limits of the svmlight grammar, shared by both parsers.

The jitted parser (:mod:`svmtool.io._parse`, which imports numba) and the pure-Python one
(:mod:`svmtool.io._parse_py`, used for small inputs so that short commands never import numba)
must report the same errors with the same words; this module, which imports nothing heavy, is
the one place those are defined.  The grammar itself is described in :mod:`svmtool.io._parse`.
"""

# status codes returned by fill_piece (and raised, through _Parser.raise_error, as
# DataFormatError(path, line, MESSAGES[status].format(token=...)))
OK = 0
ERR_NO_LABEL = 1
ERR_BAD_LABEL = 2
ERR_LABEL_NOT_FINITE = 3
ERR_BAD_TOKEN = 4
ERR_BAD_INDEX = 5
ERR_INDEX_ZERO = 6
ERR_NOT_INCREASING = 7
ERR_DUPLICATE = 8
ERR_BAD_VALUE = 9
ERR_VALUE_NOT_FINITE = 10
ERR_BAD_QID = 11
ERR_INDEX_TOO_BIG = 12
ERR_TOO_LONG = 13
ERR_BAD_COST = 14
ERR_COST_NOT_FINITE = 15
ERR_COST_NEGATIVE = 16

MESSAGES = {
    ERR_NO_LABEL: "line has no label (it starts with the feature {token!r})",
    ERR_BAD_LABEL: "label {token!r} is not a number",
    ERR_LABEL_NOT_FINITE: "label {token!r} is not finite (NaN or Inf)",
    ERR_BAD_TOKEN: "unexpected token {token!r} (expected index:value)",
    ERR_BAD_INDEX: "feature index in {token!r} is not a non-negative integer",
    ERR_INDEX_ZERO: ("feature index 0 in {token!r}: indices start at 1 "
                     "(use --zero-based for files whose indices start at 0)"),
    ERR_NOT_INCREASING: "feature indices not increasing at {token!r}",
    ERR_DUPLICATE: "duplicate feature index at {token!r}",
    ERR_BAD_VALUE: "feature value in {token!r} is not a number",
    ERR_VALUE_NOT_FINITE: "feature value in {token!r} is not finite (NaN or Inf)",
    ERR_BAD_QID: "qid in {token!r} is not a 64-bit integer",
    ERR_TOO_LONG: "number in {token!r} is too long",
    ERR_BAD_COST: "cost in {token!r} is not a number",
    ERR_COST_NOT_FINITE: "cost in {token!r} is not finite (NaN or Inf)",
    ERR_COST_NEGATIVE: "cost in {token!r} is negative (an instance weight is 0 or more)",
    ERR_INDEX_TOO_BIG: ("feature index in {token!r} is beyond what a model can hold "
                        "(at most 2147483647 features, LIBLINEAR's int)"),
}

# a number of MAX_TOKEN bytes or more that needs the slow (strtod) conversion is ERR_TOO_LONG
MAX_TOKEN = 800
# the fast regular expressions of the pure-Python parser match indices of at most this many
# digits; longer ones (leading zeros, or too big) take the exact path
MAX_INDEX_DIGITS = 18
# the largest 0-based column a file may use: feature numbers (1-based) fit in a C int, as
# LIBLINEAR's and LIBSVM's feature_node.index and nr_feature do, and indices fit in int32.
# A larger index is ERR_INDEX_TOO_BIG, found while reading (before any array of that width is
# allocated); an index with more than MAX_INDEX_DIGITS significant digits is too big as well.
MAX_COLUMN = 2**31 - 2

# class labels: the readers note the first label that is not a class label (an integer a C int
# holds; defined in svmtool.labels, which checks them), Problem.label_note, so that a
# classification solver can name its line
from svmtool.labels import MAX_CLASS_LABEL, MIN_CLASS_LABEL  # noqa: E402,F401
# the error messages quote at most this many bytes of the offending token (then "...")
TOKEN_QUOTE_BYTES = 40


# a UTF-8 byte-order mark at the start of a plain file: refused by both parsers' drivers
BOM = b"\xef\xbb\xbf"
BOM_REASON = ("the file starts with a UTF-8 byte-order mark (BOM): svmlight text has none; save it "
              "without")
