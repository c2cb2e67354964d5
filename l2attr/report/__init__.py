"""Reports from analysed run dirs: one offline HTML file (html) or a Markdown summary (markdown).

The report renders; it never computes. Every number comes from `l2attr.analysis`. Nothing is
imported here: the CLI's text summaries (layer_b, markdown) must not need plotly, which only the
HTML pages use.
"""
