"""Write the reliability figures into docs/reliability.md (between markers).

`make chaos` (pytest -m chaos -p no:xdist tests/reliability) records what it tried and found in
bench/out/reliability.json at the end of the session and calls `write_report`. Run this module
to re-render the doc from that JSON (`python -m bench.reliability_report`), or with `--run` to
run the chaos session first.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.proc import cpu_model

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_JSON = ROOT / "bench" / "out" / "reliability.json"
DEFAULT_DOC = ROOT / "docs" / "reliability.md"
BEGIN = "<!-- reliability-figures:begin (written by bench/reliability_report.py) -->"
END = "<!-- reliability-figures:end -->"


def render(fig: dict[str, Any]) -> str:
    """The figures as markdown."""
    faults = fig.get("faults_tried", {})
    injected = fig.get("faults_injected", {})
    lines = [
        f"Last chaos session: {fig.get('written_at', '?')}, on {fig.get('machine', '?')}; "
        f"command `{fig.get('command', 'make chaos')}`; pytest exit status "
        f"{fig.get('exit_status', '?')}.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| faults tried (distinct, incl. SIGKILL) | {len(faults)} |",
        f"| faults injected by the sandbox | {sum(injected.values())} |",
        f"| runs | {fig.get('runs', 0)} |",
        f"| runs killed (SIGKILL) | {fig.get('runs_killed', 0)} |",
        f"| records checked against the fault-free run | {fig.get('records_checked', 0):,} |",
        f"| records lost | {fig.get('records_lost', 0)} |",
        f"| records duplicated | {fig.get('records_duplicated', 0)} |",
        f"| records changed or unexpected | {fig.get('records_changed', 0)} |",
        f"| records quarantined (malformed fault) | {fig.get('records_quarantined', 0)} |",
        f"| quarantined without a reason | {fig.get('quarantined_without_reason', 0)} |",
        f"| peak requests in flight per client / limit | {fig.get('peak_in_flight', 0)} / "
        f"{fig.get('concurrency_limit', 0)} |",
        f"| bad-input records generated (normaliser) | {fig.get('bad_input_cases', 0):,} |",
        f"| bad-settings cases | {fig.get('bad_settings_cases', 0)} |",
        f"| files scanned for the secret / leaks | {fig.get('secret_files_scanned', 0)} / "
        f"{fig.get('secret_leaks', 0)} |",
        "",
        "| fault | runs with it | times injected |",
        "|---|---|---|",
    ]
    for name in sorted(faults):
        lines.append(f"| `{name}` | {faults[name]} | {injected.get(name, '-')} |")
    cases = fig.get("cases", [])
    if cases:
        lines += [
            "",
            "<details><summary>Per run</summary>",
            "",
            "| case | killed | checked | lost | duplicated | changed | quarantined | peak |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for c in cases:
            lines.append(
                f"| {c['case']} | {c.get('killed', 0)} | {c.get('checked', 0):,} | "
                f"{c.get('lost', 0)} | {c.get('duplicated', 0)} | {c.get('changed', 0)} | "
                f"{c.get('quarantined', 0)} | {c.get('peak_in_flight', 0)} |"
            )
        lines += ["", "</details>"]
    return "\n".join(lines)


def splice(text: str, body: str) -> str:
    """Replace what lies between the markers; append the markers if they are missing."""
    block = f"{BEGIN}\n{body}\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head + block + tail
    return text.rstrip("\n") + "\n\n" + block + "\n"


def machine() -> str:
    import os

    return f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}"


def write_report(json_path: Path = DEFAULT_JSON, doc: Path = DEFAULT_DOC) -> Path:
    fig = json.loads(Path(json_path).read_text())
    fig.setdefault("written_at", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    fig.setdefault("machine", machine())
    text = doc.read_text() if doc.exists() else "# Reliability\n"
    doc.write_text(splice(text, render(fig)))
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="run the chaos session first")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--doc", type=Path, default=DEFAULT_DOC)
    args = parser.parse_args(argv)
    if args.run:
        cmd = [sys.executable, "-m", "pytest", "-m", "chaos", "-p", "no:xdist", "tests/reliability"]
        code = subprocess.call(cmd, cwd=ROOT)
        if code not in (0, 1):
            return code
    if not args.json.exists():
        print(f"no figures at {args.json}; run `make chaos` first", file=sys.stderr)
        return 2
    print(f"wrote {write_report(args.json, args.doc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
