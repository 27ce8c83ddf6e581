"""anteroom_connector: check anteroom admissions in the protected service itself, as WSGI
or ASGI middleware (README.md)."""

from ._core import ConfigurationError, Core
from .asgi import AnteroomASGI
from .wsgi import AnteroomWSGI

__all__ = ["AnteroomASGI", "AnteroomWSGI", "ConfigurationError", "Core"]
__version__ = "0.1.0"
