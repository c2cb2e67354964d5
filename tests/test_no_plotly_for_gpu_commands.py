"""The GPU commands (ladder, profile, sweep, experiment, step) and their text summaries import no
plotly: only the HTML pages draw charts, and a GPU machine may not have it."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys, importlib.abc
class NoPlotly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split('.')[0] == 'plotly':
            raise ImportError('plotly blocked')
sys.meta_path.insert(0, NoPlotly())
import importlib
import l2attr.cli
for m in ('ladder', 'profile', 'profile_show', 'l2attr.ladders.section', 'sweep', 'experiment', 'step'):
    mod = l2attr.cli.SUBCOMMANDS[m][0] if m in l2attr.cli.SUBCOMMANDS else m
    importlib.import_module(mod if '.' in mod else 'l2attr.commands.' + mod)
import l2attr.report.layer_b, l2attr.sweep.section.text, l2attr.steps.section.text, l2attr.report.markdown
"""


def test_gpu_commands_do_not_need_plotly():
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
