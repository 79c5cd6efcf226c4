//! The few URL rules `fetch` needs, without a URL crate: `http` and `https` only, no
//! credentials, an explicit or default port, and redirects resolved against the current URL.
//! The origin text (`scheme://host:port`) is the one the host's grant check and its refusal
//! record use, so `not granted: …` reads the same on both sides.

/// A parsed request target.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub https: bool,
    /// Lower-cased; an IPv6 literal keeps its brackets (as `http::Uri::host` gives it).
    pub host: String,
    pub port: u16,
    /// What goes into the request: `host`, or `host:port` when the URL named a port.
    pub authority: String,
    /// Starts with `/`; no fragment; bytes outside printable ASCII percent-encoded.
    pub path_with_query: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Self, String> {
        let url = url.trim();
        let (scheme, rest) = url.split_once("://").ok_or_else(|| format!("{url} is not an absolute URL"))?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            other => return Err(format!("only http and https URLs can be fetched, not {other}:")),
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return Err("URLs with credentials (user@host) are not supported".to_string());
        }
        let (host, port) = split_host_port(authority)?;
        let default_port = if https { 443 } else { 80 };
        let path = tail.split('#').next().unwrap_or_default();
        let path_with_query = match path.chars().next() {
            None => "/".to_string(),
            Some('?') => format!("/{path}"),
            Some(_) => path.to_string(),
        };
        Ok(Self {
            https,
            authority: match port {
                Some(port) => format!("{host}:{port}"),
                None => host.clone(),
            },
            host,
            port: port.unwrap_or(default_port),
            path_with_query: encode(&path_with_query),
        })
    }

    /// `scheme://host:port`, the port always written.
    pub fn origin(&self) -> String {
        format!("{}://{}:{}", self.scheme(), self.host, self.port)
    }

    pub fn scheme(&self) -> &'static str {
        if self.https { "https" } else { "http" }
    }

    /// The URL as requested.
    pub fn url(&self) -> String {
        format!("{}://{}{}", self.scheme(), self.authority, self.path_with_query)
    }

    /// Where a redirect's `Location` points, relative to this target.
    pub fn join(&self, location: &str) -> Result<Self, String> {
        let location = location.trim();
        if location.contains("://") {
            return Self::parse(location);
        }
        if let Some(rest) = location.strip_prefix("//") {
            return Self::parse(&format!("{}://{rest}", self.scheme()));
        }
        let base = format!("{}://{}", self.scheme(), self.authority);
        if location.starts_with('/') {
            return Self::parse(&format!("{base}{location}"));
        }
        let path = self.path_with_query.split('?').next().unwrap_or("/");
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        Self::parse(&format!("{base}{dir}{location}"))
    }
}

fn split_host_port(authority: &str) -> Result<(String, Option<u16>), String> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let close = rest.find(']').ok_or("an IPv6 host needs its closing ']'")?;
        let host = &authority[..close + 2];
        match &rest[close + 1..] {
            "" => (host, None),
            tail => (host, Some(tail.strip_prefix(':').ok_or("junk after the IPv6 host")?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host == "[]" {
        return Err("the URL has no host".to_string());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~%[]:".contains(c);
    if !host.chars().all(allowed) || (!host.starts_with('[') && host.contains(':')) {
        return Err(format!("{host} is not a valid host name"));
    }
    let port = match port {
        None | Some("") => None,
        Some(port) => Some(port.parse::<u16>().map_err(|_| format!("{port} is not a valid port"))?),
    };
    Ok((host.to_ascii_lowercase(), port))
}

/// Percent-encodes bytes a request line cannot carry (controls, space, non-ASCII).
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte <= b' ' || byte >= 0x7f {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push(byte as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_parts_the_request_needs() {
        let t = Target::parse("HTTPS://Example.COM/a b?q=1#frag").unwrap();
        assert_eq!(t.origin(), "https://example.com:443");
        assert_eq!(t.authority, "example.com");
        assert_eq!(t.path_with_query, "/a%20b?q=1");
        let t = Target::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!((t.authority.as_str(), t.port, t.path_with_query.as_str()), ("127.0.0.1:8080", 8080, "/"));
        let t = Target::parse("http://[::1]:9/x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("[::1]", 9));
        assert_eq!(t.origin(), "http://[::1]:9");
        assert_eq!(Target::parse("http://h?x").unwrap().path_with_query, "/?x");
    }

    #[test]
    fn refuses_what_it_cannot_fetch() {
        for bad in
            ["ftp://x/", "example.com", "http://user:pw@h/", "http://:80/", "http://h:99999/", "http://a b/"]
        {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolves_redirects() {
        let t = Target::parse("https://h:8443/a/b?x").unwrap();
        assert_eq!(t.join("/c").unwrap().url(), "https://h:8443/c");
        assert_eq!(t.join("c?d").unwrap().url(), "https://h:8443/a/c?d");
        assert_eq!(t.join("//other/p").unwrap().url(), "https://other/p");
        assert_eq!(t.join("http://x/").unwrap().origin(), "http://x:80");
    }
}
