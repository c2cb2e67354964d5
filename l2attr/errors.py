"""One exception type for user mistakes: the CLI turns it into one line on stderr and exit 2."""


class UserError(Exception):
    """Bad input from the user (file, flag, config). Never shown as a traceback."""

    exit_code = 2
