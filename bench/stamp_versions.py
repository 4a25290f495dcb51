"""Re-record a prepared state's model versions as this checkout's, for every model whose table
the state's code built as this checkout would (e.g. a state prepared by main before a change of
how versions are hashed, or of a model's `-- incremental` header only): a refresh then maintains
it instead of rebuilding it whole once.

    python -m bench.stamp_versions <data dir, changed in place> <root of the other checkout>

A model is stamped when the state records the other checkout's version of it (its table was
built by that code), its SQL is the same there but for comments (a header is a comment: it says
how to maintain the table, not what it holds) and every macro it calls here (directly or through
another macro) has the same text there. Prints the models stamped and those left.
`bench.refresh_hour refresh --stamp-from REV` does this for a git revision (`stamp_from_rev`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

from warehouse.changes import VERSIONS_TABLE, model_version
from warehouse.macros import macros_called
from warehouse.models import _COMMENT, MODELS_DIR, discover_models

# run in the other checkout: each model's version and SQL, and the macros' texts, as JSON
_OTHER = """
import json
from warehouse.changes import model_version
from warehouse.macros import MACROS
from warehouse.models import discover_models
models = discover_models()
print(json.dumps({
    "models": {q: [model_version(m), m.sql] for q, m in models.items()},
    "macros": list(MACROS),
}))
"""


def other_checkout(root: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", _OTHER], env=env, cwd=root, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout)


def stamp(data_dir: Path, root: Path) -> tuple[list[str], list[str]]:
    """Stamp the state in `data_dir`, built by the code at `root`. Returns (stamped, left)."""
    other = other_checkout(root)
    their_macros = set(other["macros"])
    stamped, left = [], []
    con = duckdb.connect(str(data_dir / "warehouse.duckdb"))
    try:
        recorded = dict(con.execute(f"select model, version from {VERSIONS_TABLE}").fetchall())
        for q, model in sorted(discover_models().items()):
            theirs = other["models"].get(q)
            same = (
                theirs is not None
                and recorded.get(q) == theirs[0]
                and _bare(theirs[1]) == _bare(model.sql)
                and set(macros_called(model.sql)) <= their_macros
            )
            if not same:
                left.append(q)
                continue
            con.execute(
                f"update {VERSIONS_TABLE} set version = $1 where model = $2",
                [model_version(model), q],
            )
            stamped.append(q)
    finally:
        con.close()
    return stamped, left


def _bare(sql: str) -> str:
    """A model's SQL without its comments and with its blanks folded."""
    return " ".join(_COMMENT.sub("", sql).split())


def stamp_from_rev(data_dir: Path, rev: str) -> list[str]:
    """`stamp` against this repository's code at git `rev`. Returns the models stamped."""
    repo = MODELS_DIR.parents[1]
    with tempfile.TemporaryDirectory(prefix="stamp-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", rev], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        stamped, _ = stamp(data_dir, Path(tmp))
    return stamped


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("root", type=Path, help="the checkout whose code built the state")
    args = parser.parse_args(argv)
    stamped, left = stamp(args.data_dir, args.root.resolve())
    print(f"stamped {len(stamped)} models; left as they were ({len(left)}): {left}")


if __name__ == "__main__":
    main()
