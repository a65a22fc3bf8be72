"""Listing values, the way every stage of a sync sees them: tidied, compared, hashed, sent.

:mod:`.tidy` (trimmed text, clean Images and ExtensionColumn), :mod:`.compare` (when two values
mean the same), :mod:`.hashing` (hashes that agree with the comparison), :mod:`.payloads` (values
as JSON and validated request bodies).
"""
