//! Newline-delimited JSON-RPC 2.0 framing: one message per line in, one per line out.
//!
//! Reading classifies a line without trusting it: bad JSON is a parse error (`-32700`, id
//! `null`) and the server keeps serving; JSON that is not a request or notification is an
//! invalid request (`-32600`). Writing goes through one task that owns stdout, so responses
//! and notifications from concurrent handlers never interleave within a line.

use agent_client_protocol_schema::v1::{Error, ErrorCode, RequestId};
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;

/// One message a client sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A call that wants a response.
    Request {
        /// Echoed in the response.
        id: RequestId,
        /// The method name.
        method: String,
        /// `params`, `null` when absent.
        params: Value,
    },
    /// A call without an id: never answered.
    Notification {
        /// The method name.
        method: String,
        /// `params`, `null` when absent.
        params: Value,
    },
    /// A response to a request of ours (`session/request_permission`).
    Response {
        /// The id we sent.
        id: RequestId,
        /// `result`, or the error's message.
        outcome: Result<Value, String>,
    },
}

/// A line that cannot be served: the error to answer with, and the id to answer to.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The request's id when it could be read, else `null`.
    pub id: RequestId,
    /// What went wrong.
    pub error: Error,
}

/// What [`read_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// A line is in the buffer (its newline included, if it had one).
    Line,
    /// A line longer than the cap was read and dropped; the buffer is empty.
    TooLong,
    /// The input ended.
    End,
}

/// Reads one line into `buf` (cleared first), keeping at most `cap` bytes before the newline:
/// a longer line is consumed to its end and dropped, so memory stays bounded by `cap`
/// whatever the client sends.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Read> {
    buf.clear();
    let mut over = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if over {
                Read::TooLong
            } else if buf.is_empty() {
                Read::End
            } else {
                Read::Line
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let content = newline.unwrap_or(available.len());
        if !over {
            // The newline itself does not count against the cap.
            if buf.len() + content > cap {
                over = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&available[..take]);
            }
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if over { Read::TooLong } else { Read::Line });
        }
    }
}

/// The answer to a line over the cap: nothing of it was read, so the id is `null`.
pub fn too_long(cap: usize) -> Error {
    Error::new(
        i32::from(ErrorCode::InvalidRequest),
        format!("Invalid request: a line is longer than {cap} bytes; it was dropped unread"),
    )
}

/// JSON-RPC's first implementation-defined server error: the agent is at its request cap.
pub const SERVER_BUSY: i32 = -32000;

/// The answer to a request over the concurrency cap.
pub fn busy(max: usize) -> Error {
    Error::new(
        SERVER_BUSY,
        format!(
            "Too many requests: {max} are already running; this one was refused, send it again once one has answered"
        ),
    )
}

/// Reads one line.
pub fn parse_line(line: &str) -> Result<Incoming, Box<Rejected>> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        Box::new(Rejected {
            id: RequestId::Null,
            error: Error::new(i32::from(ErrorCode::ParseError), format!("Parse error: {e}")),
        })
    })?;
    let Value::Object(mut obj) = value else {
        return Err(invalid(RequestId::Null, "a message must be a JSON object"));
    };
    let id = match obj.remove("id") {
        None => None,
        Some(v) => Some(
            serde_json::from_value::<RequestId>(v)
                .map_err(|_| invalid(RequestId::Null, "\"id\" must be a string, an integer or null"))?,
        ),
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(id.unwrap_or(RequestId::Null), "\"jsonrpc\" must be \"2.0\""));
    }
    let params = obj.remove("params").unwrap_or(Value::Null);
    match (obj.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(_), id) => Err(invalid(id.unwrap_or(RequestId::Null), "\"method\" must be a string")),
        (None, Some(id)) if obj.contains_key("result") || obj.contains_key("error") => {
            let outcome = match obj.remove("result") {
                Some(result) => Ok(result),
                None => Err(obj
                    .get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("an error without a message")
                    .to_string()),
            };
            Ok(Incoming::Response { id, outcome })
        }
        (None, id) => Err(invalid(id.unwrap_or(RequestId::Null), "a request needs a \"method\"")),
    }
}

fn invalid(id: RequestId, why: &str) -> Box<Rejected> {
    Box::new(Rejected {
        id,
        error: Error::new(i32::from(ErrorCode::InvalidRequest), format!("Invalid request: {why}")),
    })
}

/// `-32601` for a method this agent does not serve.
pub fn method_not_found(method: &str) -> Error {
    Error::new(i32::from(ErrorCode::MethodNotFound), format!("Method not found: {method}"))
}

/// `-32602`: the params are wrong; `message` says which and how (e.g. `cwd is required`).
pub fn invalid_params(message: impl Into<String>) -> Error {
    Error::new(i32::from(ErrorCode::InvalidParams), message)
}

/// `-32603`: the request was fine but serving it failed; `message` says why.
pub fn internal_error(message: impl Into<String>) -> Error {
    Error::new(i32::from(ErrorCode::InternalError), message)
}

/// The response line for a request.
pub fn response(id: RequestId, result: Result<Value, Error>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), json!("2.0"));
    m.insert("id".into(), serde_json::to_value(&id).unwrap_or(Value::Null));
    match result {
        Ok(v) => m.insert("result".into(), v),
        Err(e) => m.insert("error".into(), serde_json::to_value(&e).unwrap_or(Value::Null)),
    };
    Value::Object(m)
}

/// A notification line.
pub fn notification(method: &str, params: impl Serialize) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": method,
        "params": serde_json::to_value(params).unwrap_or(Value::Null),
    })
}

/// A cheap, cloneable handle for sending lines to the client.
#[derive(Debug, Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Value>,
}

impl Outbox {
    /// Queues one message. A closed outbox (client gone) drops it silently: there is no one
    /// left to tell.
    pub fn send(&self, message: Value) {
        let _ = self.tx.send(message);
    }
}

/// Starts the writer task for `out`. It ends, flushing everything queued, once every
/// [`Outbox`] clone is dropped.
pub fn spawn_writer<W>(mut out: W) -> (Outbox, tokio::task::JoinHandle<std::io::Result<()>>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
    let task = tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            let mut line = serde_json::to_vec(&msg).map_err(std::io::Error::other)?;
            line.push(b'\n');
            out.write_all(&line).await?;
            out.flush().await?;
        }
        Ok(())
    });
    (Outbox { tx }, task)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<Incoming, Box<Rejected>>) -> i32 {
        r.map(|_| 0).unwrap_or_else(|rej| rej.error.code.into())
    }

    #[test]
    fn requests_notifications_and_responses() {
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"a":1}}"#),
            Ok(Incoming::Request {
                id: RequestId::Number(1),
                method: "initialize".into(),
                params: json!({"a":1})
            })
        );
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","id":"x","method":"m"}"#),
            Ok(Incoming::Request { id: RequestId::Str("x".into()), method: "m".into(), params: Value::Null })
        );
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#),
            Ok(Incoming::Notification { method: "session/cancel".into(), params: json!({}) })
        );
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Ok(Incoming::Response { id: RequestId::Number(3), outcome: Ok(json!({})) })
        );
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","id":"p","error":{"code":-1,"message":"no"}}"#),
            Ok(Incoming::Response { id: RequestId::Str("p".into()), outcome: Err("no".into()) })
        );
    }

    #[test]
    fn malformed_lines_are_rejected_with_the_right_code() {
        assert_eq!(code(parse_line("{not json")), -32700);
        assert_eq!(code(parse_line("[1,2]")), -32600);
        assert_eq!(code(parse_line(r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#)), -32600);
        assert_eq!(code(parse_line(r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#)), -32600);
        assert_eq!(code(parse_line(r#"{"jsonrpc":"2.0","id":1,"method":7}"#)), -32600);
        assert_eq!(code(parse_line(r#"{"jsonrpc":"2.0","id":1}"#)), -32600);
        let rej = parse_line(r#"{"jsonrpc":"2.0","id":9,"method":5}"#).unwrap_err();
        assert_eq!(rej.id, RequestId::Number(9));
    }

    #[test]
    fn response_lines() {
        assert_eq!(
            response(RequestId::Number(1), Ok(json!({"x":1}))),
            json!({"jsonrpc":"2.0","id":1,"result":{"x":1}})
        );
        assert_eq!(
            response(RequestId::Null, Err(method_not_found("nope"))),
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: nope"}})
        );
    }

    #[tokio::test]
    async fn a_line_over_the_cap_is_dropped_and_the_next_one_read() -> std::io::Result<()> {
        let input = b"12345\n123456\nabc".to_vec();
        let mut reader = tokio::io::BufReader::with_capacity(2, &input[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut reader, &mut buf, 5).await?, Read::Line);
        assert_eq!(buf, b"12345\n");
        assert_eq!(read_line(&mut reader, &mut buf, 5).await?, Read::TooLong);
        assert!(buf.is_empty());
        assert_eq!(read_line(&mut reader, &mut buf, 5).await?, Read::Line);
        assert_eq!(buf, b"abc");
        assert_eq!(read_line(&mut reader, &mut buf, 5).await?, Read::End);
        Ok(())
    }

    #[tokio::test]
    async fn writer_emits_one_line_per_message() -> anyhow::Result<()> {
        let (client, server) = tokio::io::duplex(4096);
        let (outbox, task) = spawn_writer(server);
        outbox.send(json!({"a":1}));
        outbox.send(json!({"b":"x\ny"}));
        drop(outbox);
        task.await??;
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut { client }, &mut text).await?;
        assert_eq!(text, "{\"a\":1}\n{\"b\":\"x\\ny\"}\n");
        Ok(())
    }
}
