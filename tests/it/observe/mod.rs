//! What toolport makes visible to the people who run it (issue 29): `traces`, OpenTelemetry
//! spans over OTLP with trace context passed in and out.

mod traces;
