"""The sweep's part of a page and of the console: words, charts, HTML."""
