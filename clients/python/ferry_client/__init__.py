"""ferry_client: the Python client of the ferry daemon (``ferry serve``).

``FerryClient`` reads and writes objects over the daemon's S3 endpoint and speaks ferry's own API
(jobs, order, progress, status, flush); ``ferry_client.loader`` reads a job's samples in plan order and
reports the training loop's waits; ``ferry_client.torch`` (needs PyTorch) is a DataLoader dataset.
"""

from .client import DEFAULT_URL, FerryClient
from .errors import FerryConnectionError, FerryError
from .loader import Samples, StepReporter

__version__ = "0.1.0"

__all__ = ["DEFAULT_URL", "FerryClient", "FerryConnectionError", "FerryError", "Samples", "StepReporter",
           "__version__"]
