"""Listing values, the way every stage of a sync sees them: tidied, compared, hashed, sent.

:mod:`.tidy` (trimmed text, clean Images and ExtensionColumn), :mod:`.compare` (when two values
mean the same), :mod:`.key_arrays` (keys matched a column at a time), :mod:`.joined` (Images and
ExtensionColumn as one text each), :mod:`.hashing` (hashes that agree with the comparison),
:mod:`.payloads` (values as JSON and validated request bodies; :mod:`.passthrough` the columns
whose values validation would leave unchanged).
"""
