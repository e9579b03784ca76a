"""infini.devices() and infini.selfcheck() against what the `infini` program reports."""
import infini
from conftest import run_cli


def test_devices_are_the_programs():
    ours = infini.devices()
    assert ours and sum(d["default"] for d in ours) == 1
    listed = run_cli("devices")
    for d in ours:
        assert d["name"] in listed


def test_selfcheck_passes_every_case_the_program_runs():
    results = infini.selfcheck()
    assert results and all(r["passed"] and r["max_error"] == 0 for r in results)
    printed = run_cli("selfcheck")
    assert [r["name"] for r in results] == [line.split("max error")[0].strip() for line in printed.splitlines()
                                            if "max error" in line]
