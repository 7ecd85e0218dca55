"""Helpers the integration check scripts share: float comparison and running a command."""
import math
import subprocess


def close(a, b, rel=1e-9):
    """a and b equal within rel (both NaN counts as equal)."""
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def run(cmd, errors, expect=0):
    """Runs cmd (at most 120 s); an exit code other than expect is added to errors."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != expect:
        errors.append(f"{' '.join(cmd[1:])}: exit {proc.returncode}, expected {expect}: "
                      f"{proc.stderr.strip()[-400:]}")
    return proc
