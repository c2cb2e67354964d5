"""PLACEHOLDER: filled by its issue."""

from __future__ import annotations

import argparse

from l2attr.errors import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    raise UserError("'profile' is not implemented yet")
