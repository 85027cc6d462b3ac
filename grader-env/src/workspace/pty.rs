//! A terminal for a session that asked for one (`pty-req`): a pseudo-terminal pair sized as the
//! client said, the command on its slave side, the SSH channel on its master side.

use std::io;
use std::os::fd::OwnedFd;

use rustix::pty::{OpenptFlags, grantpt, ioctl_tiocgptpeer, openpt, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// What a `pty-req` asked for: the terminal type (the session's `TERM`) and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// The terminal type.
    pub(crate) term: String,
    /// Columns, rows, width and height in pixels.
    pub(crate) size: (u32, u32, u32, u32),
}

/// An open pseudo-terminal pair.
pub(crate) struct Terminal {
    /// The side the server reads and writes.
    pub(crate) master: OwnedFd,
    /// The side the command gets as its three streams (and controlling terminal).
    pub(crate) slave: OwnedFd,
}

impl Terminal {
    /// A new pair, sized as `request` says.
    pub(crate) fn open(request: &Request) -> io::Result<Terminal> {
        let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
        let master = openpt(flags)?;
        grantpt(&master)?;
        unlockpt(&master)?;
        let slave = ioctl_tiocgptpeer(&master, flags)?;
        let (cols, rows, width, height) = request.size;
        resize(&master, cols, rows, width, height);
        Ok(Terminal { master, slave })
    }
}

/// Tells the terminal its size (full-screen programs lay out against it); sizes beyond
/// `u16` are clamped, a failure ignored (the session goes on at the old size).
pub(crate) fn resize(master: &OwnedFd, cols: u32, rows: u32, width: u32, height: u32) {
    let clamp = |n: u32| u16::try_from(n).unwrap_or(u16::MAX);
    let size = Winsize {
        ws_row: clamp(rows),
        ws_col: clamp(cols),
        ws_xpixel: clamp(width),
        ws_ypixel: clamp(height),
    };
    let _ = tcsetwinsize(master, size);
}
