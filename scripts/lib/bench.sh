# Shared by the end-to-end benchmark scripts (bench-mount-peers, bench-au, ...): a work folder cleaned up on exit,
# the embedded store on a free port, FUSE mounts waited for and taken down, the kernel's page cache dropped.
# Source it, then call bench_init NAME; HERE must name the checkout.

# bench_init NAME: WORK (a fresh temporary folder), PIDS and MOUNTS (taken down on exit), the store's credentials.
bench_init() {
  BENCH_NAME="$1"
  WORK="$(mktemp -d "/tmp/ferry-$1.XXXXXX")"
  PIDS=()
  MOUNTS=()
  export AWS_ACCESS_KEY_ID=ferry AWS_SECRET_ACCESS_KEY=ferry-bench AWS_DEFAULT_REGION=us-east-1
  trap bench_cleanup EXIT
}

bench_cleanup() {
  local m p
  for m in "${MOUNTS[@]}"; do fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}

# bench_fail MESSAGE: one sentence on stderr naming the script, and exit 1.
bench_fail() {
  echo "$BENCH_NAME: $1" >&2
  exit 1
}

# bench_needs_root: drop_caches and FUSE mounts need root.
bench_needs_root() {
  [ "$(id -u)" = 0 ] || bench_fail "needs root (drop_caches, FUSE mounts)."
}

# start_store ROOT PROFILE: `ferry store` over ROOT on a free port; sets PORT and ENDPOINT, returns once it answers.
start_store() {
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  ENDPOINT="http://127.0.0.1:$PORT"
  "$HERE/ferry" store --root "$1" --create --port "$PORT" --profile "$2" >"$WORK/store.log" 2>&1 &
  PIDS+=($!)
  local _
  for _ in $(seq 1 600); do curl -s -o /dev/null "$ENDPOINT/" && return 0; sleep 0.1; done
  cat "$WORK/store.log" >&2
  bench_fail "the store at $ENDPOINT did not answer within a minute."
}

# drop: the kernel's page cache (and dentries, inodes) dropped, dirty pages written first.
drop() {
  sync
  echo 3 >/proc/sys/vm/drop_caches
}

# wait_mounted PATH LOG: returns once PATH (a folder inside a mount) exists; prints LOG and fails after a minute.
wait_mounted() {
  local _
  for _ in $(seq 1 600); do [ -d "$1" ] && return 0; sleep 0.1; done
  cat "$2" >&2
  bench_fail "the mount holding $1 did not come up."
}

# unmount MOUNTPOINT PID: unmounts and waits for the mount's process to end.
unmount() {
  fusermount3 -u "$1" 2>/dev/null || fusermount -u "$1" 2>/dev/null || umount "$1" 2>/dev/null || umount -l "$1" || true
  kill -TERM "$2" 2>/dev/null || true
  wait "$2" 2>/dev/null || true
}
