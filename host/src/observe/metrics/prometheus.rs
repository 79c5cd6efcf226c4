//! The reader `serve --http --metrics` collects from on each scrape, and what it collected in
//! the Prometheus text exposition format (version 0.0.4), encoded by `prometheus-client`: the
//! SDK's `ManualReader` shared between the provider (which owns its readers) and the handler,
//! its counters, gauges and histograms handed to a `Collector` of their own. Names follow
//! Prometheus' conventions: dots become underscores, the unit is a suffix (`_seconds`,
//! `_bytes`) and a counter ends in `_total`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, Temporality};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::observe::ObserveError;

/// A `ManualReader` the provider and the `/metrics` handler share.
#[derive(Debug, Clone, Default)]
pub struct Reader(Arc<ManualReader>);

impl MetricReader for Reader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

impl Reader {
    /// Collects every instrument now and renders it.
    pub fn text(&self) -> Result<String, ObserveError> {
        let mut collected = ResourceMetrics::default();
        self.0
            .collect(&mut collected)
            .map_err(|e| ObserveError(format!("cannot collect the metrics: {e}")))?;
        let families: Vec<Family> =
            collected.scope_metrics().flat_map(|scope| scope.metrics()).filter_map(family).collect();
        render(families)
    }
}

/// `families` in the text format.
fn render(families: Vec<Family>) -> Result<String, ObserveError> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Families(families)));
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)
        .map_err(|_| "cannot encode the metrics".to_string())?;
    Ok(text)
}

type Labels = Vec<(String, String)>;

/// One instrument's points, as Prometheus sees them.
#[derive(Debug)]
struct Family {
    name: String,
    help: String,
    unit: Option<Unit>,
    points: Points,
}

#[derive(Debug)]
enum Points {
    Counter(Vec<(Labels, Number)>),
    Gauge(Vec<(Labels, Number)>),
    Histogram(Vec<HistogramPoint>),
}

/// One histogram's point.
#[derive(Debug)]
struct HistogramPoint {
    labels: Labels,
    sum: f64,
    count: u64,
    /// Per bucket its upper bound and its own count (not cumulative), +Inf's last.
    buckets: Vec<(f64, u64)>,
}

/// An OpenTelemetry metric as a [`Family`]; `None` for what toolport does not define
/// (exponential histograms, up-down sums).
fn family(metric: &Metric) -> Option<Family> {
    let points = match metric.data() {
        AggregatedMetrics::F64(data) => points(data, Number::Real, |v| v),
        AggregatedMetrics::U64(data) => {
            points(data, |v| Number::Whole(i64::try_from(v).unwrap_or(i64::MAX)), |v| v as f64)
        }
        AggregatedMetrics::I64(data) => points(data, Number::Whole, |v| v as f64),
    }?;
    let unit = match metric.unit() {
        "s" => Some(Unit::Seconds),
        "By" => Some(Unit::Bytes),
        _ => None,
    };
    Some(Family {
        name: metric.name().replace('.', "_"),
        help: metric.description().to_string(),
        unit,
        points,
    })
}

/// A counter's or a gauge's value: whole numbers stay whole (`3`, not `3.0`).
#[derive(Debug, Clone, Copy)]
enum Number {
    Whole(i64),
    Real(f64),
}

fn points<T: Copy>(
    data: &MetricData<T>,
    number: impl Fn(T) -> Number,
    as_f64: impl Fn(T) -> f64,
) -> Option<Points> {
    let labels = |attributes: &mut dyn Iterator<Item = &opentelemetry::KeyValue>| -> Labels {
        attributes.map(|kv| (kv.key.as_str().replace('.', "_"), kv.value.as_str().into_owned())).collect()
    };
    Some(match data {
        MetricData::Sum(sum) if sum.is_monotonic() => Points::Counter(
            sum.data_points().map(|p| (labels(&mut p.attributes()), number(p.value()))).collect(),
        ),
        MetricData::Sum(sum) => Points::Gauge(
            sum.data_points().map(|p| (labels(&mut p.attributes()), number(p.value()))).collect(),
        ),
        MetricData::Gauge(gauge) => Points::Gauge(
            gauge.data_points().map(|p| (labels(&mut p.attributes()), number(p.value()))).collect(),
        ),
        MetricData::Histogram(histogram) => Points::Histogram(
            histogram
                .data_points()
                .map(|p| {
                    // OpenTelemetry's counts are one more than its bounds: the last is +Inf's.
                    let bounds = p.bounds().chain(std::iter::once(f64::INFINITY));
                    let buckets = bounds.zip(p.bucket_counts()).collect();
                    HistogramPoint {
                        labels: labels(&mut p.attributes()),
                        sum: as_f64(p.sum()),
                        count: p.count(),
                        buckets,
                    }
                })
                .collect(),
        ),
        MetricData::ExponentialHistogram(_) => return None,
    })
}

/// What one scrape collected, encoded as `prometheus-client`'s collectors are.
#[derive(Debug)]
struct Families(Vec<Family>);

impl Collector for Families {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for family in &self.0 {
            let kind = match family.points {
                Points::Counter(_) => MetricType::Counter,
                Points::Gauge(_) => MetricType::Gauge,
                Points::Histogram(_) => MetricType::Histogram,
            };
            let mut metric =
                encoder.encode_descriptor(&family.name, &family.help, family.unit.as_ref(), kind)?;
            match &family.points {
                Points::Counter(points) => {
                    for (labels, value) in points {
                        let mut point = metric.encode_family(labels)?;
                        match *value {
                            Number::Whole(n) => point
                                .encode_counter::<NoLabelSet, _, f64>(&u64::try_from(n).unwrap_or(0), None)?,
                            Number::Real(x) => point.encode_counter::<NoLabelSet, _, f64>(&x, None)?,
                        }
                    }
                }
                Points::Gauge(points) => {
                    for (labels, value) in points {
                        let mut point = metric.encode_family(labels)?;
                        match *value {
                            Number::Whole(n) => point.encode_gauge(&n)?,
                            Number::Real(x) => point.encode_gauge(&x)?,
                        }
                    }
                }
                Points::Histogram(points) => {
                    for p in points {
                        metric
                            .encode_family(&p.labels)?
                            .encode_histogram::<NoLabelSet>(p.sum, p.count, &p.buckets, None)?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_units_and_buckets_follow_prometheus() {
        let labels = vec![("server".to_string(), "a".to_string())];
        let text = render(vec![
            Family {
                name: "toolport_calls".into(),
                help: "Calls".into(),
                unit: None,
                points: Points::Counter(vec![(labels.clone(), Number::Whole(3))]),
            },
            Family {
                name: "toolport_call_duration".into(),
                help: "How long".into(),
                unit: Some(Unit::Seconds),
                points: Points::Histogram(vec![HistogramPoint {
                    labels,
                    sum: 0.3,
                    count: 3,
                    buckets: vec![(0.1, 2), (1.0, 1), (f64::INFINITY, 0)],
                }]),
            },
        ]);
        let text = text.unwrap_or_else(|e| panic!("{e}"));
        assert!(
            text.contains("# TYPE toolport_calls_total counter\ntoolport_calls_total{server=\"a\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("toolport_call_duration_seconds_bucket{server=\"a\",le=\"0.1\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("toolport_call_duration_seconds_bucket{server=\"a\",le=\"1\"} 3\n"), "{text}");
        assert!(
            text.contains("toolport_call_duration_seconds_bucket{server=\"a\",le=\"+Inf\"} 3\n"),
            "{text}"
        );
        assert!(text.contains("toolport_call_duration_seconds_count{server=\"a\"} 3\n"), "{text}");
    }
}
