#!/usr/bin/env python3
"""A real OTLP trace receiver for the tests of toolport's traces (tests/it/observe/traces.rs):
an `http.server` on a free loopback port that takes `POST /v1/traces` (protobuf), decodes each
body with `opentelemetry-proto`'s `ExportTraceServiceRequest` and prints every span as one JSON
line on stdout. Every request, whatever its path, is also counted in a line `{"request": PATH}`,
so a test can tell that nothing was sent at all. With --grpc it is an OTLP/gRPC receiver
instead (`grpcio` serving `opentelemetry-proto`'s `TraceService`; its requests are counted as
`{"request": "grpc"}`).

Run with the observers' venv (tests/peers/install_observers.sh):

    otlp_receiver.py [--grpc]   prints `listening PORT` first, then one line per span

A span's line: {"trace_id", "span_id", "parent_span_id" (hex, "" for a root), "name", "kind"
(SERVER, CLIENT, INTERNAL, ...), "attributes" (key -> value), "status" (UNSET, OK, ERROR),
"service" (the resource's service.name)}.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status


SAID = threading.Lock()


def say(line):
    """One JSON line on stdout, whole: requests are handled on threads of their own, and a
    process that exports its spans and metrics at once must not get its lines interleaved."""
    with SAID:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def spans(request):
    for resource_spans in request.resource_spans:
        resource = {kv.key: value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield {
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": Span.SpanKind.Name(span.kind).removeprefix("SPAN_KIND_"),
                    "attributes": {kv.key: value(kv.value) for kv in span.attributes},
                    "status": Status.StatusCode.Name(span.status.code).removeprefix("STATUS_CODE_"),
                    "service": resource.get("service.name"),
                }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        say({"request": self.path})
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for span in spans(request):
            say(span)
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *_):
        pass


def serve_grpc():
    from concurrent import futures

    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request, context):
            say({"request": "grpc"})
            for span in spans(request):
                say(span)
            return ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"listening {port}", flush=True)
    threading.Event().wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grpc", action="store_true")
    if parser.parse_args().grpc:
        return serve_grpc()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
