"""The thin typed API layer: the only place that talks HTTP."""
