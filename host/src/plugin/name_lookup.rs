//! The host's `wasi:sockets/ip-name-lookup`: wasmtime's own, behind the sandbox's name rule.
//!
//! wasmtime has one switch for lookups: on, the guest may resolve any name at all, and the
//! query itself leaves the machine (a resolver sees `secret-token.example.org` whether or not
//! any socket follows). So the linker shadows wasmtime's implementation of this interface with
//! this one, which asks [`HostsGate::allows_lookup`] first and answers `name-unresolvable` for
//! a refused name, as a resolver would for a name that does not exist. Granted names go to
//! wasmtime's resolver unchanged; the address stream is wasmtime's own resource.

use wasmtime::component::{HasData, Linker, Resource};
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{
    self, Host, HostResolveAddressStream, ResolveAddressStream,
};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode, IpAddress, Network};
use wasmtime_wasi::p2::{DynPollable, SocketError};
use wasmtime_wasi::sockets::WasiSocketsCtxView;

use super::sandbox::HostsGate;

/// What a lookup call sees of a store: wasmtime's socket context (which does the resolving)
/// and the gate that decides whether it may.
pub(crate) struct GatedLookup<'a> {
    pub sockets: WasiSocketsCtxView<'a>,
    pub gate: &'a HostsGate,
}

/// Binds [`GatedLookup`] as the data of the interface's host functions.
struct Gated;

impl HasData for Gated {
    type Data<'a> = GatedLookup<'a>;
}

/// Defines the gated interface in `linker`. Call it after `wasmtime_wasi::p2::add_to_linker_*`
/// with shadowing allowed: it replaces wasmtime's definitions of the same names.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> GatedLookup<'_>,
) -> wasmtime::Result<()> {
    ip_name_lookup::add_to_linker::<T, Gated>(linker, view)
}

impl Host for GatedLookup<'_> {
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

impl HostResolveAddressStream for GatedLookup<'_> {
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
impl network::Host for GatedLookup<'_> {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        network::Host::convert_error_code(&mut self.sockets, error)
    }

    fn network_error_code(&mut self, err: Resource<wasmtime::Error>) -> wasmtime::Result<Option<ErrorCode>> {
        network::Host::network_error_code(&mut self.sockets, err)
    }
}

impl network::HostNetwork for GatedLookup<'_> {
    fn drop(&mut self, this: Resource<Network>) -> wasmtime::Result<()> {
        network::HostNetwork::drop(&mut self.sockets, this)
    }
}
