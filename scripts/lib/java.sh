# Shared by ./ferry and scripts/test: find a JDK >= 21 and set FERRY_JAVA_HOME, or explain what to install.
# Order: JAVA_HOME, then java on PATH, then the usual JVM install folder (/usr/lib/jvm), newest first.

ferry_java_version() { # prints the major version of the java binary $1, or nothing
  "$1" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2; exit}' | sed 's/^1\.//'
}

ferry_find_jdk() {
  local candidates=() dir v
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  for dir in $(ls -d /usr/lib/jvm/*/ /opt/java/*/ /usr/local/lib/jvm/*/ 2>/dev/null | sort -rV); do
    candidates+=("${dir%/}")
  done
  for dir in "${candidates[@]}"; do
    [ -x "$dir/bin/java" ] && [ -x "$dir/bin/javac" ] || continue
    v=$(ferry_java_version "$dir/bin/java")
    if [ -n "$v" ] && [ "$v" -ge 21 ] 2>/dev/null; then
      FERRY_JAVA_HOME="$dir"
      FERRY_JAVA_VERSION="$v"
      return 0
    fi
  done
  echo "ferry: needs a JDK 21 or newer (java and javac), and none was found in JAVA_HOME, on PATH or under /usr/lib/jvm; install one, e.g. 'apt-get install openjdk-21-jdk' or Temurin 21+, or point JAVA_HOME at it." >&2
  return 1
}

ferry_maven_env() { # Maven runs on the JDK we found; JDK 24+ warns about Maven's own use of Unsafe
  export JAVA_HOME="$FERRY_JAVA_HOME"
  if [ "$FERRY_JAVA_VERSION" -ge 24 ]; then
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
  fi
  if ! command -v mvn >/dev/null 2>&1; then
    echo "ferry: needs Apache Maven 3.8+ to build ('apt-get install maven'), and mvn is not on PATH." >&2
    return 1
  fi
}
