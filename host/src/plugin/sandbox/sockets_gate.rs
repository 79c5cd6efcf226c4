//! The host's socket functions where wasmtime's own are too open: name lookups behind the
//! sandbox's name rule, and new sockets behind the store's socket budget. Everything else of
//! `wasi:sockets` stays wasmtime's.
//!
//! wasmtime has one switch for lookups: on, the guest may resolve any name at all, and the
//! query itself leaves the machine (a resolver sees `secret-token.example.org` whether or not
//! any socket follows). So the linker shadows wasmtime's `ip-name-lookup` with this one, which
//! asks [`HostsGate::allows_lookup`] first and answers `name-unresolvable` for a refused name,
//! as a resolver would for a name that does not exist. Granted names go to wasmtime's
//! resolver unchanged; the address stream is wasmtime's own resource.
//!
//! wasmtime also creates sockets without limit, each a file descriptor of the host's; the
//! shadowed `create-tcp-socket` and `create-udp-socket` ask the budget (`socket_budget`)
//! first and answer `new-socket-limit` past it, as the OS would past its own.

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{
    self, Host, HostResolveAddressStream, ResolveAddressStream,
};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode, IpAddress, IpAddressFamily, Network};
use wasmtime_wasi::p2::bindings::sockets::{tcp_create_socket, udp_create_socket};
use wasmtime_wasi::p2::{DynPollable, SocketError, TcpSocket, UdpSocket};
use wasmtime_wasi::sockets::WasiSocketsCtxView;

use super::context::HostsGate;

/// What a socket function sees of a store: wasmtime's socket context (which does the work)
/// and the gate that decides whether it may.
pub(crate) struct GatedSockets<'a> {
    pub sockets: WasiSocketsCtxView<'a>,
    pub gate: &'a HostsGate,
}

/// Binds [`GatedSockets`] as the data of the interfaces' host functions.
struct Gated;

impl HasData for Gated {
    type Data<'a> = GatedSockets<'a>;
}

/// Defines the gated interfaces in `linker`. Call it after `wasmtime_wasi::p2::add_to_linker_*`
/// with shadowing allowed: it replaces wasmtime's definitions of the same names.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> GatedSockets<'_>,
) -> wasmtime::Result<()> {
    ip_name_lookup::add_to_linker::<T, Gated>(linker, view)?;
    tcp_create_socket::add_to_linker::<T, Gated>(linker, view)?;
    udp_create_socket::add_to_linker::<T, Gated>(linker, view)
}

/// The TCP and UDP sockets a store holds now: wasmtime drops them without telling the host,
/// so the table is the one exact count.
fn open_sockets(table: &mut ResourceTable) -> usize {
    table.iter_mut().filter(|entry| entry.is::<TcpSocket>() || entry.is::<UdpSocket>()).count()
}

impl tcp_create_socket::Host for GatedSockets<'_> {
    fn create_tcp_socket(&mut self, family: IpAddressFamily) -> Result<Resource<TcpSocket>, SocketError> {
        if !self.gate.budget().admit_socket(open_sockets(self.sockets.table)) {
            return Err(ErrorCode::NewSocketLimit.into());
        }
        tcp_create_socket::Host::create_tcp_socket(&mut self.sockets, family)
    }
}

impl udp_create_socket::Host for GatedSockets<'_> {
    async fn create_udp_socket(
        &mut self,
        family: IpAddressFamily,
    ) -> Result<Resource<UdpSocket>, SocketError> {
        if !self.gate.budget().admit_socket(open_sockets(self.sockets.table)) {
            return Err(ErrorCode::NewSocketLimit.into());
        }
        udp_create_socket::Host::create_udp_socket(&mut self.sockets, family).await
    }
}

impl Host for GatedSockets<'_> {
    fn resolve_addresses(
        &mut self,
        network: Resource<Network>,
        name: String,
    ) -> Result<Resource<ResolveAddressStream>, SocketError> {
        if !self.gate.allows_lookup(&name) {
            return Err(ErrorCode::NameUnresolvable.into());
        }
        Host::resolve_addresses(&mut self.sockets, network, name)
    }
}

impl HostResolveAddressStream for GatedSockets<'_> {
    fn resolve_next_address(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> Result<Option<IpAddress>, SocketError> {
        HostResolveAddressStream::resolve_next_address(&mut self.sockets, stream)
    }

    fn subscribe(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        HostResolveAddressStream::subscribe(&mut self.sockets, stream)
    }

    fn drop(&mut self, stream: Resource<ResolveAddressStream>) -> wasmtime::Result<()> {
        HostResolveAddressStream::drop(&mut self.sockets, stream)
    }
}

/// Required of every interface that uses `network`'s error type; wasmtime's answer unchanged
/// (the `network` interface itself stays wasmtime's in the linker).
impl network::Host for GatedSockets<'_> {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        network::Host::convert_error_code(&mut self.sockets, error)
    }

    fn network_error_code(&mut self, err: Resource<wasmtime::Error>) -> wasmtime::Result<Option<ErrorCode>> {
        network::Host::network_error_code(&mut self.sockets, err)
    }
}

impl network::HostNetwork for GatedSockets<'_> {
    fn drop(&mut self, this: Resource<Network>) -> wasmtime::Result<()> {
        network::HostNetwork::drop(&mut self.sockets, this)
    }
}
