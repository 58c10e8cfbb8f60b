"""ferry_client: the Python client of the ferry daemon (``ferry serve``).

``FerryClient`` speaks ferry's own API (jobs, order, progress, status, flush) over its S3 transport
(``ferry_client.s3``: object reads and writes through the daemon); with no URL it finds the node's daemon
(``FERRY_ENDPOINT``, else ``http://127.0.0.1:9099``), and ``register_job`` its place in the job
(``ferry_client.placement``, from torchrun's or Kubeflow's variables). Its answers are typed dicts
(``ferry_client.answers``: ``job.ranks`` and ``job["ranks"]``); ``JobSettings`` and ``ReadSettings`` group how a
job is planned and how it is read. ``ferry_client.loader`` reads a job's samples in plan order and reports the
training loop's waits; ``ferry_client.torch`` (needs PyTorch) is a DataLoader dataset, resumable mid-epoch;
``tar_sample`` turns a WebDataset sample's bytes into its fields; ``pack``/``unpack`` and ``DecodedCache`` keep
decoded samples on the node's tier (docs/decoded-cache.md).
"""

from .answers import Checkpoint, FlushResult, Job, ObjectInfo, Progress, PutResult, Sample, Span, Status
from .client import DEFAULT_URL, FerryClient, default_url
from .decoded import DecodedCache, pack, unpack
from .errors import FerryConnectionError, FerryError
from .loader import Samples, StepReporter, plan_reads
from .placement import Placement, placement
from .s3 import S3Client
from .settings import JobSettings, ReadSettings
from .tar import tar_sample, tar_samples

# The one version number: the wheel's (pyproject.toml reads it from here) and the module's.
__version__ = "0.1.0"

__all__ = ["DEFAULT_URL", "Checkpoint", "DecodedCache", "FerryClient", "FerryConnectionError", "FerryError", "FlushResult", "Job",
           "JobSettings", "ObjectInfo", "Placement", "Progress", "PutResult", "ReadSettings", "S3Client", "Sample",
           "Samples", "Span", "Status", "StepReporter", "__version__", "default_url", "pack", "placement", "plan_reads",
           "tar_sample", "tar_samples", "unpack"]
