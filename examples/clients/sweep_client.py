"""sweep_client: the former name of the `sweep` module.

The client now lives in examples/clients/python/sweep.py, an installable
package (`pip install examples/clients/python`, docs/clients.md). This
file keeps `import sweep_client` working for trainers that put
examples/clients on sys.path: it loads that sweep.py (or an installed
`sweep`) and stands for it, so sweep_client.report is sweep.report.
"""
import os
import sys

_here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")
if os.path.isfile(os.path.join(_here, "sweep.py")) and _here not in sys.path:
    sys.path.insert(0, _here)
try:
    import sweep as _sweep
except ImportError:
    raise ImportError("sweep_client: the client is now the `sweep` module: "
                      "pip install examples/clients/python, or copy "
                      "examples/clients/python/sweep.py beside this file")
if not hasattr(_sweep, "report"):
    raise ImportError("sweep_client: %s is not sweep's client module"
                      % getattr(_sweep, "__file__", "sweep"))
sys.modules[__name__] = _sweep
