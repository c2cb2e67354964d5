"""The registry of run kinds (issue 51, docs/house/README.md rule 3): per kind its command module,
options model, loader, checks and page. The CLI (cli.py SUBCOMMANDS) and the report shell
(commands/report_pages.py) find a kind here, never by reaching into its package; no kind imports
this module. A row loads what it names on use, so `import l2attr.cli` stays cheap and a GPU verb
never loads the pages' plotting.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from l2attr.errors import STRICT, Damage
from l2attr.vocab import Command


@dataclass(frozen=True)
class Page:
    """What one kind of run gives `l2attr report`: the console's answer, and each format's text."""
    console: str
    html: Callable[[], str]
    markdown: Callable[[str], str]
    text: Callable[[], str]


Reader = Callable[[Path, Damage], Any]


@dataclass(frozen=True)
class Kind:
    """One run kind. `command`: the dotted path of its command module (add_arguments, run);
    `checks`: that of its integrity rules; `options`: its options model, where it has one;
    `load`: one run dir -> what its readers take (held to its checks; what --allow-partial read
    past through the Damage); `page`: (its Markdown title, run dirs -> its Page) where it has a
    page of its own (the other kinds' runs make the study's page)."""
    name: str
    command: str
    help: str
    checks: str
    load: Reader
    options: Callable[[], type] | None = None
    page: tuple[str, Callable[[list[Path], Damage], Page]] | None = None

    def command_module(self) -> ModuleType:
        return importlib.import_module(self.command)

    def rules(self) -> ModuleType:
        return importlib.import_module(self.checks)


# -- the loaders, options models and pages (each imported on use) ------------------------------------

def _read_run(path: Path, damage: Damage = STRICT) -> Any:
    from l2attr.analysis.load import read_run

    return read_run(path, damage)


def _sweep(path: Path, damage: Damage = STRICT) -> Any:
    from l2attr.sweep.load import load_sweep

    return load_sweep(path, damage)


def _experiment(path: Path, damage: Damage = STRICT) -> Any:
    from l2attr.experiment.table import load_experiment

    return load_experiment(path, damage)


def _step(path: Path, damage: Damage = STRICT) -> Any:
    from l2attr.steps.table import load_step

    return load_step(path, damage)


def _ladder_options() -> type:
    from l2attr.dlrm.measure.options import LadderOptions

    return LadderOptions


def _step_options() -> type:
    from l2attr.steps.declare import StepOptions

    return StepOptions


def _experiments_page(dirs: list[Path], damage: Damage) -> Page:
    from l2attr.experiment.section import experiments_text, render
    from l2attr.experiment.table import analyse_experiment, load_experiment

    analyses = [analyse_experiment(load_experiment(d, damage)) for d in dirs]
    said = [f"Partial data (--allow-partial): {m}" for m in damage.messages]
    heads = said + [h for a in analyses for h in a.verdict.get("headline", [])]
    return Page("\n".join(heads), lambda: render(analyses),
                lambda title: "\n".join([f"# {title}", "", *[f"- {h}" for h in heads]]) + "\n",
                lambda: experiments_text(analyses))


def _steps_page(dirs: list[Path], damage: Damage) -> Page:
    from l2attr.steps.analyse.answer import StepAnswer
    from l2attr.steps.section.html import render
    from l2attr.steps.section.text import index_text, page_markdown
    from l2attr.steps.table import partial_reading

    with partial_reading(damage):            # each answer's first line says what it read past
        runs = [(d, StepAnswer.from_run(d)) for d in dirs]
    answers = [a for _, a in runs]
    index = index_text(runs)
    return Page(answers[0].headline() if len(runs) == 1 else index, lambda: render(answers, dirs),
                lambda title: page_markdown(title, runs),
                lambda: "\n\n".join([index, *[a.headline() for a in answers]]) + "\n")


# -- the registry: in the order `l2attr -h` lists the verbs ------------------------------------------

KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind(Command.LADDER.value, "l2attr.ladders.command",
         "layer A: time the five-rung kernel ladder x reuse profiles (GPU)",
         "l2attr.integrity.runs", _read_run, _ladder_options),
    Kind(Command.PROFILE.value, "l2attr.commands.profile",
         "layer B: Nsight Compute L2 attribution per role, or --import a report",
         "l2attr.integrity.runs", _read_run),
    Kind(Command.SWEEP.value, "l2attr.sweep.command",
         "measured sweeps: amortisation, hot-set size, access-policy window, L2 held by evict_last lines, "
         "pollution (GPU)", "l2attr.sweep.check", _sweep),
    Kind(Command.EXPERIMENT.value, "l2attr.experiment.command",
         "any producer -> consumer pair: time, profile (ncu child), show (GPU)",
         "l2attr.experiment.check", _experiment,
         page=("What is the L2 handoff worth? (l2attr experiments)", _experiments_page)),
    Kind(Command.STEP.value, "l2attr.steps.command",
         "what inter-kernel L2 reuse is worth in a whole PyTorch step (GPU)",
         "l2attr.steps.check", _step, _step_options,
         page=("What is inter-kernel L2 reuse worth in a step? (l2attr step)", _steps_page)),
)}


def options_models() -> dict[str, type]:
    """kind -> its options model, for the kinds that have one (integrity/manifest.py manifest_doc)."""
    return {k.name: k.options() for k in KINDS.values() if k.options is not None}


def pages() -> dict[str, Kind]:
    """The kinds with a page of their own."""
    return {name: k for name, k in KINDS.items() if k.page is not None}

