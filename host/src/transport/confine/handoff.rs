//! The proxy's listener crosses from the sandbox to the host. The launcher binds it inside the
//! server's network namespace (the only place the server can reach) and passes the descriptor
//! over a Unix socket in a private folder of the host's; a socket keeps the namespace it was
//! made in, so the host accepts the server's connections from outside without ever entering it.
//! The host takes the descriptor only from the launcher it started (its pid, checked with
//! `SO_PEERCRED`).

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::TcpListener;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage,
    SendFlags,
};

use super::error::SandboxError;

/// How long the host waits for its launcher to hand the listener over: the launcher's setup
/// (namespaces, loopback, one bind) takes a few milliseconds; a launcher that fails says why on
/// stderr and exits, which the host reports instead.
pub const WAIT: Duration = Duration::from_secs(10);

/// The launcher's side: `listener` to the host at `path`.
pub fn send(path: &Path, listener: &TcpListener) -> Result<(), SandboxError> {
    let fail =
        |e: std::io::Error| format!("cannot hand the proxy listener to toolport at {}: {e}", path.display());
    let stream = UnixStream::connect(path).map_err(fail)?;
    let fds = [listener.as_fd()];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    control.push(SendAncillaryMessage::ScmRights(&fds));
    rustix::net::sendmsg(&stream, &[IoSlice::new(b"L")], &mut control, SendFlags::empty())
        .map_err(|e| fail(e.into()))?;
    Ok(())
}

/// The host's side: the listener from the launcher whose pid is `launcher`, on a connection
/// already accepted. Anything else (another process, no descriptor) is refused.
pub fn receive(stream: &UnixStream, launcher: u32) -> Result<TcpListener, SandboxError> {
    let peer = rustix::net::sockopt::socket_peercred(stream)
        .map_err(|e| SandboxError(format!("cannot read the peer: {e}")))?;
    if u32::try_from(peer.pid.as_raw_nonzero().get()).ok() != Some(launcher) {
        return Err(SandboxError(format!(
            "a process other than the launcher ({}) connected",
            peer.pid.as_raw_nonzero()
        )));
    }
    let mut byte = [0u8; 1];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    rustix::net::recvmsg(stream, &mut [IoSliceMut::new(&mut byte)], &mut control, RecvFlags::CMSG_CLOEXEC)
        .map_err(|e| SandboxError(format!("cannot receive the proxy listener: {e}")))?;
    let mut received: Option<OwnedFd> = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(mut fds) = message {
            received = received.or_else(|| fds.next());
        }
    }
    received.map(TcpListener::from).ok_or_else(|| SandboxError::from("the launcher sent no listener"))
}
