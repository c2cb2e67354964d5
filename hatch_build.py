"""Hatch build hook: record the git sha the package is built from in l2attr/_build_info.py.

An installed wheel has no .git next to it; `l2attr.gpu.device.git_sha` reads the sha from
there instead. The sdist carries the file too, so a wheel built from the sdist keeps the sha.
Editable installs are left alone (the checkout's own git answers).
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

TARGET = "l2attr/_build_info.py"


def _checkout_sha(root: Path) -> str | None:
    spec = importlib.util.spec_from_file_location("_l2attr_source", root / "l2attr" / "source.py")
    source = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(source)
    return source.checkout_sha(root)[0]


class BuildInfoHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "editable":
            return
        root = Path(self.root)
        sha = _checkout_sha(root)
        if sha is None:     # no git here (a build from the sdist): ship the sdist's own record, if any
            if (root / TARGET).is_file():
                build_data["force_include"][str(root / TARGET)] = TARGET
            return
        folder = Path(tempfile.mkdtemp(prefix="l2attr-build-info-"))
        info = folder / "_build_info.py"
        info.write_text(f'"""Written by hatch_build.py when this package was built."""\n\nGIT_SHA = {sha!r}\n',
                        encoding="utf-8")
        build_data["force_include"][str(info)] = TARGET
