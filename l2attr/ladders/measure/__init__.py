"""How the ladder measures: the run over families x profiles, the cell protocol and the workers."""
