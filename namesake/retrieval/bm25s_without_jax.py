"""bm25s, imported so that it cannot start JAX (namesake imports bm25s only through here).

Importing bm25s runs ``bm25s.selection``, which does ``import jax.lax`` and a dummy
``jax.lax.top_k`` to choose its top-k backend. Where JAX's CUDA build is installed, that
starts JAX on the GPU, and JAX reserves 75% of the GPU's memory at once: memory torch (the
only framework namesake runs on a GPU) then lacks. namesake never uses bm25s' top-k
(``BM25Retriever`` ranks with its own numba kernels), so bm25s is imported with ``jax``
hidden: ``None`` in ``sys.modules`` makes bm25s' ``import jax.lax`` fail as if JAX were not
installed, bm25s settles on its numpy backend (``bm25s.selection.JAX_IS_AVAILABLE`` is
False), and the entries are put back as they were, so JAX stays importable, and unstarted,
for any other code. bm25s imported earlier by someone else is used as it is.

(The hiding lasts while this module runs, under the import lock of this module; a thread
importing jax at that very moment would see the ImportError.)
"""

from __future__ import annotations

import sys

_HIDDEN = ("jax", "jax.lax")

_saved = {name: sys.modules.get(name) for name in _HIDDEN}
sys.modules.update(dict.fromkeys(_HIDDEN))  # None: `import jax` raises ImportError
try:
    import bm25s
    from bm25s.tokenization import Tokenizer
finally:
    for _name, _module in _saved.items():
        if _module is None:
            sys.modules.pop(_name, None)
        else:
            sys.modules[_name] = _module

__all__ = ["Tokenizer", "bm25s"]
