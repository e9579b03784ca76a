"""What the CLI test scripts share: checks that collect failures instead of stopping at the first,
running the binary, and the exit status at the end."""
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what, flush=True)
    return cond


def run(infini, args, **kw):
    return subprocess.run([infini] + list(args), capture_output=True, text=True, **kw)


def is_one_line_error(result):
    """A non-zero exit with exactly one line on stderr (the project's rule for bad input)."""
    return result.returncode != 0 and len(result.stderr.strip().splitlines()) == 1


def finish(name):
    print(f"{name}:", "FAILED" if failures else "passed", f"({len(failures)} failures)")
    sys.exit(1 if failures else 0)
