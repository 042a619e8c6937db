"""When Python's cyclic garbage collector runs while files are linted.

A libcst parse allocates a node object for nearly every token, and the whole tree stays alive until the file's
findings are known. The collector, left alone, runs a full collection every time the live objects have grown by a
quarter, and each one walks every node of the tree parsed so far: on a long module that is several walks of a
growing tree, which also made a long module cost more per line than a short one. Nearly nothing a lint
allocates needs the collector (reference counts free the tree when the file is done), so it is paused while one
file is linted and the young objects are collected once afterwards, which also frees any cycles the file's
analysis made.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused_for_one_file():
    """No automatic collection inside; afterwards one collection of the youngest generation (what the file left).

    Nested uses (a fix loop linting its text again) collect once, at the outermost exit; where the collector was
    already off (a caller's choice) it stays off and nothing is collected."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


@contextmanager
def loaded_objects_frozen(load=None):
    """For a batch of files: what is loaded before it (libcst's classes, the rules) is moved out of the collector's
    reach, so no collection during the batch rescans it, and forked pool workers, which inherit the frozen
    objects, never touch (and so never copy) the parent's pages for them. Between files (reading, caching) the
    first threshold is raised too, so the small allocations there trigger fewer collections. Undone afterwards.

    ``load`` (importing libcst and the rules) runs first with the collector paused: it allocates some hundred
    thousand objects that live as long as the process, which collections would walk several times over and never
    free; they are frozen as soon as it returns."""
    threshold = gc.get_threshold()
    if load is not None:
        enabled = gc.isenabled()
        gc.disable()
        try:
            load()
        finally:
            gc.freeze()  # before the collector is back on: no collection of what was loaded, now or later
            if enabled:
                gc.enable()
    gc.freeze()
    gc.set_threshold(max(threshold[0], 20_000), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
