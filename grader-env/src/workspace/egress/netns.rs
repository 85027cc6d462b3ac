//! Listening sockets inside the sandbox's network namespace, held by the serving process.
//!
//! A socket belongs to the network namespace it was created in, whoever holds it later. So
//! the routes out are sockets created in the sandbox's namespace and accepted on here, on the
//! host side, where the proxy connects out: no bridge process runs in the sandbox, nothing is
//! bound into its filesystem, and nothing in it can address the host except through them.
//!
//! Creating them takes a process that joins the sandbox's user namespace (which owns its
//! network namespace) and then its network namespace; a multi-threaded process cannot join a
//! user namespace, so a forked child does it between `fork` and `exec`, creates the sockets
//! and hands them back over a socket pair (`SCM_RIGHTS`), then execs `true`. This is the one
//! place grader-env uses `unsafe` (`pre_exec`): the child makes raw system calls only
//! (`setns`, `socket`, `setsockopt`, `bind`, `listen`, `sendmsg`) on values prepared before the
//! fork, allocates nothing, takes no lock and does not panic.
#![allow(unsafe_code)]

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::{SocketAddrV4, TcpListener};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketFlags, SocketType,
};
use rustix::thread::LinkNameSpaceType;

/// The backlog of each listener.
const BACKLOG: i32 = 1024;

/// Listening TCP sockets on `addrs`, created inside the user and network namespaces of the
/// process `pid` (the sandbox's init), in the order given. Blocks while a child process runs.
///
/// # Errors
/// The namespaces cannot be opened or joined (the caller does not own them), an address is
/// taken, or the child cannot run.
pub(crate) fn listeners_in(
    pid: u32,
    addrs: &[SocketAddrV4],
    path: &str,
) -> std::io::Result<Vec<TcpListener>> {
    let user = OwnedFd::from(std::fs::File::open(format!("/proc/{pid}/ns/user"))?);
    let net = OwnedFd::from(std::fs::File::open(format!("/proc/{pid}/ns/net"))?);
    let (ours, theirs) = UnixStream::pair()?;
    let wanted = addrs.to_vec();
    let hook = move || -> std::io::Result<()> {
        rustix::thread::move_into_link_name_space(user.as_fd(), Some(LinkNameSpaceType::User))?;
        rustix::thread::move_into_link_name_space(net.as_fd(), Some(LinkNameSpaceType::Network))?;
        for addr in &wanted {
            let socket = rustix::net::socket_with(
                AddressFamily::INET,
                SocketType::STREAM,
                SocketFlags::CLOEXEC,
                None,
            )?;
            rustix::net::sockopt::set_socket_reuseaddr(&socket, true)?;
            rustix::net::bind(&socket, addr)?;
            rustix::net::listen(&socket, BACKLOG)?;
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
            let mut control = SendAncillaryBuffer::new(&mut space);
            let fds = [socket.as_fd()];
            control.push(SendAncillaryMessage::ScmRights(&fds));
            rustix::net::sendmsg(
                &theirs,
                &[IoSlice::new(b"l")],
                &mut control,
                SendFlags::empty(),
            )?;
        }
        Ok(())
    };
    let mut command = Command::new("true");
    command
        .env_clear()
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: the hook only makes async-signal-safe system calls (`setns`, `socket`,
    // `setsockopt`, `bind`, `listen`, `sendmsg`, `close`) on descriptors and addresses prepared
    // before the fork; it allocates nothing (the control buffer is on its stack, the address
    // list was copied before), takes no lock and cannot panic (the conversions of an errno to
    // `std::io::Error` allocate nothing).
    unsafe {
        command.pre_exec(hook);
    }
    let status = command.status()?;
    if !status.success() {
        return Err(std::io::Error::other(format!(
            "the process creating the sandbox's listeners exited with {status}"
        )));
    }
    ours.set_nonblocking(true)?;
    let mut listeners = Vec::with_capacity(addrs.len());
    for addr in addrs {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let mut byte = [0_u8; 1];
        rustix::net::recvmsg(
            &ours,
            &mut [IoSliceMut::new(&mut byte)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        )?;
        let fd = control
            .drain()
            .find_map(|message| match message {
                RecvAncillaryMessage::ScmRights(mut fds) => fds.next(),
                _ => None,
            })
            .ok_or_else(|| std::io::Error::other(format!("no listener came back for {addr}")))?;
        let listener = TcpListener::from(fd);
        listener.set_nonblocking(true)?;
        listeners.push(listener);
    }
    Ok(listeners)
}
