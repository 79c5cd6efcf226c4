//! The sandbox every plugin runs in: a WASI context with nothing inherited, opened only as far
//! as the plugin's config grants. All grant checks live here.
//!
//! Closed defaults, as built by [`Sandbox::wasi_ctx`]: no environment, no arguments, no
//! preopens, stdin closed, stdout discarded, stderr's tail kept for crash messages (`stderr`), no
//! socket address allowed, no name resolved. Grants open exactly: `env` names (copied from the
//! host's environment when set), `dirs` (preopens, read-only unless a server's grant says `rw`,
//! at their own absolute path unless the grant names a guest path), and
//! `hosts` (TCP/UDP connects and outgoing HTTP to matching `scheme://host:port`, and lookups of
//! exactly the names those patterns name: see [`HostsGate::allows_lookup`]). In a granted
//! folder a guest may make only links that point below their own folder
//! ([`LinksGate::allows_link`]). When every granted folder is on a local file system, the
//! guest's file-system calls run on its own thread (`local_fs`).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Component, Path};
use std::sync::{Arc, Mutex, OnceLock};

use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};
use wasmtime_wasi_http::{RequestOptions, WasiBody, WasiHttpHooks};

use super::local_fs;
use super::log_sink::LogSink;
use super::socket_budget::SocketBudget;
use super::stderr::StderrTail;
use crate::config::Grants;
use crate::config::{HostMatch, HostPattern};
use crate::plugin::SetupError;

/// Denied destinations remembered per sandbox: the first explains a failure; more is noise.
const DENIALS_KEPT: usize = 8;
/// Characters of a refused name kept in its denial: a DNS name has at most 253, so more is a
/// payload, not a name, and the record must not carry it whole.
const DENIED_NAME_CHARS: usize = 253;
/// Characters of each path of a refused link kept in its denial: a file name has at most 255
/// bytes, enough to recognise the link by; a path may be 4 KiB, which the record must not carry.
const DENIED_LINK_CHARS: usize = 255;

/// Destinations the sandbox refused, as `scheme://host:port`, recorded by the host itself so a
/// plugin cannot hide or misstate why its connection failed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Denials(Arc<Mutex<Vec<String>>>);

impl Denials {
    /// Records `target`; whether it is news (not seen before, and room to keep it), so a guest
    /// retrying the same refused thing in a loop costs one warning, not one per attempt.
    pub(crate) fn record(&self, target: String) -> bool {
        if let Ok(mut list) = self.0.lock()
            && list.len() < DENIALS_KEPT
            && !list.contains(&target)
        {
            list.push(target);
            return true;
        }
        false
    }

    /// The first refused destination, if any.
    pub fn first(&self) -> Option<String> {
        self.0.lock().ok().and_then(|list| list.first().cloned())
    }

    /// Every kept refusal, oldest first.
    pub fn all(&self) -> Vec<String> {
        self.0.lock().map(|list| list.clone()).unwrap_or_default()
    }
}

/// What [`Sandbox::wasi_ctx`] makes for one store.
pub(crate) struct GuestCtx {
    pub wasi: WasiCtx,
    /// The tail of the guest's stderr.
    pub stderr: StderrTail,
    /// Whether its file-system calls run on the guest's own thread (`local_fs`), which the
    /// host's own file-system functions (`dir_listing`) must follow as wasmtime's do.
    pub files_on_thread: bool,
}

/// One plugin's parsed grants, shared by all its stores.
#[derive(Debug)]
pub(crate) struct Sandbox {
    plugin: Arc<str>,
    hosts: Arc<[HostPattern]>,
    grants: Grants,
    denials: Denials,
    /// Where log lines are also kept, once a caller asked (`plugin run`); unset, none are.
    logs: OnceLock<LogSink>,
}

impl Sandbox {
    /// Parses the grants; a malformed host pattern is a config error naming the plugin.
    pub fn new(plugin: &str, grants: &Grants) -> Result<Self, SetupError> {
        let hosts = grants
            .hosts
            .iter()
            .map(|h| HostPattern::parse(h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| SetupError(e.0))?;
        Ok(Self {
            plugin: plugin.into(),
            hosts: hosts.into(),
            grants: grants.clone(),
            denials: Denials::default(),
            logs: OnceLock::new(),
        })
    }

    /// The same grants plus `origin` (when there is one), with a denial record of its own: the
    /// sandbox of one transport connection, which may always reach its own server and whose
    /// refusals must not be mistaken for another connection's.
    pub fn with_origin(&self, origin: Option<String>) -> Result<Self, SetupError> {
        let mut grants = self.grants.clone();
        grants.hosts.extend(origin);
        Self::new(&self.plugin, &grants)
    }

    /// A fresh WASI context with exactly the granted capabilities, and the tail of the
    /// guest's stderr (bounded, never refusing a write). `extra` then adds what a sandboxed
    /// server has and a plugin does not: its arguments, environment and stdio.
    pub fn wasi_ctx(&self, extra: impl FnOnce(&mut WasiCtxBuilder)) -> Result<GuestCtx, SetupError> {
        let mut b = WasiCtxBuilder::new();
        let stderr = StderrTail::default();
        b.stderr(stderr.clone());
        for name in &self.grants.env {
            if let Ok(value) = std::env::var(name) {
                b.env(name, value);
            }
        }
        // File-system calls on the guest's own thread, not a blocking-pool round trip each,
        // when no granted folder can stall that thread (`local_fs` says why and when). Set
        // before the preopens: each takes the setting as it is when it is added.
        let files_on_thread = !self.grants.dirs.is_empty()
            && local_fs::all_local(self.grants.dirs.iter().map(|d| d.host.as_path()));
        b.allow_blocking_current_thread(files_on_thread);
        for dir in &self.grants.dirs {
            let perms = if dir.writable { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
            b.preopened_dir(&dir.host, dir.guest_path(), perms).map_err(|e| {
                SetupError(format!("cannot open granted folder {}: {e:#}", dir.host.display()))
            })?;
        }
        // Both socket kinds stay on even with no grant that could use them: a connect then
        // reaches the address check below, which refuses it *and records it*, where wasmtime's
        // switch would refuse it unseen. Creating a socket is harmless on its own (at most the
        // store's budget of them, `socket_budget`), and binding only to the wildcard.
        b.allow_tcp(true);
        b.allow_udp(true);
        // Lookups reach wasmtime's resolver only through `HostsGate::allows_lookup` (the linker
        // shadows `wasi:sockets/ip-name-lookup`, see `sockets_gate`), so the switch itself is on.
        b.allow_ip_name_lookup(true);
        let hosts = Arc::clone(&self.hosts);
        let plugin = Arc::clone(&self.plugin);
        let denials = self.denials.clone();
        b.socket_addr_check(move |addr, use_| {
            let hosts = Arc::clone(&hosts);
            let plugin = Arc::clone(&plugin);
            let denials = denials.clone();
            Box::pin(async move {
                let allowed = socket_allowed(&hosts, addr, use_).await;
                if allowed {
                    return true;
                }
                if matches!(use_, SocketAddrUse::UdpReceive) {
                    // A datagram from a peer outside the grants is dropped before the guest
                    // sees it. Anyone can send one, so it is neither the guest's doing nor
                    // worth a warning per packet: a refusal to remember, it is not.
                    tracing::debug!(plugin = %plugin, %addr, "dropped a datagram from a peer not in grants.hosts");
                    return false;
                }
                if denials.record(format!("{}://{addr}", scheme_of(use_))) {
                    tracing::warn!(plugin = %plugin, %addr, use_ = ?use_, "denied a socket: not in grants.hosts");
                } else {
                    tracing::debug!(plugin = %plugin, %addr, use_ = ?use_, "denied a socket again: not in grants.hosts");
                }
                false
            })
        });
        extra(&mut b);
        Ok(GuestCtx { wasi: b.build(), stderr, files_on_thread })
    }

    /// The gate for what the host does on the guest's behalf (HTTP requests, name lookups,
    /// new sockets), with a fresh socket budget: one per store.
    pub fn hosts_gate(&self) -> HostsGate {
        HostsGate {
            plugin: Arc::clone(&self.plugin),
            hosts: Arc::clone(&self.hosts),
            denials: self.denials.clone(),
            budget: SocketBudget::default(),
        }
    }

    /// The gate for the links a guest makes in its folders (see `files_gate`), recording into
    /// this sandbox's denials.
    pub fn links_gate(&self) -> LinksGate {
        LinksGate { plugin: Arc::clone(&self.plugin), denials: self.denials.clone() }
    }

    /// What it was granted.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// What this sandbox has refused so far.
    pub fn denials(&self) -> &Denials {
        &self.denials
    }

    /// Keeps the log lines of every store made from now on (see `trial`).
    pub fn keep_logs(&self) {
        let _ = self.logs.set(LogSink::default());
    }

    /// Where log lines are kept, if a caller asked.
    pub fn log_sink(&self) -> Option<&LogSink> {
        self.logs.get()
    }
}

/// The scheme a denial is named by: the protocol of the refused use, so a refused datagram
/// reads `udp://…` and a refused connect `tcp://…`.
fn scheme_of(use_: SocketAddrUse) -> &'static str {
    match use_ {
        SocketAddrUse::UdpBind | SocketAddrUse::UdpSend | SocketAddrUse::UdpReceive => "udp",
        _ => "tcp",
    }
}

/// The socket rule: implicit wildcard binds pass (a connect starts with a bind of `0.0.0.0:0`,
/// harmless on its own); TCP connects need a matching grant, and so does UDP in both
/// directions (wasmtime checks a `connect`ed or sending socket's peer for sending and for
/// receiving, and every incoming datagram's sender for receiving); listening and accepting are
/// never granted.
async fn socket_allowed(hosts: &Arc<[HostPattern]>, addr: SocketAddr, use_: SocketAddrUse) -> bool {
    let udp = match use_ {
        SocketAddrUse::TcpBind | SocketAddrUse::UdpBind => {
            return addr.ip().is_unspecified() && addr.port() == 0;
        }
        SocketAddrUse::TcpConnect => false,
        SocketAddrUse::UdpSend | SocketAddrUse::UdpReceive => true,
        _ => return false,
    };
    let candidates: Vec<&HostPattern> = hosts.iter().filter(|h| h.covers_socket(udp)).collect();
    if candidates.iter().any(|h| h.allows_ip(addr)) {
        return true;
    }
    // A granted exact name allows the addresses it resolves to (on the grant's port).
    let names: Vec<(String, u16)> = candidates
        .iter()
        .filter_map(|h| match (&h.host, h.port) {
            (HostMatch::Name(n), Some(p)) if p == addr.port() => Some((n.clone(), p)),
            (HostMatch::Name(n), None) => Some((n.clone(), addr.port())),
            _ => None,
        })
        .collect();
    if names.is_empty() {
        return false;
    }
    let resolved = tokio::task::spawn_blocking(move || {
        names.iter().filter_map(|n| n.to_socket_addrs().ok()).flatten().collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    resolved.iter().any(|r| r.ip().to_canonical() == addr.ip().to_canonical())
}

/// Filters what the host does for the guest outside the socket check: outgoing `wasi:http`
/// requests (wasmtime's default sender opens host sockets itself, so the socket check above
/// never sees them) and name lookups (a lookup leaves the machine before any socket is made: the
/// name itself is the message), and how many sockets the store holds.
pub(crate) struct HostsGate {
    plugin: Arc<str>,
    hosts: Arc<[HostPattern]>,
    denials: Denials,
    budget: SocketBudget,
}

impl HostsGate {
    /// The store's sockets and outgoing connections.
    pub fn budget(&self) -> &SocketBudget {
        &self.budget
    }

    /// Whether the guest may resolve `name`: an IP literal (nothing is looked up), or a name some
    /// `grants.hosts` pattern names, of any scheme and port. Anything else is refused and
    /// recorded, so a granted `https://api.example.com` cannot be used to send
    /// `secret.example.org` to a resolver, nor to learn what `localhost` is.
    pub fn allows_lookup(&self, name: &str) -> bool {
        if is_ip_literal(name) || self.hosts.iter().any(|h| h.names(name)) {
            return true;
        }
        let shown: String = name.chars().take(DENIED_NAME_CHARS).flat_map(char::escape_debug).collect();
        if self.denials.record(format!("name lookup of {shown}")) {
            tracing::warn!(plugin = %self.plugin, name = %shown, "denied a name lookup: no grants.hosts entry names it");
        }
        false
    }
}

/// Decides which symbolic links a guest may leave in a granted folder. wasmtime keeps the
/// link's own path inside the folder and never follows a link out of it for the guest, but it
/// writes any target text: `../../.ssh/id_ed25519` planted in a read-write folder is followed
/// by the host's own programs and agents, which have no sandbox.
pub(crate) struct LinksGate {
    plugin: Arc<str>,
    denials: Denials,
}

impl LinksGate {
    /// Whether the guest may make a link at `link` (a path under the folder it names) whose
    /// text is `target`: only when [`link_stays_below`] holds. A refusal is recorded as
    /// `link <link> -> <target>`.
    pub fn allows_link(&self, link: &str, target: &Path) -> bool {
        if link_stays_below(target) {
            return true;
        }
        let shown = |path: &str| -> String {
            path.chars().take(DENIED_LINK_CHARS).flat_map(char::escape_debug).collect()
        };
        let (link, target) = (shown(link), shown(&target.to_string_lossy()));
        if self.denials.record(format!("link {link} -> {target}")) {
            tracing::warn!(plugin = %self.plugin, %link, %target, "denied a link: its target is absolute or climbs with `..`");
        }
        false
    }
}

/// The link rule: a target must be relative and go down only (no `..` anywhere), so that it
/// resolves at or below the link's own folder. Counting `..` against the link's depth would not
/// hold: the guest may later move the folder up (`a/b/l -> ../../x` renamed to `c/l` leaves the
/// grant), hard-link the link elsewhere, or climb through a link of its own (with `d/s -> .`,
/// `d/s/../..` is the folder above `d`'s parent, where counting says `d`'s parent). A target
/// that only goes down stays below its folder wherever the folder goes.
pub(crate) fn link_stays_below(target: &Path) -> bool {
    target.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// `127.0.0.1`, `::1` or `[::1]`: text wasmtime turns into an address without a lookup.
fn is_ip_literal(name: &str) -> bool {
    let bare = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
    bare.parse::<std::net::IpAddr>().is_ok()
}

type SendFuture = Box<
    dyn Future<
            Output = wasmtime_wasi_http::Result<(
                http::Response<WasiBody>,
                Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
            )>,
        > + Send,
>;

impl WasiHttpHooks for HostsGate {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> SendFuture {
        let uri = request.uri();
        let scheme = uri.scheme_str().unwrap_or("https");
        let port = uri.port_u16().unwrap_or(if scheme == "http" { 80 } else { 443 });
        let host = uri.host().unwrap_or("");
        if self.hosts.iter().any(|h| h.allows_url(scheme, host, port)) {
            let Some(permit) = self.budget.admit_http() else {
                return Box::new(async { Err(wasmtime_wasi_http::Error::ConnectionLimitReached) });
            };
            let send = wasmtime_wasi_http::default_hooks().send_request(request, options, fut);
            // The second future drives the connection's I/O until it closes: the permit
            // lives exactly as long as the host's socket does.
            return Box::new(async move {
                let (response, io) = Box::into_pin(send).await?;
                let io: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send> =
                    Box::new(async move {
                        let _permit = permit;
                        Box::into_pin(io).await
                    });
                Ok((response, io))
            });
        }
        let target = format!("{scheme}://{host}:{port}");
        if self.denials.record(target.clone()) {
            tracing::warn!(plugin = %self.plugin, url = %target, "denied an HTTP request: not in grants.hosts");
        }
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_udp_use_is_named_udp() {
        for use_ in [SocketAddrUse::UdpBind, SocketAddrUse::UdpSend, SocketAddrUse::UdpReceive] {
            assert_eq!(scheme_of(use_), "udp");
        }
        assert_eq!(scheme_of(SocketAddrUse::TcpConnect), "tcp");
    }

    #[test]
    fn a_link_may_point_only_below_its_own_folder() {
        for inside in ["sub/file", "file", "./sub/./file", "sub//file/", ".", ""] {
            assert!(link_stays_below(Path::new(inside)), "{inside:?} goes down only");
        }
        for out in ["/etc/passwd", "../outside", "../../outside", "sub/../file", "sub/..", "//x", "a/./../b"]
        {
            assert!(!link_stays_below(Path::new(out)), "{out:?} is absolute or climbs");
        }
    }

    #[test]
    fn a_refused_link_is_recorded_once_with_both_paths() {
        let sandbox = Sandbox::new("fs", &Grants::default()).unwrap_or_else(|e| panic!("{e}"));
        let gate = sandbox.links_gate();
        assert!(gate.allows_link("dir/inside", Path::new("sub/file")));
        assert!(!gate.allows_link("dir/escape", Path::new("../../outside")));
        assert!(!gate.allows_link("dir/escape", Path::new("../../outside")));
        assert!(!gate.allows_link("abs", Path::new("/etc/\npasswd")));
        assert_eq!(
            sandbox.denials().all(),
            ["link dir/escape -> ../../outside", "link abs -> /etc/\\npasswd"]
        );
    }

    #[tokio::test]
    async fn udp_to_a_granted_peer_passes_both_ways_and_nowhere_else() {
        let hosts: Arc<[HostPattern]> = [HostPattern::parse("udp://127.0.0.1:5353")]
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| panic!("{e}"))
            .into();
        let peer: SocketAddr = ([127, 0, 0, 1], 5353).into();
        let other: SocketAddr = ([127, 0, 0, 1], 5354).into();
        assert!(socket_allowed(&hosts, peer, SocketAddrUse::UdpSend).await);
        assert!(socket_allowed(&hosts, peer, SocketAddrUse::UdpReceive).await);
        assert!(!socket_allowed(&hosts, other, SocketAddrUse::UdpReceive).await);
        assert!(!socket_allowed(&hosts, peer, SocketAddrUse::TcpConnect).await);
    }
}
