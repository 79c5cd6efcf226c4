//! A fresh network namespace has a loopback interface, but down: the launcher brings it up
//! (one `RTM_NEWLINK` request over rtnetlink) so the egress proxy's listener can sit on
//! `127.0.0.1` inside the namespace, the one address the server can reach.

use netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_packet_route::link::{LinkFlags, LinkMessage};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_ROUTE};

use super::error::SandboxError;

/// The loopback interface's index in every namespace.
const LOOPBACK_INDEX: u32 = 1;

/// Sets `lo` up in the calling process's network namespace.
pub fn bring_up() -> Result<(), SandboxError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        format!("cannot bring the sandbox's loopback up: {what}: {e}")
    };
    let mut link = LinkMessage::default();
    link.header.index = LOOPBACK_INDEX;
    link.header.flags = LinkFlags::Up;
    link.header.change_mask = LinkFlags::Up;
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_ACK;
    header.sequence_number = 1;
    let mut request = NetlinkMessage::new(header, NetlinkPayload::from(RouteNetlinkMessage::SetLink(link)));
    request.finalize();
    let mut bytes = vec![0u8; request.buffer_len()];
    request.serialize(&mut bytes);

    let mut socket = Socket::new(NETLINK_ROUTE).map_err(|e| fail("socket", &e))?;
    socket.bind_auto().map_err(|e| fail("bind", &e))?;
    socket.connect(&SocketAddr::new(0, 0)).map_err(|e| fail("connect", &e))?;
    socket.send(&bytes, 0).map_err(|e| fail("send", &e))?;
    let mut answer = Vec::with_capacity(4096);
    socket.recv(&mut answer, 0).map_err(|e| fail("receive", &e))?;
    let reply =
        NetlinkMessage::<RouteNetlinkMessage>::deserialize(&answer).map_err(|e| fail("answer", &e))?;
    match reply.payload {
        NetlinkPayload::Error(e) if e.code.is_some() => Err(fail("refused", &e.to_io()).into()),
        _ => Ok(()),
    }
}
