//! The egress proxy served on a real listener: granted and refused tunnels and plain
//! requests, malformed heads, unreachable destinations, and the record of refusals.

use tokio::io::AsyncReadExt;

use super::head::{MALFORMED_HEAD, ONLY_PROXY_FORMS, OVERSIZED_HEAD};
use super::*;
use std::net::SocketAddr;

struct Running {
    addr: SocketAddr,
    refusals: EgressRefusals,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

fn start(grants: &[String]) -> Running {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let hosts = grants.iter().map(|g| HostPattern::parse(g).expect("pattern")).collect();
    let refusals = EgressRefusals::default();
    let stop = CancellationToken::new();
    let task = spawn(listener, "my server".into(), hosts, refusals.clone(), stop.clone()).expect("spawn");
    Running { addr, refusals, stop, task }
}

/// Sends `request` and reads the whole answer (the proxy closes after its own answers).
async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    String::from_utf8(answer).expect("utf-8")
}

fn body(answer: &str) -> &str {
    answer.split_once("\r\n\r\n").map_or("", |(_, body)| body)
}

/// A TCP server that echoes every connection back.
async fn echo_server(bind: &str) -> io::Result<SocketAddr> {
    let listener = TcpListener::bind(bind).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut r, mut w) = stream.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    Ok(addr)
}

/// Opens a tunnel through the proxy to `target` with `early` bytes sent before the `200`,
/// and checks it echoes.
async fn echo_through_tunnel(proxy: SocketAddr, target: &str) {
    let mut stream = TcpStream::connect(proxy).await.expect("connect");
    let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\nearly");
    stream.write_all(request.as_bytes()).await.expect("write");
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
    let mut got = vec![0u8; established.len() + 5];
    stream.read_exact(&mut got).await.expect("read 200");
    assert_eq!(String::from_utf8_lossy(&got), "HTTP/1.1 200 Connection established\r\n\r\nearly");
    stream.write_all(b"ping").await.expect("write ping");
    let mut ping = [0u8; 4];
    stream.read_exact(&mut ping).await.expect("read ping");
    assert_eq!(&ping, b"ping");
    stream.shutdown().await.expect("shutdown");
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).await.expect("read to end");
    assert!(rest.is_empty());
}

#[tokio::test]
async fn a_granted_tunnel_carries_bytes_both_ways_and_stop_ends_the_proxy() {
    let echo = echo_server("127.0.0.1:0").await.expect("echo server");
    let proxy = start(&[format!("wss://127.0.0.1:{}", echo.port())]);
    echo_through_tunnel(proxy.addr, &echo.to_string()).await;
    assert!(proxy.refusals.all().is_empty());
    proxy.stop.cancel();
    proxy.task.await.expect("the proxy task ends");
    assert!(TcpStream::connect(proxy.addr).await.is_err(), "the listener is closed");
}

#[tokio::test]
async fn a_refused_tunnel_gets_403_with_the_fix_and_is_recorded_once() {
    let proxy = start(&["https://api.example.com:443".into(), "tcp://example.com:443".into()]);
    let first =
        exchange(proxy.addr, b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n").await;
    assert!(first.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{first}");
    assert_eq!(
        body(&first),
        "toolport sandbox: not granted: https://example.com:443 (grant it with: toolport mcp grant 'my server' --host https://example.com:443)"
    );
    assert_eq!(proxy.refusals.all(), ["not granted: https://example.com:443"]);
    let again = exchange(proxy.addr, b"CONNECT Example.COM:443 HTTP/1.1\r\n\r\n").await;
    assert!(again.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{again}");
    assert_eq!(proxy.refusals.all(), ["not granted: https://example.com:443"]);
}

#[tokio::test]
async fn plain_http_goes_out_in_origin_form_with_connection_close() {
    let upstream = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = upstream.local_addr().expect("addr").port();
    let seen = tokio::spawn(async move {
        let (mut stream, _) = upstream.accept().await.expect("accept");
        let (buf, head_len) = read_head(&mut stream).await.expect("head").expect("small head");
        let mut request = buf;
        while request.len() < head_len + 4 + 3 {
            let mut more = [0u8; 64];
            let n = stream.read(&mut more).await.expect("body");
            request.extend_from_slice(&more[..n]);
        }
        stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
            .await
            .expect("answer");
        String::from_utf8(request).expect("utf-8")
    });
    let proxy = start(&[format!("http://localhost:{port}")]);
    let request = format!(
        "POST http://user:pw@LocalHost:{port}/path?q=1 HTTP/1.1\r\nHost: elsewhere.example\r\n\
         Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nConnection: keep-alive, X-Hop\r\n\
         X-Hop: 1\r\nAccept: */*\r\nContent-Length: 3\r\n\r\nabc"
    );
    let answer = exchange(proxy.addr, request.as_bytes()).await;
    assert_eq!(answer, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
    assert_eq!(
        seen.await.expect("server"),
        format!(
            "POST /path?q=1 HTTP/1.1\r\nHost: localhost:{port}\r\nAccept: */*\r\nContent-Length: 3\r\n\
             Connection: close\r\n\r\nabc"
        )
    );
}

#[tokio::test]
async fn refused_plain_http_records_only_scheme_host_and_port() {
    let proxy = start(&[]);
    let answer = exchange(proxy.addr, b"GET http://example.com/secret?token=abc HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert_eq!(
        body(&answer),
        "toolport sandbox: not granted: http://example.com:80 (grant it with: toolport mcp grant 'my server' --host http://example.com:80)"
    );
    assert_eq!(proxy.refusals.all(), ["not granted: http://example.com:80"]);
}

#[tokio::test]
async fn malformed_oversized_and_origin_form_heads_get_400() {
    let proxy = start(&[]);
    let answer = exchange(proxy.addr, b"hello\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{answer}");
    assert_eq!(body(&answer), MALFORMED_HEAD);
    let answer = exchange(proxy.addr, b"GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n").await;
    assert_eq!(body(&answer), ONLY_PROXY_FORMS);
    let mut huge = b"GET http://example.com/ HTTP/1.1\r\n".to_vec();
    huge.extend(std::iter::repeat_n(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaa\r\n".as_slice(), 600).flatten());
    let answer = exchange(proxy.addr, &huge).await;
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{answer}");
    assert_eq!(body(&answer), OVERSIZED_HEAD);
    assert!(proxy.refusals.all().is_empty());
}

#[tokio::test]
async fn an_ipv6_loopback_literal_is_tunnelled_or_its_failure_named() {
    match echo_server("[::1]:0").await {
        Ok(echo) => {
            let proxy = start(&[format!("https://[::1]:{}", echo.port())]);
            echo_through_tunnel(proxy.addr, &format!("[::1]:{}", echo.port())).await;
        }
        Err(e) => {
            // No ::1 on this machine: the grant still matches, and the 502 says why.
            eprintln!("no IPv6 loopback ({e}): checking the 502 instead");
            let proxy = start(&["https://[::1]:4443".into()]);
            let answer = exchange(proxy.addr, b"CONNECT [::1]:4443 HTTP/1.1\r\n\r\n").await;
            assert!(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{answer}");
            assert!(body(&answer).starts_with("toolport sandbox: cannot reach [::1]:4443: "), "{answer}");
            assert!(proxy.refusals.all().is_empty());
        }
    }
}

#[tokio::test]
async fn an_unreachable_granted_destination_gets_502_with_the_reason() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let proxy = start(&[format!("http://127.0.0.1:{port}")]);
    let answer = exchange(proxy.addr, format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{answer}");
    assert_eq!(
        body(&answer),
        format!("toolport sandbox: cannot reach 127.0.0.1:{port}: Connection refused (os error 111)")
    );
}

#[test]
fn refused_tunnels_are_worded_by_port_and_at_most_eight_are_kept() {
    assert_eq!(tunnel_scheme(&Dest { host: "a".into(), port: 80 }), "http");
    assert_eq!(tunnel_scheme(&Dest { host: "a".into(), port: 8443 }), "https");
    let refusals = EgressRefusals::default();
    for i in 0..10 {
        refusals.record(format!("https://h{i}:443"));
    }
    assert_eq!(refusals.all().len(), 8);
    assert_eq!(refusals.all()[0], "not granted: https://h0:443");
}
