"""Refusals and progress lines: every module refuses the same way (one line, exit status 1)."""


class ConvertError(Exception):
    """A refusal: one line, exit status 1."""


def fail(msg):
    raise ConvertError(msg)


def say(msg):
    print(msg, flush=True)
