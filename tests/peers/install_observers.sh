#!/usr/bin/env bash
# Installs what the observability tests read toolport's telemetry with, into <target>/observers,
# once: a Python venv (<observers>/venv/bin/python) with
#   - PyPI `opentelemetry-proto` (and its protobuf), which decodes the OTLP requests a test's
#     receiver is sent (`tests/observe/otlp_receiver.py`);
#   - PyPI `prometheus-client`, whose text parser reads `serve --http --metrics`' `/metrics`;
#   - PyPI `grpcio`, the gRPC server under the OTLP/gRPC receiver (`trace_service_pb2_grpc`).
#
#   tests/peers/install_observers.sh [TARGET_DIR]     prints the observers folder on success
#
# Same shape as tests/peers/install_clients.sh: idempotent and locked (tests/peers/once.sh).
set -euo pipefail

OTEL_PROTO_VERSION="${OTEL_PROTO_VERSION:-1.45.2}"
PROMETHEUS_CLIENT_VERSION="${PROMETHEUS_CLIENT_VERSION:-0.26.0}"
GRPCIO_VERSION="${GRPCIO_VERSION:-1.84.0}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
source "$here/once.sh"
once_begin "$target/observers" "$OTEL_PROTO_VERSION-$PROMETHEUS_CLIENT_VERSION-$GRPCIO_VERSION"
observers="$once_dir"

# A half-made venv from an interrupted run is replaced, not trusted.
rm -rf "$observers/venv"
python3 -m venv "$observers/venv"
"$observers/venv/bin/pip" install --quiet --disable-pip-version-check \
  "opentelemetry-proto==$OTEL_PROTO_VERSION" "prometheus-client==$PROMETHEUS_CLIENT_VERSION" >&2
"$observers/venv/bin/pip" install --quiet --disable-pip-version-check "grpcio==$GRPCIO_VERSION" >&2
"$observers/venv/bin/python" -c '
import opentelemetry.proto.collector.trace.v1.trace_service_pb2
import opentelemetry.proto.collector.metrics.v1.metrics_service_pb2
import opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc
import prometheus_client.parser' \
  || { echo "install_observers.sh: the observers do not import" >&2; exit 1; }

once_done
