"""Python's cyclic garbage collector, paused while a file becomes values.

Reading a file of a few megabytes makes millions of small objects (events, nodes, paths,
positions) that all stay alive until the analysis is done. The collector runs after every 700
new ones and walks more of them each time: a third to a half of the time on such a file, for
next to no garbage (reference counting frees these objects; the rare cycle, an alias inside
its own anchor, waits for the next collection). Paused, they are walked once, at the next
collection after the analysis.
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside the block; as before after it. Nested or concurrent blocks
    only delay the collection: the outermost one to start turns it back on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
