# ferry's image: the release (bin/ferry, lib/) on a Java runtime that jlink made from the JDK that built it, a
# non-root user, libfuse3 for `ferry mount`, and python3 with the client installed (its wheel also under
# /opt/ferry/python for training images to install). The build context is made by scripts/image, which builds the
# release and the runtime on the host (JDK 21+, Maven) and then this file:
#
#   scripts/image --tag registry.example.com/ferry:0.1.0     # podman, or docker where there is no podman
#   podman push registry.example.com/ferry:0.1.0              # then set images: in deploy/kubernetes/kustomization.yaml
#
# BASE is any Debian or Ubuntu image: a registry's (the default) or one made from Debian's packages where no
# registry is reachable (scripts/image --base local). docs/kubernetes.md says what was and was not run.
ARG BASE=debian:bookworm-slim
FROM ${BASE}

# libfuse3 and fusermount3 (ferry mount), python3 (the client), curl (podman's form of an httpGet probe): a local
# base has them already
RUN if ! dpkg-query -W libfuse3-3 fuse3 python3 curl >/dev/null 2>&1; then \
      apt-get update && apt-get install -y --no-install-recommends libfuse3-3 fuse3 python3 ca-certificates curl \
      && rm -rf /var/lib/apt/lists/*; \
    fi

# the daemon's user (no useradd in a minimal base: the two lines it would write)
RUN echo 'ferry:x:10001:10001:ferry:/var/lib/ferry:/usr/sbin/nologin' >> /etc/passwd \
    && echo 'ferry:x:10001:' >> /etc/group \
    && mkdir -p /var/lib/ferry /etc/ferry \
    && chown 10001:10001 /var/lib/ferry

COPY jre /opt/ferry/jre
COPY ferry /opt/ferry
COPY ferry-launcher /usr/local/bin/ferry
# the client: its wheel unpacked in /opt/ferry/python (the package there for a training pod's init container to copy,
# deploy/kubernetes/examples/pytorchjob) and on the image's python3 path through a .pth file (the base has no pip)
RUN python3 -c "import glob, os, sysconfig, zipfile; \
zipfile.ZipFile(glob.glob('/opt/ferry/python/ferry_client-*.whl')[0]).extractall('/opt/ferry/python'); \
site = sysconfig.get_paths()['purelib']; os.makedirs(site, exist_ok=True); \
open(os.path.join(site, 'ferry.pth'), 'w').write('/opt/ferry/python\n')" \
    && python3 -c "import ferry_client"

ENV JAVA_HOME=/opt/ferry/jre
USER 10001:10001
WORKDIR /var/lib/ferry
EXPOSE 9099
ENTRYPOINT ["/usr/local/bin/ferry"]
CMD ["serve", "--config", "/etc/ferry/ferry.yaml"]
