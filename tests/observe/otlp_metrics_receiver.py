"""A small OTLP/HTTP metrics receiver for the tests (tests/it/observe/metrics.rs): it listens
on a free loopback port, prints `listening PORT` on stdout, and for every POST /v1/metrics
decodes the body as an `ExportMetricsServiceRequest` (PyPI `opentelemetry-proto`) and appends
one JSON line per data point to the file given as its argument:

    {"name": ..., "unit": ..., "kind": "sum"|"gauge"|"histogram", "attributes": {...},
     "value": ..., "count": ..., "bucket_counts": [...], "bounds": [...]}

    otlp_metrics_receiver.py OUT.jsonl
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

OUT = sys.argv[1]


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(point):
    return {kv.key: value_of(kv.value) for kv in point.attributes}


def points(metric):
    kind = metric.WhichOneof("data")
    if kind in ("sum", "gauge"):
        for p in getattr(metric, kind).data_points:
            value = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
            yield {"kind": kind, "attributes": attributes(p), "value": value}
    elif kind == "histogram":
        for p in metric.histogram.data_points:
            yield {
                "kind": kind,
                "attributes": attributes(p),
                "count": p.count,
                "sum": p.sum,
                "bucket_counts": list(p.bucket_counts),
                "bounds": list(p.explicit_bounds),
            }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/v1/metrics":
            self.send_response(404)
            self.end_headers()
            return
        request = ExportMetricsServiceRequest()
        request.ParseFromString(body)
        with open(OUT, "a") as out:
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        for point in points(metric):
                            point.update({"name": metric.name, "unit": metric.unit})
                            out.write(json.dumps(point) + "\n")
        reply = ExportMetricsServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *_args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
