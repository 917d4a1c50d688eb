# syntax=docker/dockerfile:1

# Pressroom: one binary with subcommands (serve, worker, migrate, storage init, ...).
# The image processing uses libvips through cgo, so the build links against
# Debian bookworm's libvips and the runtime installs the same release of it.

##### build #####
FROM golang:1.26-bookworm AS build

RUN apt-get update \
 && apt-get install -y --no-install-recommends libvips-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Dependencies first, so source edits do not download modules again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=1 go build -trimpath -ldflags="-s -w" -o /out/pressroom ./cmd/pressroom

##### runtime #####
FROM debian:bookworm-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends libvips42 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 pressroom \
 && useradd --system --uid 10001 --gid pressroom --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin pressroom

COPY --from=build /out/pressroom /usr/local/bin/pressroom

# In a container the API must listen on every interface, not the loopback
# default that suits `make dev`.
ENV PRESSROOM_HTTP_ADDR=0.0.0.0:8080

# Numeric, so runtimes that enforce non-root (runAsNonRoot) can verify it.
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/pressroom"]
CMD ["serve"]
