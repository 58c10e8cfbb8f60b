"""ferry_client: the Python client of the ferry daemon (``ferry serve``).

``FerryClient`` reads and writes objects over the daemon's S3 endpoint and speaks ferry's own API
(jobs, order, progress, status, flush); with no URL it finds the node's daemon (``FERRY_ENDPOINT``, else
``http://127.0.0.1:9099``), and ``register_job`` its place in the job (``ferry_client.placement``, from torchrun's or
Kubeflow's variables); ``ferry_client.loader`` reads a job's samples in plan order and
reports the training loop's waits; ``ferry_client.torch`` (needs PyTorch) is a DataLoader dataset;
``tar_sample`` turns a WebDataset sample's bytes into its fields.
"""

from .client import DEFAULT_URL, FerryClient, default_url
from .errors import FerryConnectionError, FerryError
from .loader import Samples, StepReporter, plan_reads
from .placement import Placement, placement
from .tar import tar_sample, tar_samples

__version__ = "0.1.0"

__all__ = ["DEFAULT_URL", "FerryClient", "FerryConnectionError", "FerryError", "Placement", "Samples", "StepReporter",
           "default_url", "placement", "plan_reads", "tar_sample", "tar_samples", "__version__"]
