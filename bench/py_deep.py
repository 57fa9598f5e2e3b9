"""py_deep: recurse to argv[1] Python frames (counting <module>), then spin
argv[2] seconds of CPU there: every sample of the main thread walks that
many interpreted frames."""
import sys
import time

DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 50
SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0


def down(n, deadline):
    if n > 0:
        return down(n - 1, deadline)
    x = 0
    while time.thread_time() < deadline:
        x += sum(range(200))
    return x


sys.setrecursionlimit(10000)
down(DEPTH - 2, time.thread_time() + SECS)  # <module> + DEPTH - 1 frames of down
