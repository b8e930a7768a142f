"""Rewrite the "Command line" block of docs/cli.md from the parsers (nasrescale.cli.main.command_summary).

Run after changing a command's options: ``python tools/readme_cli.py``; tests/test_first_use.py
fails while docs/cli.md and the parsers disagree. (The block lived in README.md before the docs
moved to docs/; the script keeps its name.)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nasrescale.cli.main import command_summary  # noqa: E402

HEAD = "## Command line\n\n```text\n"


def rewrite(page: Path) -> bool:
    """Replace the block; return whether the file changed."""
    text = page.read_text()
    start = text.index(HEAD) + len(HEAD)
    end = text.index("```", start)
    new = text[:start] + command_summary() + text[end:]
    if new != text:
        page.write_text(new)
    return new != text


if __name__ == "__main__":
    print("docs/cli.md updated" if rewrite(ROOT / "docs" / "cli.md") else "docs/cli.md already matches the parsers")
