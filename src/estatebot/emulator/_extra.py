"""The emulator's server packages (FastAPI, uvicorn) are the optional extra ``estatebot[emulator]``.

Imported first by the package: a missing extra gives one clear ImportError naming it, instead of
a ModuleNotFoundError from deep inside the package.
"""

try:
    import fastapi  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as error:
    raise ImportError(
        f"estatebot.emulator needs {error.name or 'FastAPI and uvicorn'}, which comes with the "
        "'emulator' extra: pip install 'estatebot[emulator]'",
        name="estatebot.emulator",
    ) from error
