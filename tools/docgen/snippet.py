"""Write one of the README's snippets, exactly as written, to a file (device cycle).

    python tools/docgen/snippet.py OUT.py                 # "your own pair" (own-kernels)
    python tools/docgen/snippet.py OUT.py own-step        # "your own step"
"""

from __future__ import annotations

import sys
from pathlib import Path


def snippet(readme: str, name: str = "own-kernels") -> str:
    begin, end = f"<!-- snippet:{name}:begin -->", f"<!-- snippet:{name}:end -->"
    if begin not in readme or end not in readme:
        raise SystemExit(f"README has no snippet {name!r}")
    block = readme.split(begin, 1)[1].split(end, 1)[0].strip()
    if not (block.startswith("```python\n") and block.endswith("```")):
        raise SystemExit(f"README snippet {name!r} is not one python code block")
    return block[len("```python\n"):-3]


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[2]
    Path(sys.argv[1]).write_text(snippet((root / "README.md").read_text(), *sys.argv[2:3]))
