"""Write the README's "your own pair" snippet, exactly as written, to a file (device cycle).

    python tools/readme_snippet.py OUT.py
"""

from __future__ import annotations

import sys
from pathlib import Path

BEGIN, END = "<!-- snippet:own-kernels:begin -->", "<!-- snippet:own-kernels:end -->"


def snippet(readme: str) -> str:
    block = readme.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    if not (block.startswith("```python\n") and block.endswith("```")):
        raise SystemExit("README snippet is not one python code block")
    return block[len("```python\n"):-3]


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    Path(sys.argv[1]).write_text(snippet((root / "README.md").read_text()))
