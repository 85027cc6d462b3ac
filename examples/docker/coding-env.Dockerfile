# The `coding_env` example as a container whose command is the environment binary, as hud's
# DockerRuntime expects: it serves on 0.0.0.0:8765 and prints `HUD_SERVE_PORT=8765` once it
# accepts connections. Build from the repository root:
#
#   docker build -f examples/docker/coding-env.Dockerfile -t coding-env .
#   docker run --rm -p 8765:8765 coding-env
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p grader-examples --example coding_env

FROM debian:bookworm-slim
# The template's tests run with python3 through bash, in bubblewrap's sandbox where the
# container runtime allows user namespaces (otherwise unsandboxed, as the example chooses).
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 bubblewrap \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/examples/coding_env /usr/local/bin/coding-env
EXPOSE 8765
# SIGTERM (docker stop) cancels running tasks and exits with 143 well within docker's 10 s.
STOPSIGNAL SIGTERM
CMD ["coding-env", "--host", "0.0.0.0", "--port", "8765"]
