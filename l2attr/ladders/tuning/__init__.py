"""The fast family's tuning table: its contract and choice (table.py), `l2attr tuning` (command.py)."""
