# syntax=docker/dockerfile:1.7
# ferry's image: the ferry command (serve, flush, status, index, ...) on a Java runtime, and the Python client
# under /opt/ferry/python for training pods to copy (deploy/kubernetes/examples/pytorchjob). From the
# repository's root:
#
#   docker build -t registry.example.com/ferry:0.1.0 .
#   docker push registry.example.com/ferry:0.1.0          # then set images: in deploy/kubernetes/kustomization.yaml
#
# Java 21 by default; --build-arg JAVA_VERSION=25 builds on a newer one (which also builds `ferry mount`; the
# image has no libfuse3 for it). docs/kubernetes.md says what was and was not run.
ARG JAVA_VERSION=21

FROM maven:3.9-eclipse-temurin-${JAVA_VERSION} AS build
WORKDIR /src
COPY . .
# the build ./ferry runs on first use: the CLI and the modules it depends on, without their tests
RUN --mount=type=cache,target=/root/.m2 mvn -B -q -DskipTests -pl cli -am package

FROM eclipse-temurin:${JAVA_VERSION}-jre
RUN groupadd --system --gid 10001 ferry \
    && useradd --system --uid 10001 --gid ferry --home-dir /var/lib/ferry --shell /usr/sbin/nologin ferry \
    && mkdir -p /var/lib/ferry /etc/ferry \
    && chown ferry:ferry /var/lib/ferry
COPY --from=build /src/cli/target/classes /opt/ferry/classes
COPY --from=build /src/cli/target/lib /opt/ferry/lib
COPY clients/python /opt/ferry/python
COPY deploy/docker/ferry /usr/local/bin/ferry
USER 10001:10001
EXPOSE 9099
ENTRYPOINT ["/usr/local/bin/ferry"]
CMD ["serve", "--config", "/etc/ferry/ferry.yaml"]
