"""One exception type for user mistakes: the CLI turns it into one line on stderr and exit 2."""


class UserError(Exception):
    """Bad input from the user (file, flag, config). Never shown as a traceback."""

    exit_code = 2


class Damage:
    """Where reading finds a damaged or partial run: raise (the default), or with
    `report --allow-partial` note what is wrong, keep what is intact, and go on.

    Every integrity check calls `found(message)`; in the strict mode that is the one-line error
    it always was, in the partial mode the message is kept for the report's top."""

    def __init__(self, allow_partial: bool = False) -> None:
        self.allow_partial = allow_partial
        self.messages: list[str] = []

    def found(self, message: str) -> None:
        if not self.allow_partial:
            raise UserError(message)
        self.messages.append(message)


STRICT = Damage()
