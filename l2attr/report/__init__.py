"""Reports from analysed run dirs: one offline HTML file (html) or a Markdown summary (markdown).

The report renders; it never computes. Every number comes from `l2attr.analysis.analyse`.
"""

from l2attr.report.html import render_html, write_html
from l2attr.report.markdown import render_markdown

__all__ = ["render_html", "write_html", "render_markdown"]
