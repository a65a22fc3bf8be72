"""The bridge to pyarrow, where pandas keeps its ``string`` values in it: text arrays built
in one C pass, the chunks behind a pandas array, pyarrow's compute functions.

pyarrow is optional: every function here says when it cannot help, and callers fall back to
pandas.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.remote.parsed import STRING

# --------------------------------------------------------------------------- text


def _optional_pyarrow() -> Any:
    # pyarrow backs pandas' default string dtype when installed; it is optional, and untyped.
    try:
        return importlib.import_module("pyarrow")
    except ImportError:
        return None


_pyarrow = _optional_pyarrow()


def arrow_module() -> Any | None:
    """pyarrow, when pandas keeps its ``string`` values in it (arrow arrays then serve as is)."""
    return _pyarrow if _pyarrow is not None and STRING.storage == "pyarrow" else None


def arrow_text(values: np.ndarray[Any, Any]) -> Any | None:
    """An object array of str/None as a pyarrow string array, or None when that cannot be.

    ``pd.array(values, dtype="string")`` first checks and converts every element in a Python-level
    pass; pyarrow reads the Python strings directly, several times faster. Only used when pandas
    keeps its strings in pyarrow anyway (see :func:`text_array`), so nothing changes but speed.
    """
    if _pyarrow is None or STRING.storage != "pyarrow":
        return None
    try:
        # The system allocator: in a fresh process pyarrow's default one (mimalloc) was
        # measured 2-3 times slower to grow here, and these buffers are the bulk of the memory.
        return _pyarrow.array(
            values,
            type=_pyarrow.large_string(),
            from_pandas=True,
            memory_pool=_pyarrow.system_memory_pool(),
        )
    except (TypeError, ValueError):  # an element that is not text (ArrowTypeError/ArrowInvalid)
        return None


def text_array(chunks: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """Arrays from :func:`arrow_text`, end to end, as one ``string`` array."""
    # pandas keeps large_string (64-bit offsets): building that directly spares a cast.
    pieces = [piece for chunk in chunks for piece in getattr(chunk, "chunks", [chunk])]
    return pd.arrays.ArrowStringArray(_pyarrow.chunked_array(pieces, type=_pyarrow.large_string()))


def arrow_strings(values: np.ndarray[Any, Any]) -> pd.api.extensions.ExtensionArray | None:
    """An object array of str/None as a ``string`` array in one C pass; None when it cannot be."""
    chunk = arrow_text(values)
    return None if chunk is None else text_array([chunk])


def string_values(raw: pd.Series) -> pd.Series:
    """``raw`` as a ``string`` Series, untrimmed; NA for missing values, others through ``str``."""
    if raw.dtype == STRING:
        return raw
    if raw.dtype == object:
        values = raw.to_numpy()
        array = arrow_strings(values)
        if array is None:
            array = pd.array(values, dtype=STRING)
        return pd.Series(array, index=raw.index, copy=False)
    return raw.astype(STRING)


def arrow_chunks(array: Any) -> Any:
    """The pyarrow ChunkedArray behind a pandas array backed by pyarrow (shared, not copied)."""
    data = array.__arrow_array__()
    return data if isinstance(data, _pyarrow.ChunkedArray) else _pyarrow.chunked_array([data])


def pyarrow_compute() -> Any:
    return importlib.import_module("pyarrow.compute")


def blank_to_na(text: pd.Series) -> pd.Series:
    # Setting values to NA rebuilds a whole string array: only do it when there is a blank.
    return text.replace("", None) if (text == "").any() else text
