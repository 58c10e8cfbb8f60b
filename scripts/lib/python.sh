# Shared by scripts/test: where the Python packages the tests drive come from.

# Prints the requirements file that installs a CPU PyTorch on this machine: the local wheel store
# (scripts/requirements-torch.txt: /opt/wheels and the indexes under /opt/pypi) when this machine has one,
# else PyTorch's own CPU index (scripts/requirements-torch-cpu.txt: https://download.pytorch.org/whl/cpu).
# FERRY_LOCAL_WHEELS (default /opt) is where the local store would be.
ferry_torch_requirements() {
  local root="${FERRY_LOCAL_WHEELS:-/opt}"
  if compgen -G "$root/wheels/torch-*.whl" >/dev/null && [ -d "$root/pypi/simple" ]; then
    echo scripts/requirements-torch.txt
  else
    echo scripts/requirements-torch-cpu.txt
  fi
}
