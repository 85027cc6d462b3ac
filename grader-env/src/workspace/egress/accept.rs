//! The accept loop every route out shares.

use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// The connections one route holds open at once: 1024, or an eighth of the process's limit on
/// open files when that is lower (each holds two: the agent's and the one out), so that an
/// agent opening connections without end costs the server a bounded amount and leaves it the
/// descriptors to start tasks and answer its control channel. Another is closed as soon as it
/// is accepted.
pub(crate) fn max_open() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(usize::MAX);
        1024.min(limit / 8).max(16)
    })
}

/// Runs `handle` for each connection on `listener`, at most [`max_open`] at once, until
/// dropped: the connections end with it.
pub(crate) async fn serve_each<F, Fut>(listener: TcpListener, mut handle: F)
where
    F: FnMut(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) if connections.len() < max_open() => {
                    let _ = stream.set_nodelay(true);
                    connections.spawn(handle(stream));
                }
                // Over the bound: dropped, which closes it.
                Ok(_) => {}
                // Out of descriptors, or a connection reset before it was accepted: the
                // listener itself stays good.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}
