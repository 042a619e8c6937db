"""Stand-in for ``triton.language.extra.cann.extension`` (newer triton-ascend releases).

Each op forwards to the ``tl`` op of the same name at call time, when the interpreter has patched
it; ``sub_vec_id`` names the vector sub-block running the code (see ``ascendlint.emulate.sub_blocks``).
"""

from __future__ import annotations

import contextlib

from .. import sub_blocks
from ..environment import import_triton

FORWARDED_OPS = (
    "compile_hint", "extract_slice", "insert_slice", "get_element", "multibuffer", "sync_block_all",
    "sync_block_set", "sync_block_wait", "parallel", "sort", "flip", "gather", "index_select",
)


sub_vec_id = sub_blocks.sub_vec_id


@contextlib.contextmanager
def scope(*_args, **_kwargs):
    """Code-placement scope for the compiler; nothing to place on CPU."""
    yield


def _forwarder(name: str):
    def forward(*args, **kwargs):
        _, tl, _ = import_triton()
        return getattr(tl, name)(*args, **kwargs)

    forward.__name__ = name
    forward.__doc__ = f"``tl.{name}`` as seen from the extension module."
    return forward


def namespace() -> dict:
    names = {"sub_vec_id": sub_vec_id, "scope": scope}
    names.update({name: _forwarder(name) for name in FORWARDED_OPS})
    return names
