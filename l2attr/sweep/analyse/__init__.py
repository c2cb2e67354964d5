"""The sweep's judgements, from its declarations: the table, the verdicts, the break-even."""
