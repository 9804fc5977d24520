"""The DeprecationWarning of a name that moved, told exactly once per read.

A package serves a moved name from its module ``__getattr__`` (PEP 562), uncached, so that every reader is
told. ``from package import name`` reads the name twice: first the import system checks the package's
from-list (a ``hasattr`` in ``importlib._bootstrap._handle_fromlist``), then the importer's own code binds it.
Both reads would be charged to the importer's line (``warnings`` skips the import system's frames), so the
default filter shows one warning but ``warnings.simplefilter("always")`` shows two. Only the binding warns.
"""

import sys
import warnings


def warn_moved(message: str) -> None:
    """Warn ``message`` (a DeprecationWarning) at the code that read a moved name through a module ``__getattr__``.

    Call it from that ``__getattr__`` itself: the reader is the frame two above this one. A read by the import
    system's from-list check is not told, since the binding that follows it in the same statement is.
    """
    reader = sys._getframe(2)
    if reader.f_code.co_name == "_handle_fromlist" and reader.f_globals.get("__name__") == "importlib._bootstrap":
        return
    # stacklevel 3: this function, the module's __getattr__, then the reader.
    warnings.warn(message, DeprecationWarning, stacklevel=3)
