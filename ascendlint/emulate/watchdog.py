"""Find where stuck program threads are and stop them.

A program thread blocked in a stand-in (``dl.wait``, ``barrier_all``) notices the launch's abort
flag; one spinning in kernel code does not, so it gets an asynchronous exception instead.
"""

from __future__ import annotations

import ctypes
import linecache
import sys
import threading
from types import FrameType

from .environment import import_triton
from .errors import ProgramAborted

MAX_LISTED_PROGRAMS = 48


def kernel_code_objects() -> set:
    """Code objects of every kernel and helper the interpreter has rewritten so far."""
    _, _, interpreter = import_triton()
    return {fn.__code__ for fn in interpreter.InterpretedFunction.rewritten_fn.values()}


def kernel_frames(frame: FrameType | None, codes: set) -> list[FrameType]:
    """Kernel frames of a stack, innermost first."""
    found = []
    while frame is not None:
        if frame.f_code in codes:
            found.append(frame)
        frame = frame.f_back
    return found


def describe_frame(frame: FrameType) -> str:
    source = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}: {source}"


def stuck_program_lines(running: list) -> list[str]:
    """One line per still-running program: identity, kernel source line, what it is blocked on.

    ``running`` holds ``(thread, ProgramContext)`` pairs.
    """
    frames = sys._current_frames()
    codes = kernel_code_objects()
    lines = []
    for thread, ctx in running[:MAX_LISTED_PROGRAMS]:
        stack = kernel_frames(frames.get(thread.ident), codes)
        where = describe_frame(stack[0]) if stack else "outside kernel code"
        if len(stack) > 1:
            where += f" (called from line {stack[-1].f_lineno})"
        blocked = f" [{ctx.blocked_on}]" if ctx.blocked_on else " [running kernel code, e.g. a spin loop]"
        lines.append(f"  {ctx.describe()}: {where}{blocked}")
    if len(running) > MAX_LISTED_PROGRAMS:
        lines.append(f"  ... and {len(running) - MAX_LISTED_PROGRAMS} more")
    return lines


def interrupt(thread: threading.Thread) -> None:
    """Raise ProgramAborted inside ``thread`` at its next bytecode boundary."""
    if thread.ident is None or not thread.is_alive():
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(ProgramAborted))
