"""The step kind's part of a page: Markdown and console text, and the HTML page."""
