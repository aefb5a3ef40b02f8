"""Assertions of the Python test scripts in tests/gpu: every failure is reported, the exit status says whether any."""
FAILS = []


def check(cond, what):
    """Record a failed assertion (printed now, counted by finish); returns cond."""
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)
    return cond


def finish(name):
    """Print the verdict of test script `name`; its exit status: 0 every check passed, 1 not."""
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print(f"{name}: all checks passed")
    return 0
