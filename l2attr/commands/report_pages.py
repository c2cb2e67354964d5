"""`l2attr report` for the run kinds with a page of their own (experiment, step runs).

One rule for both: such runs are reported on their own (mixing them with ladder runs is one
clear line), as one HTML page, a Markdown page or text for the terminal; after a page is written
the console says its answer (a step's headline, or the index of several steps; each experiment's
headline).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from l2attr.errors import Damage, UserError
from l2attr.outputs import check_output
from l2attr.rundir import RunDir
from l2attr.vocab import Command


@dataclass(frozen=True)
class Page:
    """What one kind of run gives the command: the console's answer, and each format's text."""
    console: str
    html: Callable[[], str]
    markdown: Callable[[str], str]
    text: Callable[[], str]


def _experiments(dirs: list[Path], damage: Damage) -> Page:
    from l2attr.analysis.experiment_load import analyse_experiment, load_experiment
    from l2attr.report.experiment import experiments_text, render

    analyses = [analyse_experiment(load_experiment(d, damage)) for d in dirs]
    said = [f"Partial data (--allow-partial): {m}" for m in damage.messages]
    heads = said + [h for a in analyses for h in a.verdict.get("headline", [])]
    return Page("\n".join(heads), lambda: render(analyses),
                lambda title: "\n".join([f"# {title}", "", *[f"- {h}" for h in heads]]) + "\n",
                lambda: experiments_text(analyses))


def _steps(dirs: list[Path], damage: Damage) -> Page:
    from l2attr.analysis.step import StepAnswer
    from l2attr.analysis.step_load import partial_reading
    from l2attr.report.step_page import render
    from l2attr.report.step_text import index_text, page_markdown

    with partial_reading(damage):            # each answer's first line says what it read past
        runs = [(d, StepAnswer.from_run(d)) for d in dirs]
    answers = [a for _, a in runs]
    index = index_text(runs)
    return Page(answers[0].headline() if len(runs) == 1 else index, lambda: render(answers, dirs),
                lambda title: page_markdown(title, runs),
                lambda: "\n\n".join([index, *[a.headline() for a in answers]]) + "\n")


# run kind -> (Markdown title, reader: dirs -> Page)
PAGES: dict[str, tuple[str, Callable[[list[Path], Damage], Page]]] = {
    Command.STEP: ("What is inter-kernel L2 reuse worth in a step? (l2attr step)", _steps),
    Command.EXPERIMENT: ("What is the L2 handoff worth? (l2attr experiments)", _experiments),
}


def kind_of(path: Path) -> str | None:
    try:
        return RunDir.open(path).manifest().get("kind")
    except UserError:
        return None


def page_kind(run_dirs: list[Path]) -> str | None:
    """The one page kind among the run dirs, or None; mixing it with any other run is refused."""
    kinds = {d: kind_of(d) for d in run_dirs}
    paged = {k for k in kinds.values() if k in PAGES}
    if not paged:
        return None
    kind = sorted(paged)[0]
    others = [d for d, k in kinds.items() if k != kind]
    if others:
        raise UserError(f"{others[0]} is not a {kind} run: report {kind} runs on their own")
    return kind


def report_page(kind: str, run_dirs: list[Path], fmt: str, output: Path | None,
                emit: Callable[[Path | None, str], int], write: Callable[[Path, str], None],
                allow_partial: bool = False) -> int:
    """The kind's page; with `allow_partial` a run short of what its manifest declares is read,
    and each shortfall said on the console and on the page (the answer's first line)."""
    import sys

    title, read = PAGES[kind]
    damage = Damage(allow_partial)
    page = read(run_dirs, damage)
    for message in damage.messages:
        print(f"l2attr report: warning: partial data: {message}", file=sys.stderr)
    if fmt in ("md", "text"):
        code = emit(output, page.markdown(title) if fmt == "md" else page.text())
        if output is not None and page.console:       # on stdout the page itself carries it
            print(page.console)
        return code
    if output is None:
        output = check_output(Path("report.html"), "the default output")
    html = page.html()
    write(output, html)
    print(f"wrote {output} ({len(html.encode()) / 1e6:.1f} MB)")
    if page.console:
        print(page.console)
    return 0


__all__ = ["report_page", "page_kind", "kind_of", "Page"]
