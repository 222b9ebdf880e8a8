"""Loads the extension (nnfit._nnfit) on first use, after choosing libgomp's spin.

Note [OpenMP spin] (apps/nnfit/omp_env.cpp): libgomp's idle threads busy-wait ~300,000
iterations between parallel regions. On a quiet machine that makes small steps fast; on a
machine whose cores are busy it is ruinous (a 2-thread MLP epoch on a loaded 2-core
machine ran 6x slower from Python than the CLI, which shortens the spin there). libgomp
reads GOMP_SPINCOUNT once, when it is loaded, which for nnfit.keras is when this module
imports the extension, so the same policy is applied here first: a GOMP_SPINCOUNT or
OMP_WAIT_POLICY the user set wins; NNFIT_OPENMP_SPIN=default leaves libgomp alone, a
number sets the spin; "auto" (the default) sets 1,000 when the 1-minute load average is at
least the cores this process may use.
"""
import os

_BUSY_SPIN = "1000"
_module = None


def _machine_is_busy():
    try:
        with open("/proc/loadavg") as f:
            load = float(f.read().split()[0])
        return load >= len(os.sched_getaffinity(0))
    except (OSError, ValueError, AttributeError):
        return False


def _apply_openmp_spin_default():
    if "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        return
    choice = os.environ.get("NNFIT_OPENMP_SPIN", "auto")
    if choice == "default":
        return
    if choice in ("auto", ""):
        if not _machine_is_busy():
            return
        choice = _BUSY_SPIN
    os.environ["GOMP_SPINCOUNT"] = choice


def get():
    """The extension module, loaded once."""
    global _module
    if _module is None:
        _apply_openmp_spin_default()
        from nnfit import _nnfit
        _module = _nnfit
    return _module
