"""The one place where text is embedded into SQL: identifiers and (for view bodies) file paths.

Values are bound as parameters everywhere else; DuckDB cannot bind parameters inside DDL
(`create view`, `comment on`), so those few spots go through these quoting helpers.
"""

from __future__ import annotations

import re

_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")


def quote_literal(text: str) -> str:
    """Quote text as a SQL string literal (single quotes doubled); reject NUL bytes."""
    if "\x00" in text:
        raise ValueError("NUL byte in SQL literal")
    return "'" + text.replace("'", "''") + "'"


def quote_ident(name: str) -> str:
    """Quote an identifier we own (lower-case snake case only), so typos fail loudly."""
    if not _IDENT.match(name):
        raise ValueError(f"not a plain identifier: {name!r}")
    return '"' + name + '"'
