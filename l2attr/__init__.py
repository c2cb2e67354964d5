"""l2attr: measure what cross-kernel L2 residency is really worth, for any producer -> consumer pair.

`l2attr.Experiment`, `l2attr.annotate`, `l2attr.step`, `l2attr.write_back` and `l2attr.ladder` are the
Python API; they load on first use, so `import l2attr` stays cheap for the CLI and the CPU tools.
"""

from typing import Any

__version__ = "0.1.0"
_API = {"Experiment": "l2attr.api", "annotate": "l2attr.annotation",
        "step": "l2attr.api", "step_range": "l2attr.api", "ladder": "l2attr.api",
        "write_back": "l2attr.api"}


def __getattr__(name: str) -> Any:
    if name in _API:
        import importlib

        from l2attr.errors import install_script_hook

        install_script_hook()      # a UserError that ends the user's script is one line, not a traceback
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'l2attr' has no attribute {name!r}")
