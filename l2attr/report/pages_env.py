"""The Jinja2 environment of the experiment and step pages, made once per process.

jinja2 caches compiled templates per environment, and compiling them was a third of a small
page's render; a template file that changed on disk is still read again (auto_reload)."""

from __future__ import annotations

import functools

import jinja2

from l2attr.source import REPORTS_DIR, data_dir


@functools.lru_cache(maxsize=1)
def page_environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(data_dir(REPORTS_DIR))),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined)
