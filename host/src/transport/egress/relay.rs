//! The bytes of a connection the proxy let through, and the answers it gives itself: a
//! tunnel copied both ways, one plain exchange relayed until its answer ends, and a
//! `text/plain` answer of our own followed by a close that does not lose it to a reset.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Each direction's copy buffer: large enough that bulk transfers take few system calls.
const COPY_BUFFER: usize = 64 * 1024;
/// After an error answer, how long and how much of what the client still sends is read and
/// dropped, so closing with unread bytes does not reset the connection before it reads the answer.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 64 * 1024;
/// The status of an answer the proxy gives itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    BadRequest,
    Forbidden,
    RequestTimeout,
    BadGateway,
}

impl Status {
    fn line(self) -> &'static str {
        match self {
            Status::BadRequest => "400 Bad Request",
            Status::Forbidden => "403 Forbidden",
            Status::RequestTimeout => "408 Request Timeout",
            Status::BadGateway => "502 Bad Gateway",
        }
    }
}

/// A tunnel: `200`, the client's early bytes, then both directions copied until both end.
pub(super) async fn tunnel(mut client: TcpStream, mut upstream: TcpStream, early: &[u8]) -> io::Result<()> {
    client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await?;
    upstream.write_all(early).await?;
    tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, COPY_BUFFER, COPY_BUFFER).await?;
    Ok(())
}

/// One forwarded plain request: both directions copied until the destination's answer ends
/// (it closes, as `Connection: close` asks). A client that stops sending has its end passed on
/// and still gets the answer.
pub(super) async fn relay_one_exchange(mut client: TcpStream, mut upstream: TcpStream) {
    let (client_read, mut client_write) = client.split();
    let (upstream_read, mut upstream_write) = upstream.split();
    let request = async {
        let _ =
            tokio::io::copy_buf(&mut BufReader::with_capacity(COPY_BUFFER, client_read), &mut upstream_write)
                .await;
        let _ = upstream_write.shutdown().await;
        std::future::pending::<()>().await;
    };
    let reply = async {
        let _ =
            tokio::io::copy_buf(&mut BufReader::with_capacity(COPY_BUFFER, upstream_read), &mut client_write)
                .await;
        let _ = client_write.shutdown().await;
    };
    tokio::select! {
        () = reply => {}
        () = request => {}
    }
}

/// An answer of the proxy's own, then the connection's end.
pub(super) async fn answer(mut client: TcpStream, status: Status, body: &str) {
    write_answer(&mut client, status, body).await;
    close_after_answer(client).await;
}

/// Ends a connection whose answer is written: our side shut, then what the client still sends
/// read and dropped for a while ([`LINGER`]), so the answer is not lost to a reset.
pub(super) async fn close_after_answer(mut client: TcpStream) {
    let _ = client.shutdown().await;
    let drain = async {
        let mut sink = [0u8; 4096];
        let mut read = 0;
        while read < LINGER_BYTES {
            match client.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

/// Writes a complete `text/plain` answer; a client already gone is not an error of ours.
pub(super) async fn write_answer<S: AsyncWrite + Unpin>(client: &mut S, status: Status, body: &str) {
    let response = format!(
        "HTTP/1.1 {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        status.line(),
        body.len()
    );
    let _ = client.write_all(response.as_bytes()).await;
}
