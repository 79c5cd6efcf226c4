//! Whether and how to export over OTLP, read from the standard `OTEL_*` variables (the
//! OpenTelemetry SDK environment specification), so an operator configures toolport as every
//! other instrumented program: off unless an endpoint is set; `OTEL_SDK_DISABLED=true` and
//! `OTEL_{TRACES,METRICS}_EXPORTER=none` turn a signal off; the protocol is
//! `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else the
//! spec's default `http/protobuf`. The endpoint, headers, timeout and compression variables are
//! read by the exporters themselves.

use crate::observe::ObserveError;

/// One kind of telemetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Spans.
    Traces,
    /// Counters, gauges and histograms.
    Metrics,
}

impl Signal {
    /// The signal's word in the variables' names (`TRACES`, `METRICS`).
    fn env_word(self) -> &'static str {
        match self {
            Self::Traces => "TRACES",
            Self::Metrics => "METRICS",
        }
    }
}

/// How OTLP is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `grpc`: OTLP/gRPC (tonic).
    Grpc,
    /// `http/protobuf`: OTLP/HTTP with protobuf bodies.
    HttpProtobuf,
}

/// Whether `signal` is exported, and how, given the process's environment. `Err` names the
/// variable and its value when the protocol is one toolport does not send.
pub fn otlp(signal: Signal) -> Result<Option<Protocol>, ObserveError> {
    otlp_in(signal, |name| std::env::var(name).ok())
}

/// [`otlp`] over any environment (`var` returns a variable's value).
pub fn otlp_in(
    signal: Signal,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<Protocol>, ObserveError> {
    let set = |name: &str| var(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    let word = signal.env_word();
    if set(&format!("OTEL_{word}_EXPORTER")).is_some_and(|v| v.eq_ignore_ascii_case("none")) {
        return Ok(None);
    }
    let endpoint =
        set(&format!("OTEL_EXPORTER_OTLP_{word}_ENDPOINT")).or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"));
    if endpoint.is_none() {
        return Ok(None);
    }
    let specific = format!("OTEL_EXPORTER_OTLP_{word}_PROTOCOL");
    let (name, value) = match set(&specific) {
        Some(value) => (specific, value),
        None => match set("OTEL_EXPORTER_OTLP_PROTOCOL") {
            Some(value) => ("OTEL_EXPORTER_OTLP_PROTOCOL".to_string(), value),
            None => return Ok(Some(Protocol::HttpProtobuf)),
        },
    };
    match value.as_str() {
        "grpc" => Ok(Some(Protocol::Grpc)),
        "http/protobuf" => Ok(Some(Protocol::HttpProtobuf)),
        other => {
            Err(ObserveError(format!("{name}={other}: toolport sends OTLP as \"grpc\" or \"http/protobuf\"")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn off_unless_an_endpoint_is_set() {
        assert_eq!(otlp_in(Signal::Traces, env(&[])), Ok(None));
        assert_eq!(otlp_in(Signal::Traces, env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])), Ok(None));
        let general = env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]);
        assert_eq!(otlp_in(Signal::Metrics, &general), Ok(Some(Protocol::HttpProtobuf)));
        let traces_only = env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces")]);
        assert_eq!(otlp_in(Signal::Traces, &traces_only), Ok(Some(Protocol::HttpProtobuf)));
        assert_eq!(otlp_in(Signal::Metrics, &traces_only), Ok(None));
    }

    #[test]
    fn the_signals_own_protocol_wins_and_none_or_disabled_turn_it_off() {
        let vars = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ]);
        assert_eq!(otlp_in(Signal::Traces, &vars), Ok(Some(Protocol::Grpc)));
        assert_eq!(otlp_in(Signal::Metrics, &vars), Ok(None));
        let disabled =
            env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4317"), ("OTEL_SDK_DISABLED", "TRUE")]);
        assert_eq!(otlp_in(Signal::Traces, &disabled), Ok(None));
    }

    #[test]
    fn a_protocol_toolport_does_not_send_is_named() {
        let vars = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ]);
        assert_eq!(
            otlp_in(Signal::Traces, &vars).map_err(String::from),
            Err(
                "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: toolport sends OTLP as \"grpc\" or \"http/protobuf\""
                    .to_string()
            )
        );
    }
}
