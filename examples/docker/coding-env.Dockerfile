# The `coding_env` example as a container whose command is the environment binary, as hud's
# DockerRuntime expects: it serves on 0.0.0.0:8765 and prints `HUD_SERVE_PORT=8765` once it
# accepts connections. Build from the repository root:
#
#   docker build -f examples/docker/coding-env.Dockerfile -t coding-env .
#   docker run --rm -p 8765:8765 \
#     --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined coding-env
#
# Only the control port is published: the agent reaches the workspace's SSH server through the
# control channel (`tunnel.open`, what hud's `client.open("shell")` sends). The three options let
# bwrap make the workspace's sandbox (a user namespace, its mounts, a fresh /proc); without them
# the workspace serves with `isolation: none` and says so in its log and in the binding's
# params. docs/workspaces.md says why each is needed.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p grader-examples --example coding_env

FROM debian:bookworm-slim
# The agent's sessions and the template's tests run with bash and python3 in the workspace's
# sandbox: bubblewrap makes it, nsenter (util-linux) joins it.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 bubblewrap util-linux \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/examples/coding_env /usr/local/bin/coding-env
EXPOSE 8765
# SIGTERM (docker stop) cancels running tasks and exits with 143 well within docker's 10 s.
STOPSIGNAL SIGTERM
CMD ["coding-env", "--host", "0.0.0.0", "--port", "8765"]
